"""The rules by name: adding a rule is one module in ``core/rules/`` and one line in ``RULES``.

Every rule class carries its own metadata (``core.rules.base.Verifier``); the registry only lists
them, in the order pages, tables and the command line show them.  Importing this module imports the
rule modules, which need numpy alone: ``lp_optimal`` imports the LP solver (scipy) only when it is
instantiated.

A rule from outside the project joins ``REGISTRY`` after the registered ones, without editing
anything: ``load_rule(spec)`` (the command line's ``--rule``), and at import every specification of
the environment variable ``EXPLORER_RULES`` (``core.rules.plugins``).  It is held contained
(``core.rules.containment``: a rule that raises or returns a bad outcome is stopped in one
sentence), it is never in a default list below, and ``user_rules()`` lists it.
"""
from __future__ import annotations

import os

from core.data.laws import IID_LAW, DraftLaw, get_law, is_iid_chains
from core.data.shapes import Shape
from core.rules.base import Verifier, VerifierError, runs_on_words
from core.rules.containment import contained
from core.rules.params import ParamError, by_name
from core.rules.plugins import RULES_ENV, RuleLoadError, RuleSpec, metadata_problems, specs_of
from core.rules.best_of_k import BestOfKBV
from core.rules.block import BV
from core.rules.eagle import Eagle
from core.rules.exact_match import ExactMatch
from core.rules.flashinfer_chain import FlashinferChain
from core.rules.hsd import HSD
from core.rules.llamacpp_tree import LlamacppTree
from core.rules.lp_optimal import LPOptimal
from core.rules.otv import OTV
from core.rules.rbv import RBV
from core.rules.sglang_rocm_greedy import SglangRocmGreedy
from core.rules.sglang_tree import SglangTree
from core.rules.specinfer import SpecInfer
from core.rules.spectr import SpecTr
from core.rules.spectr_gbv import SpecTrGBV
from core.rules.td_optimal import TDOptimal
from core.rules.token_level import SD
from core.rules.traversal import Traversal
from core.rules.trtllm_tree import TrtllmTree
from core.rules.typical import Typical
from core.rules.hf_ensemble import HFEnsemble
from core.rules.vllm_ascend_block import VllmAscendBlock
from core.rules.vllm_block import VllmBlock
from core.rules.vllm_onehot import VllmOneHot
from core.rules.vllm_shared_gumbel import VllmSharedGumbel

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
    TrtllmTree,
    SglangTree,
    SglangRocmGreedy,
    LlamacppTree,
    FlashinferChain,
    VllmOneHot,
    VllmBlock,
    VllmSharedGumbel,
    VllmAscendBlock,
    HFEnsemble,
)

#: Every rule by name: ``RULES``, then the rules loaded from outside (``load_rule``), in load order.
REGISTRY: dict[str, type[Verifier]] = {cls.name: cls for cls in RULES}
#: Where each rule from outside came from, by name (``user_rules``).
USER_SPECS: dict[str, RuleSpec] = {}
#: The one-sentence refusals of ``EXPLORER_RULES``'s specifications at import (``check_loaded``).
LOAD_ERRORS: list[str] = []

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
#: The rules a chart of E[τ] against K, T or L draws at first when many are chosen (the others one
#: click away): SD and BV (one draft: flat in K), SpecTr (the first multi-draft rule) and Traversal
#: (the lossless tree verifier that accepts the most without solving an LP).
STORY_RULES = ("sd", "bv", "spectr", "traversal")
#: The token-level rule on one draft: the baseline a gain by depth is measured against, and the best
#: top-down rule at K = 1 (a top-down rule settles each token at its node, at most min(p, q) there).
BASELINE = "sd"
#: The best rule for one draft: it reads the whole block before it decides.
BEST_SINGLE_DRAFT = "bv"
#: The optimal top-down rule: at K = 1 it equals ``BASELINE``.
TOP_DOWN_OPTIMUM = "td_optimal"


def resolve(name: str) -> type[Verifier]:
    """The rule class of a registered name, an alias or a loaded rule's name."""
    try:
        return REGISTRY[ALIASES.get(name, name)]
    except KeyError:
        why = f" ({LOAD_ERRORS[0]})" if LOAD_ERRORS else ""
        raise VerifierError(f"unknown method {name!r}; choose one of {', '.join(sorted(REGISTRY))}{why}") from None


def load_rule(text: str) -> str:
    """Load the rule a specification names (``MODULE:CLASS`` or ``PATH.py:CLASS``) into ``REGISTRY``,
    contained, and return its name; a specification already loaded is loaded once.  Refused in one
    sentence (``RuleLoadError``): a module that does not import, a class that is not a ``Verifier`` or
    lacks its metadata (``core.rules.plugins.metadata_problems``), a name that is registered, an alias,
    or another loaded rule's."""
    spec = RuleSpec.parse(text)
    loaded = next((name for name, s in USER_SPECS.items() if (s.module, s.cls_name) == (spec.module, spec.cls_name)), None)
    if loaded is not None:
        return loaded
    cls = spec.load()
    problems = metadata_problems(cls, user=True)
    if problems:
        raise RuleLoadError(f"rule {spec.text!r}: {cls.__name__}'s {problems[0]}")
    name = cls.name
    if name in ALIASES or name == "all" or (name in REGISTRY and name not in USER_SPECS):
        raise RuleLoadError(f"rule {spec.text!r}: the name {name!r} is a registered rule's; give the class "
                            f"another name")
    if name in USER_SPECS:
        raise RuleLoadError(f"rule {spec.text!r}: the name {name!r} is already taken by the rule loaded from "
                            f"{USER_SPECS[name].text!r}")
    REGISTRY[name] = contained(cls)
    USER_SPECS[name] = spec
    return name


