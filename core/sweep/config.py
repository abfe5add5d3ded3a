"""What a sweep is, and the checks that refuse a bad one up front with one sentence.

A sweep is the grid families × V × K × L with ``n`` instances per cell, every instance analysed
exactly for each method, with the requested bounds on E[τ] beside them.  The configuration is saved
with the results (``core.sweep.store``): a results folder holds one configuration only.

A **draft sweep** (``laws``, ``trees`` or ``budgets`` given; docs/maths.md, "Token trees") drafts
token trees: the shapes are chains K×L (from ``Ks`` × ``Ls``), the static trees ``trees``, or every
shape of each budget in ``budgets`` at each L (``draft_shapes``), each drafted by every law of
``laws``.  Its unit of work is a ``DraftKey`` (family, V, L, budget n, index): one pair of models
analysed on every shape of budget n and depth L, for every law and rule defined there, beside the
own-law LP and the i.i.d.-chains LP at the same budget, so that shapes and laws are compared on the
same models at an equal budget.  Without those three fields a sweep is exactly what it always was,
and its saved configuration is byte for byte what it was.
"""
from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, replace
from typing import NamedTuple

from core.analysis.exact import MAX_SECONDS, estimated_seconds
from core.bounds import BoundsTooLarge, check_node_size, check_size, check_tree_size
from core.bounds.sizes import check_paths
from core.data.laws import IID_LAW, LAWS, DraftLaw, get_law, is_iid_chains, law_at
from core.data.shapes import Shape
from core.errors import ExplorerError, InvalidInput
from core.rules.params import by_name
from core.rules.registry import ALIASES, REGISTRY, resolve, user_rules

#: The instance families (``core.sweep.instances``); ``--family all`` means the generic ones,
#: ``GENERIC_FAMILIES``: ``confident`` is one regime a claim's source describes, asked for by name.
FAMILIES = ("iid", "markov", "table", "near", "confident")
GENERIC_FAMILIES = ("iid", "markov", "table", "near")
BOUNDS = ("lp", "acausal", "cic")
#: Lossy rules a draft sweep adds by default where they are registered (Medusa's typical acceptance,
#: defined on every token tree): not in ``DEFAULT_METHODS``, so that a sweep of K i.i.d. chains
#: without laws keeps its rows.
TREE_LOSSY = ("typical",)
#: The draft laws' names (``core.data.laws``), as a sweep's configuration names them.
DRAFT_LAWS = tuple(LAWS)
#: Vocabulary sizes the generators accept.
V_RANGE = (2, 64)
#: Largest V^L of a table target (``toy_models.random_table`` stores one conditional per prefix).
TABLE_PATHS = 100_000


class SweepError(ExplorerError, ValueError):
    """A sweep cannot run as asked (a bad option, a configuration too large, an unusable results
    folder or scheduler); the message is one sentence."""


class InstanceKey(NamedTuple):
    """Where one instance sits in the grid; with the configuration's seed it determines the models."""

    family: str
    V: int
    K: int
    L: int
    index: int


class DraftKey(NamedTuple):
    """One unit of a draft sweep: the models of (family, V, L, index), analysed on every shape of
    the sweep with depth L and budget n (``SweepConfig.draft_shapes``)."""

    family: str
    V: int
    L: int
    budget: int
    index: int


#: The rules a sweep of K i.i.d. chains compares by default: every lossless rule of a paper that needs
#: no model of its own (``lp_optimal``'s value is the LP column; released ports are audited by their
#: claims), plus SpecTr-GBV, the one lossy rule shown beside them.  Named, so that a rule newly
#: registered joins it only when added here.
DEFAULT_METHODS = ("sd", "bv", "spectr", "specinfer", "spectr_gbv", "rbv", "best_of_k_bv", "traversal", "otv")


def default_methods() -> tuple[str, ...]:
    """``DEFAULT_METHODS``, then the rules loaded from outside the project (``--rule``,
    ``EXPLORER_RULES``): a researcher's rule is compared without being named twice."""
    return (*DEFAULT_METHODS, *user_rules())


