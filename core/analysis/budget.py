"""The budget question: which static tree of n drafted tokens and depth L is best (docs/maths.md,
"The budget question").

For a budget n and a depth L the table has a row per **shape of budget n**:

- chains K×L when K·L = n (L ≥ 2; at L = 1 chains K×1 are the tree (K));
- every branching vector b = (b_1, …, b_L), all b_d ≥ 1, with b_1 + b_1·b_2 + … + b_1⋯b_L = n.
  Writing n = b_1·(1 + b_2·(1 + … (1 + b_L))) shows that b_1 divides n and that the rest is a
  branching vector of budget n/b_1 − 1 and depth L − 1, which is how they are enumerated.

× **law** (``iid``, ``wor``, ``topk``, ``greedy``; a law that does not exist at some node is
refused with its one-line reason) × **verifier**: ``rrs`` and ``traversal`` (exact E[τ] and TV,
measured by ``exact_analysis``) and ``lp``, the own-law LP, the ceiling of that (shape, law): its
value certified in exact arithmetic where it can be (``core.bounds.certify``) and the TV of its
plan, measured.  Beside the table:

- the **i.i.d.-chains LP** at the same budget, K = n/L when that is an integer (the baseline: the
  best any verifier of K i.i.d. drafts can do);
- the **best `topk` tree of any shape** by Sequoia's dynamic programme (``core.bounds.sequoia``)
  with a_k = q(k-th token in p's rank) at the root.  On a context-independent pair that is exact:
  its value is the best E[τ] of any `topk` tree with n nodes and depth ≤ L.  Otherwise it is
  Sequoia's positional model; the programme's tree is then mapped rank → token at every node and
  its exact E[τ] computed by the `topk` closed form Σ_(s≠∅) q(s), and both are reported;
- the **winner per verifier**: the argmax of each verifier's column (ties listed).

Everything compares trees of one budget n and one depth L only.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from toy_models import ToyModel

from core.analysis.exact import MAX_SECONDS, estimated_seconds, exact_analysis
from core.bounds.certify import Certificate, certify_chains_lp, certify_tree_lp
from core.bounds.sequoia import best_tree, positional_acceptance
from core.bounds.sizes import BoundsTooLarge, check_size, check_tree_size
from core.data.drafting import check_supports
from core.data.exact_fraction import fraction
from core.data.laws import IID_LAW, LAWS, DraftLaw, is_iid_chains, rank, tree_outcome_count
from core.data.shapes import Shape
from core.data.nodes import Node
from core.errors import USER_ERRORS, ExplorerError, InvalidInput
from core.rules.registry import REGISTRY, display_name, make_verifier

#: The table's verifiers: the column's name, and the registered rule computing it.  ``rrs`` is the
#: ``specinfer`` rule's name on token trees (``display_name``); ``lp`` is the own-law LP's plan.
VERIFIERS = {("lp" if rule == "lp_optimal" else display_name(rule, Shape.tree((1,)))): rule
             for rule in ("specinfer", "traversal", "lp_optimal")}

#: A table estimated to take longer than this (seconds, on the 2-core machine) is refused up front.
TABLE_SECONDS = 120.0

#: LP seconds per unit of columns × rows (``core.bounds.sizes``: 0.5-2.2e-8 CPU s measured, the
#: estimate being an upper bound), and per draw of each ordered outcome enumerated to find the
#: node-set law, once in floats and once exactly (every outcome replays all n draws; measured on
#: the loaded 2-core machine, binary toy, b = (1, 13) and (2, 6)).
_LP_SECONDS_PER_WORK = 1e-8
_ENUMERATION_SECONDS_PER_DRAW = 2.5e-5


class TableTooLarge(ExplorerError, ValueError):
    """The whole table would take too long; the message names what to lower."""


def budget_shapes(budget: int, L: int) -> list[Shape]:
    """Every shape of ``budget`` drafted tokens and depth L: chains K×L when K·L = n (L ≥ 2), then
    every branching vector, in lexicographic order (module docstring).

    >>> [s.label for s in budget_shapes(4, 2)]
    ['chains 2×2', 'b = (1, 3)', 'b = (2, 1)']
    """
    if int(budget) != budget or budget < 1 or int(L) != L or L < 1:
        raise InvalidInput(f"the budget n and the depth L must be positive integers, got n={budget}, L={L}")
    if budget < L:
        raise InvalidInput(f"a tree of depth L={L} drafts at least {L} tokens; the budget n={budget} is smaller")

    return [*Shape.chains_of_budget(int(budget), int(L)), *Shape.of_budget(int(budget), int(L))]


@dataclass(frozen=True)
class Cell:
    """One (shape, law, verifier): E[τ] and the TV of the completed output law from q, measured;
    for ``lp`` the certificate (``fraction`` is then the certified one, or None)."""

    verifier: str
    expected_accepted: float | None = None
    fraction: str | None = None
    fidelity_tv: float | None = None
    certificate: Certificate | None = None
    refused: str | None = None

    def describe(self) -> dict:
        out = {"verifier": self.verifier, "expected_accepted": self.expected_accepted,
               "expected_accepted_fraction": self.fraction, "fidelity_tv": self.fidelity_tv}
        if self.verifier == "lp":
            out["certified"] = self.certificate is not None and self.certificate.certified
            if self.certificate is not None and not self.certificate.certified:
                out["not_certified"] = self.certificate.reason
        out["refused"] = self.refused
        return out


@dataclass(frozen=True)
class Row:
    """One (shape, law): its three cells, or the law's refusal."""

    shape: Shape
    law: DraftLaw
    cells: dict[str, Cell] = field(default_factory=dict)
    refused: str | None = None


