"""The loss-gain frontier: the largest E[τ] of any verifier whose completed output law is within TV ε
of q (docs/maths.md, "The loss-gain frontier").

The LP optimum in node form (``core.bounds.node_lp``) with losslessness relaxed.  Besides W(u) (the
accepted prefix extends u) the verifier's output law a(u) = P(O = u), 1 ≤ |u| ≤ L + 1, becomes a
variable, since a lossy verifier need not draw its extra token from a residual of q:

    maximise   Σ_u W(u)
    subject to Σ_y a(s·y) = W(s) − Σ_y W(s·y)    (the mass stopping at s leaves with one token;
                                                  W(s) alone at depth L)
               Σ_(a∈A) W(a) ≤ g(A)                (the drafts carry the stops, as before)
               G(z) = Σ_(j=1..L+1) a(z_1..z_j)·q(z_(j+1)..z_(L+1) | z_1..z_j),  z ∈ Ω^(L+1)
               Σ_z (G(z) − q(z))₊ ≤ ε           (TV(G, q) ≤ ε: G and q both total 1)
               a, W ≥ 0, W(u) ≤ g({u}).

The realisability argument is unchanged (Hall's condition on the stopping masses; the extra token
drawn per node, independently of the other drafts, loses nothing: the rows see the plan only
through the stopping masses and the output law).  At ε = 0 the rows force G = q, and the value is
the LP optimum's (the tests check it).

**Bounds.**  Upper: weak duality on the rows present, as in ``core.bounds.node_lp``.  Lower: the
solver's point mixed with the trivial verifier (accept nothing, output y ~ q(·): lossless) in the
smallest proportion that makes every antichain hold (the scale c = min over the root hull's
vertices of g(A)/W(A), exact by the separation) and keeps TV(G, q) ≤ ε as evaluated; both rows
are convex, so the mixture is feasible (to the solver's tolerance, 1e-10, on the rows that tie
the output law to W), and its value is c·Σ W.  That mixture costs Σ W times the largest relative
excess, so the master holds ratios, not differences: its cuts read W(A)/g(A) ≤ 1, the rounds rank
antichains by that ratio (with g(A) from ``PrefixTree.hit`` where the hull's 1 − x_∅ has lost its
precision), tangents come with their antichain's own cut, and the TV rows are scaled up
(``TV_ROW_SCALE``).  At ε = 0 the LP optimum's own solve and
certificate are returned.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from core.bounds.antichains import antichain_of, hulls
from core.bounds.coverage import PrefixTree, prefix_tree
from core.bounds.node_lp import MAX_ROUNDS, METHODS, TOLERANCE, NodeOptimum, _Master, tree_lp_optimum
from core.bounds.sizes import check_node_size, validate_pair
from core.data.laws import IID_LAW, DraftLaw, get_law
from core.data.levels import level_conditionals
from core.data.shapes import Shape
from core.errors import InvalidInput

if TYPE_CHECKING:  # toy models only provide ``.V`` and ``.cond``
    from toy_models import ToyModel


def frontier(draft: ToyModel, target: ToyModel, K: int, L: int, tv: float, **options) -> NodeOptimum:
    """The best E[τ] of K i.i.d. drafts of length L at total variation at most ``tv`` from q.

    >>> from fractions import Fraction
    >>> from toy_models import PRESETS
    >>> toy = PRESETS["binary-toy"]
    >>> str(Fraction(frontier(toy.draft, toy.target, 1, 2, 0.0).value).limit_denominator(1000))
    '11/9'
    """
    validate_pair(draft, target, K, L)
    return tree_frontier(draft, target, Shape.chains_of(K, L), IID_LAW, tv, **options)


def tree_frontier(draft: ToyModel, target: ToyModel, shape: Shape, law: str | DraftLaw, tv: float, *,
                  method: str | None = None, tolerance: float = TOLERANCE,
                  max_rounds: int | None = None, max_seconds: float | None = None) -> NodeOptimum:
    """``frontier`` for drafts of any shape and law (module docstring).  ``tv`` must lie in [0, 1];
    the other options as ``core.bounds.node_lp.tree_lp_optimum``."""
    law = get_law(law)
    V = validate_pair(draft, target, shape.K, shape.L)
    if isinstance(tv, bool) or not isinstance(tv, (int, float)) or not 0.0 <= float(tv) <= 1.0:
        raise InvalidInput(f"the total variation allowed must be a number in [0, 1], got {tv!r}")
    if tv == 0:                                   # no loss allowed: the LP optimum itself
        return tree_lp_optimum(draft, target, shape, law, method=method, tolerance=tolerance,
                               max_rounds=max_rounds, max_seconds=max_seconds)
    check_node_size(V, shape, law)
    start = time.perf_counter()
    tree = prefix_tree(draft, target, shape, law)
    method = method or ("tangents" if tree.iid_chains else "cuts")
    if method not in METHODS or (method == "tangents" and not tree.iid_chains):
        raise InvalidInput(f"method {method!r} does not solve these drafts; use cuts")
    q_last = level_conditionals(target, shape.L)[shape.L]        # q(·|s) at depth L, for completions
    master = _FrontierMaster(tree, method, q_last, float(tv))
    return master.solve(tolerance, max_rounds or MAX_ROUNDS, max_seconds, start)


#: The completed law's rows and the TV row, multiplied by this in the master: HiGHS's row tolerance
#: (1e-10) summed over the V^(L+1) rows would otherwise let the point's TV pass ε by ~1e-10, and
#: the mixture that repairs it costs ~1e-10/ε of E[τ].
TV_ROW_SCALE = 100.0


class _FrontierMaster(_Master):
    """The node form's master with the output law, the completed law's excess over q and the TV row.

    The lower bound mixes the whole point with the trivial verifier, so an antichain's *relative*
    violation W(A)/g(A) − 1 is what it costs: the cuts are written W(A)/g(A) ≤ 1 (the solver's
    tolerance then bounds that ratio) and the rounds rank and stop on it."""

    def __init__(self, tree: PrefixTree, method: str, q_last: np.ndarray, tv: float):
        self.q_last, self.tv = q_last, tv
        super().__init__(tree, method)

    def w_bounds(self) -> np.ndarray:
        """W(u) ≤ g({u}) only: a lossy verifier may accept more than q allows."""
        return self.drafted[1:].copy()

    def constrain(self) -> None:
        tree, n, V, L = self.tree, self.n, self.tree.V, self.tree.L
        leaves = np.flatnonzero(tree.depth == L)
        n_a = n + leaves.size * V                     # outputs: the nodes 1..N−1, then (leaf, y)
        n_z = leaves.size * V                         # completed sequences z ∈ Ω^(L+1)
        a0 = self.h.getNumCol()
        self.h.addVars(n_a, np.zeros(n_a), np.ones(n_a))
        d0 = self.h.getNumCol()
        self.h.addVars(n_z, np.zeros(n_z), np.ones(n_z))
        self.ub += [np.ones(n_a), np.ones(n_z)]
        self.a0, self.d0 = a0, d0
        # the mass stopping at s leaves with one token: Σ_y a(s·y) − W(s) + Σ_y W(s·y) = 0
        rows = []
        for s in range(tree.N):
            kids = tree.kids[s]
            if kids:
                out = [a0 + c - 1 for c in kids]
                cols = out + [c - 1 for c in kids] + ([s - 1] if s else [])
                vals = [1.0] * V + [1.0] * V + ([-1.0] if s else [])
            else:
                i = int(np.searchsorted(leaves, s))
                cols = [a0 + n + i * V + y for y in range(V)] + [s - 1]
                vals = [1.0] * V + [-1.0]
            rows.append((np.array(cols), np.array(vals)))
        rhs = np.zeros(tree.N)
        rhs[0] = 1.0                                  # at the root: Σ a(y) + Σ W(y) = W(∅) = 1
        self._add(rows, rhs, rhs)
        # G(z) − d_z ≤ q(z): the completed law's excess, then Σ_z d_z ≤ ε
        rows, q_z = [], np.zeros(n_z)
        for i, leaf in enumerate(leaves):
            path = [int(leaf)]
            while path[-1] > 0:
                path.append(int(tree.parent[path[-1]]))
            path = path[::-1][1:]                     # the prefixes of the leaf, depth 1..L
            for y in range(V):
                # c_j = q(z_(j+1)..z_(L+1) | z_1..z_j), from the last token back
                completion = [float(self.q_last[i, y])]
                for u in reversed(path[1:]):
                    completion.append(completion[-1] * float(tree.q_edge[u]))
                completion = completion[::-1]         # for the prefixes of depth 1..L
                cols = [a0 + u - 1 for u in path] + [a0 + n + i * V + y, d0 + i * V + y]
                vals = [TV_ROW_SCALE * c for c in completion] + [TV_ROW_SCALE, -TV_ROW_SCALE]
                rows.append((np.array(cols), np.array(vals)))
                q_z[i * V + y] = float(tree.q_joint[leaf]) * float(self.q_last[i, y])
        self._add(rows, -np.inf, TV_ROW_SCALE * q_z)
        self._add([(d0 + np.arange(n_z), np.full(n_z, TV_ROW_SCALE))], -np.inf, TV_ROW_SCALE * self.tv)
        self.q_z, self.completion_rows = q_z, rows

    def violations(self, hs) -> list[tuple]:
        """(W(A)/g(A) − 1, root vertex), most violated first.  The hull's x_∅ = 1 − g(A) has lost
        g's relative precision where g is tiny, so the vertices near or past 1 are re-read with
        g(A) from ``PrefixTree.hit``."""
        return sorted(self._ratios(hs), key=lambda t: t[0], reverse=True)

    def _ratios(self, hs) -> list[tuple]:
        out = []
        for i, (x, w) in enumerate(zip(hs[0].x, hs[0].w)):
            if w <= 0 or x >= 1.0:
                continue
            ratio = w / (1.0 - x) - 1.0
            if ratio > -1e-6:
                ratio = w / self.tree.hit(antichain_of(self.tree, hs, i)) - 1.0
            out.append((ratio, i))
        return out or [(-1.0, 0)]

    def add(self, antichains) -> None:
        """Tangents hold an antichain only through the chain of the tree programme's rows, each to the
        solver's tolerance: its own cut is added beside, so the ratio holds too."""
        super().add(antichains)
        if self.method == "tangents":
            self.add_cuts(antichains)

    def add_cuts(self, antichains) -> None:
        rows = []
        for A in antichains:
            self.cuts[A] = g = self.tree.hit(A)
            rows.append((np.asarray(A) - 1, np.full(len(A), 1.0 / g)))
        self._add(rows, -np.inf, 1.0)

    def feasible(self, W: np.ndarray, x: np.ndarray) -> np.ndarray:
        """c·W, with c the largest share of the solver's point that, mixed with the trivial
        lossless verifier, keeps every antichain and the TV within ε (module docstring)."""
        scale = min([1.0] + [1.0 / (1.0 + r) for r, _ in self._ratios(hulls(self.tree, W)) if r > 0])
        a = np.clip(x[self.a0:self.d0], 0.0, None)
        excess = self.completed_excess(a)
        if excess > self.tv:
            scale = min(scale, self.tv / excess)
        scale = float(np.nextafter(scale, 0.0)) if scale < 1.0 else 1.0
        out = W * scale
        out[0] = 1.0
        return out

    def completed_excess(self, a: np.ndarray) -> float:
        """Σ_z (G(z) − q(z))₊ for the output law ``a`` (columns in the master's order)."""
        G = np.array([float(np.dot(vals[:-1], a[cols[:-1] - self.a0])) for cols, vals in self.completion_rows])
        G /= TV_ROW_SCALE
        return float(np.clip(G - self.q_z, 0.0, None).sum())
