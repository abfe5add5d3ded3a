"""BV: block verification (Sun, Mendlovic, Leviathan, Aharoni, Ro, Beirami, Suresh, ICLR 2025;
called GBV in the SpecTr-GBV paper), docs/maths.md.

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

from core.data.coins import Coins
from core.data.distributions import acceptance_ratio, positive_part, residual
from core.data.levels import law_from_levels, level_conditionals, node_recursion_cost
from core.data.outcome import Outcome, Trace
from core.data.nodes import Node
from core.data.token_tree import TokenTree
from core.rules.base import Verifier


def path_weights(p_tokens: Sequence[float], q_tokens: Sequence[float]) -> np.ndarray:
    """w_0 = 1, w_i = min(1, w_(i−1)·q(x_i|x_<i)/p(x_i|x_<i)) (w_i = 1 where p = 0) from the path's
    own token probabilities.  The ratio is *not* capped before multiplying: a later token with
    q > p can restore weight lost earlier, which is what makes BV beat SD."""
    w = np.ones(len(p_tokens) + 1)
    for i, (p_t, q_t) in enumerate(zip(p_tokens, q_tokens), start=1):
        w[i] = acceptance_ratio(w[i - 1] * q_t, p_t)
    return w


def residual_mass(w_i: float, q_row: np.ndarray, p_row: np.ndarray) -> float:
    """A_i = Σ_x (w_i·q(x|x_≤i) − p(x|x_≤i))₊."""
    return float(positive_part(w_i * q_row - p_row).sum())


def stop_probability(A_i: float, w_i: float) -> float:
    """h_i = A_i / (A_i + 1 − w_i), and 1 when the denominator is 0 (1 ≤ i < L)."""
    denom = A_i + 1.0 - w_i
    return 1.0 if denom <= 0.0 else A_i / denom


def block_quantities(tokens: Sequence[int], p_rows: Sequence[np.ndarray],
                     q_rows: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weights w_0..w_n, residual masses A_0..A_(n−1) and stopping probabilities h_1..h_n of BV on
    one path (h[0] unused, A[n] unused).

    ``p_rows[i]``/``q_rows[i]`` are the draft/target conditionals of token i (i = 0..n−1) and
    ``q_rows[n]`` the bonus conditional.
    """
    n = len(tokens)
    w = path_weights([p_rows[i][t] for i, t in enumerate(tokens)],
                     [q_rows[i][t] for i, t in enumerate(tokens)])
    A = np.zeros(n + 1)
    h = np.zeros(n + 1)
    for i in range(n):
        A[i] = residual_mass(w[i], q_rows[i], p_rows[i])
    for i in range(1, n):
        h[i] = stop_probability(A[i], w[i])
    h[n] = w[n]
    return w, A, h


def extra_distribution(i: int, w: np.ndarray, p_rows, q_rows) -> np.ndarray:
    """Law of the extra token when τ = i: q(·|x) for the bonus (i = n), else the residual
    ∝ (w_i·q(·|x_≤i) − p(·|x_≤i))₊."""
    if i == len(q_rows) - 1:
        return q_rows[i]
    return residual(w[i] * q_rows[i] - p_rows[i], q_rows[i])


def block_verify(tokens: Sequence[int], p_rows: Sequence[np.ndarray], q_rows: Sequence[np.ndarray],
                 coins: Coins, trace: Trace, nodes: Sequence[Node], draft: int, *,
                 p_tokens: Sequence[float] | None = None, complete: bool = True
                 ) -> tuple[int, np.ndarray]:
    """Run BV on one path; return (τ, distribution of the extra token).

    ``nodes[i]`` names the node reached after i tokens (for the trace), i = 0..n.  The coins are
    tossed from i = n down and the first pass decides, so h_i (which needs the whole row
    p_rows[i]) is computed when its coin is reached; ``p_tokens[i]`` = p_rows[i][tokens[i]], when
    given, spares the rows for the weights.  With ``complete`` the trace also gets A and h of the
    nodes above the accepted one, whose coins were never tossed; without it those nodes get w only,
    and rows that compute themselves on access (best-of-K's p*, one vocabulary sort each) are only
    touched where a coin or the residual needs them.
    """
    n = len(tokens)
    if p_tokens is None:
        p_tokens = [p_rows[i][t] for i, t in enumerate(tokens)]
    q_tokens = [q_rows[i][t] for i, t in enumerate(tokens)]
    w = path_weights(p_tokens, q_tokens)
    for i in range(1, n + 1):
        trace.note(nodes[i], w=w[i])                # nodes in path order, quantities added below
    A_of: dict[int, float] = {}

    def h(i: int) -> float:
        if i == n:
            trace.note(nodes[n], h=w[n])
            return w[n]
        A_of[i] = residual_mass(w[i], q_rows[i], p_rows[i])
        value = stop_probability(A_of[i], w[i])
        trace.note(nodes[i], h=value, A=A_of[i])
        return value

    tau = 0
    for i in range(n, 0, -1):
        prob = h(i)
        # the test carries its formula's numbers: w_i = min(1, w_(i−1)·q/p) and, below the block's
        # end, h_i = A_i/(A_i + 1 − w_i); i counts the tokens of this path
        if trace.test(nodes[i], draft, prob, coins.bernoulli(prob), "full-block" if i == n else "sub-block",
                      i=i, p=p_tokens[i - 1], q=q_tokens[i - 1], w_prev=w[i - 1], w=w[i], h=prob,
                      **({"A": A_of[i]} if i < n else {})):
            tau = i
            break
    if complete:
        for i in range(1, tau):
            h(i)
    return tau, extra_distribution(tau, w, p_rows, q_rows)


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