@dataclass(frozen=True)
class TopkProgramme:
    """Sequoia's programme at the root's a_k: its tree (rank paths; token paths at every node), the
    programme's value (``model``) and the tree's exact E[τ] by the `topk` closed form (``exact``);
    ``positional`` says whether the pair is context independent (then the two are one value, the
    best `topk` tree of any shape)."""

    accept: tuple[float, ...]
    ranks: tuple[tuple[int, ...], ...]
    tokens: tuple[Node, ...]
    model: float
    exact: float
    positional: bool

    def describe(self) -> dict:
        return {"accept": list(self.accept), "rank_paths": [list(r) for r in self.ranks],
                "token_paths": [list(t) for t in self.tokens],
                "context_independent": self.positional,
                "programme_value": self.model, "expected_accepted": self.exact,
                "expected_accepted_fraction": fraction(self.exact, integers=True)}


@dataclass(frozen=True)
class BudgetTable:
    """The table of one budget n and depth L (module docstring)."""

    budget: int
    L: int
    V: int
    rows: tuple[Row, ...]
    chains_K: int | None
    chains_lp: Certificate | None
    chains_lp_refused: str | None
    topk: TopkProgramme | None
    topk_refused: str | None

    def winners(self) -> dict[str, tuple[float, str | None, list[tuple[Shape, DraftLaw]]]]:
        """Per verifier: (best E[τ], its fraction, every (shape, law) reaching it to 1e-12)."""
        out = {}
        for v in VERIFIERS:
            cells = [(row, row.cells[v]) for row in self.rows
                     if v in row.cells and row.cells[v].expected_accepted is not None]
            if not cells:
                continue
            best = max(c.expected_accepted for _, c in cells)
            at = [(row.shape, row.law) for row, c in cells if c.expected_accepted >= best - 1e-12]
            frac = next((c.fraction for _, c in cells if c.expected_accepted >= best - 1e-12 and c.fraction), None)
            out[v] = (best, frac, at)
        return out

    def describe(self) -> dict:
        """Every row as JSON-ready fields (one object per (shape, law, verifier))."""
        rows = []
        for row in self.rows:
            head = {**row.shape.describe(), "label": row.shape.label, "law": row.law.name}
            if row.refused is not None:
                rows += [{**head, "verifier": v, "refused": row.refused} for v in VERIFIERS]
            else:
                rows += [{**head, **row.cells[v].describe()} for v in VERIFIERS]
        chains = None
        if self.chains_K is not None:
            chains = {"K": self.chains_K, "L": self.L, "refused": self.chains_lp_refused}
            if self.chains_lp is not None:
                chains.update(_certificate_fields(self.chains_lp))
        winners = {v: {"expected_accepted": value, "expected_accepted_fraction": frac,
                       "at": [{"label": s.label, **s.describe(), "law": law.name} for s, law in at]}
                   for v, (value, frac, at) in self.winners().items()}
        return {"budget": self.budget, "L": self.L, "V": self.V,
                "shapes": [s.label for s in dict.fromkeys(r.shape for r in self.rows)],
                "rows": rows, "iid_chains_lp": chains,
                "topk_programme": None if self.topk is None else self.topk.describe(),
                "topk_programme_refused": self.topk_refused, "winners": winners}


