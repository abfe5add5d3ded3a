"""Bounds on the expected accepted length E[τ] for K i.i.d. drafts of length L (docs/maths.md).

Notation (docs/maths.md): p = draft, q = target, Ω = {0..V-1}; p(u), q(u) are joint probabilities of a
prefix u, p(·|u), q(·|u) conditionals.  Draft paths x ∈ Ω^L are indexed lexicographically; a
multiset m of K paths has probability P(m) = K!/Π_x c_x(m)! · Π_k p(x^(k)) (c_x = multiplicity).

**Optimal valid verifier** (``optimal_lp``).  Variables π(m, s, y) ≥ 0 for every multiset m with
P(m) > 0, every node s of m's draft tree (∅ included, |s| ≤ L) and every y ∈ Ω:

    Σ_(s,y) π(m, s, y) = P(m)                                            for every m,
    a(s·y) + W(s·y) − q(y|s)·W(s) = 0   (W(∅) = 1, W(·) = 0 at depth L+1)  for every |s| ≤ L, y,
    maximize Σ |s|·π(m, s, y),

where a(u) = Σ_m π(m, u[:-1], u[-1]) = P(O = u) and W(s) ≥ 0 (|s| = 1..L) are auxiliary columns.
*Equivalence with (V)*: let G(u) = P(the completed sequence starts with u).  Then
G(u) = R(u) + W(u) with R(u) = Σ_(∅≠v⪯u) a(v)·q(u_(>|v|) | v), and R(s·y) = q(y|s)·R(s) + a(s·y).
If the rows hold, G(s·y) = q(y|s)·(R(s) + W(s)) = q(y|s)·G(s) and G(∅) = 1, so G = q, which is (V).
Conversely (V) makes G = q at depth L+1, hence at every depth (G is a marginal of the completed
law), and G(s·y) = q(y|s)·G(s) is exactly the row.  Summing a row over y gives
W(s) = Σ_y [a(s·y) + W(s·y)], so the free columns W are forced to P(accepted prefix extends s) and
the objective equals Σ_(s≠∅) W(s) = E[τ].  The solution is a runnable verifier: given the drafts'
multiset m, output (s, y) with probability π(m, s, y)/P(m).  At K = 1 its value is BV's
Σ_(s≠∅) W(s), W(s·y) = min(q(y|s)·W(s), p(s·y)).

Three exact reductions keep the LP small (each maps feasible solutions both ways and keeps the
objective).  (i) At |s| = L the rows force P(O = s·y) = q(y|s)·W(s), so the bonus can be drawn
from q(·|s) and the rows of depth L+1 disappear (W(s) = Σ_m r(m, s) there).  (ii) The rows see
π(m, s, y) only through r(m, s) = Σ_y π(m, s, y) (set rows, objective) and a(s·y) = Σ_m π(m, s, y)
(node rows), so the LP keeps r(m, s) and a(s·y) tied by Σ_y a(s·y) = Σ_m r(m, s); any solution is
realized by π(m, s, y) = r(m, s)·a(s·y)/Σ_y' a(s·y'): the extra token is drawn from a per-node
distribution that does not depend on the other drafts.  This divides the column count by about V.
(iii) m's columns depend on m only through its tree, i.e. its *set* of distinct paths, so multisets
with one set share one block with probability Σ P(m), and each takes the set's plan.  One row is
linearly dependent (Σ set rows + Σ balance rows = Σ node rows = total mass) and is dropped, so
rounding in Σ P(m) vs Σ q cannot make the system inconsistent.

(iv) At K = 1 the per-path columns collapse to one column per node.  The verifier's stopping
masses R(s) = Σ_x r(x, s) are realizable by some per-path plan r(x, s) ≥ 0 (s ⪯ x,
Σ_s r(x, s) = p(x)) iff W(u) = Σ_(s⪰u) R(s) ≤ p(u) for every node u: it is a transportation
from leaves x to the nodes on their path, and since the nodes a demand set can draw from form a
laminar family (subtrees), Hall's condition reduces to one inequality per subtree.  As the node
rows give R(s) = W(s) − Σ_y W(s·y) = Σ_y a(s·y), the K = 1 LP is

    maximize Σ_(1≤|u|≤L) W(u)   s.t.   W(s·y) − q(y|s)·W(s) ≤ 0  (W(∅) = 1),   0 ≤ W(u) ≤ p(u),

with a(s·y) = q(y|s)·W(s) − W(s·y) ≥ 0 as the slack.  Its solution is spread back over paths
bottom-up (each node takes R(s) from the leaves below it in proportion to what they have left,
which Hall's condition makes sufficient), giving the same plan format as K ≥ 2.  The LP is still
solved by HiGHS, not by BV's recursion; the tests check it against the per-path form
(``general=True``) and against BV's exact law, independently.

**Acausal coupling bound** (``acausal_bound``).  ρ(m, z) ≥ 0, z ∈ Ω^L, with marginals P(m) and
q(z); maximize E[max_k LCP(x^(k), z)] (LCP = length of the longest common prefix).  A
transportation problem; an upper bound that no verifier attains in general (12/9 on the binary toy).
It is solved by default in an equivalent tree form with the verifier LP's columns (see
``acausal_bound``): the acausal bound is the verifier LP with the causal rows replaced by the
capacities "mass at or below node u ≤ q(u)".

All arithmetic is float64; the LPs use ``scipy.optimize.linprog(method="highs")`` on sparse
matrices built from numpy index arrays.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping, NamedTuple, Sequence

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from core.bounds.closed_form import lcp_matrix, token_vectors
from core.bounds.sizes import (SIZE_LIMIT, WORK_LIMIT, check_size, check_tree_size, distinct_path_sets,
                               enumerate_multisets, level_offsets, multiset_probabilities, tree_nodes,
                               validate_pair)
from core.data.drafting import check_supports, node_set_law
from core.data.laws import IID_LAW, DraftLaw, get_law, is_iid_chains
from core.data.levels import level_conditionals, level_joints, node_tuple
from core.data.shapes import Shape
from core.data.nodes import Node
from core.errors import ExplorerError, InvalidInput

if TYPE_CHECKING:  # toy models only provide ``.V`` and ``.cond``; no runtime import needed
    from toy_models import ToyModel

#: HiGHS options: tight tolerances so that the plan is lossless to ~1e-12, not to 1e-7.
_HIGHS_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}

#: Plan entries whose conditional probability is below this are dropped (then renormalized).
_PLAN_EPS = 1e-14


class LPFailed(ExplorerError, RuntimeError):
    """HiGHS did not find the optimum.  Every LP here raises it; none returns a failed result."""


def _check(res, what: str) -> None:
    """Raise ``LPFailed`` unless ``linprog`` found the optimum."""
    if res.status != 0 or res.x is None:
        raise LPFailed(f"the {what} LP did not solve: {res.message}")


def _solve(c, A_eq, b_eq, bounds, A_ub=None, b_ub=None):
    """linprog(method="highs") with tight tolerances.  HiGHS's presolve can call a feasible but
    nearly tight model infeasible (capacities of ~1e-12); such a result is retried without it."""
    rows = dict(A_eq=A_eq, b_eq=b_eq, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs")
    res = linprog(c, **rows, options=_HIGHS_OPTIONS)
    if res.status == 2:
        res = linprog(c, **rows, options=dict(_HIGHS_OPTIONS, presolve=False))
    return res


# ---------------------------------------------------------------------------------------------
# The optimal valid verifier
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class OptimalPlan:
    """Solution of the optimal-verifier LP: the optimum E[τ] and, for every draft multiset m with
    P(m) > 0, the plan {(s, y): π(m, s, y)/P(m)} from which a verifier samples its output."""

    value: float                                      # optimum E[τ]
    V: int
    K: int
    L: int
    multisets: tuple[tuple[Node, ...], ...]           # sorted tuples of K draft paths
    probabilities: np.ndarray                         # P(m), same order
    plans: tuple[Mapping[tuple[Node, int], float], ...]
    status: int                                       # linprog status (0 = optimal, always)
    message: str
    n_variables: int = 0
    n_constraints: int = 0
    #: Token trees (``optimal_tree_lp``): the shape and law solved for; ``multisets`` then holds each
    #: drafted node set as its sorted leaf paths, and ``probabilities`` P(node set).  None for K
    #: i.i.d. chains, whose plans are keyed by draft multisets.
    shape: Shape | None = None
    law: DraftLaw = IID_LAW
    _index: dict = field(init=False, default_factory=dict, repr=False)

    def __post_init__(self):
        self._index.update({m: i for i, m in enumerate(self.multisets)})

    def plan_for(self, multiset: Sequence[Node]) -> Mapping[tuple[Node, int], float] | None:
        """The plan of a multiset of draft paths (any order), or None if P(m) = 0; for a token-tree
        plan, of the tree's distinct leaf paths (any order)."""
        i = self._index.get(tuple(sorted(tuple(int(t) for t in x) for x in multiset)))
        return None if i is None else self.plans[i]

    def output_law(self) -> dict[Node, float]:
        """P(O = u) for every output u = s·y: Σ_m P(m)·plan_m(s, y)."""
        law: dict[Node, float] = {}
        for pm, plan in zip(self.probabilities, self.plans):
            for (s, y), c in plan.items():
                law[s + (y,)] = law.get(s + (y,), 0.0) + float(pm) * c
        return law


