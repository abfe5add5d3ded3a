"""transformers' static ensemble verification (PR 45979, after DIVERSED, arXiv 2604.07622): speculative
sampling against the mixture v = w·q + (1 − w)·p (docs/maths.md, "transformers' static ensemble
(`hf_ensemble`)").

Ported from huggingface/transformers, ``src/transformers/generation/utils.py`` at b012bde
(``_speculative_sampling`` with ``assistant_ensemble_weight``; the test file
``tests/generation/test_static_ensemble.py`` at the same commit), the engine's p (target) and q
(assistant) being this project's q and p.  One chain sampled from the assistant; for i = 1..L, with
r_i ~ U[0, 1):

    x_i is accepted iff r_i ≤ 1 − w + w·q(x_i)/p(x_i)   (= v(x_i)/p(x_i)),

until the first rejection; there the extra token comes from (q − p)₊ normalised ("the fallback
[v−q]+ = w·[p−q]+ normalizes to the same distribution as [p−q]+", the code's comment, in its
letters), or from q where that residual is numerically 0; after L acceptances the bonus comes from
q (the target's row at position L + 1: there is no draft row to mix).  w = 1 (the engine's default
None) is speculative sampling, w = 0 accepts every drafted token.

Per token x is kept with probability p(x)·min(1, v(x)/p(x)) = (1 − w)·p(x) + w·min(p, q)(x), so the
acceptance rate is 1 − w·TV(p, q), and the one token emitted at a node has the law (1 − w)p + w·min(p,
q) + w·(q − p)₊ = v: TV(v, q) = (1 − w)·TV(p, q) per token, the PR's trade.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from core.data.coins import Coins
from core.data.distributions import residual
from core.data.levels import node_recursion_cost
from core.data.outcome import Outcome
from core.data.token_tree import TokenTree
from core.rules.one_chain import Chain, OneChainRule
from core.rules.params import Param
from core.rules.token_level import token_chain_law, token_walk

SOURCE = "huggingface/transformers, src/transformers/generation/utils.py at b012bde (PR 45979)"
#: The weight by default: halfway between the target and the assistant (the engine's own default,
#: None, is w = 1: speculative sampling).
DEFAULT_W = 0.5


def ensemble_acceptance(q, p, w: float):
    """min(1, 1 − w + w·q/p), elementwise; 1 where p = 0 (never drafted)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = np.where(np.asarray(p) > 0, 1.0 - w + w * np.asarray(q) / np.where(np.asarray(p) > 0, p, 1.0), 1.0)
    return np.minimum(ratio, 1.0)


class HFEnsemble(OneChainRule):
    name = "hf_ensemble"
    short = "HF ensemble"
    label = "transformers' static ensemble verification"
    color = "#0000ff"  # transformers's colour
    engine = "transformers"
    summary = ("Speculative sampling along one sampled chain against the mixture v = w·q + (1 − w)·p instead of q: "
               "each drafted token passes with min(1, 1 − w + w·q/p), and the correction comes from (q − p)₊.")
    source = f"transformers' assistant_ensemble_weight ({SOURCE}; DIVERSED, arXiv 2604.07622)"
    lossless_by_theory = False
    greedy_is_target = False      # at T = 0 a wrong token still passes with probability 1 − w
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("w", float, DEFAULT_W, "the ensemble weight on the target (1: speculative sampling, 0: accept every "
              "drafted token)", within="[0, 1]", label="the ensemble weight",
              sweep=(0.0, 0.2, 0.4, 0.5, 0.6, 0.8, 0.9, 1.0)),
    )
    how = ("**How the static ensemble tests.** Token by token along the one chain: x_i passes with min(1, v(x_i)/p(x_i)) "
           "= min(1, 1 − w + w·q(x_i)/p(x_i)), the ratio of the mixture v = w·q + (1 − w)·p to the drafter; the first "
           "rejection stops, and the correction is drawn from (q − p)₊, the same as speculative sampling's.")

    def __init__(self, w: float = DEFAULT_W):
        self.w = self.parameters[0].check(w)

    def lossless(self) -> bool:
        return self.w == 1.0

    def verify_chain(self, tree: TokenTree, chain: Chain, coins: Coins) -> Outcome:
        passes = [float(ensemble_acceptance(chain.q_token(i), chain.p_token(i), self.w)) for i in range(chain.L)]
        return token_walk(tree, passes, "accept", lambda u, _: residual(tree.q[u] - tree.p[u], tree.q[u]),
                          coins, x=chain.tokens)

    def model_output_law(self, draft, target, K: int, L: int):
        """Exact output law on one chain sampled from p (``token_chain_law``)."""
        return token_chain_law(draft, target, L, lambda p, q: ensemble_acceptance(q, p, self.w),
                               lambda p, q: residual(q - p, q))

    model_law_cost = staticmethod(node_recursion_cost)

    def __repr__(self) -> str:
        return f"<verifier hf_ensemble w={self.w:g}>"