def draft_methods() -> tuple[str, ...]:
    """A draft sweep's default rules: ``default_methods`` with ``specinfer`` under its token-tree
    name ``rrs`` (one rule: SpecInfer's recursive rejection on K i.i.d. chains), then ``lp_optimal``
    (its plan is the own-law LP's, already solved: the row checks that it is lossless), then
    ``TREE_LOSSY`` where registered.  Each (shape, law) runs those defined on it: on K i.i.d.
    chains all of them, elsewhere the rules with ``token_trees``."""
    tree_name = {target: alias for alias, target in ALIASES.items()}
    return (*(tree_name.get(m, m) for m in default_methods()), "lp_optimal",
            *(m for m in TREE_LOSSY if m in REGISTRY))


def runs_on(method: str, shape: Shape, law: DraftLaw) -> bool:
    """Whether a draft sweep runs ``method`` on drafts of this shape and law: a rule with
    ``token_trees`` wherever it is defined, any other rule on K i.i.d. chains drafted by ``iid``
    only.  A single chain drafted by ``wor`` or ``greedy`` is one i.i.d. draft, which every rule
    accepts, but its rows under those laws would repeat the ``iid`` rows of the same chain."""
    cls = resolve(method)
    return cls.supports(shape, law) and (cls.token_trees or law is IID_LAW)


def law_defined(V: int, shape: Shape, law: DraftLaw, support: int | None = None) -> bool:
    """Whether ``law`` can draft ``shape`` over models whose every next-token distribution has
    ``support`` tokens of positive probability (default V): a distinct-token law needs as many
    tokens as it draws at each depth where it applies (``core.data.laws``: refused otherwise)."""
    support = V if support is None else support
    return not law.distinct or all(
        b <= support for d, b in enumerate(shape.branching) if law_at(shape, d, law).distinct)


@dataclass(frozen=True)
class SweepConfig:
    families: tuple[str, ...]
    Vs: tuple[int, ...]
    Ks: tuple[int, ...]
    Ls: tuple[int, ...]
    n: int
    methods: tuple[str, ...]
    bounds: tuple[str, ...] = BOUNDS
    temperature: float = 1.0
    seed: int = 0
    #: A draft sweep's laws, static trees (branching vectors) and budgets (module docstring); all
    #: empty for a sweep of K i.i.d. chains as it always was.
    laws: tuple[str, ...] = ()
    trees: tuple[tuple[int, ...], ...] = ()
    budgets: tuple[int, ...] = ()
    #: The rules' own parameters, (rule, name, value as ``Param.text`` writes it) each, sorted; empty
    #: for every rule at its defaults (``with_settings``, ``settings``).
    params: tuple[tuple[str, str, str], ...] = ()

    def with_settings(self, settings: dict[str, dict]) -> "SweepConfig":
        """The configuration with the rules' parameters {rule: {name: value}} (checked here, each by
        its declaration, and written as ``Param.text`` writes it)."""
        triples = []
        for rule, values in settings.items():
            declared = by_name(resolve(rule))
            for name, value in values.items():
                if name not in declared:
                    raise SweepError(f"{rule} takes no parameter {name}")
                param = declared[name]
                triples.append((rule, name, param.text(param.check(value))))
        return replace(self, params=tuple(sorted(triples)))

    def settings(self, method: str) -> dict:
        """The parameters ``method`` runs with ({} at its defaults), parsed by its declarations."""
        declared = by_name(resolve(method))
        return {name: declared[name].parse(text) for rule, name, text in self.params if rule == method}

    def to_json(self) -> dict:
        """The fields as JSON; a draft sweep's fields only where set, so that the saved
        configuration of any other sweep is what it always was."""
        return {key: [list(v) if isinstance(v, tuple) else v for v in value] if isinstance(value, tuple) else value
                for key, value in asdict(self).items() if key not in OPTIONAL_FIELDS or value}

    @classmethod
    def from_json(cls, obj: dict) -> "SweepConfig":
        return cls(**{key: tuple(tuple(v) if isinstance(v, list) else v for v in value)
                      if isinstance(value, list) else value for key, value in obj.items()})

    @property
    def drafts(self) -> bool:
        """Whether this is a draft sweep (laws, trees or budgets given)."""
        return bool(self.laws or self.trees or self.budgets)

    def draft_shapes(self, L: int) -> list[Shape]:
        """The shapes of depth L a draft sweep analyses: the static trees of that depth; or, per
        budget n, every static tree of budget n (``Shape.of_budget``) and the chains (n/L)×L where
        there are such (``Shape.chains_of_budget``); or chains K×L for each K."""
        if self.trees:
            return [Shape.tree(b) for b in self.trees if len(b) == L]
        if self.budgets:
            return [shape for n in self.budgets for shape in (*Shape.of_budget(n, L), *Shape.chains_of_budget(n, L))]
        return [Shape.chains_of(K, L) for K in self.Ks]

    def draft_laws(self) -> tuple[DraftLaw, ...]:
        """A draft sweep's laws (``iid`` when only shapes were given), looked up by the names that
        ``laws`` holds (the configuration is written, and read back, by name)."""
        return tuple(map(get_law, self.laws)) or (IID_LAW,)

    def cells(self) -> list[tuple]:
        """Every cell of the grid, in a fixed order: (family, V, K, L), or for a draft sweep
        (family, V, L, budget) over the budgets of its shapes at each L."""
        if self.drafts:
            return [(family, V, L, n) for family, V, L in itertools.product(self.families, self.Vs, self.Ls)
                    for n in sorted({shape.budget for shape in self.draft_shapes(L)})]
        return list(itertools.product(self.families, self.Vs, self.Ks, self.Ls))

    @property
    def key_type(self) -> type:
        """What names one unit of work: ``InstanceKey``, or ``DraftKey`` for a draft sweep."""
        return DraftKey if self.drafts else InstanceKey

    def instances(self) -> list[InstanceKey] | list[DraftKey]:
        return [self.key_type(*cell, i) for cell in self.cells() for i in range(self.n)]