@dataclass(frozen=True)
class _Blocks:
    """The draft side shared by the LPs: multisets with P(m) > 0, grouped into path sets."""

    multisets: np.ndarray       # (M_all, K) sorted path indices
    pm_all: np.ndarray          # P(m)
    sets: np.ndarray            # (M, K) distinct path sets, padded with V^L
    group: np.ndarray           # multiset i belongs to set group[i]
    pm: np.ndarray              # P(set) = Σ_(m in set) P(m)


def _blocks(draft: ToyModel, V: int, K: int, L: int) -> _Blocks:
    """Enumerate draft multisets, drop P(m) = 0, group by path set.

    The LP columns of m depend on m only through its tree, i.e. its set of distinct paths, so one
    block per set with P(set) = Σ P(m) is exact: every multiset of a set takes the set's plan."""
    p_path = level_joints(level_conditionals(draft, L - 1))[L]
    ms = enumerate_multisets(V ** L, K)
    pm_all = multiset_probabilities(ms, p_path)
    keep = pm_all > 0
    ms, pm_all = ms[keep], pm_all[keep]
    sets, group = distinct_path_sets(ms, V ** L)
    pm = np.bincount(group, weights=pm_all, minlength=sets.shape[0])
    return _Blocks(ms, pm_all, sets, group, pm)


