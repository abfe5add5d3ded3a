"""vLLM Model Runner V2 with probabilistic drafts before PR 54282: the rejected token's replacement is
drawn with the very Gumbel noise that drew the draft token (docs/maths.md, "vLLM's shared Gumbel
noise (`vllm_shared_gumbel`)").

Ported from vllm-project/vllm, ``vllm/v1/worker/gpu/spec_decode/rejection_sampler_utils.py`` at
02e318b and ``vllm/v1/worker/gpu/sample/gumbel.py``, before fe755c8 (PR 54282, "Decouple the draft's
gumbel noise stream from the target's"), the engine's p being this project's q.  With
``draft_sample_method="probabilistic"`` the drafter samples the token of position P as
argmax(log p + G) with G the Gumbel vector keyed by (seed, P) (``gumbel_block_argmax``:
``gumbel_seed = tl.randint(seed, pos)``, one uniform per token id), and the verifier keys its
resample of a rejected position by the same (seed, P) (``_resample_kernel`` →
``gumbel_block_argmax``): the same vector G.  PR 54282 adds a salt (1 << 30) to the drafter's
offset.  Everything else is the engine's rule:

* ``rejection="standard"`` (the per-token rule): x_i passes when log q(x_i) > log u + log p(x_i),
  probability min(1, q/p); at the first failure the extra token is argmax(log (q − p)₊ + G_i);
* ``rejection="block"`` (``rejection_sample_method="block"``, PR 46781): τ as in block verification
  (``vllm_block``), the extra token argmax(log (w_τ·q − p)₊ + G_(τ+1));
* after L tokens the bonus comes from q with a fresh vector (the next position's key).

The acceptance uniform u is the float of the key ``randint(seed, P)`` from which the vector G is
hashed token by token; this port treats u and G as independent (an ideal generator), so the only
coupling is the shared vector.  Given the draft token x, G is a Gumbel vector conditioned on x
winning the race for p, and the replacement's law is the closed form of ``core.data.gumbel``
(``shared_noise_row``): the coin programme draws it with one categorical coin, so the sampled rule
and the exact law are one programme.  Lossy: conditioned on x winning, the tokens p favours lost
with small noise, and the residual under-weights them.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from core.data.coins import Coins
from core.data.distributions import acceptance_ratio, residual
from core.data.gumbel import shared_noise_row
from core.data.levels import node_recursion_cost
from core.data.outcome import Outcome, Trace
from core.data.token_tree import TokenTree
from core.rules.block import block_law, block_verify
from core.rules.one_chain import Chain, OneChainRule, chain_law_cost, chain_output_law
from core.rules.params import Param
from core.rules.token_level import token_chain_law, token_walk

#: The engine's ``rejection_sample_method``: the per-token rule (the default) or block verification.
METHODS = ("standard", "block")
SOURCE = ("vllm-project/vllm, vllm/v1/worker/gpu/spec_decode/rejection_sampler_utils.py at 02e318b and "
          "vllm/v1/worker/gpu/sample/gumbel.py, before PR 54282 (fe755c8)")


def replacement(p_row: np.ndarray, weights: np.ndarray, token: int, fallback: np.ndarray) -> np.ndarray:
    """The law of argmax(log weights + G) given that argmax(log p_row + G) = ``token``; ``fallback``
    where the weights have no mass (a failure of probability 0)."""
    if not float(np.maximum(weights, 0.0).sum()) > 1e-300 or not p_row[token] > 0:
        return fallback
    return shared_noise_row(p_row, np.maximum(weights, 0.0), token)


class VllmSharedGumbel(OneChainRule):
    name = "vllm_shared_gumbel"
    short = "vLLM shared noise"
    label = "vLLM Model Runner V2 with the draft's Gumbel noise reused for the replacement token"
    color = "#dd00bb"  # vLLM's colour
    engine = "vLLM"
    summary = ("Speculative sampling or block verification along one sampled chain, with the rejected token's "
               "replacement drawn by the Gumbel noise that drew the rejected token, as shipped before PR 54282.")
    source = f"vLLM MRV2 with probabilistic drafts before PR 54282 ({SOURCE})"
    lossless_by_theory = False
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("rejection", str, METHODS[0], "the engine's rejection_sample_method: the per-token rule or block "
              "verification", choices=METHODS),
    )
    how = ("**How vLLM's shared-noise verification tests.** Along the one sampled chain, token by token (x_i passes "
           "with min(1, q/p)) or as a block (h_i as in block verification); the replacement of a rejected token is "
           "the argmax of its residual's log-probabilities plus the Gumbel noise that drew the rejected token, so "
           "it is drawn from the residual conditioned on that token having won the draft's race.")

    def __init__(self, rejection: str = METHODS[0]):
        self.rejection = self.parameters[0].check(rejection)

    def verify_chain(self, tree: TokenTree, chain: Chain, coins: Coins) -> Outcome:
        if self.rejection == "standard":
            passes = [acceptance_ratio(chain.q_token(i), chain.p_token(i)) for i in range(chain.L)]

            def correction(u, token):
                i = len(u)
                return replacement(chain.p[i], chain.q[i] - chain.p[i], token, chain.q[i])
            return token_walk(tree, passes, "accept", correction, coins, x=chain.tokens)
        trace = Trace()
        nodes = [chain.node(i) for i in range(chain.L + 1)]
        tau, dist = block_verify(chain.tokens, list(chain.p), chain.q, coins, trace, nodes, 0)
        if tau < chain.L:
            dist = replacement(chain.p[tau], dist, chain.tokens[tau], dist)
        return Outcome(chain.node(tau), 0 if tau else -1, dist, trace)

    def model_output_law(self, draft, target, K: int, L: int):
        """Exact output law on one chain sampled from p: the per-token rule by the node recursion
        (``token_chain_law``, the replacement's law one row per failed child), block verification by
        ``block_law`` on each of the V^L paths, the replacement's law given x_(τ+1)."""
        if self.rejection == "standard":
            def rows(p, q):
                return np.array([[replacement(pr, qr - pr, x, residual(qr - pr, qr)) for x in range(pr.size)]
                                 for pr, qr in zip(p, q)])
            return token_chain_law(draft, target, L, lambda p, q: acceptance_ratio(q, p), rows)

        def conditional(c: Chain):
            for tau, prob, extra in block_law(c.tokens, list(c.p), c.q):
                yield tau, prob, (extra if tau == c.L else replacement(c.p[tau], extra, c.tokens[tau], extra))
        return chain_output_law(draft, target, L, conditional)

    @staticmethod
    def model_law_cost(V: int, K: int, L: int) -> float:
        return node_recursion_cost(V, K, L) + chain_law_cost(V, K, L)

    def __repr__(self) -> str:
        return f"<verifier vllm_shared_gumbel {self.rejection}>"
