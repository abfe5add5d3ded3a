"""Exact separation of the antichain inequalities: the most violated antichain of the prefix tree
(docs/maths.md, "The optimal verifier without draft sets").

For node weights W(u) ≥ 0 the violation of an antichain A is W(A) − g(A) = W(A) + x_∅ − 1, with
x_∅ = P(the drafted tree misses A) from the miss recursion of ``core.bounds.coverage``.  Over the
antichains inside the subtree of u, the pairs (x_u, W(A ∩ subtree)) form a finite set P_u.  Seen
from u, the objective w + x_∅ is w_u + G(x_u) + (terms outside u's subtree) with G convex and
increasing: every miss map is convex and increasing in each child's x (x^b of a linear form for
``iid``; multilinear with nonnegative coefficients, hence affine in one child, for the distinct
laws), and compositions of convex increasing maps are convex increasing.  A convex function is
maximised at a vertex of the convex hull, so each node keeps only the vertices of the *upper-right
hull* of P_u, the points maximising α·x + β·w for some α, β ≥ 0:

- a leaf: {(1, 0), (0, W(u))};
- an ``iid`` node: Σ_y p(y|u)·x_(u·y) is linear and the w add, so the children's hulls (x scaled by
  p(y|u)) add as a Minkowski sum, whose edges are theirs merged by slope; then x ↦ x^b;
- a node of distinct draws: every combination of its children's hull vertices through
  Σ_C P(C)·Π_(c∈C) x_c (the part shared by every C, such as ``greedy``'s top tokens, multiplies a
  Minkowski sum over the rest);
- then the point (0, W(u)) (u itself in A) and the hull again.

Every vertex remembers how it was made, so the antichain of a root vertex is read back top-down.
The most violated antichain is among the root's vertices, and when none of them is violated no
antichain is.  For K i.i.d. chains these vertices are those of the upper hull of the points
(p(A), W(A)): the breakpoints of the parametric tree DP max_A Σ_(a∈A) (W(a) − σ·p(a)) over every
slope σ ≥ 0 at once, not a grid of slopes.

The arithmetic is generic: floats in the cutting-plane rounds, ``fractions.Fraction`` for the exact
certificate (``core.bounds.certify``).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from core.bounds.coverage import MissMap, PrefixTree
from core.bounds.sizes import COMBINATION_LIMIT
from core.errors import ExplorerError


class SeparationTooLarge(ExplorerError, ValueError):
    """A node of distinct draws has too many combinations of its children's hull vertices."""


@dataclass
class Hull:
    """A node's upper-right hull: vertices in decreasing x and increasing w; ``made[i]`` is −1 when
    vertex i is "the node itself is in A", else the index into ``picks`` of the children's vertices
    (one hull index per child position 0..V−1) that made it."""

    x: list
    w: list
    made: list
    picks: list


def upper_right(points: list[tuple]) -> list[tuple]:
    """The vertices of the upper-right hull of (x, w, tag) points, in decreasing x (collinear middle
    points dropped): the points that maximise α·x + β·w for some α, β ≥ 0."""
    return _scan(sorted(points, key=lambda t: (t[0], t[1]), reverse=True))


def _scan(pts: list[tuple]) -> list[tuple]:
    """``upper_right`` of points already in decreasing x (for one x, the largest w first): one pass
    from the right, a point popped while it lies on or below the chord from the one before it to
    the new one, then cut after the highest w."""
    hull: list = []
    for t in pts:
        if hull and hull[-1][0] == t[0]:
            if hull[-1][1] >= t[1]:
                continue
            hull.pop()
        while len(hull) >= 2:
            (xa, wa, _), (xb, wb, _) = hull[-2], hull[-1]
            if (wb - wa) * (t[0] - xa) - (t[1] - wa) * (xb - xa) >= 0:
                hull.pop()
            else:
                break
        hull.append(t)
    top = 0
    for i in range(1, len(hull)):
        if hull[i][1] > hull[top][1]:
            top = i
    return hull[:top + 1]


def _minkowski(hulls: Sequence[Hull], scale: Sequence, zero) -> tuple[list, list, list]:
    """Σ_c scale_c·x_c and Σ_c w_c over the hull vertices of the given children: the vertices of the
    upper-right hull of every combination, with the index each child contributes.  A child of scale
    0 adds its largest w."""
    x0, w0 = zero, zero
    count = []
    edges = []
    for k, (h, a) in enumerate(zip(hulls, scale)):
        if a == 0:
            w0 = w0 + h.w[-1]
            count.append(len(h.x) - 1)
            continue
        x0, w0 = x0 + a * h.x[0], w0 + h.w[0]
        count.append(0)
        for i in range(len(h.x) - 1):
            dx = a * (h.x[i] - h.x[i + 1])
            dw = h.w[i + 1] - h.w[i]
            edges.append((dw / dx, dx, dw, k))
    edges.sort(key=lambda e: e[0], reverse=True)      # steepest exchange of x for w first
    xs, ws, picks = [x0], [w0], [tuple(count)]
    for _, dx, dw, k in edges:
        xs.append(xs[-1] - dx)
        ws.append(ws[-1] + dw)
        count[k] += 1
        picks.append(tuple(count))
    return xs, ws, picks


