"""vLLM V1's ``RejectionSampler`` on drafts passed without their probabilities (docs/maths.md, "vLLM
V1 with one-hot drafts (`vllm_onehot`)").

Ported from vllm-project/vllm, ``vllm/v1/sample/rejection_sampler.py`` at 7f6fc1c (the same rule at
0097a7b, where the flag is ``IS_NGRAM``).  With ``draft_probs`` None (n-gram and suffix drafters, and
EAGLE and MTP proposals passed as token ids alone) the kernel ``rejection_random_sample_kernel``
takes ``draft_prob = 1``, that is a one-hot draft law at the drafted token, and accepts x_i iff
``target_prob / draft_prob >= uniform_prob``: with u ~ U[0, 1), probability q(x_i|x_<i) (the
engine's p is this project's q).  At the first rejection ``sample_recovered_tokens_kernel`` masks
the drafted token out of the target's probabilities and takes argmax(q(v)/E_v), E_v ~ Exp(1), a
draw from q(·|x_<i) without x_i; after L acceptances the bonus token is the target's own sample.

Given the drafts the rule never reads p, so it runs on one chain drafted by any law, sampled or the
drafter's argmax.  It is lossless for every draft law: at a node u with drafted x (x drawn by any
law independent of the verifier's coins), the emitted token is y = x with probability q(x) and
otherwise a draw from q without x, so P(y) = P(x = y)·q(y) + Σ_(x≠y) P(x)·(1 − q(x))·q(y)/(1 − q(x))
= q(y).  It accepts x with probability q(x), not min(1, q(x)/p(x)): one-hot costs Σ_x min(p, q) −
Σ_x p·q per token on sampled drafts.  Its law given the drafts is exact match's (``exact_match``:
the target's sample equals x with probability q(x), and is q without x otherwise).
"""
from __future__ import annotations

import numpy as np

from core.data.coins import Coins
from core.data.distributions import without
from core.data.levels import node_recursion_cost
from core.data.outcome import Outcome
from core.data.token_tree import TokenTree
from core.rules.one_chain import ANY_CHAIN, Chain, OneChainRule
from core.rules.token_level import token_chain_law, token_walk

#: vLLM's file and commit, for the source line.
SOURCE = "vllm-project/vllm, vllm/v1/sample/rejection_sampler.py at 7f6fc1c"


def one_hot_walk(tree: TokenTree, chain: Chain, coins: Coins) -> Outcome:
    """Token by token: x_i passes with probability q(x_i|x_<i); at the first failure the extra token
    is drawn from q(·|x_<i) without x_i, after L passes from q(·|x)."""
    passes = [chain.q_token(i) for i in range(chain.L)]
    return token_walk(tree, passes, "accept", lambda u, token: without(tree.q[u], token), coins, x=chain.tokens)


class VllmOneHot(OneChainRule):
    name = "vllm_onehot"
    short = "vLLM 1-hot"
    label = "vLLM V1's rejection sampler with drafts passed without their probabilities"
    color = "#dd00bb"  # vLLM's colour
    engine = "vLLM"
    summary = ("One chain checked token by token as if its drafter were one-hot: accept x_i when u ≤ q(x_i), "
               "else draw the correction from q without x_i.")
    source = f"vLLM V1 RejectionSampler, no draft probabilities ({SOURCE})"
    lossless_by_theory = True
    runs_on = ANY_CHAIN
    below_baseline = ("it accepts a drafted token x with probability q(x), never more than SD's "
                      "min(1, q(x)/p(x))")
    how = ("**How vLLM's one-hot rule tests.** Along the one chain, token by token: x_i passes when a uniform u ≤ "
           "q(x_i), with probability q(x_i), since the drafter's probability is taken as 1; the first failure stops, "
           "and the correction is drawn from q without x_i.")

    def verify_chain(self, tree: TokenTree, chain: Chain, coins: Coins) -> Outcome:
        return one_hot_walk(tree, chain, coins)

    def model_output_law(self, draft, target, K: int, L: int):
        """Exact output law on one chain sampled from p (``token_chain_law``): x passes with q(x|u),
        and a failed x leaves q(·|u) without x."""
        return token_chain_law(draft, target, L, lambda p, q: q, _without_each)

    model_law_cost = staticmethod(node_recursion_cost)


def _without_each(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """q(·|u) without x for every node u (the rows of q) and every failed child x: shape (n, V, V)."""
    return np.array([[without(row, x) for x in range(row.size)] for row in q])