@dataclass(frozen=True)
class _Layout:
    """Columns and rows shared by the optimal LP and the tree form of the acausal LP.

    Global node ids: gid(u) = off[|u|] + lexicographic index of u (∅ has gid 0).
    Columns: r(m, s), one per set m and node s of tree(m) (``r_*`` arrays, in this order), then
    a(s·y), one per node s with |s| < L and y ∈ Ω (``a_*``), then the LP's own extra columns.
    Rows: M set rows; a balance row per node s with |s| < L (``bal_row``); a node row per node u
    with 1 ≤ |u| ≤ L (``node_row``).
    """

    V: int
    L: int
    M: int
    off: np.ndarray
    r_m: np.ndarray
    r_depth: np.ndarray
    r_idx: np.ndarray
    a_depth: np.ndarray          # depth of s (the child s·y has depth + 1)
    a_idx: np.ndarray
    a_y: np.ndarray

    @property
    def n_r(self) -> int:
        return int(self.r_m.size)

    @property
    def n_a(self) -> int:
        return int(self.a_y.size)

    @property
    def n_rows(self) -> int:
        return self.M + int(self.off[self.L]) + int(self.off[self.L + 1]) - 1

    def bal_row(self, depth, idx):
        return self.M + self.off[depth] + idx

    def node_row(self, depth, idx):
        return self.M + self.off[self.L] + self.off[depth] + idx - 1

    def entering(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, cols, vals) of the set rows, the balance rows and the mass entering each node:
        r(m, s) is +1 in row m and −1 in balance(s) for |s| < L, +1 in node(s) for |s| = L;
        a(s·y) is +1 in balance(s) and +1 in node(s·y)."""
        V, L = self.V, self.L
        r_col = np.arange(self.n_r)
        a_col = self.n_r + np.arange(self.n_a)
        inner = self.r_depth < L
        rows = np.concatenate([
            self.r_m,
            np.where(inner, self.bal_row(np.minimum(self.r_depth, L - 1), self.r_idx),
                     self.node_row(self.r_depth, self.r_idx)),
            self.bal_row(self.a_depth, self.a_idx),
            self.node_row(self.a_depth + 1, self.a_idx * V + self.a_y)])
        cols = np.concatenate([r_col, r_col, a_col, a_col])
        vals = np.concatenate([np.ones(self.n_r), np.where(inner, -1.0, 1.0),
                               np.ones(2 * self.n_a)])
        return rows, cols, vals


def _layout(sets: np.ndarray, V: int, L: int) -> _Layout:
    r_m, r_depth, r_idx = tree_nodes(sets, V, L)
    s_depth, s_idx = _nodes(V, 0, L - 1)
    return _Layout(V, L, sets.shape[0], level_offsets(V, L), r_m, r_depth, r_idx,
                   np.repeat(s_depth, V), np.repeat(s_idx, V), np.tile(np.arange(V), s_idx.size))


def _nodes(V: int, first: int, last: int) -> tuple[np.ndarray, np.ndarray]:
    """(depth, index) of every node with first ≤ depth ≤ last, in global-id order."""
    depth = [np.full(V ** d, d, np.int64) for d in range(first, last + 1)]
    idx = [np.arange(V ** d, dtype=np.int64) for d in range(first, last + 1)]
    return (np.concatenate(depth + [np.zeros(0, np.int64)]),
            np.concatenate(idx + [np.zeros(0, np.int64)]))


def _drop_last_row(rows, cols, vals, b, n_cols):
    """The rows have one linear dependency (Σ set rows + Σ balance rows = Σ node rows = total
    mass) whose right-hand sides, Σ P(m) and Σ q(y), agree only up to rounding, which HiGHS's
    presolve may call infeasible.  Drop the last row (a deepest node); the others imply it to
    ≈ 1e-16."""
    n = b.size - 1
    kept = rows < n
    return sp.csr_matrix((vals[kept], (rows[kept], cols[kept])), shape=(n, n_cols)), b[:n]


def optimal_lp(draft: ToyModel, target: ToyModel, K: int, L: int, *,
               limit: int = SIZE_LIMIT, work_limit: int = WORK_LIMIT,
               general: bool = False) -> OptimalPlan:
    """Solve the optimal lossless-verifier LP (module docstring) and return its plan.

    At K = 1 the node form (module docstring (iv)) is solved unless ``general`` is true, in which
    case the per-path form below is solved as for K ≥ 2 (same optimum; the tests compare them).

    Parameters
    ----------
    draft, target : ToyModel
        p and q, on one vocabulary of V tokens.
    K, L : int
        Number of i.i.d. drafts and their length.
    limit, work_limit : int
        Refuse LPs larger than this (``core.bounds.sizes.check_size``).
    general : bool
        At K = 1, solve the per-path form instead of the node form.

    Returns
    -------
    OptimalPlan
        ``value`` is the largest E[τ] of any lossless verifier; ``plan_for(drafts)`` the optimal
        verifier's output law given the drafts.

    Raises
    ------
    BoundsTooLarge
        The LP exceeds ``limit`` or ``work_limit``.
    LPFailed
        HiGHS did not find the optimum.
    ValueError
        The vocabularies differ, or K or L is not a positive integer.

    Examples
    --------
    On the binary toy (p = (2/3, 1/3), q = (1/3, 2/3), L = 2) no lossless verifier with two
    drafts accepts more than 131/81 tokens on average; with one draft, BV's 11/9 is optimal:

    >>> from fractions import Fraction
    >>> from toy_models import PRESETS
    >>> toy = PRESETS["binary-toy"]
    >>> Fraction(optimal_lp(toy.draft, toy.target, K=2, L=2).value).limit_denominator(1000)
    Fraction(131, 81)
    >>> Fraction(optimal_lp(toy.draft, toy.target, K=1, L=2).value).limit_denominator(1000)
    Fraction(11, 9)

    Implemented form (exact, see the module docstring): r(m, s) = Σ_y π(m, s, y) for every node s
    of tree(m); a(s·y) = P(O = s·y) for |s| < L, tied by the balance rows Σ_y a(s·y) = Σ_m r(m, s);
    W(u) for 1 ≤ |u| < L.  Node rows, 1 ≤ |u| ≤ L: a(u) + W(u) − q(u_last | parent)·W(parent) = 0
    with W(∅) = 1 on the right and, at |u| = L, W(u) = Σ_m r(m, u) (full blocks, bonus ~ q(·|u)).
    The plan is π(m, s, y)/P(m) = r(m, s)/P(m) · a(s·y)/Σ_y' a(s·y') (bonus: · q(y|s)).
    """
    V = validate_pair(draft, target, K, L)
    node_form = K == 1 and not general
    check_size(V, K, L, limit, "optimal" if node_form else "tree", work_limit=work_limit)
    q_cond = level_conditionals(target, L)                          # depths 0..L
    blk = _blocks(draft, V, K, L)
    lay = _layout(blk.sets, V, L)
    solve = _single_draft_lp if node_form else _multi_draft_lp
    sol, status, message, n_cols, n_rows = solve(draft, q_cond, blk, lay)
    paths = [node_tuple(L, i, V) for i in range(V ** L)]
    multisets = tuple(tuple(paths[i] for i in row) for row in blk.multisets)
    value, set_plans = _extract_plans(sol, blk.pm, lay, q_cond)
    plans = tuple(set_plans[g] for g in blk.group)
    return OptimalPlan(value, V, K, L, multisets, blk.pm_all, plans, status, message,
                       n_cols, n_rows)


def optimal_tree_lp(draft: ToyModel, target: ToyModel, shape: Shape, law: str | DraftLaw, *,
                    limit: int = SIZE_LIMIT, work_limit: int = WORK_LIMIT,
                    general: bool = False) -> OptimalPlan:
    """The own-law LP: the best lossless verifier for drafts of ``shape`` drafted by ``law`` (the
    law or its name).

    Variables π(t, s, y) ≥ 0 for every drafted node set t with P(t) > 0, s ∈ t and y ∈ Ω; rows
    Σ_(s,y) π(t, s, y) = P(t) and (V); maximise Σ |s|·π.  Any lossless verifier, whatever its
    internal coins, gives the feasible point π(t, s, y) = P(node set t, O = (s, y)), so no verifier
    beats the optimum; and the optimum is itself a verifier (given a draft with node set t, output
    (s, y) with probability π(t, s, y)/P(t)).  Only the law of the node set matters: an LP over
    full drafts (draw order, multiplicities) sums to this one over the drafts of one node set and
    splits back in proportion to their probabilities, so order and multiplicity cannot raise it.

    Every b_d ≥ 1, so every leaf is at depth L and a node set is the prefix closure of its distinct
    leaf paths: exactly the blocks of ``optimal_lp``'s reduction (iii), with P(t) from the law's
    enumeration of drafted trees (``core.data.drafting.node_set_law``) in place of multinomials;
    the same layout, LP and plan repair then apply unchanged.  K i.i.d. chains (``iid`` on
    (K, 1, …, 1)) are handed to ``optimal_lp`` itself, unless ``general`` is true (the tests
    compare the two).

    Raises ``BoundsTooLarge`` beyond the limits of ``check_size`` or when the drafted trees are
    too many to enumerate (``core.bounds.sizes.check_tree_size``), ``InvalidInput`` where the law
    does not exist at a node, ``LPFailed`` if HiGHS fails.

    >>> from fractions import Fraction
    >>> from toy_models import PRESETS
    >>> toy = PRESETS["binary-toy"]
    >>> plan = optimal_tree_lp(toy.draft, toy.target, Shape.chains_of(2, 2), "greedy")
    >>> Fraction(plan.value).limit_denominator(1000)
    Fraction(17, 9)
    """
    law = get_law(law)
    if is_iid_chains(shape, law) and not general:
        return optimal_lp(draft, target, shape.K, shape.L, limit=limit, work_limit=work_limit)
    V = validate_pair(draft, target, shape.K, shape.L)
    L = shape.L
    check_tree_size(V, shape, law, limit, work_limit=work_limit)
    check_supports(draft.cond, shape, law)
    node_sets = [(t, pr) for t, pr in node_set_law(draft.cond, shape, law).items() if pr > 0]
    sets = node_set_blocks([t for t, _ in node_sets], V, L)
    pm = np.array([pr for _, pr in node_sets])
    blk = _Blocks(sets, pm, sets, np.arange(len(node_sets)), pm)
    lay = _layout(sets, V, L)
    q_cond = level_conditionals(target, L)
    sol, status, message, n_cols, n_rows = _multi_draft_lp(draft, q_cond, blk, lay)
    value, plans = _extract_plans(sol, pm, lay, q_cond)
    return OptimalPlan(value, V, shape.K, L, tuple(t for t, _ in node_sets), pm, plans, status,
                       message, n_cols, n_rows, shape=shape, law=law)


def node_set_blocks(node_sets: Sequence[tuple[Node, ...]], V: int, L: int) -> np.ndarray:
    """The blocks of the per-block form for drafted node sets given by their sorted leaf paths: one
    row of sorted path indices per set, padded with V^L (``_layout``'s input)."""
    width = max(len(t) for t in node_sets)
    sets = np.full((len(node_sets), width), V ** L, dtype=np.int64)
    weights = V ** np.arange(L - 1, -1, -1, dtype=np.int64)
    for i, t in enumerate(node_sets):
        sets[i, :len(t)] = np.asarray(t, dtype=np.int64) @ weights      # sorted leaf paths, sorted ids
    return sets


class BlockSystem(NamedTuple):
    """Every row of the per-block form (``optimal_lp``'s docstring), none dropped, as COO triplets:
    columns r(m, s), then a(s·y), then W(u) for 1 ≤ |u| < L (``w_start`` on); right-hand side ``b``
    (P(m) in the set rows, q(y) in the depth-1 node rows) and objective ``c`` (−|s| on r: a
    minimisation).  The only coefficients other than ±1 are the −q(y|u) of the W columns.
    ``layout`` names the columns and rows (``_Layout``)."""

    layout: _Layout
    rows: np.ndarray
    cols: np.ndarray
    vals: np.ndarray
    b: np.ndarray
    c: np.ndarray
    n_cols: int
    w_start: int


def block_system(q_cond, pm: np.ndarray, lay: _Layout) -> BlockSystem:
    """The per-block form's rows for blocks of probabilities ``pm`` on the layout ``lay``."""
    V, L = lay.V, lay.L
    rows, cols, vals = lay.entering()

    # W columns for nodes u with 1 ≤ |u| < L: +1 in node(u), −q(y|u) in node(u·y) for every y.
    w_depth, w_idx = _nodes(V, 1, L - 1)
    n_w = w_depth.size
    w_col = lay.n_r + lay.n_a + np.arange(n_w)
    q_inner = np.concatenate([q_cond[d] for d in range(1, L)] + [np.zeros((0, V))])
    w_child = lay.node_row(w_depth[:, None] + 1, w_idx[:, None] * V + np.arange(V))
    rows = np.concatenate([rows, lay.node_row(w_depth, w_idx), w_child.ravel()])
    cols = np.concatenate([cols, w_col, np.repeat(w_col, V)])
    vals = np.concatenate([vals, np.ones(n_w), -q_inner.ravel()])
    n_cols = lay.n_r + lay.n_a + n_w

    b = np.zeros(lay.n_rows)
    b[:lay.M] = pm
    b[lay.node_row(1, 0):lay.node_row(1, 0) + V] = q_cond[0][0]        # depth-1 rows: q(y)
    c = np.zeros(n_cols)
    c[:lay.n_r] = -lay.r_depth
    return BlockSystem(lay, rows, cols, vals, b, c, n_cols, lay.n_r + lay.n_a)


def tree_lp_system(q_cond, node_sets: Sequence[tuple[Node, ...]], pm: np.ndarray, V: int,
                   L: int) -> BlockSystem:
    """The own-law LP's rows (``optimal_tree_lp``) for drafted node sets (sorted leaf paths) of
    probabilities ``pm``: what ``core.bounds.certify`` solves and checks in exact arithmetic."""
    return block_system(q_cond, pm, _layout(node_set_blocks(node_sets, V, L), V, L))


def solve_block_system(system: BlockSystem, free_w: bool = False):
    """HiGHS on the system with its one dependent row dropped (``_drop_last_row``), every column
    ≥ 0: the ``linprog`` result (``LPFailed`` unless optimal).

    ``free_w`` lifts W ≥ 0, which changes nothing (summing the node rows forces W(s) = the mass
    stopping at or below s), but makes the dual of each W column an equality, δ(u) =
    Σ_y q(y|u)·δ(u·y): the duals ``core.bounds.certify`` needs."""
    A, b = _drop_last_row(system.rows, system.cols, system.vals, system.b, system.n_cols)
    bounds = (0, None)
    if free_w:
        bounds = np.zeros((system.n_cols, 2))
        bounds[:, 1] = np.inf
        bounds[system.w_start:, 0] = -np.inf
    res = _solve(system.c, A, b, bounds)
    _check(res, "optimal-verifier")
    return res


def _multi_draft_lp(draft: ToyModel, q_cond, blk: _Blocks, lay: _Layout):
    """The per-multiset form (``optimal_lp``'s docstring): (solution in the layout's column order,
    or None; status; message; columns; rows).  ``draft`` enters through ``blk`` only."""
    system = block_system(q_cond, blk.pm, lay)
    res = solve_block_system(system)
    return res.x, int(res.status), str(res.message), system.n_cols, system.b.size - 1


def _single_draft_lp(draft: ToyModel, q_cond, blk: _Blocks, lay: _Layout):
    """The K = 1 node form (module docstring (iv)), returned in the per-path layout's columns.

    Columns W(u), 1 ≤ |u| ≤ L, in global-id order (gid − 1).  Rows: W(s·y) − q(y|s)·W(s) ≤ 0 for
    |s| ≥ 1 and W(y) ≤ q(y) at the root; bounds 0 ≤ W(u) ≤ p(u).  The solver's W is then made
    exactly feasible (clipped top-down into [0, min(p(u), q(y|s)·W(s))], a change within the
    solver's tolerance) so that every stopping mass and every extra-token mass is ≥ 0, and spread
    over paths bottom-up."""
    V, L, off = lay.V, lay.L, lay.off
    n = int(off[L + 1]) - 1
    p_joint = level_joints(level_conditionals(draft, L - 1))           # depths 0..L
    cap = np.concatenate(p_joint[1:])
    c_depth, c_idx = _nodes(V, 2, L)                                  # children with a W parent
    child = off[c_depth] + c_idx - 1
    parent = off[c_depth - 1] + c_idx // V - 1
    q_edge = np.concatenate([q_cond[d].ravel() for d in range(1, L)] + [np.zeros(0)])
    m = child.size
    A = sp.csr_matrix((np.concatenate([np.ones(m), -q_edge]),
                       (np.concatenate([np.arange(m), np.arange(m)]),
                        np.concatenate([child, parent]))), shape=(m, n))
    # root children: W(y) ≤ q(y) is a bound, not a row
    upper = cap.copy()
    upper[:V] = np.minimum(upper[:V], q_cond[0][0])
    res = linprog(-np.ones(n), A_ub=A if m else None, b_ub=np.zeros(m) if m else None,
                  bounds=np.stack([np.zeros(n), upper], 1), method="highs", options=_HIGHS_OPTIONS)
    _check(res, "optimal-verifier (node form)")
    w_levels = [np.ones(1)]
    for d in range(1, L + 1):
        w = res.x[off[d] - 1:off[d + 1] - 1]
        bound = (w_levels[-1][:, None] * q_cond[d - 1]).ravel()
        w_levels.append(np.clip(w, 0.0, np.minimum(p_joint[d], bound)))
    # Stopping masses R(s) = W(s) − Σ_y W(s·y) (= W(s) at depth L) and extra-token masses
    # a(s·y) = q(y|s)·W(s) − W(s·y), both ≥ 0 after the clipping.
    stop = [w_levels[d] - (w_levels[d + 1].reshape(-1, V).sum(1) if d < L else 0.0)
            for d in range(L + 1)]
    a = np.concatenate([((w_levels[d][:, None] * q_cond[d]).ravel() - w_levels[d + 1])
                        for d in range(L)])
    # Spread R over paths, deepest nodes first: node s takes R(s) from the leaves below it in
    # proportion to their remaining mass (enough, as W(s) ≤ p(s)).
    rem = p_joint[L].copy()
    per_depth = np.zeros((L + 1, rem.size))
    for d in range(L, -1, -1):
        left = rem.reshape(V ** d, -1).sum(1)
        ratio = np.divide(stop[d], left, out=np.zeros_like(left), where=left > 0)
        per_depth[d] = rem * np.repeat(np.clip(ratio, 0.0, 1.0), V ** (L - d))
        rem = rem - per_depth[d]
    # r columns of the per-path layout: set m is the single path blk.sets[m, 0]
    r = per_depth[lay.r_depth, blk.sets[lay.r_m, 0]]
    return np.concatenate([r, np.clip(a, 0.0, None)]), 0, str(res.message), n, m


def _extract_plans(x, pm, lay: _Layout, q_cond) -> tuple[float, tuple[dict, ...]]:
    """(E[τ], per-set plans) from an LP solution, repaired to be exactly lossless.

    Plan of set m: {(s, y): ρ(m, s)·e(y|s)}.  ρ(m, s) = r(m, s)/Σ_s' r(m, s') (entries below
    ``_PLAN_EPS`` dropped; a set whose P(m) is below the solver's accuracy and comes out empty
    stops at the root).  The solver meets its rows only to its tolerance (~1e-10), which would
    leave the sampled law that far from q, so the plan is repaired (``_repair_stops``) and the
    extra-token law is not read off the solver's a-columns but derived from the node rows:
    e(y|s) ∝ a(s·y) = q(y|s)·W(s) − W(s·y) for |s| < L, e = q(·|s) at |s| = L, where
    W(u) = Σ_m P(m)·Σ_(t⪰u) ρ(m, t).  When every W(s·y) ≤ q(y|s)·W(s), these a are ≥ 0 and sum to
    the stopping mass at s, and the rows, hence (V), hold to rounding.  E[τ] is the value the
    repaired plan attains, Σ_m P(m)·Σ_s |s|·ρ(m, s)."""
    V, L, M = lay.V, lay.L, lay.M
    r = np.clip(x[:lay.n_r], 0.0, None) / pm[lay.r_m]
    r = np.where(r > _PLAN_EPS, r, 0.0)
    total = np.bincount(lay.r_m, weights=r, minlength=M)
    empty = ~(total > 0)
    r = r / np.where(empty, 1.0, total)[lay.r_m]
    r[empty[lay.r_m] & (lay.r_depth == 0)] = 1.0
    gid = lay.off[lay.r_depth] + lay.r_idx
    r = _repair_stops(r, pm, lay, gid, q_cond)
    value = float(np.sum(pm * np.bincount(lay.r_m, weights=r * lay.r_depth, minlength=M)))
    W = _subtree_mass(np.bincount(gid, weights=pm[lay.r_m] * r, minlength=int(lay.off[L + 1])), lay)
    emit: dict[tuple[int, int], tuple[list, np.ndarray]] = {}

    def extra(depth: int, idx: int) -> tuple[list, np.ndarray]:
        """Keys (s, y) and probabilities e(y|s) of the extra token after accepting s."""
        key = (depth, idx)
        if key not in emit:
            if depth == L:
                dist = q_cond[L][idx]
            else:
                g = int(lay.off[depth]) + idx
                children = int(lay.off[depth + 1]) + idx * V + np.arange(V)
                a = np.clip(q_cond[depth][idx] * W[g] - W[children], 0.0, None)
                dist = a / a.sum() if a.sum() > 0 else q_cond[depth][idx]
            ys = np.flatnonzero(dist > _PLAN_EPS)
            dist = dist[ys] / dist[ys].sum()
            s = node_tuple(depth, idx, V)
            emit[key] = (list(zip(itertools.repeat(s), ys.tolist())), dist)
        return emit[key]

    plans: list[dict] = [{} for _ in range(M)]
    for j in np.flatnonzero(r > 0):
        keys, dist = extra(int(lay.r_depth[j]), int(lay.r_idx[j]))
        plans[lay.r_m[j]].update(zip(keys, (r[j] * dist).tolist()))
    return value, tuple(plans)


def _subtree_mass(node_mass: np.ndarray, lay: _Layout) -> np.ndarray:
    """Σ_(t⪰u) node_mass(t) for every node u (global ids), bottom-up."""
    V, off = lay.V, lay.off
    out = node_mass.astype(np.float64).copy()
    for d in range(lay.L, 0, -1):
        out[off[d - 1]:off[d]] += out[off[d]:off[d + 1]].reshape(-1, V).sum(axis=1)
    return out


def _repair_stops(r: np.ndarray, pm: np.ndarray, lay: _Layout, gid: np.ndarray, q_cond) -> np.ndarray:
    """Stop earlier where the solver's tolerance lets the accepted mass exceed what q allows.

    Every lossless verifier has W(s·y) ≤ q(y|s)·W(s).  Where the solution breaks this by rounding,
    c(s·y) = q(y|s)·W(s)/W(s·y) < 1: every set's stopping mass in the subtree of s·y is scaled by
    c and the rest stops at s instead.  Each set keeps Σ_s ρ(m, s) = 1 and stops only on its own
    tree (s is an ancestor of a node of it), W(s) is unchanged, and W(t·z)/W(t) is unchanged below
    s·y, so the factors c, computed once from the solver's W, fix every node at once:
    ρ'(m, t) = F(t)·[ρ(m, t) + Σ_z (1 − c(t·z))·W_m(t·z)], F(t) = Π_(∅≠v⪯t) c(v), with W_m the
    set's own subtree mass.  A solution that already meets the inequalities is returned unchanged."""
    V, L, off = lay.V, lay.L, lay.off
    W = _subtree_mass(np.bincount(gid, weights=pm[lay.r_m] * r, minlength=int(off[L + 1])), lay)
    c = np.ones_like(W)
    for d in range(1, L + 1):
        parent = np.repeat(W[off[d - 1]:off[d]], V)
        allowed = parent * q_cond[d - 1].ravel()
        child = W[off[d]:off[d + 1]]
        over = child > allowed
        c[off[d]:off[d + 1]][over] = allowed[over] / child[over]
    if np.all(c == 1.0):
        return r
    F = c.copy()
    for d in range(1, L + 1):
        F[off[d]:off[d + 1]] *= np.repeat(F[off[d - 1]:off[d]], V)
    # Each set's own subtree masses W_m(t), on its columns: add every column's ρ to its ancestors.
    G = int(off[L + 1])
    key = lay.r_m.astype(np.int64) * G + gid
    order = np.argsort(key)
    Wm = r.copy()
    for d in range(L, 0, -1):
        cols = np.flatnonzero(lay.r_depth == d)
        parent_gid = off[d - 1] + lay.r_idx[cols] // V
        pos = order[np.searchsorted(key[order], lay.r_m[cols].astype(np.int64) * G + parent_gid)]
        np.add.at(Wm, pos, Wm[cols])
    # Mass moved up to each column's node from its children's subtrees.
    moved = np.zeros_like(r)
    cols = np.flatnonzero(lay.r_depth > 0)
    parent_gid = off[lay.r_depth[cols] - 1] + lay.r_idx[cols] // V
    pos = order[np.searchsorted(key[order], lay.r_m[cols].astype(np.int64) * G + parent_gid)]
    np.add.at(moved, pos, (1.0 - c[gid[cols]]) * Wm[cols])
    return F[gid] * (r + moved)


# ---------------------------------------------------------------------------------------------
# Acausal coupling bound
# ---------------------------------------------------------------------------------------------

def acausal_bound(draft: ToyModel, target: ToyModel, K: int, L: int, *,
                  limit: int = SIZE_LIMIT, work_limit: int = WORK_LIMIT,
                  method: str = "tree") -> float:
    """max over couplings ρ of (multiset m ~ P, z ~ q on Ω^L) of E[max_k LCP(x^(k), z)].

    method 'transport': the transportation LP over ρ(m, z) as defined (M·V^L columns).
    method 'tree' (default, same optimum, far fewer columns): decompose ρ(m, ·) by the node where z
    leaves tree(m): mass g(m, s, y) goes to z ⪰ s·y (s ∈ tree(m), |s| < L) or g(m, s) to z = s
    (|s| = L), with gain |s| (≤ the true LCP, equal when s·y ∉ tree(m)).  With E(u) = mass entering
    at or below node u, a distribution onto leaves with leaf totals q(z) exists iff E(u) ≤ q(u) for
    every u (laminar family: fill bottom-up), so the LP is: Σ g(m, ·) = P(m),
    E(u) = entering(u) + Σ_y E(u·y), 0 ≤ E(u) ≤ q(u), maximize Σ |s|·g.  As in ``optimal_lp``,
    g(m, s, y) enters only through r(m, s) = Σ_y g(m, s, y) and the aggregates a(s·y) = Σ_m g,
    which are the columns actually used.
    """
    V = validate_pair(draft, target, K, L)
    if method == "transport":
        return _acausal_transport(draft, target, V, K, L, limit, work_limit)
    if method != "tree":
        raise InvalidInput(f"unknown method {method!r}; expected 'tree' or 'transport'")
    check_size(V, K, L, limit, "tree", work_limit=work_limit)
    blk = _blocks(draft, V, K, L)
    q_joint = level_joints(level_conditionals(target, L - 1))          # depths 0..L
    lay = _layout(blk.sets, V, L)
    rows, cols, vals = lay.entering()
    # Node rows, 1 ≤ |u| ≤ L: entering(u) + Σ_y E(u·y) − E(u) = 0, with E(u) = q(u) fixed (the
    # right-hand side) at depth 1 and a column 0 ≤ E(u) ≤ q(u) at depth ≥ 2.
    e_depth, e_idx = _nodes(V, 2, L)
    n_e = e_depth.size
    e_col = lay.n_r + lay.n_a + np.arange(n_e)
    rows = np.concatenate([rows, lay.node_row(e_depth, e_idx),
                           lay.node_row(e_depth - 1, e_idx // V)])
    cols = np.concatenate([cols, e_col, e_col])
    vals = np.concatenate([vals, -np.ones(n_e), np.ones(n_e)])
    n_cols = lay.n_r + lay.n_a + n_e
    b = np.zeros(lay.n_rows)
    b[:lay.M] = blk.pm
    b[lay.node_row(1, 0):lay.node_row(1, 0) + V] = q_joint[1]
    A, b = _drop_last_row(rows, cols, vals, b, n_cols)
    cap = np.concatenate([q_joint[d] for d in range(2, L + 1)] + [np.zeros(0)])
    upper = np.concatenate([np.full(lay.n_r + lay.n_a, np.inf), cap])
    bounds_ = np.stack([np.zeros(n_cols), upper], axis=1)
    c = np.zeros(n_cols)
    c[:lay.n_r] = -lay.r_depth
    res = _solve(c, A, b, bounds_)
    _check(res, "acausal")
    return float(-res.fun)


def _acausal_transport(draft, target, V, K, L, limit, work_limit) -> float:
    check_size(V, K, L, limit, "acausal", work_limit=work_limit)
    p_path = level_joints(level_conditionals(draft, L - 1))[L]
    q_path = level_joints(level_conditionals(target, L - 1))[L]
    ms = enumerate_multisets(V ** L, K)
    pm = multiset_probabilities(ms, p_path)
    keep_m, keep_z = pm > 0, q_path > 0
    ms, pm, qz = ms[keep_m], pm[keep_m], q_path[keep_z]
    gain = lcp_matrix(V, L)[:, keep_z][ms].max(axis=1)               # (M, Z)
    M, Z = gain.shape
    # Transportation rows: Σ_z ρ(m, z) = P(m), Σ_m ρ(m, z) = q(z); column j = m·Z + z.  One row
    # is redundant (equal totals); drop the last so rounding cannot make the rows inconsistent.
    j = np.arange(M * Z)
    rows = np.concatenate([j // Z, M + j % Z])
    cols = np.concatenate([j, j])
    kept = rows < M + Z - 1
    A = sp.csr_matrix((np.ones(int(kept.sum())), (rows[kept], cols[kept])),
                      shape=(M + Z - 1, M * Z))
    b = np.concatenate([pm, qz[:-1]])
    res = _solve(-gain.ravel().astype(np.float64), A, b, (0, None))
    _check(res, "acausal")
    return float(-res.fun)


# ---------------------------------------------------------------------------------------------
# Single token (L = 1)
# ---------------------------------------------------------------------------------------------

class SingleTokenPlan(NamedTuple):
    """The L = 1 LP's solution: f(m, y) = P(K draft tokens form multiset m and y ∈ m is accepted)."""

    value: float               # the objective: Σ f = α* unless weighted (``single_token_plan``)
    multisets: np.ndarray      # (M, K) sorted rows of token ids
    probabilities: np.ndarray  # P(m), shape (M,)
    flow: np.ndarray           # f(m, y), shape (M, V); zero unless y ∈ m


def single_token_plan(p_vec, q_vec, K: int, *, continuation=None, acceptance: float | None = None,
                      minimize: bool = False, limit: int = SIZE_LIMIT,
                      work_limit: int = WORK_LIMIT) -> SingleTokenPlan:
    """The L = 1 optimum as a flow LP over multisets m of K draft tokens, with its plan:
    max Σ f(m, y) over y ∈ m, Σ_y f(m, y) ≤ P(m), Σ_m f(m, y) ≤ q(y), f ≥ 0.

    Equal to the L = 1 verifier LP: a verifier accepting y ∈ m with probability f(m, y)/P(m) and
    otherwise drawing y from ∝ q(y) − Σ_m f(m, y) is lossless, and every lossless verifier has
    P(accept y) = W(y) ≤ q(y).

    The node LP of ``core.bounds.top_down`` is the same flow with a weighted objective: with
    ``continuation`` U, shape (V, K), each accepted unit of f(m, y) earns 1 + U[y, c_m(y) − 1]
    (c_m(y) = y's multiplicity in m); ``acceptance`` adds the row Σ f = acceptance, and
    ``minimize`` minimises instead.  ``value`` is then the weighted objective."""
    p, q = token_vectors(p_vec, q_vec, K)
    V = p.size
    check_size(V, K, 1, limit, "optimal", work_limit=work_limit)
    ms = enumerate_multisets(V, K)
    pm = multiset_probabilities(ms, p)
    new = np.ones_like(ms, dtype=bool)
    new[:, 1:] = ms[:, 1:] != ms[:, :-1]
    r, k = np.nonzero(new)                                   # columns f(m = r, y = ms[r, k])
    y = ms[r, k]
    n = r.size
    gain = np.ones(n)
    if continuation is not None:
        mult = (ms[r] == y[:, None]).sum(axis=1)
        gain += np.asarray(continuation, dtype=np.float64)[y, mult - 1]
    A = sp.csr_matrix((np.ones(2 * n), (np.concatenate([r, ms.shape[0] + y]),
                                        np.concatenate([np.arange(n), np.arange(n)]))),
                      shape=(ms.shape[0] + V, n))
    A_eq, b_eq = ((None, None) if acceptance is None else
                  (sp.csr_matrix(np.ones((1, n))), np.array([float(acceptance)])))
    res = _solve(gain if minimize else -gain, A_eq, b_eq, (0, None), A_ub=A, b_ub=np.concatenate([pm, q]))
    _check(res, "single-token")
    flow = np.zeros((ms.shape[0], V))
    flow[r, y] = res.x
    return SingleTokenPlan(float(res.fun if minimize else -res.fun), ms, pm, flow)


def single_token_lp(p_vec, q_vec, K: int, *, limit: int = SIZE_LIMIT,
                    work_limit: int = WORK_LIMIT) -> float:
    """The L = 1 optimum α* (``single_token_plan``'s value)."""
    return single_token_plan(p_vec, q_vec, K, limit=limit, work_limit=work_limit).value