#: The fields only a draft sweep sets (``SweepConfig.to_json`` leaves them out when empty), and the
#: rules' parameters, set only where a rule runs with other than its defaults.
OPTIONAL_FIELDS = ("laws", "trees", "budgets", "params")


def check_config(config: SweepConfig) -> None:
    """Raise ``SweepError`` (one sentence) unless every cell of the sweep can run in reasonable time:
    names known, V in range, each requested LP under ``core.bounds`` limits, each method's exact
    analysis under ``core.analysis.exact.MAX_SECONDS`` by its cost estimate.  A draft sweep's
    (shape, law) pairs that cannot be drafted at some V (``law_defined``) are skipped there, not
    refused (``skipped_drafts``); at T = 0 the draft is one-hot, so a distinct-token law drawing
    two or more tokens anywhere is refused."""
    def unknown(kind, names, known):
        bad = [x for x in names if x not in known]
        if bad:
            raise SweepError(f"unknown {kind} {bad[0]!r}; choose from {', '.join(known)}")

    unknown("family", config.families, FAMILIES)
    unknown("method", config.methods, (*REGISTRY, *ALIASES) if config.drafts else tuple(REGISTRY))
    unknown("bound", config.bounds, BOUNDS)
    if not config.methods:
        raise SweepError("no methods to compare; pass --methods")
    if config.n < 1:
        raise SweepError(f"n must be at least 1, got {config.n}")
    for V in config.Vs:
        if not V_RANGE[0] <= V <= V_RANGE[1]:
            raise SweepError(f"V must be between {V_RANGE[0]} and {V_RANGE[1]}, got {V}")
    if config.drafts:
        _check_drafts(config)
        return
    for V, K, L in sorted(set(itertools.product(config.Vs, config.Ks, config.Ls))):
        _check_cell(config, V, K, L)
        for name in config.methods:
            cost = estimated_seconds(REGISTRY[name], V, K, L)
            if cost > MAX_SECONDS:
                raise SweepError(f"the exact law of {name} for V={V}, K={K}, L={L} would take about "
                                 f"{cost:,.0f} s per instance (limit {MAX_SECONDS:g} s); lower V, K or L")


