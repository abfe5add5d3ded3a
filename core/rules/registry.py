"""The rules by name: adding a rule is one module in ``core/rules/`` and one line in ``RULES``.

Every rule class carries its own metadata (``core.rules.base.Verifier``); the registry only lists
them, in the order pages, tables and the command line show them.  Importing this module imports the
rule modules, which need numpy alone: ``lp_optimal`` imports the LP solver (scipy) only when it is
instantiated.
"""
from __future__ import annotations

from core.data.laws import IID_LAW, DraftLaw, get_law, is_iid_chains
from core.data.shapes import Shape
from core.rules.base import Verifier, VerifierError
from core.rules.best_of_k import BestOfKBV
from core.rules.block import BV
from core.rules.eagle import Eagle
from core.rules.exact_match import ExactMatch
from core.rules.hsd import HSD
from core.rules.lp_optimal import LPOptimal
from core.rules.otv import OTV
from core.rules.rbv import RBV
from core.rules.specinfer import SpecInfer
from core.rules.spectr import SpecTr
from core.rules.spectr_gbv import SpecTrGBV
from core.rules.td_optimal import TDOptimal
from core.rules.token_level import SD
from core.rules.traversal import Traversal
from core.rules.typical import Typical

#: Every rule, in display order.  One line per rule.
RULES: tuple[type[Verifier], ...] = (
    SD,
    BV,
    SpecTr,
    SpecInfer,
    SpecTrGBV,
    RBV,
    BestOfKBV,
    Traversal,
    OTV,
    TDOptimal,
    LPOptimal,
    Typical,
    HSD,
    Eagle,
    ExactMatch,
)

REGISTRY: dict[str, type[Verifier]] = {cls.name: cls for cls in RULES}

#: Other accepted names: ``rrs`` (top-down multi-round rejection on any token tree) is SpecInfer's
#: recursive rejection, which the ``specinfer`` rule runs on every shape and law.  Aliases are
#: resolved by name but never listed (``method_names``).
ALIASES: dict[str, str] = {"rrs": "specinfer"}

#: The rule a page opens on for K i.i.d. chains: lossless, it reads every draft, and each of its
#: tests has its formula on the step page.
DEFAULT_RULE = "rbv"
#: The rule a draft that is not K i.i.d. chains switches to when the chosen rule cannot verify it
#: (``tree_rule``): lossless on every shape and law.
DEFAULT_TREE_RULE = "traversal"
#: The rules a comparison on K i.i.d. chains opens on: BV (the best rule for one draft), SpecTr-GBV
#: (its paper's claims are under test) and RBV (``DEFAULT_RULE``); the live decoder's comparison
#: also has SpecTr, the first multi-draft rule.  ``COMPARED`` is in the registry's order.
COMPARED = ("bv", "spectr_gbv", "rbv")
DECODER_COMPARED = ("bv", "spectr", "spectr_gbv", "rbv")
#: The rule set against another where a page compares two (the leaderboard's rule B).
CHALLENGER = "spectr_gbv"
#: The tree verifiers that accept the most: a preset always shows them.
BEST_RULES = ("traversal", "otv", "td_optimal")
#: The token-level rule on one draft: the baseline a gain by depth is measured against, and the best
#: top-down rule at K = 1 (a top-down rule settles each token at its node, at most min(p, q) there).
BASELINE = "sd"
#: The best rule for one draft: it reads the whole block before it decides.
BEST_SINGLE_DRAFT = "bv"
#: The optimal top-down rule: at K = 1 it equals ``BASELINE``.
TOP_DOWN_OPTIMUM = "td_optimal"


def resolve(name: str) -> type[Verifier]:
    """The rule class of a registered name or an alias."""
    try:
        return REGISTRY[ALIASES.get(name, name)]
    except KeyError:
        raise VerifierError(f"unknown method {name!r}; choose one of {', '.join(sorted(REGISTRY))}") from None


def get_verifier(name: str, **context) -> Verifier:
    """Instantiate a rule by name (or alias).  Model-dependent rules (``lp_optimal``) take their
    context (toy models, K, L, or a shape and a law) as keyword arguments."""
    return resolve(name)(**context)


def require(verifier: Verifier | type[Verifier], shape: Shape, law: DraftLaw) -> None:
    """Refuse, in one sentence, drafts of a shape or law the rule is not defined on."""
    if not verifier.supports(shape, law):
        aliases = {target: alias for alias, target in ALIASES.items()}
        others = ", ".join(f"{n} ({aliases[n]})" if n in aliases else n for n in lossless_tree_rules(REGISTRY))
        raise VerifierError(chains_only(verifier.name, f"{shape.label} drafted by {law.name}", others))


