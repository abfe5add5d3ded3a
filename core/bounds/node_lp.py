"""The optimal lossless verifier's LP in node variables: one inequality per antichain, solved by
cutting planes with exact separation, and certified (docs/maths.md, "The optimal verifier without
draft sets").

Variables W(u) = P(the accepted prefix extends u) for the nodes 1 ≤ |u| ≤ L, W(∅) = 1:

    maximise   Σ_u W(u)                                  (= E[τ])
    subject to W(s·y) ≤ q(y|s)·W(s)                     (losslessness, node by node)
               Σ_(a∈A) W(a) ≤ g(A) for every antichain A (the drafts can carry the stops)
               0 ≤ W(u) ≤ min(q(u), g({u})),

with g(A) = P(the drafted tree meets A) (``core.bounds.coverage``; h(p(A)) = 1 − (1 − p(A))^K for
K i.i.d. chains).  Its value is that of the per-set LP of ``core.bounds.lp`` (docs/maths.md proves
it), but its size is the number of nodes, whatever K is.

**Solving.**  HiGHS (its own Python binding, which keeps the basis between solves: each round
re-solves from the last one by the dual simplex; ``highs``) starts from the node rows and the bounds, whose singletons are
the antichains {u}.  Each round the separation (``core.bounds.antichains``) returns every violated
vertex of the root hull, the most violated antichain over every slope among them, and adds rows
for up to ``PER_ROUND`` of them:

- ``cuts``: the antichain's own inequality (any shape and law);
- ``tangents`` (K i.i.d. chains, the default there): the whole tangent of the concave h at
  t = p(A), slope σ = h'(t): max_A' Σ_(a∈A') (W(a) − σ·p(a)) ≤ h(t) − σ·t for *every* antichain A'
  at once, written as the tree DP's rows with one variable z(u) per node:
  z(u) ≥ W(u) − σ·p(u), z(u) ≥ Σ_y z(u·y), 0 ≤ z(u) ≤ q(u), Σ_y z(y) ≤ h(t) − σ·t.  At the
  optimum many antichains tie on the hull; one tangent holds them all, where single cuts need
  hundreds of rounds (V = 8, K = 8, L = 3: 43 rounds against 296).

It stops when no antichain is violated by more than ``CUT_TOLERANCE``.

**Certificate.**  Two numbers bracket the optimum, whatever the solver's tolerances:

- *upper*, by weak duality: with λ the solver's row duals (clipped to the sides a row has) and
  every column bounded, Σ W ≤ Σ_r λ_r·(the row's bound) + Σ_j max over the column's range of
  (c_j − (Aᵀλ)_j)·x_j; the rows present are valid for every lossless verifier, so the optimum is
  below it too;
- *lower*, a point feasible for *every* antichain: the solver's W clipped to the node rows
  top-down, then, while the separation finds a violated antichain A, the subtrees of A scaled by
  g(A)/W(A) (which keeps every node row and can only lower every other antichain's sum).  A lossless
  verifier attains it (the transport from draft sets exists by Hall's condition).

The value is *lower* once upper − lower ≤ ``tolerance`` (1e-9 by default); otherwise the solve
reports both and no value (``NotConverged``).  Both are evaluated in float64 (rounding well below
1e-12 at these sizes); ``core.bounds.certify.certify_node_lp`` redoes them in exact arithmetic where
the models are rational.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from core.bounds.antichains import antichain_of, hulls, violations
from core.bounds.coverage import PrefixTree, prefix_tree
from core.bounds.sizes import check_node_size, one_minus_pow, validate_pair
from core.data.laws import IID_LAW, DraftLaw, get_law
from core.data.shapes import Shape
from core.errors import ExplorerError, InvalidInput

if TYPE_CHECKING:  # toy models only provide ``.V`` and ``.cond``
    from toy_models import ToyModel

#: An antichain is cut when W(A) − g(A) exceeds this (the solver's row tolerance is 1e-10).
CUT_TOLERANCE = 1e-10
#: The default largest gap upper − lower for a value to be reported.
TOLERANCE = 1e-9
#: The default most cutting-plane rounds.
MAX_ROUNDS = 2_000
#: Most rows (cuts or tangents) added per round, the most violated first.
PER_ROUND = {"cuts": 64, "tangents": 4}
METHODS = ("tangents", "cuts")

_HIGHS = {"output_flag": False, "primal_feasibility_tolerance": 1e-10,
          "dual_feasibility_tolerance": 1e-10}


class NotConverged(ExplorerError, RuntimeError):
    """The cutting planes stopped before the bounds met: the optimum lies in [lower, upper]."""

    def __init__(self, message: str, lower: float, upper: float):
        super().__init__(message)
        self.lower, self.upper = lower, upper


@dataclass(frozen=True, eq=False)
class NodeOptimum:
    """The node form's optimum: bounds, the feasible node solution and how it was found."""

    lower: float                 # E[τ] of a lossless verifier: Σ W of ``W``
    upper: float                 # the dual bound: no lossless verifier exceeds it
    W: np.ndarray                # W(u) per node (root 1), feasible for every antichain
    tree: PrefixTree
    method: str
    rounds: int
    rows_added: int              # cuts or tangents
    seconds: float
    tolerance: float = TOLERANCE
    #: ``cuts``: the antichains cut, with g(A), in the order their rows were added.
    cut_sets: tuple = field(default=(), repr=False)
    #: HiGHS's final basis (``cuts`` only): status of every column (node 1..N−1), then of every
    #: row (the node rows of the nodes of depth ≥ 2 in id order, then the cuts in ``cut_sets``
    #: order); 0 lower, 1 basic, 2 upper (``highspy.HighsBasisStatus``).
    basis: tuple = field(default=((), ()), repr=False)

    @property
    def gap(self) -> float:
        return max(self.upper - self.lower, 0.0)

    @property
    def converged(self) -> bool:
        return self.gap <= self.tolerance

    @property
    def value(self) -> float:
        """The optimum E[τ] (within ``tolerance``); ``NotConverged`` when the bounds did not meet."""
        if not self.converged:
            raise NotConverged(self.unconverged_text(), self.lower, self.upper)
        return self.lower

    def unconverged_text(self) -> str:
        return (f"the optimal-verifier LP did not converge in {self.rounds:,} rounds: the optimum lies "
                f"between {self.lower:.9f} and {self.upper:.9f} (gap {self.gap:.1e}, tolerance "
                f"{self.tolerance:.0e})")

    def summary(self) -> dict:
        """JSON-ready fields: the bounds, whether they met, and the solve's size and effort."""
        return {"lower": self.lower, "upper": self.upper, "gap": self.gap, "converged": self.converged,
                "tolerance": self.tolerance, "nodes": self.tree.N, "method": self.method,
                "rounds": self.rounds, "rows_added": self.rows_added, "seconds": round(self.seconds, 4)}


