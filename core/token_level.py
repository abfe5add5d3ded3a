"""SD: token-level speculative sampling (Leviathan et al. 2023; Chen et al. 2023), spec §3.

For i = 1..L accept x_i with probability min(1, q(x_i|x_<i) / p(x_i|x_<i)); stop at the first
rejection.  Residual at the stopping node u: ∝ (q(·|u) − p(·|u))₊; bonus from q(·|x) if all L pass.
E[τ | x] = Σ_i Π_(j≤i) min(1, q(x_j|x_<j)/p(x_j|x_<j)).  Uses draft 1 only, whatever K is.
"""
from __future__ import annotations

from .coins import Coins
from .distributions import acceptance_ratio, residual
from .trace import Outcome, Trace
from .tree import DraftBlock
from .verifier import Verifier, register


def _ratios(block: DraftBlock) -> list[float]:
    x = block.draft(0)
    return [acceptance_ratio(block.q[x[:i]][x[i]], block.p[x[:i]][x[i]]) for i in range(block.L)]


@register
class SD(Verifier):
    name = "sd"
    label = "SD (token-level)"
    citation = "Leviathan, Kalman, Matias 2023; Chen et al. 2023"
    single_draft = True

    def run(self, block: DraftBlock, coins: Coins) -> Outcome:
        x = block.draft(0)
        trace = Trace()
        for i, ratio in enumerate(_ratios(block)):
            node = x[: i + 1]
            trace.note(node, accept=ratio)
            if not trace.test(node, 0, ratio, coins.bernoulli(ratio), "token"):
                u = x[:i]
                return Outcome(u, 0 if i else -1, residual(block.q[u] - block.p[u], block.q[u]), trace)
        return Outcome(x, 0, block.q[x], trace)

    def expected_tau(self, block: DraftBlock) -> float:
        total, survive = 0.0, 1.0
        for ratio in _ratios(block):
            survive *= ratio
            total += survive
        return total