def chains_only(name: str, drafts: str, instead: str) -> str:
    """The one sentence refusing ``drafts`` (their label) to rule ``name``, defined on K i.i.d. chains
    only, with the rules to use ``instead``."""
    return (f"{name} is defined on K i.i.d. chains only, not on {drafts}; use the iid law on chains, "
            f"or one of {instead}")


def tree_label(rule: str, known_as: str = "name") -> str:
    """A token-tree rule as a list of rules to choose from names it: its name on token trees
    (``display_name``), and where the rule is registered under another, that one in brackets, as the
    class attribute ``known_as`` gives it: ``rrs (specinfer)``, ``rrs (SpecInfer)`` with
    ``known_as="short"``, ``traversal``."""
    cls = resolve(rule)
    shown = display_name(cls, Shape.tree((1,)))
    return shown if shown == cls.name else f"{shown} ({getattr(cls, known_as)})"


def tree_rule(offered: list[str]) -> str:
    """The rule, among ``offered``, that a draft that is not K i.i.d. chains switches to:
    ``DEFAULT_TREE_RULE`` if offered, else the first lossless rule defined on token trees."""
    lossless = lossless_tree_rules(offered)
    return next(m for m in (DEFAULT_TREE_RULE, *offered) if m in lossless)


def lossless_tree_rules(offered) -> list[str]:
    """The rules among ``offered``, in their order, that are defined on every shape and law
    (``token_trees``) and lossless by theory (``lossless_by_theory``, the class's word for every
    variant: a rule lossless only at its default parameters is not one of them)."""
    return [m for m in offered if resolve(m).token_trees and resolve(m).lossless_by_theory]


def make_verifier(name: str, draft=None, target=None, K: int | None = None,
                  L: int | None = None, *, shape: Shape | None = None,
                  law: str | DraftLaw = IID_LAW, **params) -> Verifier:
    """Instantiate a rule by name, handing the toy models to the rules that need them.

    ``shape`` and ``law`` (default: K i.i.d. chains of length L; the law or its name) are checked
    against the rule (``require``); a model-dependent rule on another shape or law gets them to
    solve for.
    ``params`` are the rule's own parameters (``Verifier.parameters``, e.g. ``typical``'s
    ``epsilon`` and ``delta``); a parameter the rule does not take is refused in one sentence, and
    None stands for the rule's default."""
    cls = resolve(name)
    law = get_law(law)
    if shape is not None:
        require(cls, shape, law)
    params = {key: value for key, value in params.items() if value is not None}
    unknown = [key for key in params if key not in cls.parameters]
    if unknown:
        takers = [n for n, c in REGISTRY.items() if set(unknown) & set(c.parameters)]
        raise VerifierError(f"{cls.name} takes no parameter {', '.join(unknown)}"
                            + (f"; {', '.join(takers)} does" if takers else ""))
    if cls.needs_models:
        if shape is None:
            return cls(draft=draft, target=target, K=K, L=L, **params)
        if not is_iid_chains(shape, law):
            return cls(draft=draft, target=target, shape=shape, law=law, **params)
        return cls(draft=draft, target=target, K=shape.K, L=shape.L, **params)
    return cls(**params)


def display_name(rule: str | Verifier | type[Verifier], shape: Shape | None = None) -> str:
    """The name a result shows for a rule: the one place that decides it.

    On token trees (``shape`` given: a static tree, or chains asked for with a draft law) the
    ``specinfer`` rule *is* top-down multi-round rejection on every shape and law, and is shown as
    ``rrs``, the name the token-tree literature and docs/maths.md use.  On K i.i.d. drafts
    (``shape`` None) every rule keeps its registered name.

    >>> display_name("specinfer"), display_name("rrs", Shape.tree((2, 2))), display_name("traversal", Shape.tree((2,)))
    ('specinfer', 'rrs', 'traversal')
    """
    name = rule if isinstance(rule, str) else rule.name
    registered = ALIASES.get(name, name)
    on_trees = {target: alias for alias, target in ALIASES.items()}
    return on_trees.get(registered, registered) if shape is not None else registered


def method_names() -> list[str]:
    """The registered rules' names, in display order."""
    return list(REGISTRY)
