"""Exact certificates for the LP optima on toy models: the own-law LP of a token tree and the
i.i.d.-chains LP (docs/maths.md, "The budget question": certified values).

HiGHS solves in floats, to a tolerance of about 1e-10.  A value is shown as a fraction only when
two exact rational numbers coincide:

- **primal**: a plan solved in exact arithmetic on the solver's support.  The columns HiGHS left
  nonzero (r(t, s), a(s·y), and every W(u)) are kept, the others set to 0, and the equality rows
  (every one, the dependent row HiGHS does not see included) are solved by exact Gaussian
  elimination (``fractions.Fraction``).  The plan is accepted only if every entry is ≥ 0 and every
  row holds exactly; then, read as π(t, s, y) = r(t, s)·a(s·y)/Σ_y' a(s·y') (the bonus from
  q(·|s) at depth L), it is also checked against the LP's own rows: Σ_(s,y) π(t, s, y) = P(t) and
  (V) for every z ∈ Ω^(L+1).  Its objective v_P = Σ |s|·π is a lower bound on the optimum.
- **dual**: rational β ≥ 0 on Ω^(L+1), read off the solver's duals, gives the upper bound

      v_D = Σ_t P(t)·max_(s∈t, y)(|s| − B(s·y)) + Σ_z q(z)·β_z,
      B(u) = Σ_(z ⪰ u) q(z | u)·β_z = Σ_z c_(z,s,y)·β_z for u = s·y,

  by weak duality, whatever β is: for any feasible π, Σ |s|·π ≤ Σ_(t,s,y) π(t,s,y)·(α_t + B(s·y))
  with α_t the max above, = Σ_t P(t)·α_t + Σ_z β_z·Σ c·π = v_D by the rows.

v_P ≤ optimum ≤ v_D, so v_P = v_D *is* the optimum.  Otherwise the value is the solver's, to 1e-9,
and "not certified".

**Exact models.**  The presets and JSON models hold decimals of simple fractions.  Every
conditional the LP reads (p to depth L − 1, q to depth L) is rationalised with denominator at most
``MAX_DENOMINATOR`` when it matches the float to ``MATCH``, and each distribution must then sum to
1 exactly; otherwise certification is refused (a tempered model, a Dirichlet draw).  The node-set
law P(t) is then exact: the law's own drafting programme runs through exact coins
(``core.data.coins.enumerate_outcomes``), or, for K i.i.d. chains, multinomials over multisets of
paths, grouped by their set.

**Where β comes from.**  The solver's form draws the bonus from q(·|s) and keeps W(u) columns
(``core.bounds.lp``); its node-row duals δ(u) at depth L, rationalised (denominator ≤
``DUAL_DENOMINATOR``), give β_z = δ(z_1..z_L) − min δ.  Shifting every β_z by one constant leaves
v_D unchanged (Σ_t P(t) = 1 and Σ_z c_(z,s,y) = 1), so β ≥ 0 costs nothing.  A β rounded wrongly
can only make v_D larger than v_P, never certify a wrong value.
"""
from __future__ import annotations

import heapq
import itertools
import math
from functools import lru_cache
from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Sequence

import numpy as np

from core.bounds.sizes import (OUTCOME_LIMIT, SIZE_LIMIT, WORK_LIMIT, BoundsTooLarge, check_size, check_tree_size,
                               enumerate_multisets, validate_pair)
from core.data.drafting import check_supports, node_set_law
from core.data.laws import IID_LAW, DraftLaw, get_law, is_iid_chains
from core.data.levels import level_conditionals, node_tuple
from core.data.shapes import Shape
from core.data.nodes import Node
from core.errors import ExplorerError

if TYPE_CHECKING:  # toy models only provide ``.V`` and ``.cond``
    from toy_models import ToyModel

#: Largest denominator of a model probability taken as an exact rational.
MAX_DENOMINATOR = 10_000
#: How close a float must be to that rational (the presets' decimals are within ~1e-16).
MATCH = 1e-15
#: Largest denominator tried for a rationalised dual (a wrong one cannot certify anything).
DUAL_DENOMINATOR = 10**6