def _combined(m: MissMap, kids: Sequence[Hull], zero, one, exact: bool
              ) -> tuple[list, list, list]:
    """(x_u, w, picks) for the combinations a node of distinct draws needs (module docstring)."""
    V = len(kids)
    shared = set.intersection(*(set(s) for s in m.sets))
    rest = [sorted(set(s) - shared) for s in m.sets]
    involved = sorted(shared | {c for r in rest for c in r})
    best = [len(h.x) - 1 for h in kids]                # an undrafted child adds its largest w
    base_w = sum((kids[c].w[-1] for c in range(V) if c not in involved), zero)
    if all(len(r) == 1 for r in rest) and len({r[0] for r in rest}) == len(rest):
        # Π_(shared) x_c · Σ_i P(C_i)·x_(y_i): a Minkowski sum over the sampled child
        ys = [r[0] for r in rest]
        sx, sw, spicks = _minkowski([kids[y] for y in ys], m.probs, zero)
        parts = [(sx, sw, [dict(zip(ys, p)) for p in spicks])]
    elif all(not r for r in rest):
        parts = [([one], [zero], [{}])]                   # one fixed set: Π x_c
    else:
        parts = None                                      # general: every combination
    fixed = sorted(shared) if parts is not None else involved
    sizes = [len(kids[c].x) for c in fixed]
    total = math.prod(sizes) * (len(parts[0][0]) if parts else 1)
    if total > COMBINATION_LIMIT:
        raise SeparationTooLarge(f"a node drafted by distinct draws has {total:,} combinations of its "
                                 f"children's hull vertices (limit {COMBINATION_LIMIT:,})")
    xs, ws, picks = [], [], []
    for combo in itertools.product(*(range(n) for n in sizes)):
        chosen = dict(zip(fixed, combo))
        if parts is None:
            x = zero
            for s, pr in zip(m.sets, m.probs):
                term = pr
                for c in s:
                    term = term * kids[c].x[chosen[c]]
                x = x + term
            sums = [(one, zero, {})]
        else:
            x = one
            for c in fixed:
                x = x * kids[c].x[chosen[c]]
            sums = list(zip(parts[0][0], parts[0][1], parts[0][2]))
        w = base_w + sum((kids[c].w[chosen[c]] for c in fixed), zero)
        for sx, sw, sp in sums:
            xs.append(x * sx)
            ws.append(w + sw)
            pick = list(best)
            for c, i in itertools.chain(chosen.items(), sp.items()):
                pick[c] = i
            picks.append(tuple(pick))
    if not exact and len(xs) > 4096:                     # keep only the hull before the Python hull
        order = np.lexsort((np.asarray(ws, float), np.asarray(xs, float)))
        keep = order[_upper_indices(np.asarray(xs, float)[order], np.asarray(ws, float)[order])]
        xs, ws, picks = [xs[i] for i in keep], [ws[i] for i in keep], [picks[i] for i in keep]
    return xs, ws, picks


def _upper_indices(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Indices (into sorted x) of a superset of the upper-right hull: the running maximum of w from
    the right, a cheap prefilter of dominated points."""
    best = np.maximum.accumulate(w[::-1])[::-1]
    return np.flatnonzero(w >= best)


def hulls(tree: PrefixTree, W: Sequence, p_edge: Sequence | None = None, maps: Sequence | None = None,
          zero=0.0, one=1.0) -> list[Hull]:
    """Every node's upper-right hull for node weights ``W`` (node 0 the root, never in A), in floats
    by default, or in the number type of ``zero``/``one`` with the matching ``p_edge`` and ``maps``
    (``core.bounds.certify`` passes Fractions)."""
    exact = not isinstance(zero, float)
    p_edge = tree.p_edge if p_edge is None else p_edge
    maps = tree.maps if maps is None else maps
    out: list[Hull | None] = [None] * tree.N
    leaf = Hull([one], [zero], [0], [()])
    for u in range(tree.N - 1, -1, -1):               # level order reversed: children first
        kids = tree.kids[u]
        if not kids:                                  # a leaf: {(1, 0), (0, W(u))}
            out[u] = Hull([one, zero], [zero, W[u]], [0, -1], [()]) if W[u] > 0 else leaf
            continue
        m = maps[u]
        kid_hulls = [out[c] for c in kids]
        if m.draws:
            xs, ws, picks = _minkowski(kid_hulls, [p_edge[c] for c in kids], zero)
            if m.draws > 1:
                xs = [x ** m.draws for x in xs]
            if not exact:                              # Σ_y p(y|u) is 1 only to rounding
                xs = [min(x, one) for x in xs]
            pts = [(x, w, j) for j, (x, w) in enumerate(zip(xs, ws))]   # decreasing x already
        else:
            xs, ws, picks = _combined(m, kid_hulls, zero, one, exact)
            if not exact:
                xs = [min(x, one) for x in xs]
            pts = sorted(((x, w, j) for j, (x, w) in enumerate(zip(xs, ws))),
                         key=lambda t: (t[0], t[1]), reverse=True)
        if u != 0 and W[u] > 0:
            pts.append((zero, W[u], -1))
        hull = _scan(pts)
        out[u] = Hull([t[0] for t in hull], [t[1] for t in hull], [t[2] for t in hull], picks)
    return out


def antichain_of(tree: PrefixTree, hs: list[Hull], vertex: int) -> tuple[int, ...]:
    """The antichain (node ids, sorted) behind the root hull's vertex ``vertex``."""
    out: list[int] = []
    stack = [(0, vertex)]
    while stack:
        u, i = stack.pop()
        j = hs[u].made[i]
        if j < 0:
            out.append(u)
            continue
        for c, k in zip(tree.kids[u], hs[u].picks[j]):
            stack.append((c, k))
    return tuple(sorted(out))


def violations(hs: list[Hull], one=1.0) -> list[tuple]:
    """(W(A) + x_∅ − 1, root vertex) for every root vertex, most violated first."""
    root = hs[0]
    return sorted(((w + x - one, i) for i, (x, w) in enumerate(zip(root.x, root.w))),
                  key=lambda t: t[0], reverse=True)