def _check_cell(config: SweepConfig, V: int, K: int, L: int) -> None:
    """The paths, the table target and the requested bounds of K i.i.d. chains at (V, K, L)."""
    try:
        check_paths(V, L)
        if {"table", "near"} & set(config.families) and V ** L > TABLE_PATHS:
            raise BoundsTooLarge(f"a table target of depth {L} over {V} tokens has {V ** L:,} "
                                 f"prefixes of length L (limit {TABLE_PATHS:,})")
        if "lp" in config.bounds:
            check_node_size(V, Shape.chains_of(K, L), IID_LAW)
        if "acausal" in config.bounds:
            check_size(V, K, L, kind="acausal")
    except BoundsTooLarge as exc:
        raise SweepError(f"cell V={V}, K={K}, L={L}: {exc}") from None


def skipped_drafts(config: SweepConfig) -> list[tuple[int, Shape, str]]:
    """The (V, shape, law's name) of a draft sweep that no instance can draft (``law_defined``): a
    distinct-token law drawing more tokens at a node than there are.  They have no rows; the command
    line lists them."""
    return [(V, shape, law.name) for V in config.Vs for L in config.Ls for shape in config.draft_shapes(L)
            for law in config.draft_laws() if not law_defined(V, shape, law)]


def _check_drafts(config: SweepConfig) -> None:
    unknown = [law for law in config.laws if law not in DRAFT_LAWS]
    if unknown:
        raise SweepError(f"unknown draft law {unknown[0]!r}; choose from {', '.join(DRAFT_LAWS)}")
    if config.trees and config.budgets:
        raise SweepError("give static trees or budgets, not both")
    try:
        for b in config.trees:
            Shape.tree(b)
    except InvalidInput as exc:
        raise SweepError(str(exc)) from None
    for n in config.budgets:
        if n < 1:
            raise SweepError(f"a budget must be at least 1, got {n}")
    for L in config.Ls:
        if not config.draft_shapes(L):
            raise SweepError(f"no shape of budget {', '.join(map(str, config.budgets))} has depth {L}: "
                             f"a tree of depth L drafts at least L tokens")
    if config.temperature == 0:
        one_hot = [(shape, law) for L in config.Ls for shape in config.draft_shapes(L)
                   for law in config.draft_laws() if not law_defined(2, shape, law, support=1)]
        if one_hot:
            shape, law = one_hot[0]
            raise SweepError(f"at T = 0 the draft is one-hot, so the {law.name} law cannot draw {shape.label}'s "
                             f"distinct tokens; use the iid law, or b = (1, …, 1), at T = 0")
    for V in config.Vs:
        for L in config.Ls:
            shapes = config.draft_shapes(L)
            for n in sorted({shape.budget for shape in shapes}):
                if n % L == 0:
                    _check_cell(config, V, n // L, L)     # the i.i.d. chains at this budget
                else:
                    _check_cell(replace(config, bounds=()), V, 1, L)
            for shape in shapes:
                for law in config.draft_laws():
                    if law_defined(V, shape, law):
                        _check_draft(config, V, shape, law)


def _check_draft(config: SweepConfig, V: int, shape: Shape, law: DraftLaw) -> None:
    """The own-law LP and each rule's exact analysis of one (V, shape, law), against the limits."""
    where = f"{shape.label} drafted by {law.name} at V={V}"
    try:
        if "lp" in config.bounds:
            check_node_size(V, shape, law)
    except BoundsTooLarge as exc:
        raise SweepError(f"{where}: {exc}") from None
    if "lp_optimal" in config.methods:                  # it samples the per-set plan
        try:
            if is_iid_chains(shape, law):
                check_size(V, shape.K, shape.L)
            else:
                check_tree_size(V, shape, law)
        except BoundsTooLarge as exc:
            raise SweepError(f"{where}: {exc} (--tree lists the shapes one by one)") from None
    for name in config.methods:
        if not runs_on(name, shape, law):
            continue
        cost = estimated_seconds(resolve(name), V, shape=shape, law=law)
        if cost > MAX_SECONDS:
            raise SweepError(f"the exact law of {name} for {where} would take about {cost:,.0f} s per "
                             f"instance (limit {MAX_SECONDS:g} s); use a smaller V or tree")