class NotRational(ExplorerError, ValueError):
    """A model probability is not a simple rational: certification is refused, not failed."""


@dataclass(frozen=True)
class Certificate:
    """An LP optimum with its exact certificate, when there is one (module docstring).

    ``value`` is HiGHS's optimum (floats); ``exact`` the optimum as a fraction when the exact plan's
    objective ``primal`` equals the exact dual bound ``dual``, else None, with ``reason`` saying
    why (models not simple rationals, plan infeasible on the support, bound above the plan)."""

    value: float
    exact: Fraction | None
    reason: str = ""
    primal: Fraction | None = None
    dual: Fraction | None = None

    @property
    def certified(self) -> bool:
        return self.exact is not None

    @property
    def fraction(self) -> str | None:
        """"a/b" (or "a" for an integer) when certified, else None."""
        return None if self.exact is None else str(self.exact)

    def text(self) -> str:
        """The value as it is shown: the fraction when certified, else the float to 1e-9, "not
        certified" and why."""
        return self.fraction if self.certified else f"{self.value:.9f}, not certified: {self.reason}"


@lru_cache(maxsize=4096)
def rational(x: float) -> Fraction:
    """The fraction of denominator ≤ ``MAX_DENOMINATOR`` that ``x`` equals to ``MATCH``, or
    ``NotRational``.

    >>> rational(2 / 3), rational(0.15)
    (Fraction(2, 3), Fraction(3, 20))
    """
    f = Fraction(float(x)).limit_denominator(MAX_DENOMINATOR)
    if abs(Fraction(float(x)) - f) > MATCH:
        raise NotRational(f"the model probability {float(x)!r} is no fraction of denominator ≤ "
                          f"{MAX_DENOMINATOR:,}")
    return f


def exact_levels(model: ToyModel, depth: int) -> tuple[list[np.ndarray], list[list[list[Fraction]]]]:
    """(float, exact) conditionals of every node of depth 0..``depth`` in ``core.data.levels``
    order; ``NotRational`` if some probability is not a simple rational or a rationalised row
    does not sum to 1 exactly."""
    floats = level_conditionals(model, depth)
    exact = []
    for d, level in enumerate(floats):
        rows = []
        for i, row in enumerate(level):
            fr = [rational(x) for x in row]
            if sum(fr) != 1:
                raise NotRational(f"the rationalised distribution at node {node_tuple(d, i, model.V)} "
                                  f"sums to {sum(fr)}, not 1")
            rows.append(fr)
        exact.append(rows)
    return floats, exact


def exact_node_set_law(draft: ToyModel, shape: Shape, law: DraftLaw,
                       p_exact: list[list[list[Fraction]]]) -> dict[tuple[Node, ...], Fraction]:
    """P(node set = t) exactly, keyed by sorted leaf paths, for every t of positive probability.

    K i.i.d. chains: P(m) = K!/Π_x c_x! · Π_k p(x^(k)) over multisets m of paths, summed over the
    multisets of one set of distinct paths; any other (shape, law): the law's own drafting
    programme through exact coins (``core.data.drafting.node_set_law``)."""
    V, L = draft.V, shape.L
    if not is_iid_chains(shape, law):
        out = node_set_law(draft.cond, shape, law, OUTCOME_LIMIT, exact=rational)
        return {t: pr for t, pr in out.items() if pr > 0}
    paths = [node_tuple(L, i, V) for i in range(V ** L)]
    p_path = []
    for x in paths:
        pr = Fraction(1)
        for d in range(L):
            pr *= p_exact[d][sum(t * V ** (d - 1 - j) for j, t in enumerate(x[:d]))][x[d]]
        p_path.append(pr)
    out: dict[tuple[Node, ...], Fraction] = defaultdict(Fraction)
    K = shape.K
    for row in enumerate_multisets(V ** L, K).tolist():
        pr = Fraction(math.factorial(K))
        for i in row:
            pr *= p_path[i]
        if pr == 0:
            continue
        for _, run in itertools.groupby(row):             # rows are sorted: equal paths adjacent
            pr /= math.factorial(len(list(run)))
        out[tuple(paths[i] for i in sorted(set(row)))] += pr
    return dict(out)


