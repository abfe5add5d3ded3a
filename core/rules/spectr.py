"""SpecTr K-SEQ (Sun, Suresh, Ro, Beirami, Jain, Yu, NeurIPS 2023), docs/maths.md, with the tree walk.

At one node with k i.i.d. draft tokens X_1..X_k ~ p and target q:
β(ρ) = Σ_x min(p(x), q(x)/ρ), and ρ* ∈ [1, k] is the root of 1 − (1 − β(ρ))^k = ρ·β(ρ).
Try the drafts in order, accepting X_i with probability min(1, q(X_i)/(ρ*·p(X_i))); if all k are
rejected, y ~ ∝ (q − ρ*·p)₊.  Acceptance = 1 − (1 − β(ρ*))^k.

Why the root makes the rule lossless: the accepted token has law (1 − (1−β)^k)·min(p, q/ρ)/β
= min(ρp, q) at the root, and the residual carries the rest, (1−β)^k = Σ(q − ρp)₊.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from core.data.coins import Coins
from core.data.distributions import residual
from core.data.outcome import Trace
from core.data.nodes import Node
from core.rules.tree_walk import TreeWalkVerifier


def beta(p: np.ndarray, q: np.ndarray, rho: float) -> float:
    """β(ρ) = Σ_x min(p(x), q(x)/ρ)."""
    return float(np.minimum(p, q / rho).sum())


def kseq_rho(p: np.ndarray, q: np.ndarray, k: int) -> float:
    """ρ* ∈ [1, k]: the root of f(ρ) = 1 − (1 − β(ρ))^k − ρ·β(ρ).

    f is non-increasing (ρβ(ρ) = Σ min(ρp, q) grows, β shrinks), f(1) ≥ 0 and f(k) ≤ 0 by Bernoulli's
    inequality.  Between consecutive ratios r_x = q(x)/p(x), β(ρ) = P_hi + Q_lo/ρ with P_hi the draft
    mass of tokens with r_x ≥ ρ and Q_lo the target mass of the others; the bracketing piece is found
    from f at the ratios, then a scalar bisection on that closed form runs to float64 resolution.
    """
    if k == 1:
        return 1.0
    mask = p > 0
    pp, qq = p[mask], q[mask]
    with np.errstate(over="ignore"):  # a subnormal p: the ratio is +inf, ranked last, as it should
        ratio = qq / pp
    order = np.argsort(ratio)
    r, ps, qs = ratio[order], pp[order], qq[order]
    # Tokens at or below index i (ascending ratio) contribute q/ρ, the others p.
    q_low = np.concatenate(([0.0], np.cumsum(qs)))          # Q_lo when the first j tokens are low
    p_high = np.concatenate((np.cumsum(ps[::-1])[::-1], [0.0]))  # P_hi likewise

    def f_piece(rho: float, j: int) -> float:
        b = p_high[j] + q_low[j] / rho
        return 1.0 - (1.0 - b) ** k - rho * b

    def piece(rho: float) -> int:
        return int(np.searchsorted(r, rho, side="left"))  # tokens with r_x < ρ are low

    lo, hi = 1.0, float(k)
    if f_piece(lo, piece(lo)) <= 0.0:
        return 1.0
    inner = r[(r > lo) & (r < hi)]
    if inner.size:  # f at every breakpoint at once; f is monotone, so the sign change brackets
        j = np.searchsorted(r, inner, side="left")
        b = p_high[j] + q_low[j] / inner
        positive = (1.0 - (1.0 - b) ** k - inner * b) > 0.0
        n_pos = int(np.argmin(positive)) if not positive.all() else inner.size
        if n_pos > 0:
            lo = float(inner[n_pos - 1])
        if n_pos < inner.size:
            hi = float(inner[n_pos])
    j = piece(0.5 * (lo + hi))
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if f_piece(mid, j) > 0.0:
            lo = mid
        else:
            hi = mid
    return lo if abs(f_piece(lo, j)) <= abs(f_piece(hi, j)) else hi


def kseq_core(p: np.ndarray, q: np.ndarray, k: int, trace: Trace, s: Node):
    """K-SEQ at node s for k alive drafts: ρ* is solved once, then tokens are tried in order."""
    rho = kseq_rho(p, q, k)
    b = beta(p, q, rho)
    trace.note(s, rho=rho, beta=b, accept=1.0 - (1.0 - b) ** k, alive=k)
    leftover = residual(q - rho * p, q)

    def run(tokens: Sequence[int], drafts: Sequence[int], coins: Coins, trace: Trace):
        for token, draft in zip(tokens, drafts):
            with np.errstate(over="ignore"):  # q/(ρ·p) = inf for a subnormal p: accepted, as it should
                prob = 1.0 if p[token] <= 0 else min(1.0, q[token] / (rho * p[token]))
            if trace.test(s + (token,), draft, prob, coins.bernoulli(prob), "token"):
                return draft, None
        return None, leftover

    return run


class SpecTr(TreeWalkVerifier):
    name = "spectr"
    short = "SpecTr"
    label = "K-SEQ"
    color = "#56b4e9"  # sky blue
    summary = ("K drafts, walked down the draft tree; at each node an optimal-transport coupling (K-SEQ) "
               "decides which drafted token to keep.")
    source = "Sun, Suresh, Ro, Beirami, Jain, Yu, NeurIPS 2023"
    single_draft = False
    order_invariant = False
    lossless_by_theory = True
    needs_models = False
    closed_form_tau = False
    how = ("**How SpecTr tests.** At each node the k drafts still alive are tried in order: a draft's token x "
           "passes with probability min(1, q(x)/(ρ*·p(x))), ρ* ∈ [1, k] solving 1 − (1 − β)^k = ρ·β with β = Σ_y "
           "min(p(y), q(y)/ρ) (the node's ρ* is in each line); if all are rejected the token comes from (q − "
           "ρ*·p)₊.")
    core = staticmethod(kseq_core)