def load_rules(texts) -> list[str]:
    """``load_rule`` for each specification, in order: the names."""
    return [load_rule(text) for text in texts]


def adopt(texts) -> None:
    """Load the rules ``texts`` name (``MODULE:CLASS``), replacing a loaded rule of the same name from
    elsewhere: how a Dask worker takes the rules a job carried (``core.sweep.ship``), whatever its own
    ``EXPLORER_RULES`` says."""
    for text in texts:
        spec = RuleSpec.parse(text)
        if any((s.module, s.cls_name) == (spec.module, spec.cls_name) for s in USER_SPECS.values()):
            continue
        name = spec.load().name
        if name in USER_SPECS:
            del REGISTRY[name], USER_SPECS[name]
        load_rule(text)


def unload_rule(name: str) -> None:
    """Forget a rule loaded from outside the project (a pasted rule replaced, a test's rule); a
    registered rule cannot be unloaded."""
    if name not in USER_SPECS:
        raise RuleLoadError(f"{name!r} is not a rule loaded from outside the project")
    del REGISTRY[name], USER_SPECS[name]


def user_rules() -> list[str]:
    """The names of the rules loaded from outside the project, in load order."""
    return list(USER_SPECS)


def is_user_rule(name: str) -> bool:
    return name in USER_SPECS


def check_loaded() -> None:
    """Raise the first refusal of ``EXPLORER_RULES``'s specifications (the command line calls it
    before anything else, so that a bad specification is one line, exit status 2)."""
    if LOAD_ERRORS:
        raise RuleLoadError(LOAD_ERRORS[0])


def _load_environment() -> None:
    """Load every rule ``EXPLORER_RULES`` names; a refusal is kept in ``LOAD_ERRORS``, so that a bad
    specification never stops an import (the app then says why on its pages)."""
    for text in specs_of(os.environ.get(RULES_ENV, "")):
        try:
            load_rule(text)
        except RuleLoadError as exc:
            LOAD_ERRORS.append(f"{RULES_ENV}: {exc}")


def get_verifier(name: str, **context) -> Verifier:
    """Instantiate a rule by name (or alias).  Model-dependent rules (``lp_optimal``) take their
    context (toy models, K, L, or a shape and a law) as keyword arguments."""
    return resolve(name)(**context)


def require(verifier: Verifier | type[Verifier], shape: Shape, law: DraftLaw) -> None:
    """Refuse, in one sentence, drafts of a shape or law the rule is not defined on: the drafts it
    runs on named (``Verifier.runs_on``), or K i.i.d. chains and the rules defined elsewhere."""
    if verifier.runs_on and not verifier.supports(shape, law):
        raise VerifierError(refusal(verifier, f"{shape.label} drafted by {get_law(law).name}"))
    if not verifier.supports(shape, law):
        aliases = {target: alias for alias, target in ALIASES.items()}
        others = ", ".join(f"{n} ({aliases[n]})" if n in aliases else n for n in lossless_tree_rules(REGISTRY))
        raise VerifierError(chains_only(verifier.name, f"{shape.label} drafted by {law.name}", others))


def refusal(verifier: Verifier | type[Verifier], drafts: str) -> str:
    """The one sentence refusing ``drafts`` (their label) to a rule with ``runs_on``, naming the drafts
    it runs on."""
    return f"{verifier.name} runs on {runs_on_words(verifier.runs_on)} only, not on {drafts}"


def chains_rules(offered=None) -> list[str]:
    """The rules among ``offered`` (default: every rule, in display order) that run on K i.i.d. drafts:
    what the pages that draft K i.i.d. chains (the laboratory, sweeps, the leaderboard) offer."""
    chains = Shape.chains_of(1, 1)
    return [m for m in (method_names() if offered is None else offered) if resolve(m).supports(chains, IID_LAW)]


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
    ``epsilon`` and ``delta``), each checked by its declaration (``core.rules.params.Param.check``);
    a parameter the rule does not take, or a value it does not, is refused in one sentence, and None
    stands for the rule's default."""
    cls = resolve(name)
    law = get_law(law)
    if shape is not None:
        require(cls, shape, law)
    declared = by_name(cls)
    params = {key: value for key, value in params.items() if value is not None}
    unknown = [key for key in params if key not in declared]
    if unknown:
        takers = [n for n, c in REGISTRY.items() if set(unknown) & set(by_name(c))]
        raise ParamError(f"{cls.name} takes no parameter {', '.join(unknown)}"
                         + (f"; {', '.join(takers)} does" if takers else ""))
    params = {key: declared[key].check(value) for key, value in params.items()}
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
    """The rules' names, in display order: the registered ones, then those loaded from outside."""
    return list(REGISTRY)


_load_environment()