def certify_tree_lp(draft: ToyModel, target: ToyModel, shape: Shape, law: str | DraftLaw, *,
                    limit: int = SIZE_LIMIT, work_limit: int = WORK_LIMIT, solved=None) -> Certificate:
    """The own-law LP of (shape, law; the law or its name), K i.i.d. chains for ``iid`` on
    (K, 1, …, 1), solved and certified in exact arithmetic: the node form first
    (``core.bounds.node_lp``, ``certify_node_lp``), then, where that certificate fails and the
    per-set form is within ``limit`` and ``work_limit``, the per-set form (module docstring).
    ``solved``: the node form's solve of the same LP, when the caller has it.

    Raises ``BoundsTooLarge`` where both forms are past their limits, ``InvalidInput`` where the law
    does not exist at a node, ``NotConverged`` when the node form's bounds do not meet.  Models that are not simple rationals are not an error: the certificate then says
    "not certified" and why.

    >>> from toy_models import PRESETS
    >>> toy = PRESETS["binary-toy"]
    >>> cert = certify_tree_lp(toy.draft, toy.target, Shape.chains_of(2, 2), "greedy")
    >>> cert.exact, cert.primal == cert.dual
    (Fraction(17, 9), True)
    """
    from core.bounds.node_lp import tree_lp_optimum

    law = get_law(law)
    if solved is None:
        try:
            solved = tree_lp_optimum(draft, target, shape, law)
        except BoundsTooLarge:                    # past the node form's limits: the per-set form's
            return certify_blocks(draft, target, shape, law, limit=limit, work_limit=work_limit)
    value = solved.value
    try:
        exact_levels(draft, shape.L - 1)
        exact_levels(target, shape.L)
    except NotRational as exc:
        return Certificate(value, None, str(exc))
    node = certify_node_lp(draft, target, shape, law, solved)
    if node.certified:
        return node
    try:
        per_set = certify_blocks(draft, target, shape, law, limit=limit, work_limit=work_limit)
    except BoundsTooLarge:
        return Certificate(value, None, node.reason, node.primal, node.dual)
    return per_set if per_set.certified else Certificate(value, None, node.reason, node.primal, node.dual)


def certify_blocks(draft: ToyModel, target: ToyModel, shape: Shape, law: str | DraftLaw, *,
                   limit: int = SIZE_LIMIT, work_limit: int = WORK_LIMIT) -> Certificate:
    """The per-set form of the own-law LP (``core.bounds.lp.optimal_tree_lp``), solved by HiGHS and
    certified in exact arithmetic (module docstring); ``BoundsTooLarge`` beyond its limits.

    >>> from toy_models import PRESETS
    >>> toy = PRESETS["binary-toy"]
    >>> certify_blocks(toy.draft, toy.target, Shape.chains_of(2, 2), "iid").exact
    Fraction(131, 81)
    """
    from core.bounds.lp import solve_block_system, tree_lp_system

    law = get_law(law)
    V = validate_pair(draft, target, shape.K, shape.L)
    L = shape.L
    if is_iid_chains(shape, law):
        shape = Shape.chains_of(shape.K, L)
        check_size(V, shape.K, L, limit, "tree", work_limit=work_limit)
    else:
        check_tree_size(V, shape, law, limit, work_limit=work_limit)
        check_supports(draft.cond, shape, law)
    try:
        _, p_exact = exact_levels(draft, L - 1)
        q_float, q_exact = exact_levels(target, L)
    except NotRational as exc:
        return _uncertified(draft, target, shape, law, str(exc))
    law_t = exact_node_set_law(draft, shape, law, p_exact)
    if sum(law_t.values()) != 1:
        return _uncertified(draft, target, shape, law, "the exact node-set law does not sum to 1")
    sets = list(law_t)
    pm = [law_t[t] for t in sets]
    system = tree_lp_system(q_float, sets, np.array([float(x) for x in pm]), V, L)
    res = solve_block_system(system, free_w=True)
    value = float(-res.fun)
    primal, why = _exact_primal(system, res.x, pm, q_exact)
    if primal is None:
        return Certificate(value, None, why)
    duals = np.concatenate([-np.asarray(res.eqlin.marginals, dtype=np.float64), [0.0]])
    dual = _dual_bound(system, duals, sets, pm, q_exact)
    if primal != dual:
        return Certificate(value, None, f"the exact plan's value {primal} is below the rational dual "
                                        f"bound {dual}", primal, dual)
    return Certificate(value, primal, "", primal, dual)


