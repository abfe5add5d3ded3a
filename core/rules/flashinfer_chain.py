"""FlashInfer's chain speculative sampling, as released (flashinfer-ai/flashinfer,
``include/flashinfer/sampling.cuh``, ``ChainSpeculativeSampling``, at fb28d72; the Python entry point
``flashinfer.sampling.chain_speculative_sampling``; docs/maths.md, "Released rules, ported").

The kernel names the models as this project does (``draft_probs`` p, ``target_probs`` q).  Along the
one drafted chain x_1..x_L it draws u uniform on (0, 1] (``curand_uniform``) and accepts x_i iff
u·p(x_i|x_<i) < q(x_i|x_<i), stopping at the first failure; the extra token is drawn from
(q − p)₊ normalised at the stopping position, or from q(·|x) after L acceptances (the bonus row has
no draft probabilities).  It is the standard rule, ported here as a control: its law is measured
against SD's, not assumed equal to it.

P(u·p < q) = min(1, q/p) for p > 0 (u = 1 exactly, where q = p, has probability 0); for p = 0 the
kernel accepts iff q > 0, which a sampled draft never meets.  The kernel's fallback when (q − p)₊
has no mass (the last valid index) is never reached: a rejection needs q(x) < p(x), so q ≠ p.
"""
from __future__ import annotations

import numpy as np

from core.data.coins import Coins
from core.data.distributions import residual
from core.data.outcome import Outcome, Trace
from core.data.token_tree import TokenTree
from core.rules.base import Verifier


def passes(q: float, p: float) -> float:
    """P(u·p < q) for u uniform on (0, 1]: the kernel's acceptance probability of a drafted token."""
    if p <= 0.0:
        return 1.0 if q > 0.0 else 0.0
    return min(1.0, q / p)


class FlashinferChain(Verifier):
    """FlashInfer's chain speculative sampling on the first draft: the standard rule, as released."""

    name = "flashinfer_chain"
    short = "FlashInfer chain"
    label = "FlashInfer's chain speculative sampling kernel, as released"
    engine = "SGLang"
    color = "#ff7799"  # SGLang's colour (SGLang's speculative kernel derives from FlashInfer's)
    summary = ("Along one drafted chain accept each token while u·p < q for a fresh uniform u, then draw the "
               "extra token from (q − p)₊ or the bonus from q, as FlashInfer's kernel does.")
    source = ("flashinfer-ai/flashinfer, include/flashinfer/sampling.cuh, ChainSpeculativeSampling "
              "(flashinfer.sampling.chain_speculative_sampling), at fb28d72")
    single_draft = True
    order_invariant = False
    lossless_by_theory = True
    needs_models = False
    closed_form_tau = False
    released_port = True

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:
        """The first draft, token by token (the kernel's one chain per request)."""
        x = block.draft(0)
        trace = Trace()
        for i, token in enumerate(x):
            u = x[:i]
            q, p = block.q[u], block.p[u]
            prob = passes(float(q[token]), float(p[token]))
            if not trace.test(x[:i + 1], 0, prob, coins.bernoulli(prob), "token", p=p[token], q=q[token]):
                return Outcome(u, 0 if i else -1, residual(np.maximum(q - p, 0.0), q), trace)
        return Outcome(x, 0, block.q[x], trace)

    def __repr__(self) -> str:
        return "<verifier flashinfer_chain>"
