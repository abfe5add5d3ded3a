"""vLLM's block verification in Model Runner V2 (PR 46781), with the drafter's probabilities or with
drafts passed without them, one-hot (docs/maths.md, "vLLM's block verification (`vllm_block`)").

Ported from vllm-project/vllm, ``vllm/v1/worker/gpu/spec_decode/rejection_sampler_utils.py`` at
02e318b (``USE_BLOCK_VERIFICATION``), the engine's p being this project's q:

* ``_compute_cumulative_log_p_kernel``: log w_i = min(log w_(i−1) + log q(x_i) − log p(x_i), 0);
* ``_compute_global_residual_mass``: A_i = Σ_v (w_i·q(v|x_≤i) − p(v|x_≤i))₊, and with drafts passed
  without probabilities (``HAS_DRAFT_LOGITS`` False, p one-hot at x_(i+1)) its closed form
  w_i·(1 − q(x_(i+1)|x_≤i));
* ``_rejection_kernel``: one uniform u_i per position (``tl_rand32(seed, pos)``), h_i = A_i/(A_i + 1 −
  w_i) (1 where the denominator is 0), h_L = w_L, and τ = the last i with u_i ≤ h_i;
* ``_resample_kernel``: the extra token from (w_τ·q − p)₊ normalised (log space, ``log1p``), with
  one-hot drafts from q without x_(τ+1) (w_τ cancels), and the bonus from q after L tokens.

With the drafter's probabilities (``drafts="probabilistic"``, the engine's drafters that cache their
logits) this is Sun et al.'s block verification exactly, coin for coin: ``bv`` (``core.rules.block``).
With one-hot drafts the same formulas read p as the point mass at each drafted token: w_i =
Π_(j≤i) q(x_j), A_i = w_i(1 − q(x_(i+1))), h_i = (w_i − w_(i+1))/(1 − w_(i+1)), and P(τ = i | x) =
h_i·Π_(j>i)(1 − h_j) = w_i − w_(i+1) by telescoping: the law of τ of token-level verification with
one-hot drafts (``vllm_onehot``), and the same residual.  One-hot block verification is therefore
the one-hot token rule, given any drafts (PR 40819's claim, ``core.claims.vllm_verification``).
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from core.data.coins import Coins
from core.data.outcome import Outcome, Trace
from core.data.token_tree import TokenTree
from core.rules.base import VerifierError
from core.rules.block import BV, block_law, block_verify
from core.rules.one_chain import ANY_CHAIN, Chain, OneChainRule, chain_law_cost, chain_output_law
from core.rules.params import Param

#: What the drafter passes: its probabilities (the default), or the drafted tokens alone.
DRAFTS = ("probabilistic", "onehot")
SOURCE = "vllm-project/vllm, vllm/v1/worker/gpu/spec_decode/rejection_sampler_utils.py at 02e318b (PR 46781)"


def one_hot_rows(chain: Chain) -> list[np.ndarray]:
    """The drafter's law as the kernels read it without draft probabilities: the point mass at x_i."""
    rows = []
    for i, t in enumerate(chain.tokens):
        row = np.zeros(chain.q[i].size)
        row[t] = 1.0
        rows.append(row)
    return rows


class VllmBlock(OneChainRule):
    name = "vllm_block"
    short = "vLLM BV"
    label = "vLLM Model Runner V2's block verification"
    color = "#dd00bb"  # vLLM's colour
    engine = "vLLM"
    summary = ("Block verification along one chain as vLLM's second model runner ships it, against the "
               "drafter's probabilities or, for drafts passed without them, against a one-hot drafter.")
    source = f"vLLM MRV2 block verification ({SOURCE})"
    walk = "block"
    lossless_by_theory = True
    runs_on = ANY_CHAIN
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("drafts", str, DRAFTS[0], "what the drafter passes: its probabilities, or the tokens alone "
              "(one-hot)", choices=DRAFTS),
    )
    how = ("**How vLLM's block verification tests.** Along the one chain the weight w_i = min(1, w_(i−1)·q(x_i)/p(x_i)) "
           "carries the block's ratio, with p the drafter's law or, for drafts passed without it, the point mass at "
           "each drafted token (then w_i = q(x_1)⋯q(x_i)). Position i passes with h_i = A_i/(A_i + 1 − w_i), A_i the "
           "mass of (w_i·q − p)₊ at the next position, and the whole block with w_L; the last passing position "
           "decides, and the correction is drawn from (w_τ·q − p)₊.")

    def __init__(self, drafts: str = DRAFTS[0]):
        self.drafts = self.parameters[0].check(drafts)

    def _rows(self, tree: TokenTree, chain: Chain) -> list[np.ndarray]:
        if self.drafts == "onehot":
            return one_hot_rows(chain)
        if not tree.iid_chains:
            raise VerifierError(f"{self.name} with drafts=probabilistic runs on one chain sampled from p only, "
                                f"not on {tree.shape.label} drafted by {tree.law.name}; use drafts=onehot")
        return list(chain.p)

    def verify_chain(self, tree: TokenTree, chain: Chain, coins: Coins) -> Outcome:
        trace = Trace()
        nodes = [chain.node(i) for i in range(chain.L + 1)]
        tau, dist = block_verify(chain.tokens, self._rows(tree, chain), chain.q, coins, trace, nodes, 0)
        return Outcome(chain.node(tau), 0 if tau else -1, dist, trace)

    def model_output_law(self, draft, target, K: int, L: int):
        """Exact output law on one chain sampled from p: BV's node recursion with the drafter's
        probabilities; with one-hot drafts, BV's law given each path (``block_law``) over the V^L paths."""
        if self.drafts == "probabilistic":
            return BV().model_output_law(draft, target, K, L)
        return chain_output_law(draft, target, L, lambda c: block_law(c.tokens, one_hot_rows(c), c.q))

    model_law_cost = staticmethod(chain_law_cost)

    def __repr__(self) -> str:
        return f"<verifier vllm_block {self.drafts}>"