def certify_chains_lp(draft: ToyModel, target: ToyModel, K: int, L: int, **limits) -> Certificate:
    """The i.i.d.-chains LP, certified: ``certify_tree_lp`` on ``iid`` chains K×L."""
    return certify_tree_lp(draft, target, Shape.chains_of(K, L), IID_LAW, **limits)


def _uncertified(draft, target, shape, law, reason: str) -> Certificate:
    """The solver's optimum alone, for models certification refuses."""
    from core.bounds.lp import optimal_tree_lp

    return Certificate(float(optimal_tree_lp(draft, target, shape, law).value), None, reason)


def _exact_matrix(system, pm: Sequence[Fraction], q_exact) -> tuple[list[dict[int, Fraction]], list[Fraction]]:
    """Every row of the system (none dropped) with exact coefficients and right-hand side: ±1
    stay, each −q(y|u) of a W column and each q(y) of a depth-1 row is the model's rational, and
    P(t) is exact."""
    lay = system.layout
    V = lay.V
    rows: list[dict[int, Fraction]] = [dict() for _ in range(system.b.size)]
    for i, j, v in zip(system.rows.tolist(), system.cols.tolist(), system.vals.tolist()):
        if v == 0.0:
            continue
        # −q(y|u) is the very float ``exact_levels`` rationalised into q_exact
        exact = Fraction(int(v)) if v in (1.0, -1.0) else -rational(-v)
        rows[i][j] = rows[i].get(j, 0) + exact
    rhs = [Fraction(0)] * system.b.size
    rhs[:lay.M] = list(pm)
    first = int(lay.node_row(1, 0))
    rhs[first:first + V] = q_exact[0][0]
    return rows, rhs


def _solve_exact(rows: list[dict[int, Fraction]], rhs: list[Fraction]) -> dict[int, Fraction] | None:
    """A solution of rows·x = rhs in exact arithmetic (columns never pivoted are 0), or None if the
    rows are inconsistent.  Sparse Gaussian elimination: the shortest row first, pivoting on its
    column that occurs in the fewest rows (Markowitz's rule), which keeps fill-in small here."""
    rows = [dict(r) for r in rows]
    rhs = list(rhs)
    col_rows: dict[int, set[int]] = defaultdict(set)
    for i, r in enumerate(rows):
        for j in r:
            col_rows[j].add(i)
    alive = set(range(len(rows)))
    heap = [(len(r), i) for i, r in enumerate(rows)]
    heapq.heapify(heap)
    pivots: list[tuple[int, int]] = []
    while heap:
        n, i = heapq.heappop(heap)
        if i not in alive or n != len(rows[i]):
            continue
        alive.discard(i)
        if n == 0:
            if rhs[i] != 0:
                return None
            continue
        j = min(rows[i], key=lambda c: (len(col_rows[c]), c))
        piv = rows[i][j]
        for c in rows[i]:
            col_rows[c].discard(i)
        for k in list(col_rows[j]):
            f = rows[k][j] / piv
            row_k = rows[k]
            for c, v in rows[i].items():
                nv = row_k.get(c, 0) - f * v
                if nv == 0:
                    if c in row_k:
                        del row_k[c]
                        col_rows[c].discard(k)
                else:
                    if c not in row_k:
                        col_rows[c].add(k)
                    row_k[c] = nv
            rhs[k] -= f * rhs[i]
            heapq.heappush(heap, (len(row_k), k))
        pivots.append((i, j))
    x: dict[int, Fraction] = {}
    for i, j in reversed(pivots):
        s = rhs[i] - sum((v * x[c] for c, v in rows[i].items() if c != j and c in x), Fraction(0))
        x[j] = s / rows[i][j]
    return x


