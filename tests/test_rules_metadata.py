"""A rule is one module: every registered rule carries all of its own metadata (``core.rules.base``).

``metadata_problems`` is the check; the fabricated classes below show that it can fail.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from core.rules.base import Verifier
from core.rules.plugins import FLAGS, TEXT
from core.rules.plugins import metadata_problems as rule_problems
from core.rules.registry import ALIASES, REGISTRY, RULES, lossless_tree_rules
from core.rules.token_level import SD

#: The rules whose tests the step page replays with their numbers only, without a teaching text.
UNTAUGHT = frozenset({"hsd", "eagle", "exact_match", "trtllm_tree", "sglang_tree", "sglang_rocm_greedy",
                      "llamacpp_tree", "flashinfer_chain"})


def metadata_problems(cls: type) -> list[str]:
    """Everything wrong with one registered rule class's metadata (``core.rules.plugins``'s check,
    which a rule from outside the project passes too), one line each."""
    return rule_problems(cls, untaught=UNTAUGHT)


@pytest.mark.parametrize("cls", RULES, ids=lambda c: c.__name__)
def test_every_rule_sets_all_its_metadata(cls):
    assert metadata_problems(cls) == []


def test_registry_is_keyed_by_name_in_display_order():
    """The registry lists ``RULES`` by name, in order, then any rule loaded from outside; the rules
    this project's pages and claims are built on keep their order (a rule added anywhere in ``RULES``
    keeps this test as it is)."""
    registered = [cls.name for cls in RULES]
    assert list(REGISTRY)[:len(RULES)] == registered
    assert all(REGISTRY[key].name == key for key in REGISTRY)
    core_order = ["sd", "bv", "spectr", "specinfer", "spectr_gbv", "rbv", "best_of_k_bv", "traversal", "otv",
                  "td_optimal", "lp_optimal"]
    assert [name for name in registered if name in core_order] == core_order


def test_colours_and_short_names_tell_rules_apart():
    """Every rule has its own colour, but the rules of one serving engine (``engine``) share theirs."""
    owners = {}
    for cls in RULES:
        owners.setdefault(cls.color.lower(), set()).add(cls.engine or cls.name)
    assert all(len(who) == 1 for who in owners.values()), owners
    assert len(owners) == len({cls.engine or cls.name for cls in RULES})
    shorts = [cls.short for cls in RULES]
    assert len(set(shorts)) == len(RULES), shorts
    # vllm-ascend is vLLM's Ascend plugin; SGLang's speculative kernel derives from FlashInfer's
    assert {cls.name for cls in RULES if cls.engine == "vLLM"} == {"vllm_onehot", "vllm_block", "vllm_shared_gumbel",
                                                                   "vllm_ascend_block"}
    assert {cls.name for cls in RULES if cls.engine == "SGLang"} == {"sglang_tree", "sglang_rocm_greedy",
                                                                     "flashinfer_chain"}


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
    # a name no rule has here (a results file's rule that is not loaded) is drawn, never a KeyError
    assert (figures.color("no_such_rule"), figures.short("no_such_rule"), figures.symbol("no_such_rule")) == \
        (figures.UNKNOWN_STYLE[0], "no_such_rule", figures.UNKNOWN_STYLE[1])


def test_lossless_tree_rules_keep_the_offered_order_and_names():
    assert lossless_tree_rules(REGISTRY) == [c.name for c in RULES if c.token_trees and c.lossless_by_theory]
    assert lossless_tree_rules(REGISTRY)[:3] == ["specinfer", "traversal", "lp_optimal"]
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
