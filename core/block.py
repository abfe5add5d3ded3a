"""BV: block verification (Sun, Mendlovic, Leviathan, Aharoni, Ro, Beirami, Suresh, ICLR 2025;
called GBV in the SpecTr-GBV paper), spec §3.

Weights w_0 = 1, w_i = min(1, w_(i−1)·q(x_i|x_<i)/p(x_i|x_<i)).  For 1 ≤ i < L
A_i = Σ_x (w_i·q(x|x_≤i) − p(x|x_≤i))₊ and h_i = A_i / (A_i + 1 − w_i) (h_i = 1 when the denominator
is 0); h_L = w_L.  With independent η_i ~ U(0,1), τ = max{i : η_i ≤ h_i} (0 if none): the longest
passing sub-block wins, so the coins are tossed from i = L downwards and the first pass decides.
Residual at u = x_≤τ (τ < L): ∝ (w_τ·q(·|u) − p(·|u))₊.
P(τ = i | x) = h_i·Π_(j>i)(1 − h_j), which gives E[τ | x] in closed form.

``block_verify`` is the rule on one path with arbitrary conditionals; RBV and best-of-K reuse it with
a modified first target conditional or a modified draft law.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .coins import Coins
from .distributions import positive_part, residual
from .trace import Outcome, Trace
from .tree import DraftBlock, Node
from .verifier import Verifier, register


def block_quantities(tokens: Sequence[int], p_rows: Sequence[np.ndarray],
                     q_rows: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weights w_0..w_n, residual masses A_0..A_(n−1) and stopping probabilities h_1..h_n of BV on
    one path (h[0] unused, A[n] unused).

    ``p_rows[i]``/``q_rows[i]`` are the draft/target conditionals of token i (i = 0..n−1) and
    ``q_rows[n]`` the bonus conditional.  The ratio q/p is *not* capped before multiplying: a later
    token with q > p can restore weight lost earlier, which is what makes BV beat SD.
    """
    n = len(tokens)
    w = np.ones(n + 1)
    A = np.zeros(n + 1)
    h = np.zeros(n + 1)
    for i in range(1, n + 1):
        t = tokens[i - 1]
        p_t, q_t = p_rows[i - 1][t], q_rows[i - 1][t]
        w[i] = 1.0 if p_t <= 0.0 else min(1.0, w[i - 1] * q_t / p_t)
    for i in range(n):
        A[i] = float(positive_part(w[i] * q_rows[i] - p_rows[i]).sum())
    for i in range(1, n):
        denom = A[i] + 1.0 - w[i]
        h[i] = 1.0 if denom <= 0.0 else A[i] / denom
    h[n] = w[n]
    return w, A, h


def extra_distribution(i: int, w: np.ndarray, p_rows, q_rows) -> np.ndarray:
    """Law of the extra token when τ = i: q(·|x) for the bonus (i = n), else the residual
    ∝ (w_i·q(·|x_≤i) − p(·|x_≤i))₊."""
    if i == len(p_rows):
        return q_rows[i]
    return residual(w[i] * q_rows[i] - p_rows[i], q_rows[i])


def block_verify(tokens: Sequence[int], p_rows: Sequence[np.ndarray], q_rows: Sequence[np.ndarray],
                 coins: Coins, trace: Trace, nodes: Sequence[Node], draft: int) -> tuple[int, np.ndarray]:
    """Run BV on one path; return (τ, distribution of the extra token).

    ``nodes[i]`` names the node reached after i tokens (for the trace), i = 0..n.
    """
    n = len(tokens)
    w, A, h = block_quantities(tokens, p_rows, q_rows)
    for i in range(1, n + 1):
        trace.note(nodes[i], w=w[i], h=h[i], **({"A": A[i]} if i < n else {}))
    for i in range(n, 0, -1):
        kind = "full-block" if i == n else "sub-block"
        if trace.test(nodes[i], draft, h[i], coins.bernoulli(h[i]), kind):
            return i, extra_distribution(i, w, p_rows, q_rows)
    return 0, extra_distribution(0, w, p_rows, q_rows)


def block_law(tokens: Sequence[int], p_rows: Sequence[np.ndarray], q_rows: Sequence[np.ndarray]
              ) -> list[tuple[int, float, np.ndarray]]:
    """BV's exact law on one path: [(τ, P(τ | x), law of the extra token)], P(τ = i | x) =
    h_i·Π_(j>i)(1 − h_j) (h_0 = 1), zero-probability values of τ left out."""
    n = len(tokens)
    w, _, h = block_quantities(tokens, p_rows, q_rows)
    out = []
    none_above = 1.0
    for i in range(n, -1, -1):
        hi = 1.0 if i == 0 else min(max(h[i], 0.0), 1.0)
        prob = hi * none_above
        if prob > 0.0:
            out.append((i, prob, extra_distribution(i, w, p_rows, q_rows)))
        none_above *= 1.0 - hi
    return out


def _path_rows(block: DraftBlock, k: int):
    x = block.draft(k)
    nodes = [x[:i] for i in range(block.L + 1)]
    return x, nodes, [block.p[u] for u in nodes[:-1]], [block.q[u] for u in nodes]


@register
class BV(Verifier):
    name = "bv"
    label = "BV (block verification)"
    citation = "Sun, Mendlovic, Leviathan, Aharoni, Ro, Beirami, Suresh, ICLR 2025"
    single_draft = True

    def run(self, block: DraftBlock, coins: Coins) -> Outcome:
        x, nodes, p_rows, q_rows = _path_rows(block, 0)
        trace = Trace()
        tau, dist = block_verify(x, p_rows, q_rows, coins, trace, nodes, 0)
        return Outcome(x[:tau], 0 if tau else -1, dist, trace)

    def expected_tau(self, block: DraftBlock) -> float:
        """E[τ | x] = Σ_i i·h_i·Π_(j>i)(1 − h_j)."""
        x, _, p_rows, q_rows = _path_rows(block, 0)
        return sum(tau * prob for tau, prob, _ in block_law(x, p_rows, q_rows))
