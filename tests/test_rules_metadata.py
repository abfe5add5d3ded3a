"""A rule is one module: every registered rule carries all of its own metadata (``core.rules.base``).

``metadata_problems`` is the check; the fabricated classes below show that it can fail.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from core.rules.base import Verifier
from core.rules.registry import ALIASES, REGISTRY, RULES, lossless_tree_rules
from core.rules.token_level import SD

TEXT = ("name", "short", "label", "color", "summary", "source")
FLAGS = ("single_draft", "order_invariant", "lossless_by_theory", "needs_models", "closed_form_tau")
HEX = re.compile(r"#[0-9a-f]{6}")
SENTENCE_BREAK = re.compile(r"[.!?]\s+[A-Z]")   # a full stop followed by a capital starts a new sentence
#: The teaching texts the step page shows above each kind of replay (``Verifier.walk``): ``how`` on K
#: i.i.d. chains, ``how_on_trees`` on a token tree (a "rounds" replay is always its token tree's).
TEACHING = {"tests": ("how",), "block": ("how",), "leaf-to-root": ("how", "how_on_trees"), "rounds": ("how_on_trees",)}
#: The rules whose tests the step page replays with their numbers only, without a teaching text.
UNTAUGHT = {"hsd", "eagle", "exact_match"}


def metadata_problems(cls: type) -> list[str]:
    """Everything wrong with one rule class's metadata, as one line each (empty when it is complete)."""
    problems = []
    for attr in TEXT + FLAGS:
        if not hasattr(cls, attr):
            problems.append(f"{attr} is not set")
    for attr in TEXT:
        value = getattr(cls, attr, None)
        if hasattr(cls, attr) and not (isinstance(value, str) and value.strip()):
            problems.append(f"{attr} = {value!r} is not a non-empty string")
    for attr in FLAGS:
        if hasattr(cls, attr) and not isinstance(getattr(cls, attr), bool):
            problems.append(f"{attr} = {getattr(cls, attr)!r} is not a bool")
    if problems:
        return problems
    if not HEX.fullmatch(cls.color):
        problems.append(f"color {cls.color!r} is not #rrggbb")
    if cls.short in cls.label:
        problems.append(f"label {cls.label!r} repeats the short name {cls.short!r}")
    summary = cls.summary
    if "\n" in summary or not summary.endswith(".") or SENTENCE_BREAK.search(summary):
        problems.append(f"summary {summary!r} is not one sentence ending with a period")
    for attr in TEACHING[cls.walk]:
        taught = getattr(cls, attr).startswith("**How ")
        if taught == (cls.name in UNTAUGHT):
            problems.append(f"{attr} = {getattr(cls, attr)[:40]!r} is not the step page's teaching text"
                            if not taught else f"{attr} is set but {cls.name} is listed as untaught")
    return problems


@pytest.mark.parametrize("cls", RULES, ids=lambda c: c.__name__)
def test_every_rule_sets_all_its_metadata(cls):
    assert metadata_problems(cls) == []


def test_registry_is_keyed_by_name_in_display_order():
    assert list(REGISTRY) == [cls.name for cls in RULES]
    assert all(REGISTRY[key].name == key for key in REGISTRY)
    assert list(REGISTRY) == ["sd", "bv", "spectr", "specinfer", "spectr_gbv", "rbv", "best_of_k_bv",
                              "traversal", "otv", "td_optimal", "lp_optimal", "typical", "hsd", "eagle",
                              "exact_match"]


def test_colours_and_short_names_tell_rules_apart():
    colours = [cls.color.lower() for cls in RULES]
    shorts = [cls.short for cls in RULES]
    assert len(set(colours)) == len(RULES), colours
    assert len(set(shorts)) == len(RULES), shorts


def fabricated(**changes) -> type:
    """A rule class with SD's metadata, ``changes`` applied; a value of None leaves the attribute out."""
    attrs = {a: getattr(SD, a) for a in TEXT + FLAGS + ("how",)}
    attrs.update(changes)
    return type("Fabricated", (Verifier,), {a: v for a, v in attrs.items() if v is not None})


@pytest.mark.parametrize("changes, complaint", [
    ({"color": None}, "color is not set"),
    ({"color": ""}, "color = '' is not a non-empty string"),
    ({"color": "#12345g"}, "color '#12345g' is not #rrggbb"),
    ({"closed_form_tau": 1}, "closed_form_tau = 1 is not a bool"),
    ({"label": "SD (token-level)"}, "repeats the short name 'SD'"),
    ({"summary": "Two sentences. Not one."}, "is not one sentence"),
    ({"summary": "No period"}, "is not one sentence"),
    ({"how": ""}, "how = '' is not the step page's teaching text"),
    ({"walk": "leaf-to-root"}, "how_on_trees = '' is not the step page's teaching text"),
    ({"name": "hsd"}, "how is set but hsd is listed as untaught"),
])
def test_the_check_catches_a_broken_rule(changes, complaint):
    assert metadata_problems(fabricated()) == []
    problems = metadata_problems(fabricated(**changes))
    assert len(problems) == 1 and complaint in problems[0], problems


def test_closed_form_tau_is_declared_exactly_where_expected_tau_is_overridden():
    for cls in RULES:
        overridden = cls.expected_tau is not Verifier.expected_tau
        assert cls.closed_form_tau == overridden, cls.name
    assert {cls.name for cls in RULES if cls.closed_form_tau} >= {"sd", "bv"}


def test_figures_read_colour_and_short_name_from_the_rule():
    from pages.ui import figures

    for cls in RULES:
        assert (figures.color(cls.name), figures.short(cls.name)) == (cls.color, cls.short)
    assert (figures.color("autoregressive"), figures.short("autoregressive")) == ("#444444", "Target alone")
    assert (figures.color("bv"), figures.short("best_of_k_bv")) == ("#0072b2", "Best-of-K+BV")
    with pytest.raises(KeyError):
        figures.color("no_such_rule")
    with pytest.raises(KeyError):
        figures.short("no_such_rule")


def test_lossless_tree_rules_keep_the_offered_order_and_names():
    assert lossless_tree_rules(REGISTRY) == ["specinfer", "traversal", "lp_optimal"]
    # by class: EAGLE is lossy in one release, so it is not one even where its default is lossless
    assert lossless_tree_rules(["eagle", "lp_optimal", "bv", "rrs", "typical"]) == ["lp_optimal", "rrs"]


def _rule_names_written_in(path: Path) -> list[str]:
    """Where the file at ``path`` writes a rule's name (or an alias) as a string constant."""
    names = set(REGISTRY) | set(ALIASES)
    return [f"{path}:{node.lineno}: {node.value!r}" for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Constant) and node.value in names]


def test_pages_name_no_rule():
    """A page reads every rule it shows, and what it needs to know of one, from the rule's class or
    the registry (``core.rules.registry``, the claims' modules): adding a rule touches no page."""
    root = Path(__file__).resolve().parent.parent
    files = sorted((root / "pages").rglob("*.py")) + [root / "app.py"]
    assert len(files) > 20
    assert [hit for f in files for hit in _rule_names_written_in(f)] == []


def test_the_pages_check_catches_a_rule_written_by_name(tmp_path):
    page = tmp_path / "page.py"
    page.write_text('"""A page on rrs."""\nif method == "otv":\n    shown = {"rbv": 1}\n')
    assert [hit.rsplit(": ", 1)[1] for hit in _rule_names_written_in(page)] == ["'otv'", "'rbv'"]