def _certificate_fields(cert: Certificate) -> dict:
    return {"expected_accepted": float(cert.exact) if cert.certified else cert.value,
            "expected_accepted_fraction": cert.fraction, "certified": cert.certified,
            **({} if cert.certified else {"not_certified": cert.reason})}


def _one_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0]


def _lp_seconds(V: int, shape: Shape, law: DraftLaw) -> float:
    """The own-law LP, solved twice (the plan for the TV, the certificate) and its node-set law
    enumerated twice (floats, then exact); ``BoundsTooLarge`` beyond the LP's limits."""
    if is_iid_chains(shape, law):
        work = check_size(V, shape.K, shape.L, kind="tree").work
        outcomes = 0
    else:
        work = check_tree_size(V, shape, law).work
        outcomes = tree_outcome_count(V, shape, law)
    return 2 * _LP_SECONDS_PER_WORK * work + _ENUMERATION_SECONDS_PER_DRAW * shape.budget * outcomes \
        + REGISTRY["lp_optimal"].tree_law_cost(V, shape, law)


def estimated_table_seconds(draft: ToyModel, target: ToyModel, budget: int, L: int) -> float:
    """What ``budget_table`` is estimated to take: the exact laws' time estimates
    (``estimated_seconds``) and the LPs' (solves and enumerations), over the (shape, law) pairs
    that exist; parts refused for their size count 0 (they are reported, not computed).  The LP
    part prices columns × rows, an upper bound: i.i.d. chains of many drafts come out several
    times faster than estimated."""
    total = 0.0
    V = draft.V
    for shape in budget_shapes(budget, L):
        for law in LAWS.values():
            try:
                check_supports(draft.cond, shape, law, max_nodes=100_000)
            except InvalidInput:
                continue
            for v in ("rrs", "traversal"):
                seconds = estimated_seconds(REGISTRY[VERIFIERS[v]], V, shape=shape, law=law)
                total += seconds if seconds <= MAX_SECONDS else 0.0     # else refused, not run
            try:
                total += _lp_seconds(V, shape, law)
            except BoundsTooLarge:
                pass
    if budget % L == 0:
        try:
            total += 2 * _LP_SECONDS_PER_WORK * check_size(V, budget // L, L, kind="tree").work
        except BoundsTooLarge:
            pass
    return total


def check_table(draft: ToyModel, target: ToyModel, budget: int, L: int,
                max_seconds: float = TABLE_SECONDS) -> float:
    """The estimate, or ``TableTooLarge`` (one sentence naming what to lower) beyond ``max_seconds``."""
    seconds = estimated_table_seconds(draft, target, budget, L)
    if seconds > max_seconds:
        raise TableTooLarge(
            f"the table for budget n={budget}, L={L} over V={draft.V} tokens would take about "
            f"{seconds:,.0f} s (limit {max_seconds:g} s); lower the budget (--budget) or L (--L)")
    return seconds


def _cell(verifier: str, draft, target, shape: Shape, law: DraftLaw) -> Cell:
    """One verifier on (shape, law); a refusal for size becomes the cell's reason."""
    try:
        rule = make_verifier(VERIFIERS[verifier], draft, target, shape=shape, law=law)
        result = exact_analysis(rule, draft, target, shape=shape, law=law, max_seconds=MAX_SECONDS)
    except USER_ERRORS as exc:
        return Cell(verifier, refused=_one_line(exc))
    value = result.expected_accepted
    if verifier != "lp":
        return Cell(verifier, value, fraction(value, integers=True), result.fidelity_tv)
    try:
        cert = certify_tree_lp(draft, target, shape, law)
    except USER_ERRORS as exc:
        return Cell(verifier, value, None, result.fidelity_tv, refused=f"certificate: {_one_line(exc)}")
    if cert.certified:
        value = float(cert.exact)
    return Cell(verifier, value, cert.fraction, result.fidelity_tv, cert)


def topk_programme(draft: ToyModel, target: ToyModel, budget: int, L: int) -> TopkProgramme:
    """Sequoia's programme with a_k = q(k-th token in p's rank) at the root (tokens p drafts with
    probability 0 left out), its tree mapped rank → token at every node, and that tree's exact E[τ]
    Σ_(s≠∅) q(s) (module docstring).  ``InvalidInput`` when no tree of n nodes and depth ≤ L exists
    or the mapped tree needs a token p cannot draft."""
    p0, q0 = np.asarray(draft.cond(())), np.asarray(target.cond(()))
    support = int(np.count_nonzero(p0 > 0))
    accept = positional_acceptance(p0, q0)[:support]
    tree = best_tree(accept, budget, L)
    tokens: dict[tuple[int, ...], Node] = {(): ()}
    for path in tree.paths:                              # breadth first: parents come first
        parent = tokens[path[:-1]]
        P = np.asarray(draft.cond(parent))
        if path[-1] > np.count_nonzero(P > 0):
            raise InvalidInput(f"Sequoia's tree needs the rank-{path[-1]} token at node {parent}, "
                               f"where p gives only {np.count_nonzero(P > 0)} tokens positive probability")
        tokens[path] = parent + (int(rank(P)[path[-1] - 1]),)
    nodes = [tokens[path] for path in tree.paths]
    exact = float(sum(target.joint(u) for u in nodes))
    positional = all(np.array_equal(m.cond(u), m.cond(())) for m in (draft, target)
                     for u in _prefixes(draft.V, L - 1))
    return TopkProgramme(tuple(float(a) for a in accept), tree.paths, tuple(nodes),
                         tree.expected_accepted, exact, positional)


def _prefixes(V: int, depth: int):
    """Every prefix of length 1..depth."""
    level = [()]
    for _ in range(depth):
        level = [u + (x,) for u in level for x in range(V)]
        yield from level


def budget_table(draft: ToyModel, target: ToyModel, budget: int, L: int, *,
                 max_seconds: float = TABLE_SECONDS,
                 progress: Callable[[int, int, str], None] | None = None) -> BudgetTable:
    """The table of the budget question for n = ``budget`` drafted tokens and depth ``L``
    (module docstring), after the price check (``check_table``).

    ``progress(done, total, what)`` is called before each (shape, law).

    >>> from toy_models import PRESETS
    >>> toy = PRESETS["binary-toy"]
    >>> table = budget_table(toy.draft, toy.target, 4, 2)
    >>> {v: (frac, [f"{s.label} {law.name}" for s, law in at][:2]) for v, (_, frac, at) in table.winners().items()}
    {'rrs': ('5/3', ['chains 2×2 wor', 'chains 2×2 topk']), 'traversal': ('16/9', ['chains 2×2 wor', 'chains 2×2 topk']), 'lp': ('17/9', ['chains 2×2 wor', 'chains 2×2 topk'])}
    """
    if draft.V != target.V:
        raise InvalidInput(f"draft has V={draft.V} tokens but target has V={target.V}")
    check_table(draft, target, budget, L, max_seconds)
    shapes = budget_shapes(budget, L)
    pairs = [(shape, law) for shape in shapes for law in LAWS.values()]
    rows = []
    chains_lp, chains_refused = None, None
    for done, (shape, law) in enumerate(pairs):
        if progress is not None:
            progress(done, len(pairs), f"{shape.label} {law.name}")
        try:
            check_supports(draft.cond, shape, law)
        except InvalidInput as exc:
            rows.append(Row(shape, law, refused=_one_line(exc)))
            continue
        cells = {v: _cell(v, draft, target, shape, law) for v in VERIFIERS}
        rows.append(Row(shape, law, cells))
        if shape.chains and law is IID_LAW and cells["lp"].certificate is not None:
            chains_lp = cells["lp"].certificate            # the baseline is this very LP
    if progress is not None:
        progress(len(pairs), len(pairs), "done")
    K = budget // L if budget % L == 0 else None
    if K is not None and chains_lp is None:
        try:
            chains_lp = certify_chains_lp(draft, target, K, L)
        except USER_ERRORS as exc:
            chains_refused = _one_line(exc)
    try:
        topk, topk_refused = topk_programme(draft, target, budget, L), None
    except USER_ERRORS as exc:
        topk, topk_refused = None, _one_line(exc)
    return BudgetTable(budget, L, draft.V, tuple(rows), K, chains_lp, chains_refused, topk, topk_refused)



# ------------------------------------------------------------------------------------------------
# The budget chart: one line per law across budgets
# ------------------------------------------------------------------------------------------------

#: Laws whose node sets take more coin outcomes than this to enumerate are not compared
#: (``same_drafts``): at V = 2 and n ≤ 16 every shape a distinct-token law draws takes at most 15.
SAME_DRAFTS_OUTCOMES = 5000


def same_drafts(draft: ToyModel, shape: Shape, laws) -> list[tuple[DraftLaw, ...]] | None:
    """``laws`` grouped by the law of the node set they draft on ``shape`` (``node_set_law``: P(node
    set = t) for every t): laws of one group draft the same trees with the same probabilities (to
    1e-12), so every verifier has the same E[τ] under each.  None when a law's node sets take more
    than ``SAME_DRAFTS_OUTCOMES`` coin outcomes to enumerate."""
    from core.data.coins import TooManyOutcomes
    from core.data.drafting import node_set_law
    try:
        found = {law: node_set_law(draft.cond, shape, law, max_outcomes=SAME_DRAFTS_OUTCOMES) for law in laws}
    except TooManyOutcomes:
        return None
    groups: list[list[DraftLaw]] = []
    for law, sets in found.items():
        for g in groups:
            other = found[g[0]]
            if other.keys() == sets.keys() and all(abs(other[t] - sets[t]) <= 1e-12 for t in sets):
                g.append(law)
                break
        else:
            groups.append([law])
    return [tuple(g) for g in groups]


@dataclass(frozen=True)
class LawCurve:
    """One law's line of the budget chart for one verifier: at each budget n, the best E[τ] over every
    shape of budget **at most n** (a tree of fewer tokens fits a budget of n; at L = 2 an odd n
    admits only b = (1, n − 1) and chains are missing, so the best of exactly n zig-zags), with the
    shapes reaching it (``points``: (n, E[τ], their labels, each with its own budget)); ``shapes``:
    every shape of those points; ``last``: the largest budget at which the law draws a shape, where
    the line ends; ``ends``: why it draws none at the next budget of the tables ("at n = 7, " and that
    budget's refusal), None when it reaches the largest budget."""

    law: DraftLaw
    points: tuple[tuple[int, float, str], ...]
    shapes: frozenset
    last: int | None
    ends: str | None


def drafts_every_node(law: DraftLaw, shape: Shape) -> bool:
    """Whether drafting ``shape`` "by ``law``" draws every node by the law: chains K×L take the law's
    K draws at the root and go on with one sample from p at each node below, which is the law's own
    single draw only where one draw by the law is one sample (``one_sample``: every law but ``topk``,
    whose single draw is p's top token).  So chains of length L ≥ 2 drafted by ``topk`` are not top-k
    drafting, and a line named for ``topk`` leaves them out (Sequoia's best top-k tree, drafted by
    top-k at every node, would otherwise sit below the "topk" line)."""
    return law.one_sample or not shape.chains or shape.L == 1


def law_curves(tables: dict[int, "BudgetTable"], verifier: str) -> dict[DraftLaw, LawCurve]:
    """Every law's ``LawCurve`` of ``verifier`` (a column of ``VERIFIERS``) over ``tables`` (budget →
    its table, one depth L), each over the shapes the law drafts at every node (``drafts_every_node``)."""
    budgets = sorted(tables)
    out = {}
    for law in LAWS.values():
        best: tuple[float, list[tuple[Shape, int]]] | None = None
        points, last, shapes = [], None, set()
        for n in budgets:
            cells = [(r.shape, r.cells[verifier].expected_accepted) for r in tables[n].rows if r.law is law
                     and drafts_every_node(law, r.shape)
                     and r.refused is None and verifier in r.cells and r.cells[verifier].expected_accepted is not None]
            if cells:
                last = n
                here = max(v for _, v in cells)
                labels = [(s, n) for s, v in cells if v >= here - 1e-12]
                if best is None or here > best[0] + 1e-12:
                    best = (here, labels)
                elif here >= best[0] - 1e-12:
                    best = (best[0], best[1] + labels)
            if best is not None:
                points.append((n, best[0], "; ".join(f"{s.label} (n = {m})" for s, m in best[1])))
                shapes.update(s for s, _ in best[1])
        ends = None
        if last is not None and last < budgets[-1]:
            after = next(n for n in budgets if n > last)
            refusals = [r.refused for r in tables[after].rows if r.law is law and r.refused]
            ends = f"at n = {after}, " + (refusals[0] if refusals else "no shape could be computed")
        out[law] = LawCurve(law, tuple(p for p in points if p[0] <= (last or 0)), frozenset(shapes), last, ends)
    return out


def shared_drafts(draft: ToyModel, tables: dict[int, "BudgetTable"]) -> dict[Shape, list[tuple[DraftLaw, ...]] | None]:
    """For every shape of ``tables`` that two laws or more can draw, those laws grouped by the trees
    they draft (``same_drafts``)."""
    out = {}
    for n in sorted(tables):
        drawn: dict[Shape, list[DraftLaw]] = {}
        for r in tables[n].rows:
            if r.refused is None:
                drawn.setdefault(r.shape, []).append(r.law)
        out.update({shape: same_drafts(draft, shape, laws) for shape, laws in drawn.items() if len(laws) > 1})
    return out


def coincident_laws(curves: dict[DraftLaw, LawCurve]) -> list[tuple[DraftLaw, ...]]:
    """The laws of ``curves`` grouped by their lines (every law once, in ``curves``' order): laws of
    one group have points at the same budgets with E[τ] within 1e-12 of each other's."""
    groups: list[list[DraftLaw]] = []
    for law, c in curves.items():
        for g in groups:
            other = curves[g[0]].points
            if len(other) == len(c.points) and all(
                    a[0] == b[0] and abs(a[1] - b[1]) <= 1e-12 for a, b in zip(other, c.points)):
                g.append(law)
                break
        else:
            groups.append([law])
    return [tuple(g) for g in groups]


def drafted_alike(group, curve: LawCurve, shared: dict[Shape, list[tuple[DraftLaw, ...]] | None]) -> list[Shape]:
    """The shapes of ``curve`` (one law's best shapes) on which every law of ``group`` drafts the
    same trees (``shared``: ``shared_drafts``'s groups)."""
    return sorted((shape for shape in curve.shapes if shared.get(shape) is not None
                   and any(set(group) <= set(g) for g in shared[shape])), key=lambda shape: shape.label)


def same_everywhere(shared: dict[Shape, list[tuple[DraftLaw, ...]] | None]) -> str | None:
    """The laws that draft the same trees on every shape of ``shared`` (``shared_drafts``) that they
    can all draw, as a phrase ("wor, topk and greedy"), when two or more do on at least one shape and
    every shape was compared; None otherwise."""
    if not shared or any(groups is None for groups in shared.values()):
        return None
    laws = [law for law in LAWS.values() if any(law in g for groups in shared.values() for g in groups)]
    together = []
    for law in laws:
        mates = [m for m in laws if m is not law and all(
            any(law in g and m in g for g in groups) for groups in shared.values()
            if any(law in g for g in groups) and any(m in g for g in groups))
            and any(any(law in g and m in g for g in groups) for groups in shared.values())]
        if mates and not together:
            together = [law, *mates]
    if len(together) < 2 or not all(
            any(a in g and b in g for g in groups) for groups in shared.values() for a in together for b in together
            if any(a in g for g in groups) and any(b in g for g in groups)):
        return None
    names = [law.name for law in together]
    return ", ".join(names[:-1]) + " and " + names[-1]