def _exact_primal(system, x_float: np.ndarray, pm: Sequence[Fraction], q_exact
                  ) -> tuple[Fraction | None, str]:
    """(v_P, "") for the exact plan on the solver's support, or (None, why not)."""
    lay = system.layout
    rows, rhs = _exact_matrix(system, pm, q_exact)
    keep = set(np.flatnonzero(x_float[:system.w_start] != 0).tolist())
    keep |= set(range(system.w_start, system.n_cols))
    restricted = [{j: v for j, v in r.items() if j in keep} for r in rows]
    x = _solve_exact(restricted, rhs)
    if x is None:
        return None, "the equality rows have no exact solution on the solver's support"
    if any(v < 0 for v in x.values()):
        return None, "the exact plan on the solver's support has a negative entry"
    for r, b in zip(rows, rhs):
        if sum((v * x.get(j, 0) for j, v in r.items()), Fraction(0)) != b:   # pragma: no cover
            return None, "the exact plan breaks a row"
    bad = _spec_rows_broken(lay, x, pm, q_exact)
    if bad:                                                                     # pragma: no cover
        return None, f"the exact plan breaks {bad}"
    r_depth = lay.r_depth.tolist()
    return sum((r_depth[j] * v for j, v in x.items() if j < lay.n_r), Fraction(0)), ""


def _spec_rows_broken(lay, x: dict[int, Fraction], pm: Sequence[Fraction], q_exact) -> str:
    """The LP's own rows on π(t, s, y) = r(t, s)·a(s·y)/Σ_y' a(s·y') (q(y|s) at depth L): '' when
    Σ_(s,y) π(t, ·) = P(t) for every t and (V) holds for every z ∈ Ω^(L+1), else which fails.
    The output law is P(O = s·y) = Σ_t π(t, s, y) = a(s·y) for |s| < L (the balance rows make
    Σ_t r(t, s) = Σ_y a(s·y)) and Σ_t r(t, s)·q(y|s) at |s| = L."""
    V, L = lay.V, lay.L
    stop = [Fraction(0)] * lay.M
    r_l = defaultdict(Fraction)                       # Σ_t r(t, s) at depth L
    for j in range(lay.n_r):
        v = x.get(j, Fraction(0))
        stop[int(lay.r_m[j])] += v
        if lay.r_depth[j] == L:
            r_l[int(lay.r_idx[j])] += v
    if any(s != p for s, p in zip(stop, pm)):
        return "a set row"
    emitted = [[Fraction(0)] * V ** d for d in range(L + 2)]
    for k in range(lay.n_a):
        d, i, y = int(lay.a_depth[k]), int(lay.a_idx[k]), int(lay.a_y[k])
        emitted[d + 1][i * V + y] += x.get(lay.n_r + k, Fraction(0))
    for i, mass in r_l.items():
        for y in range(V):
            emitted[L + 1][i * V + y] += mass * q_exact[L][i][y]
    completed, q = [Fraction(0)], [Fraction(1)]
    for d in range(L + 1):
        completed = [completed[i] * q_exact[d][i][y] + emitted[d + 1][i * V + y]
                     for i in range(V ** d) for y in range(V)]
        q = [q[i] * q_exact[d][i][y] for i in range(V ** d) for y in range(V)]
    return "" if completed == q else "a losslessness row (V)"


