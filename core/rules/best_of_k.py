"""Best-of-K + BV (after Thomas & Pal 2026, "greedy multi-path block verification"; reconstructed
in docs/maths.md).  Lossless: the selected path has a known law p*, and BV is lossless for any draft
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
from core.data.outcome import Outcome, Trace
from core.data.nodes import Node
from core.data.token_tree import TokenTree
from core.rules.base import Verifier


def _ratios(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """q/p per token, +inf where p = 0 (those rank first).  The division runs on p > 0 only (a
    draft with a reduced vocabulary, like SmolLM2's, has p = 0 on most ids)."""
    r = np.full(p.shape, np.inf)
    pos = p > 0
    with np.errstate(over="ignore"):
        r[pos] = q[pos] / p[pos]
    return r


def rank_order(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Token ids from best to worst: q/p descending, p = 0 first, ties by token id; row by row for
    2-D arrays."""
    return order_by_key(-_ratios(p, q))


def order_by_key(key: np.ndarray) -> np.ndarray:
    """The permutation that sorts ``key`` ascending along its last axis, equal keys by index (what
    a stable sort gives), row by row (``_row_order``)."""
    flat = key.reshape(-1, key.shape[-1])
    order = np.empty(flat.shape, dtype=np.intp)
    for r, row in enumerate(flat):
        order[r] = _row_order(row)
    return order.reshape(key.shape)


def _row_order(key: np.ndarray) -> np.ndarray:
    """``order_by_key`` of one row.

    Keys of −∞ (ratio +∞: tokens the draft gives p = 0, 40960 of SmolLM2's 49152 ids, whose draft
    keeps 8192) come first in index order without being sorted; only the rest is sorted.  Numpy's
    default sort is several times faster than its stable sort and orders distinct keys exactly;
    real rows do have equal ratios (float32 logits make equal q/p likely), so the default order is
    kept and only the runs of equal keys are put in index order (``_order_ties``).
    """
    first = key == -np.inf
    if first.any():
        rest = np.flatnonzero(~first)
        return np.concatenate([np.flatnonzero(first), rest[_row_order(key[rest])]])
    order = np.argsort(key)
    ordered = key[order]
    tied = ordered[1:] == ordered[:-1]
    if tied.any():
        _order_ties(order, ordered, tied)
    return order


def _order_ties(order: np.ndarray, ordered: np.ndarray, tied: np.ndarray) -> None:
    """Within every run of equal keys of one sorted row, put the token ids in increasing order (in
    place).  ``tied[i]`` says that positions i and i + 1 hold equal keys.  The members of all runs
    are sorted at once by (run number, id), packed into one integer for numpy's fast sort of plain
    values."""
    member = np.zeros(order.size, dtype=bool)
    member[1:] |= tied
    member[:-1] |= tied
    at = np.flatnonzero(member)
    starts = np.ones(at.size, dtype=np.int64)     # a member not tied to the position before it
    starts[1:] = ~tied[at[1:] - 1]
    run = np.cumsum(starts)
    order[at] = np.sort(run * order.size + order[at]) % order.size


def mass_above(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """For each token x, Σ_(t ranked above x) p(t); row by row for 2-D arrays (one node per row)."""
    return mass_above_in_order(p, rank_order(p, q))


def mass_above_in_order(p: np.ndarray, order: np.ndarray) -> np.ndarray:
    """For each token x, Σ_(t before x in ``order``) p(t), summed in that order."""
    ranked = np.take_along_axis(p, order, axis=-1)
    above = np.empty_like(p)
    before = np.cumsum(ranked, axis=-1)[..., :-1]
    np.put_along_axis(above, order, np.concatenate([np.zeros_like(ranked[..., :1]), before], axis=-1),
                      axis=-1)
    return above


def select_best(block: TokenTree) -> int:
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


def mass_above_token(p: np.ndarray, ratios: np.ndarray, t: int) -> float:
    """Σ_(s ranked above t) p(s) for one token t, by comparison with t's ratio (``ratios`` = q/p,
    ``_ratios``): O(V), no sort."""
    r = ratios
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
        # q/p once per node: the path's recursion compares with it, a row's sort orders by it
        self.ratios = [_ratios(p, q_cond(path[:i])) for i, p in enumerate(self.p)]
        self.F, self.p_u, self.tokens = [], [], []
        F, p_u = 1.0, 1.0
        for p, r, t in zip(self.p, self.ratios, path):
            self.F.append(F)
            self.p_u.append(p_u)
            F_t, p_t = F - p_u * mass_above_token(p, r, t), p_u * float(p[t])
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
            self._rows[i] = self._row(i)
        return self._rows[i]

    def _row(self, i: int) -> np.ndarray:
        """p*(·|u) at u = path_<i, computed on the tokens with p(x|u) > 0 only where that is exact.

        Leaving out a token with p = 0 changes no sum of p in rank order (adding 0.0 is exact), and
        such a token has p*(x|u) = 0 when F(u·x) = F(u) − p(u)·above(x) ≥ 0 (``selected_rows``);
        rounding is monotone, so F(u) − p(u)·(Σ p) ≥ 0 guarantees that for all of them.
        Otherwise (never seen) the whole row is computed.
        """
        p, r, F, p_u = self.p[i], self.ratios[i], np.array([self.F[i]]), np.array([self.p_u[i]])
        on = np.flatnonzero(p > 0)
        p_on = p[on]
        order = order_by_key(-r[on])
        above = mass_above_in_order(p_on, order)
        last = order[-1]
        if F[0] - p_u[0] * (above[last] + p_on[last]) < 0:
            above = mass_above_in_order(p, order_by_key(-r))
            return selected_rows(F, p_u, p[None], above[None], self.K)[0][0]
        row = np.zeros_like(p)
        row[on] = selected_rows(F, p_u, p_on[None], above[None], self.K)[0][0]
        return row


def selected_rows(F: np.ndarray, p_u: np.ndarray, p: np.ndarray, above: np.ndarray, K: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(p*(·|u), F(u·x)) for a batch of nodes u (one per row; F(u), p(u) of shape (n,), p(·|u)
    and above(x) = Σ_(ranked above x) p(·|u) (``mass_above``) of shape (n, V)):
    F(u·x) = F(u) − p(u)·above(x) and p*(x|u) = P*(u·x)/P*(u), or p(x|u) where P*(u) = 0.

    P*(u·x) = F(u·x)^K − max(F(u·x) − p(u)·p(x|u), 0)^K is exactly 0 where p(x|u) = 0 and
    F(u·x) ≥ 0 (the same power twice), so the powers, the costly part, are taken elsewhere only
    (on SmolLM2's rows, 8192 of 49152 tokens).
    """
    F_child = F[:, None] - p_u[:, None] * above
    P_u = selected_mass(F, p_u, K)
    ok = P_u > 0
    joint = p_u[:, None] * p
    live = (p > 0) | (F_child < 0)
    P_child = np.zeros_like(F_child)
    P_child[live] = selected_mass(F_child[live], joint[live], K)
    rows = np.where(ok[:, None], P_child / np.where(ok, P_u, 1.0)[:, None], p)
    return rows, F_child


def best_of_k_levels(p_levels: list[np.ndarray], q_levels: list[np.ndarray], K: int
                     ) -> list[np.ndarray]:
    """p*(·|u) at every node of depths 0..len(p_levels)−1 (``core.data.levels`` order), one depth at a
    time (``selected_rows``)."""
    out = []
    F, p_u = np.ones(1), np.ones(1)
    for p, q in zip(p_levels, q_levels):
        rows, F_child = selected_rows(F, p_u, p, mass_above(p, q), K)
        out.append(rows)
        F, p_u = F_child.ravel(), (p_u[:, None] * p).ravel()
    return out


class BestOfKBV(Verifier):
    name = "best_of_k_bv"
    short = "Best-of-K+BV"
    label = "best draft by q/p ranks, then BV"
    color = "#e69f00"  # orange
    summary = ("Select the best of the K drafts by q/p ranks, then run block verification on it, "
               "with the law of the selected draft as p.")
    source = "after Thomas & Pal 2026 (greedy multi-path block verification), reconstructed"
    walk = "block"
    single_draft = False
    order_invariant = True
    lossless_by_theory = True
    needs_models = False
    closed_form_tau = False
    tested_law = "p*"
    how = ("**How best-of-K + BV tests its block.** It picks one of the K drafts (the best by q/p, node by node) "
           "and runs BV on it, with the law p* of that selected draft in place of p: w_i = min(1, "
           "w_(i−1)·q(x_i)/p*(x_i)); the block passes with h = w, a sub-block with h = A/(A + 1 − w), A = Σ_y "
           "(w·q − p*)₊ at that node.")

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:
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
