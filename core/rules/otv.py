"""OTV, ordered traversal verification (new here; docs/maths.md): the recursion of
``core.rules.traversal_walk`` with children visited best first by q/p.

At a visited node b entered with k ≥ 2 drafts the vocabulary is ranked by decreasing
q(x|b)/p(x|b) (p = 0 first, ties by smaller token id; ``selection.rank_order``): O(V log V) per such
node, and only at the nodes the walk visits.  A node entered with one draft needs no ranking: its
one child's law is s itself and no draft is left after it.  For a set of
allowed tokens and k drafts left, the *best-of-k law* is B(x) = G(x)^k − (G(x) − s(x))^k, with s =
p(·|b) restricted to the allowed tokens and renormalised and G(x) the s-mass of the allowed tokens
ranked at or below x: the law of the best-ranked of k i.i.d. draws from s.  Its multiplicity law
is P(best = c, drafted j times) = C(k, j)·s(c)^j·(G(c) − s(c))^(k−j).

- *Ratio order*: visit the children best first; the allowed tokens are those ranked strictly below
  the previously visited child (all, for the first), k the drafts left; S = B.
- *Draft-first order*: the first child is the first draft's token, of law S = p(·|b) (i.i.d.
  drafts); the rest follow in ratio order with that token also removed and k reduced by its
  multiplicity.
- *The choice*, per node before any child is visited (it depends on w, p, q and k only, so it hides
  nothing): draft-first iff Σ_x min(w·q(x), p(x)) > Σ_x min(w·q(x), B₀(x)), B₀ the first child's
  law under ratio order.  With p = q it picks draft-first, whose first child is accepted surely.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Iterator, Mapping

import numpy as np

from core.rules.selection import rank_order
from core.rules.traversal_walk import TraversalVerifier, first_drafted, iid_branches


def best_of_k(s: np.ndarray, order: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(B, G) for a sub-distribution s (already restricted and renormalised) and the ranking
    ``order`` (best first): G(x) = Σ_(t ranked at or below x) s(t) and
    B(x) = G^k − (G − s)^k = s·Σ_(i<k) G^i·(G − s)^(k−1−i) (this form stays positive for tiny s).
    B = 0 where s = 0 (the sum is finite: 0 ≤ G − s ≤ G ≤ 1), so the powers are taken where s > 0
    only (a draft with a reduced vocabulary, like SmolLM2's, has p = 0 on most ids)."""
    G = np.empty_like(s)
    G[order] = np.cumsum(s[order][::-1])[::-1]
    B = np.zeros_like(s)
    on = s > 0
    s_on, G_on = s[on], G[on]
    below = np.maximum(G_on - s_on, 0.0)
    B[on] = s_on * sum(G_on ** i * below ** (k - 1 - i) for i in range(k))
    return B, G


@dataclass(frozen=True)
class RankedState:
    """Node state: p(·|b), its q/p ranking, the allowed tokens, the k drafts left, and whether the
    next child is the first draft's token (draft-first order, first child only).  The ranking is
    None at a node entered with k = 1 (``ordered``), where ratio order has nothing to order."""

    p: np.ndarray
    order: np.ndarray | None        # token ids, best first
    position: np.ndarray | None     # position[x] = rank of x (0 = best)
    allowed: np.ndarray     # bool mask
    k: int
    draft_first: bool

    def describe(self) -> dict[str, float]:
        return {"draft_first": float(self.draft_first)}

    @cached_property
    def ranked(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(s, B, G) for ratio order: s restricted to the allowed tokens, the best-of-k law and
        G, computed once per state (``law`` and ``branches`` both need them).  Unranked (k = 1):
        B = s, which is what ``best_of_k`` gives for k = 1, and G is not needed."""
        s = np.where(self.allowed, self.p, 0.0)
        s = s / s.sum()
        if self.order is None:
            return s, s, None
        return (s, *best_of_k(s, self.order, self.k))

    def law(self) -> np.ndarray:
        return self.p if self.draft_first else self.ranked[1]

    def pick(self, children: Mapping[int, tuple[int, int]]) -> int:
        if self.draft_first:
            return first_drafted(children)
        if len(children) == 1:
            return next(iter(children))
        return min(children, key=lambda c: self.position[c])

    def branches(self) -> Iterator[tuple[int, int, float]]:
        if self.draft_first:
            yield from iid_branches(self.p, self.k)
            return
        s, _, G = self.ranked
        for c in np.flatnonzero(s > 0):
            # unranked means k = 1, where rest ** (k − j) = rest ** 0 = 1 whatever rest is
            sc, rest = float(s[c]), 0.0 if G is None else max(float(G[c] - s[c]), 0.0)
            for j in range(1, self.k + 1):
                prob = math.comb(self.k, j) * sc ** j * rest ** (self.k - j)
                if prob > 0.0:
                    yield int(c), j, prob

    def after(self, c: int, j: int) -> "RankedState":
        if self.order is None:          # k = 1: no draft is left, so nothing is allowed any more
            return RankedState(self.p, None, None, np.zeros_like(self.allowed), self.k - j, False)
        allowed = self.allowed.copy()
        if self.draft_first:
            allowed[c] = False
        else:
            allowed &= self.position > self.position[c]
        return RankedState(self.p, self.order, self.position, allowed, self.k - j, False)


def ordered(p: np.ndarray, q: np.ndarray, w: float, k: int) -> RankedState:
    """The OTV policy at a node entered with weight w and k drafts: rank by q/p, then choose
    draft-first iff Σ min(w·q, p) > Σ min(w·q, B₀).  With k = 1 the choice is void (B₀ = p) and the
    ranking is not needed (``RankedState``), so it is skipped."""
    if k <= 1:
        return RankedState(p, None, None, np.ones(p.size, dtype=bool), k, False)
    order = rank_order(p, q)
    position = np.empty(p.size, dtype=np.int64)
    position[order] = np.arange(p.size)
    state = RankedState(p, order, position, np.ones(p.size, dtype=bool), k, False)
    if float(np.minimum(w * q, p).sum()) > float(np.minimum(w * q, state.law()).sum()):
        return RankedState(p, order, position, state.allowed, k, True)
    return state


class OTV(TraversalVerifier):
    name = "otv"
    short = "OTV"
    label = "ordered traversal verification"
    color = "#882255"  # wine
    summary = ("Traversal verification that visits each node's children best first by q/p, using the "
               "exact law of the best of the remaining drafts, or the first draft first where that "
               "accepts more.")
    source = "new in this project (ordered traversal; after Weng et al., NeurIPS 2025)"
    single_draft = False
    order_invariant = False
    lossless_by_theory = True
    needs_models = False
    closed_form_tau = False
    how = ("**How OTV walks the tree.** As Traversal (leaves first, then back up, each child weighted "
           "w = min(1, w·T(c)/S(c)), each rejection leaving the residual T = (w·T − S)₊ / A), but at each "
           "node it visits the children best q/p first, with S the law of the best of the drafts left, or the "
           "first draft first where that accepts more.")
    how_on_trees = how

    policy = staticmethod(ordered)