def _dual_bound(system, duals: np.ndarray, sets: Sequence[tuple[Node, ...]], pm: Sequence[Fraction],
                q_exact) -> Fraction:
    """v_D for β_z = δ(z_1..z_L) − min δ, δ the rationalised node-row duals at depth L (module
    docstring), evaluated exactly."""
    lay = system.layout
    V, L = lay.V, lay.L
    delta = [Fraction(float(duals[int(lay.node_row(L, i))])).limit_denominator(DUAL_DENOMINATOR)
             for i in range(V ** L)]
    low = min(delta)
    # B at depth L + 1 is β (constant in the last token), so B = δ − min δ at depth L; above it,
    # B(u) = Σ_y q(y|u)·B(u·y).
    B = [[Fraction(0)] for _ in range(L + 2)]
    B[L + 1] = [delta[i // V] - low for i in range(V ** (L + 1))]
    for d in range(L, -1, -1):
        B[d] = [sum((q_exact[d][i][y] * B[d + 1][i * V + y] for y in range(V)), Fraction(0))
                for i in range(V ** d)]
    # h(s) = |s| − min_y B(s·y): the best of stopping at s, for every node s
    h = {(d, i): d - min(B[d + 1][i * V: i * V + V]) for d in range(L + 1) for i in range(V ** d)}
    alpha = [h[(0, 0)]] * lay.M
    for j in range(lay.n_r):
        m = int(lay.r_m[j])
        alpha[m] = max(alpha[m], h[(int(lay.r_depth[j]), int(lay.r_idx[j]))])
    return sum((p * a for p, a in zip(pm, alpha)), Fraction(0)) + B[0][0]


# ---------------------------------------------------------------------------------------------
# The node form (core.bounds.node_lp)
# ---------------------------------------------------------------------------------------------

#: Largest prefix tree certified in exact arithmetic (the exact separation runs in Fractions).
NODE_CERTIFY_LIMIT = 400


def certify_node_lp(draft: ToyModel, target: ToyModel, shape: Shape, law: str | DraftLaw,
                    solved=None) -> Certificate:
    """The node form's optimum (``core.bounds.node_lp``) certified in exact arithmetic, from
    ``solved`` when it was solved by cuts (tangent rows hold irrational intercepts), else from a
    solve by cuts made here:

    - **primal**: HiGHS's final basis solved exactly (the columns at a bound take that bound, every
      row not basic holds with equality: a square system), accepted only if it is feasible for
      every node row, every bound and *every* antichain, the last by the exact separation of
      ``core.bounds.antichains`` in Fractions; v_P = Σ W;
    - **dual**: y on the same rows from the basic columns' reduced costs 0, exactly, clipped ≥ 0;
      v_D = Σ_r b_r·y_r + Σ_u ū(u)·max(0, 1 − (Aᵀy)_u) bounds the optimum whatever y is.

    v_P = v_D is the optimum.  Models that are not simple rationals, or a tree past
    ``NODE_CERTIFY_LIMIT`` nodes, are not an error: the certificate then says "not certified" and
    why."""
    from core.bounds.antichains import hulls, violations
    from core.bounds.coverage import _hit, node_maps
    from core.bounds.node_lp import tree_lp_optimum

    if solved is None or solved.method != "cuts":
        if solved is not None and solved.tree.N > NODE_CERTIFY_LIMIT:
            return Certificate(solved.lower, None, f"{solved.tree.N:,} nodes is more than the exact "
                                                   f"certificate's {NODE_CERTIFY_LIMIT:,}")
        solved = tree_lp_optimum(draft, target, shape, law, method="cuts")
    tree = solved.tree
    value = solved.lower
    V, L, N = tree.V, tree.L, tree.N
    if N > NODE_CERTIFY_LIMIT:
        return Certificate(value, None, f"{N:,} nodes is more than the exact certificate's "
                                        f"{NODE_CERTIFY_LIMIT:,}")
    if not solved.converged:
        return Certificate(value, None, solved.unconverged_text())
    try:
        p_float, p_exact = exact_levels(draft, L - 1)
        _, q_exact = exact_levels(target, L - 1)
    except NotRational as exc:
        return Certificate(value, None, str(exc))
    off = [0]
    for d in range(L + 1):
        off.append(off[-1] + V ** d)
    p_edge, q_edge, q_joint = [Fraction(1)] * N, [Fraction(1)] * N, [Fraction(1)] * N
    for d in range(1, L + 1):
        for i in range(V ** d):
            u = off[d] + i
            p_edge[u] = p_exact[d - 1][i // V][i % V]
            q_edge[u] = q_exact[d - 1][i // V][i % V]
            q_joint[u] = q_joint[int(tree.parent[u])] * q_edge[u]
    maps = node_maps(p_float, tree.shape, tree.law, tree.p_joint, np.asarray(off), exact=rational)
    hit = lambda A: _hit(tree, A, p_edge, maps, exact=True)          # noqa: E731
    ub = [Fraction(1)] + [min(q_joint[u], hit([u])) for u in range(1, N)]
    rows: list[dict[int, Fraction]] = []
    rhs: list[Fraction] = []
    for c in range(N):
        if tree.depth[c] >= 2:
            rows.append({c - 1: Fraction(1), int(tree.parent[c]) - 1: -q_edge[c]})
            rhs.append(Fraction(0))
    for A, _ in solved.cut_sets:
        rows.append({a - 1: Fraction(1) for a in A})
        rhs.append(hit(list(A)))
    col_status, row_status = solved.basis
    if len(col_status) != N - 1 or len(row_status) != len(rows):
        return Certificate(value, None, "the solver's basis does not match its rows")
    basic = [j for j, s in enumerate(col_status) if s == 1]
    fixed = {j: (ub[j + 1] if s == 2 else Fraction(0)) for j, s in enumerate(col_status) if s != 1}
    active = [r for r, s in enumerate(row_status) if s != 1]
    # primal: the active rows as equalities in the basic columns
    system = []
    b = []
    for r in active:
        row = {j: v for j, v in rows[r].items() if j not in fixed}
        system.append(row)
        b.append(rhs[r] - sum((v * fixed[j] for j, v in rows[r].items() if j in fixed), Fraction(0)))
    x = _solve_exact(system, b)
    if x is None or any(j not in x for j in basic) and len(basic) != len(active):
        return Certificate(value, None, "the solver's basis has no exact solution")
    W = [Fraction(1)] + [fixed.get(j, x.get(j, Fraction(0))) for j in range(N - 1)]
    if any(w < 0 or w > ub[u] for u, w in enumerate(W)):
        return Certificate(value, None, "the exact basic solution leaves a bound")
    if any(sum((v * W[j + 1] for j, v in row.items()), Fraction(0)) > h for row, h in zip(rows, rhs)):
        return Certificate(value, None, "the exact basic solution breaks a row")
    hs = hulls(tree, W, p_edge, maps, zero=Fraction(0), one=Fraction(1))
    if violations(hs, one=Fraction(1))[0][0] > 0:
        return Certificate(value, None, "the exact basic solution breaks an antichain inequality")
    primal = sum(W[1:], Fraction(0))
    # dual: reduced cost 0 on every basic column
    transposed: list[dict[int, Fraction]] = []
    for j in basic:
        transposed.append({k: rows[r][j] for k, r in enumerate(active) if j in rows[r]})
    y_active = _solve_exact(transposed, [Fraction(1)] * len(basic))
    if y_active is None:
        return Certificate(value, None, "the dual of the solver's basis has no exact solution", primal)
    y = {active[k]: max(v, Fraction(0)) for k, v in y_active.items()}
    aty = [Fraction(0)] * (N - 1)
    for r, yr in y.items():
        for j, v in rows[r].items():
            aty[j] += v * yr
    dual = (sum((rhs[r] * yr for r, yr in y.items()), Fraction(0))
            + sum((ub[j + 1] * max(Fraction(0), 1 - aty[j]) for j in range(N - 1)), Fraction(0)))
    if primal != dual:
        return Certificate(value, None, f"the exact plan's value {primal} is below the rational dual "
                                        f"bound {dual}", primal, dual)
    return Certificate(value, primal, "", primal, dual)