def block_output_levels(p_levels: Sequence[np.ndarray], q_levels: Sequence[np.ndarray]
                        ) -> list[np.ndarray]:
    """BV's exact output law when its one path is drawn from the conditionals ``p_levels``.

    ``p_levels[d]``/``q_levels[d]`` (shape (V^d, V), ``core.data.levels`` order) are the draft and
    target conditionals at every node of depth d, for d = 0..L−1 and d = 0..L.  Returns E[d],
    d = 0..L+1, with E[d][u] = P(O = u) (E[0] = 0).

    Every quantity of ``block_quantities`` depends on the path only through a prefix, so it is a
    node quantity: w(u·x) = min(1, w(u)·q(x|u)/p(x|u)), A(u) = Σ_x (w(u)·q(x|u) − p(x|u))₊, and
    h(u) = A(u)/(A(u) + 1 − w(u)) for 1 ≤ |u| < L, h(u) = w(u) at |u| = L, h(∅) = 1.  With
    independent coins from L down, τ-node = u needs the coin at u to pass and every deeper coin on
    the path to fail, so P(τ-node = u) = p(u)·h(u)·S(u), where S(u) = E[Π_(j>|u|)(1 − h(x_≤j)) | u]
    satisfies S(u) = Σ_x p(x|u)·(1 − h(u·x))·S(u·x), S = 1 at depth L.  Then P(O = u·y) =
    P(τ-node = u)·e(y|u) with e = ``extra_distribution``: O(V·nodes) instead of one law per path.
    """
    L = len(p_levels)
    V = p_levels[0].shape[1]
    w, joint = [np.ones(1)], [np.ones(1)]
    for d in range(L):
        p, q = p_levels[d], q_levels[d]
        w.append(acceptance_ratio(w[d][:, None] * q, p).ravel())
        joint.append((joint[d][:, None] * p).ravel())
    weighted = [w[d][:, None] * q_levels[d] for d in range(L)]          # w(u)·q(·|u)
    h = [np.ones(1)]
    for d in range(1, L):
        A = positive_part(weighted[d] - p_levels[d]).sum(axis=1)
        denom = A + 1.0 - w[d]
        h.append(np.where(denom <= 0.0, 1.0, A / np.where(denom <= 0.0, 1.0, denom)))
    h.append(w[L])
    h = [np.clip(x, 0.0, 1.0) for x in h]
    survive = np.ones(V ** L)
    emitted = [np.zeros(V ** d) for d in range(L + 2)]
    for d in range(L, -1, -1):
        stop = joint[d] * h[d] * survive                                # P(τ-node = u), |u| = d
        extra = q_levels[L] if d == L else residual(weighted[d] - p_levels[d], q_levels[d])
        emitted[d + 1] = (stop[:, None] * extra).ravel()
        if d:
            survive = (p_levels[d - 1] * ((1.0 - h[d]) * survive).reshape(-1, V)).sum(axis=1)
    return emitted


def _path_rows(block: TokenTree, k: int):
    x = block.draft(k)
    nodes = [x[:i] for i in range(block.L + 1)]
    return x, nodes, [block.p[u] for u in nodes[:-1]], [block.q[u] for u in nodes]


class BV(Verifier):
    name = "bv"
    short = "BV"
    label = "block verification"
    color = "#0072b2"  # blue
    summary = ("One draft, checked as a block: a later token that q likes more than p can rescue an "
               "earlier one and the longest passing prefix wins; the best possible rule for a single draft.")
    source = "Sun, Mendlovic, Leviathan, Aharoni, Ro, Beirami, Suresh, ICLR 2025"
    walk = "block"
    single_draft = True
    order_invariant = False
    lossless_by_theory = True
    needs_models = False
    closed_form_tau = True
    how = ("**How BV tests a block.** Along draft 1, x₁ … x_L, the weight starts at w₀ = 1 and each token "
           "multiplies it by its ratio, capped at 1: w_i = min(1, w_(i−1)·q(x_i)/p(x_i)), so a later token the "
           "target likes more can win back what an earlier one lost. The tests go from the whole block down: the "
           "block passes with probability h_L = w_L; a shorter sub-block x≤i with h_i = A_i/(A_i + 1 − w_i), "
           "where A_i = Σ_y (w_i·q(y|x≤i) − p(y|x≤i))₊ is the mass the residual at x≤i must supply. The first "
           "pass decides τ; the extra token comes from that residual, ∝ (w_τ·q − p)₊.")

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:
        x, nodes, p_rows, q_rows = _path_rows(block, 0)
        trace = Trace()
        tau, dist = block_verify(x, p_rows, q_rows, coins, trace, nodes, 0)
        return Outcome(x[:tau], 0 if tau else -1, dist, trace)

    def expected_tau(self, block: TokenTree) -> float:
        """E[τ | x] = Σ_i i·h_i·Π_(j>i)(1 − h_j)."""
        x, _, p_rows, q_rows = _path_rows(block, 0)
        return sum(tau * prob for tau, prob, _ in block_law(x, p_rows, q_rows))

    def model_output_law(self, draft, target, K: int, L: int) -> tuple[dict[Node, float], int]:
        """Exact output law on toy models by the node recursion of ``block_output_levels``; the
        tests check it against the coin-by-coin law of every path.  Returns the law and the
        number of nodes."""
        p_levels = level_conditionals(draft, L - 1)
        law = law_from_levels(block_output_levels(p_levels, level_conditionals(target, L)), draft.V)
        return law, sum(draft.V ** d for d in range(L + 1))

    model_law_cost = staticmethod(node_recursion_cost)
