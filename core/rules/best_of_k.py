"""Best-of-K + BV (after Thomas & Pal 2026, "greedy multi-path block verification"; reconstructed
in the spec, §5).  Lossless: the selected path has a known law p*, and BV is valid for any draft
law it is handed.

At every node rank tokens by q/p descending (ties by token id; p = 0 ranks first).  Paths are ordered
lexicographically by rank and the best of the K drafts is selected.  With
F(u) = 1 − Σ_(j≤|u|) p(u_<j)·Σ_(t ranked above u_j) p(t|u_<j) (the chance that one draft is not better
than u), the selected path extends u with probability P*(u) = F(u)^K − (F(u) − p(u))^K, and its
conditionals are p*(x|u) = P*(u·x)/P*(u).  BV then runs on the selected path with draft law p*.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Callable

import numpy as np

from core.rules.block import block_output_levels, block_verify
from core.data.coins import Coins
from core.data.levels import law_from_levels, level_conditionals, node_recursion_cost
from core.data.trace import Outcome, Trace
from core.data.tree import DraftBlock, Node
from core.rules.base import Verifier


def _ratios(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """q/p per token, +inf where p = 0 (those rank first)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.where(p > 0, q / np.where(p > 0, p, 1.0), np.inf)


def rank_order(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Token ids from best to worst: q/p descending, p = 0 first, ties by token id; row by row for
    2-D arrays.

    Inside a decoder, between forward passes, numpy's default sort of a 4096-token row is about
    twice as fast as its stable sort (measured); it orders distinct keys exactly, so the stable
    sort is used only where a row has equal ratios (ties, whose order the default leaves open).
    """
    key = -_ratios(p, q)
    order = np.argsort(key, axis=-1)
    ordered = np.take_along_axis(key, order, axis=-1)
    if np.any(ordered[..., 1:] == ordered[..., :-1]):
        order = np.argsort(key, axis=-1, kind="stable")
    return order


def mass_above(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """For each token x, Σ_(t ranked above x) p(t); row by row for 2-D arrays (one node per row)."""
    order = rank_order(p, q)
    ranked = np.take_along_axis(p, order, axis=-1)
    above = np.empty_like(p)
    before = np.cumsum(ranked, axis=-1)[..., :-1]
    np.put_along_axis(above, order, np.concatenate([np.zeros_like(ranked[..., :1]), before], axis=-1),
                      axis=-1)
    return above


def select_best(block: DraftBlock) -> int:
    """Index of the lexicographically best draft (the first one among equals).

    Two drafts are compared at the first position where they differ, i.e. at a shared node u, by
    the rank of their tokens there; that needs two ratios, not a sort of the vocabulary.
    """
    def better(a: int, b: int) -> bool:
        x, y = block.draft(a), block.draft(b)
        for i in range(block.L):
            if x[i] != y[i]:
                u = x[:i]
                p, q = block.p[u], block.q[u]
                rx = np.inf if p[x[i]] <= 0 else q[x[i]] / p[x[i]]
                ry = np.inf if p[y[i]] <= 0 else q[y[i]] / p[y[i]]
                return rx > ry or (rx == ry and x[i] < y[i])
        return False

    best = 0
    for k in range(1, block.K):
        if better(k, best):
            best = k
    return best


def selected_mass(F, p_u, K: int):
    """P*(u) = F(u)^K − (F(u) − p(u))^K: the chance that the best of K i.i.d. drafts extends u."""
    return F ** K - np.maximum(F - p_u, 0.0) ** K


def mass_above_token(p: np.ndarray, q: np.ndarray, t: int) -> float:
    """Σ_(s ranked above t) p(s) for one token t, by comparison with t's ratio: O(V), no sort."""
    r = _ratios(p, q)
    above = (r > r[t]) | ((r == r[t]) & (np.arange(r.size) < t))
    return float(p[above].sum())


class SelectedPathLaw(Sequence):
    """p*(·|u) for u = path_<i, i = 0..|path|−1: the law of the best of K i.i.d. drafts along one
    path, as a sequence of rows computed on first access.

    A row needs the ranking of the whole vocabulary at its node (a sort); the path's own
    probabilities p*(path_i|u) (``tokens``) and the recursion F(u·x) = F(u) − p(u)·Σ_(ranked above x)
    p(·|u) along the path need only comparisons with one token, so BV can decide after sorting just
    the rows its coins reach (``block_verify(..., complete=False)``).
    """

    def __init__(self, p_cond: Callable[[Node], np.ndarray], q_cond: Callable[[Node], np.ndarray],
                 path: Node, K: int):
        self.K = K
        self.p = [p_cond(path[:i]) for i in range(len(path))]
        self.q = [q_cond(path[:i]) for i in range(len(path))]
        self.F, self.p_u, self.tokens = [], [], []
        F, p_u = 1.0, 1.0
        for p, q, t in zip(self.p, self.q, path):
            self.F.append(F)
            self.p_u.append(p_u)
            F_t, p_t = F - p_u * mass_above_token(p, q, t), p_u * float(p[t])
            P_u = selected_mass(F, p_u, K)
            self.tokens.append(float(selected_mass(F_t, p_t, K) / P_u) if P_u > 0 else float(p[t]))
            F, p_u = F_t, p_t
        self._rows: dict[int, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self.p)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = range(len(self))[i]
        if i not in self._rows:
            self._rows[i] = selected_rows(np.array([self.F[i]]), np.array([self.p_u[i]]),
                                          self.p[i][None], self.q[i][None], self.K)[0][0]
        return self._rows[i]


def selected_rows(F: np.ndarray, p_u: np.ndarray, p: np.ndarray, q: np.ndarray, K: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(p*(·|u), F(u·x)) for a batch of nodes u (one per row; F(u), p(u) of shape (n,), p(·|u),
    q(·|u) of shape (n, V)): F(u·x) = F(u) − p(u)·Σ_(ranked above x) p(·|u) and
    p*(x|u) = P*(u·x)/P*(u), or p(x|u) where P*(u) = 0."""
    F_child = F[:, None] - p_u[:, None] * mass_above(p, q)
    P_u = selected_mass(F, p_u, K)
    ok = P_u > 0
    rows = np.where(ok[:, None], selected_mass(F_child, p_u[:, None] * p, K)
                    / np.where(ok, P_u, 1.0)[:, None], p)
    return rows, F_child


def best_of_k_levels(p_levels: list[np.ndarray], q_levels: list[np.ndarray], K: int
                     ) -> list[np.ndarray]:
    """p*(·|u) at every node of depths 0..len(p_levels)−1 (``core.data.levels`` order), one depth at a
    time (``selected_rows``)."""
    out = []
    F, p_u = np.ones(1), np.ones(1)
    for p, q in zip(p_levels, q_levels):
        rows, F_child = selected_rows(F, p_u, p, q, K)
        out.append(rows)
        F, p_u = F_child.ravel(), (p_u[:, None] * p).ravel()
    return out


class BestOfKBV(Verifier):
    name = "best_of_k_bv"
    short = "Best-of-K+BV"
    label = "best draft by q/p ranks, then BV"
    color = "#ff7f0e"  # orange
    summary = ("Select the best of the K drafts by q/p ranks, then run block verification on it, "
               "with the law of the selected draft as p.")
    source = "after Thomas & Pal 2026 (greedy multi-path block verification), reconstructed"
    single_draft = False
    order_invariant = True
    lossless_by_theory = True
    needs_models = False
    closed_form_tau = False

    def run(self, block: DraftBlock, coins: Coins) -> Outcome:
        k = select_best(block)
        x = block.draft(k)
        nodes = [x[:i] for i in range(block.L + 1)]
        p_star = SelectedPathLaw(block.p.__getitem__, block.q.__getitem__, x, block.K)
        q_rows = [block.q[u] for u in nodes]
        trace = Trace()
        trace.note((), selected_draft=k)
        for i, prob in enumerate(p_star.tokens):
            trace.note(nodes[i + 1], p_star=prob)
        tau, dist = block_verify(x, p_star, q_rows, coins, trace, nodes, k,
                                 p_tokens=p_star.tokens, complete=self.complete_trace)
        return Outcome(x[:tau], k if tau else -1, dist, trace)

    def model_output_law(self, draft, target, K: int, L: int) -> tuple[dict[Node, float], int]:
        """Exact output law on toy models: BV's node recursion (``block_output_levels``) with the
        selected path's law p* as the draft law.

        This rests on the derivation that the best of K i.i.d. drafts has law P*; the tests check
        it against plain enumeration of draft multisets.  Returns the law and the number of nodes.
        """
        q_levels = level_conditionals(target, L)
        p_star = best_of_k_levels(level_conditionals(draft, L - 1), q_levels[:L], K)
        law = law_from_levels(block_output_levels(p_star, q_levels), draft.V)
        return law, sum(draft.V ** d for d in range(L + 1))

    model_law_cost = staticmethod(node_recursion_cost)