def lp_optimum(draft: ToyModel, target: ToyModel, K: int, L: int, **options) -> NodeOptimum:
    """The largest E[τ] of any lossless verifier of K i.i.d. drafts of length L (module docstring);
    ``options`` as ``tree_lp_optimum``.

    >>> from fractions import Fraction
    >>> from toy_models import PRESETS
    >>> toy = PRESETS["binary-toy"]
    >>> [str(Fraction(lp_optimum(toy.draft, toy.target, K, 2).value).limit_denominator(10**4))
    ...  for K in (1, 2, 3, 4)]
    ['11/9', '131/81', '1351/729', '12671/6561']
    """
    validate_pair(draft, target, K, L)
    return tree_lp_optimum(draft, target, Shape.chains_of(K, L), IID_LAW, **options)


def tree_lp_optimum(draft: ToyModel, target: ToyModel, shape: Shape, law: str | DraftLaw, *,
                 method: str | None = None, tolerance: float = TOLERANCE,
                 max_rounds: int | None = None, max_seconds: float | None = None,
                 check: bool = True) -> NodeOptimum:
    """The own-law LP of (shape, law) in node form: chains K×L or a static tree, drafted by any law
    (the distinct laws enumerate each node's children sets: ``core.bounds.antichains``).

    ``method``: ``tangents`` (K i.i.d. chains only, their default) or ``cuts`` (the default
    elsewhere); ``max_rounds`` (default ``MAX_ROUNDS``) and ``max_seconds`` stop the rounds early,
    and the result then carries its bounds and no value.  Raises ``BoundsTooLarge`` (one sentence, with the node count and the time
    estimate) past the node limit unless ``check`` is false, and ``InvalidInput`` for a method the
    drafts do not take."""
    law = get_law(law)
    V = validate_pair(draft, target, shape.K, shape.L)
    if check:
        check_node_size(V, shape, law)
    start = time.perf_counter()
    tree = prefix_tree(draft, target, shape, law)
    method = method or ("tangents" if tree.iid_chains else "cuts")
    if method not in METHODS:
        raise InvalidInput(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    if method == "tangents" and not tree.iid_chains:
        raise InvalidInput("tangent rows need K i.i.d. chains, whose coverage is a function of p(A); "
                           "use the method cuts")
    return _Master(tree, method).solve(tolerance, max_rounds or MAX_ROUNDS, max_seconds, start)


def highs():
    """A silent HiGHS instance from HiGHS's own Python binding, the one ``scipy.optimize.linprog``
    drives (scipy ships it as ``scipy.optimize._highspy``; requirements pin scipy): unlike
    ``linprog`` it keeps the model and its basis between solves, so each round adds rows and
    re-solves from the last basis.  The ``highspy`` package's wrapper would be the same solver but
    prints a banner on stdout whenever one is created, into the command line's JSON."""
    from scipy.optimize._highspy import _core

    h = _core._Highs()
    for key, val in _HIGHS.items():
        h.setOptionValue(key, val)
    return h


class _Master:
    """The master LP in HiGHS, with a record of its rows (for the dual bound)."""

    def __init__(self, tree: PrefixTree, method: str):
        self.tree, self.method = tree, method
        self.n = tree.N - 1                               # column j < n is node j + 1
        self.drafted = tree.drafted()
        self.ub = [self.w_bounds()]
        self.h = highs()
        self.h.addVars(self.n, np.zeros(self.n), self.ub[0])
        self.h.changeColsCost(self.n, np.arange(self.n, dtype=np.int32), -np.ones(self.n))
        self.rows: list[tuple[np.ndarray, np.ndarray]] = []
        self.lo: list[float] = []
        self.hi: list[float] = []
        self.cuts: dict[tuple[int, ...], float] = {}
        self.tangents: list[float] = []
        internal = np.flatnonzero((tree.depth >= 1) & (tree.first_child >= 0))
        self._dp_rows = [(np.array([u - 1] + [c - 1 for c in tree.kids[u]]),
                          np.array([1.0] + [-1.0] * tree.V)) for u in internal]
        self.constrain()

    def w_bounds(self) -> np.ndarray:
        """W(u) ≤ min(q(u), g({u})): both hold for every lossless verifier."""
        return np.minimum(self.tree.q_joint, self.drafted)[1:]

    def constrain(self) -> None:
        """The rows besides the antichains': losslessness node by node, W(s·y) ≤ q(y|s)·W(s)."""
        tree = self.tree
        child = np.flatnonzero(tree.depth >= 2)
        self._add([(np.array([c - 1, tree.parent[c] - 1]), np.array([1.0, -tree.q_edge[c]]))
                   for c in child], -np.inf, np.zeros(child.size))

    def feasible(self, W: np.ndarray, x: np.ndarray) -> np.ndarray:
        """A point feasible for every row near the solver's W (``feasible_point``); ``x`` is the
        solver's whole column vector."""
        return feasible_point(self.tree, W, self.drafted)

    def _add(self, rows, lo, hi) -> None:
        if not rows:
            return
        lo = np.broadcast_to(np.asarray(lo, dtype=np.float64), (len(rows),))
        hi = np.broadcast_to(np.asarray(hi, dtype=np.float64), (len(rows),))
        starts = np.cumsum([0] + [r[0].size for r in rows[:-1]]).astype(np.int32)
        idx = np.concatenate([r[0] for r in rows]).astype(np.int32)
        val = np.concatenate([r[1] for r in rows])
        self.h.addRows(len(rows), lo, hi, idx.size, starts, idx, val)
        self.rows.extend(rows)
        self.lo.extend(lo.tolist())
        self.hi.extend(hi.tolist())

    def violations(self, hs) -> list[tuple]:
        """(violation, root vertex) pairs, most violated first, as the rounds rank and stop them."""
        return violations(hs)

    def add(self, antichains) -> None:
        """The round's rows for the violated ``antichains``: their cuts, or their tangents."""
        if self.method == "cuts":
            self.add_cuts(antichains)
            return
        for A in antichains:
            self.cuts[A] = float("nan")                  # remembered, so never separated twice
            self.add_tangent(float(self.tree.p_joint[list(A)].sum()))

    def add_cuts(self, antichains) -> None:
        rows, rhs = [], []
        for A in antichains:
            self.cuts[A] = self.tree.hit(A)
            rows.append((np.asarray(A) - 1, np.ones(len(A))))
            rhs.append(self.cuts[A])
        self._add(rows, -np.inf, rhs)

    def add_tangent(self, t: float) -> None:
        """Rows making max_A Σ_(a∈A) (W(a) − σ·p(a)) ≤ h(t) − σ·t, σ = h'(t) (module docstring)."""
        tree, n = self.tree, self.n
        K = tree.maps[0].draws
        sigma = K * (1.0 - t) ** (K - 1)
        alpha = float(one_minus_pow(t, K)) - sigma * t
        base = self.h.getNumCol()
        # z(u), the tree programme's value below u, is at most W's own bound: an antichain inside
        # the subtree of u has Σ W ≤ Σ q ≤ q(u) and Σ W ≤ g(A) ≤ g({u})
        bound = self.ub[0]
        self.h.addVars(n, np.zeros(n), bound)
        self.ub.append(bound)
        z = base + np.arange(n)
        self._add([(np.array([z[j], j]), np.array([1.0, -1.0])) for j in range(n)],
                  -sigma * tree.p_joint[1:], np.inf)
        self._add([(np.concatenate([[base + idx[0]], base + idx[1:]]), val) for idx, val in self._dp_rows],
                  0.0, np.inf)
        self._add([(base + np.asarray(tree.kids[0]) - 1, np.ones(tree.V))], -np.inf, alpha)
        self.tangents.append(t)

    def solve(self, tolerance: float, max_rounds: int, max_seconds: float | None,
              start: float) -> NodeOptimum:
        tree = self.tree
        rounds = 0
        per_round = PER_ROUND[self.method]
        while True:
            self.h.run()
            rounds += 1
            x = np.asarray(self.h.getSolution().col_value)
            W = np.concatenate([[1.0], np.clip(x[:self.n], 0.0, None)])
            hs = hulls(tree, W)
            new = []
            for v, i in self.violations(hs):
                if v <= CUT_TOLERANCE or len(new) >= per_round:
                    break
                A = antichain_of(tree, hs, i)
                if A not in self.cuts:
                    new.append(A)
            out_of_time = max_seconds is not None and time.perf_counter() - start > max_seconds
            if not new or rounds >= max_rounds or out_of_time:
                break
            self.add(new)
        upper = self.dual_bound()
        W_feasible = self.feasible(W, x)
        lower = float(W_feasible[1:].sum())
        basis = ((), ())
        if self.method == "cuts":
            b = self.h.getBasis()
            basis = (tuple(int(s) for s in b.col_status), tuple(int(s) for s in b.row_status))
        added = len(self.tangents) if self.method == "tangents" else len(self.cuts)
        return NodeOptimum(lower, max(upper, lower), W_feasible, tree, self.method, rounds, added,
                           time.perf_counter() - start, tolerance,
                           tuple(self.cuts.items()) if self.method == "cuts" else (), basis)

    def dual_bound(self) -> float:
        """Weak duality on the master (module docstring): the LP minimises c·x = −Σ W, so with the
        row duals λ (each kept only on a side its row has) and d = c − Aᵀλ,
        min c·x ≥ Σ_r λ_r·(L_r if λ_r > 0 else U_r) + Σ_j min(0, d_j)·u_j (every x_j in [0, u_j])."""
        lam = np.asarray(self.h.getSolution().row_dual, dtype=np.float64)
        lo, hi = np.asarray(self.lo), np.asarray(self.hi)
        lam = np.where((lam > 0) & ~np.isfinite(lo), 0.0, lam)
        lam = np.where((lam < 0) & ~np.isfinite(hi), 0.0, lam)
        ub = np.concatenate(self.ub)
        rows = self.rows or [(np.zeros(0, np.int64), np.zeros(0))]
        A = sp.csr_matrix((np.concatenate([r[1] for r in rows]),
                           (np.repeat(np.arange(len(rows)), [r[0].size for r in rows]),
                            np.concatenate([r[0] for r in rows]))), shape=(len(self.rows), ub.size))
        c = np.zeros(ub.size)
        c[:self.n] = -1.0                                  # the objective −Σ W; other columns cost 0
        d = c - A.T @ lam
        side = np.where(lam > 0, lo, hi)
        bound = float(np.sum(np.where(lam != 0, lam * np.where(np.isfinite(side), side, 0.0), 0.0))
                      + np.sum(np.minimum(d, 0.0) * ub))
        return -bound


def feasible_point(tree: PrefixTree, W: np.ndarray, drafted: np.ndarray | None = None,
                   max_repairs: int = 10_000) -> np.ndarray:
    """A point feasible for every row near ``W``: clipped into [0, min(q(u), g({u}))] and under
    q(y|s)·W(s) top-down, then every violated antichain's subtrees scaled down to make it tight
    (module docstring)."""
    drafted = tree.drafted() if drafted is None else drafted
    W = np.clip(np.asarray(W, dtype=np.float64), 0.0, None).copy()
    W = np.minimum(W, np.minimum(tree.q_joint, drafted))
    W[0] = 1.0
    for u in range(1, tree.N):                       # level order: parents first
        cap = np.nextafter(tree.q_edge[u] * W[tree.parent[u]], 0.0)
        if W[u] > cap:
            W[u] = cap
    for _ in range(max_repairs):
        hs = hulls(tree, W)
        v, i = violations(hs)[0]
        A = antichain_of(tree, hs, i)
        total = float(W[list(A)].sum())
        if v <= 0 or total <= 0:
            return W
        factor = np.nextafter(max(total - v, 0.0) / total, 0.0)
        _scale_subtrees(tree, W, A, factor)
    raise ExplorerError("no feasible point found near the LP's solution")  # pragma: no cover


def _scale_subtrees(tree: PrefixTree, W: np.ndarray, roots, factor: float) -> None:
    """W ← factor·W on the subtrees of ``roots`` (in place)."""
    level = list(roots)
    while level:
        W[level] *= factor
        level = [c for u in level for c in tree.kids[u]]
