"""A researcher's own rule, from a file outside the checkout: loaded (``--rule``, ``EXPLORER_RULES``),
refused in one sentence when it cannot be, run exactly (its numbers equal those of the same rule
registered), contained when it misbehaves, judged by the court, swept on Dask, and given its own
parameters.  The example rules of docs/your_rule.md are loaded from docs/your_rule/."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import toy_models as tm
from core.analysis.exact import LOSSLESS_TOL, exact_analysis
from core.claims.base import BOUGHT, FAILS, HOLDS, beats_trial
from core.rules.block import BV
from core.rules.containment import RuleFailure
from core.rules.params import Param, ParamError, declared, decode, encode
from core.rules.plugins import RuleLoadError
from core.rules.registry import (REGISTRY, RULES, USER_SPECS, load_rule, make_verifier, resolve, unload_rule,
                                 user_rules)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "your_rule"
PY = sys.executable
TOY = tm.PRESETS["binary-toy"]

#: A rule file written as a researcher writes one: today's ``Verifier`` contract (every metadata
#: attribute, its colour, ``parameters`` as bare names), block verification of draft 0 only, and
#: rules that misbehave in each of the ways the containment catches.
RULE_FILE = textwrap.dedent('''
    import time
    import numpy as np
    from core.data.outcome import Outcome, Trace
    from core.rules.base import Verifier
    from core.rules.block import block_verify


    class FirstBV(Verifier):
        name = "first_bv"
        short = "First-BV"
        label = "block verification of draft 1 alone"
        color = "#0072b2"
        summary = "Run block verification on the first draft and ignore the others."
        source = "a test"
        single_draft = True
        order_invariant = False
        lossless_by_theory = True
        needs_models = False
        closed_form_tau = False
        parameters = ("scale",)

        def __init__(self, scale=1.0):
            self.scale = scale

        def run_chains(self, block, coins):
            x = block.draft(0)
            nodes = [x[:i] for i in range(block.L + 1)]
            tau, dist = block_verify(x, [block.p[u] for u in nodes[:-1]], [block.q[u] for u in nodes],
                                     coins, Trace(), nodes, 0)
            return Outcome(x[:tau], 0 if tau else -1, dist, Trace())


    class Raises(FirstBV):
        name = "raises"

        def run_chains(self, block, coins):
            return {}["no such key"]


    class Outside(FirstBV):
        name = "outside"

        def run_chains(self, block, coins):
            out = super().run_chains(block, coins)
            return Outcome((9,) * block.L, 0, out.residual, out.trace)


    class Negative(FirstBV):
        name = "negative"

        def run_chains(self, block, coins):
            out = super().run_chains(block, coins)
            return Outcome(out.accepted, out.draft, out.residual - 1.0, out.trace)


    class Forever(FirstBV):
        name = "forever"

        def run_chains(self, block, coins):
            while True:
                pass


    class NotARule:
        name = "not_a_rule"


    class NoSummary(FirstBV):
        name = "no_summary"
        summary = ""


    class Clash(FirstBV):
        name = "bv"
''')


@pytest.fixture()
def rule_file(tmp_path):
    """The rule file above, written outside the checkout; every rule a test loads is unloaded after."""
    path = tmp_path / "my_rules.py"
    path.write_text(RULE_FILE)
    before = set(user_rules())
    yield path
    for name in set(user_rules()) - before:
        unload_rule(name)


def cli(*args, env=None, timeout=600):
    return subprocess.run([PY, "-m", "core", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def cli_here(capsys, *args, loads=()):
    """``python -m core ARGS`` in this process (the court keeps the registered rules' values on its
    family between runs: ``core.claims.court._registered``), as ``cli`` returns it; the rules named in
    ``loads`` (loaded by ``--rule``) are unloaded after."""
    from core.cli import main as cli_main
    capsys.readouterr()
    try:
        code = cli_main(list(args))
    finally:
        for name in loads:
            if name in REGISTRY:
                unload_rule(name)
    out = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, out.out, out.err)


# ------------------------------------------------------------------------------------------------
# Parameters declared on the class
# ------------------------------------------------------------------------------------------------

def test_a_parameter_parses_checks_and_writes_its_values():
    eps = Param("eps", float, 0.1, "a threshold", within="(0, 1]")
    assert eps.parse("0.25") == 0.25 and eps.check(1) == 1.0 and eps.text(0.1 + 0.2) == "0.30000000000000004"
    assert eps.parse(eps.text(1 / 3)) == 1 / 3                                   # a float round-trips exactly
    assert eps.range_text() == "in (0, 1]"
    with pytest.raises(ParamError, match=r"^eps must be in \(0, 1\], got 0$"):
        eps.check(0.0)
    with pytest.raises(ParamError, match=r"^eps must be a number, got 'x'$"):
        eps.parse("x")
    k = Param("k", int, 2, "a count", within="[1, inf)")
    assert k.range_text() == "a finite number ≥ 1" and k.parse("3") == 3
    with pytest.raises(ParamError, match=r"^k must be an integer, got '1.5'$"):
        k.parse("1.5")
    mode = Param("mode", str, "a", "a mode", choices=("a", "b"))
    with pytest.raises(ParamError, match=r"^mode must be one of a, b, got 'c'$"):
        mode.check("c")
    flag = Param("flag", bool, False, "a flag")
    assert flag.parse("true") is True and flag.text(False) == "false"
    even = Param("n", int, 2, "even", validate=lambda v: None if v % 2 == 0 else "even")
    with pytest.raises(ParamError, match=r"^n must be even, got 3$"):
        even.check(3)
    with pytest.raises(TypeError):
        Param("x", list, [], "no lists")


def test_the_link_form_of_the_settings_round_trips_and_refuses_in_one_sentence():
    settings = {"typical": {"epsilon": 0.05, "delta": 0.25}, "eagle": {"release": "eagle2"}}
    text = encode(settings, REGISTRY)
    assert text == "eagle.release:eagle2,typical.delta:0.25,typical.epsilon:0.05"
    assert decode(text, REGISTRY) == settings
    for bad, message in [("typical.epsilon:2", r"must be in \[0, 1\), got 2"),
                         ("nope.x:1", r"no rule 'nope' takes parameters here"),
                         ("bv.epsilon:1", r"bv has no parameter 'epsilon'"),
                         ("eagle.temperature:0.5", r"eagle has no parameter 'temperature'"),     # the models' T
                         ("epsilon:1", r"rule.name:value")]:
        with pytest.raises(ParamError, match=message):
            decode(bad, REGISTRY)


def test_the_released_ports_declare_their_parameters_with_ranges():
    typical = {p.name: p for p in declared(REGISTRY["typical"])}
    assert (typical["epsilon"].within, typical["delta"].within, typical["extra_token"].choices) == \
        ("[0, 1)", "[0, inf)", ("greedy", "target"))
    eagle = {p.name: p for p in declared(REGISTRY["eagle"])}
    assert eagle["release"].choices == ("current", "eagle2") and eagle["temperature"].context == "temperature"
    assert not eagle["temperature"].settable and declared(REGISTRY["hsd"])[0].choices == ("transformers", "algorithm_clean")
    with pytest.raises(ParamError, match=r"^epsilon \(Medusa's posterior threshold\) must be in \[0, 1\), got 1$"):
        make_verifier("typical", epsilon="1")
    assert make_verifier("typical", epsilon="0.2").epsilon == 0.2        # the command line's text, parsed


@pytest.mark.parametrize("alias, param", [
    (["--epsilon", "0.2", "--delta", "0.5"], ["--param", "epsilon=0.2", "--param", "delta=0.5"]),
    (["--release", "eagle2"], ["--param", "release=eagle2"]),
])
def test_the_older_options_are_aliases_with_byte_identical_output(alias, param):
    method = "typical" if "--epsilon" in alias else "eagle"
    for fmt in ([], ["--json"]):
        args = ["exact", "--preset", "binary-toy", "--tree", "2,1", "--law", "topk", "--temperature", "0.5",
                "--method", method, *fmt]
        a, b = cli(*args, *alias), cli(*args, *param)
        assert a.returncode == b.returncode == 0, a.stderr + b.stderr
        assert a.stdout == b.stdout and a.stderr == b.stderr
        qualified = cli(*args, *[x.replace("=", "=", 1) if x == "--param" else (f"{method}.{x}" if "=" in x else x)
                                 for x in param])
        assert qualified.stdout == a.stdout
    hsd = [cli("exact", "--preset", "binary-toy", "--K", "1", "--L", "2", "--method", "hsd", "--json", *extra)
           for extra in (["--variant", "algorithm_clean"], ["--param", "variant=algorithm_clean"])]
    assert hsd[0].stdout == hsd[1].stdout and json.loads(hsd[0].stdout)["variant"] == "algorithm_clean"


@pytest.mark.parametrize("args, message", [
    (["--method", "bv", "--param", "epsilon=0.1"], "bv takes no parameter epsilon; typical does"),
    (["--method", "typical", "--param", "epsilon"], "--param takes NAME=VALUE (or RULE.NAME=VALUE), got 'epsilon'"),
    (["--method", "typical", "--param", "epsilon=x"], "epsilon (Medusa's posterior threshold) must be a number, got 'x'"),
    (["--method", "eagle", "--param", "temperature=0.5"], "eagle's temperature is the models' temperature; "
                                                         "set it with --temperature"),
    (["--method", "typical", "--param", "bv.epsilon=0.1"],
     "--param names the rule 'bv', which is not among those run here (typical)"),
])
def test_a_bad_parameter_is_one_line(args, message):
    out = cli("exact", "--preset", "binary-toy", "--tree", "2,1", *args)
    assert out.returncode == 2 and out.stdout == "" and out.stderr == f"error: {message}\n"


# ------------------------------------------------------------------------------------------------
# Loading, and the refusals
# ------------------------------------------------------------------------------------------------

def test_a_rule_from_a_file_joins_the_registry_contained_and_equals_the_same_rule_registered(rule_file):
    name = load_rule(f"{rule_file}:FirstBV")
    assert name == "first_bv" and user_rules()[-1] == "first_bv" and REGISTRY["first_bv"].contained
    assert load_rule(f"{rule_file}:FirstBV") == "first_bv"                       # loaded once
    assert [p.name for p in declared(REGISTRY[name])] == ["scale"] and declared(REGISTRY[name])[0].default == 1.0
    assert make_verifier(name, scale="2").scale == 2.0                           # today's bare names still work
    for family, V, K, L in [("iid", 2, 2, 2), ("markov", 3, 2, 2), ("table", 2, 3, 2)]:
        from core.sweep.config import InstanceKey
        from core.sweep.instances import instance_models
        draft, target, _ = instance_models(InstanceKey(family, V, K, L, 0), 0)
        mine = exact_analysis(name, draft, target, K, L)
        bv = exact_analysis("bv", draft, target, 1, L)                            # the rule is BV on draft 1
        assert mine.expected_accepted == pytest.approx(bv.expected_accepted, abs=1e-14)
        assert np.abs(mine.tau_pmf - bv.tau_pmf).max() <= 1e-14 and mine.is_lossless
    assert [c.name for c in RULES] == [n for n in REGISTRY if n not in user_rules()]


def test_the_example_rule_loaded_from_docs_equals_the_class_itself():
    """docs/your_rule/best_by_ratio.py loaded by specification gives the same exact numbers as its
    class instantiated directly (not contained), on the model-level programme and by enumeration."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        from best_by_ratio import BestByRatio
    finally:
        sys.path.remove(str(EXAMPLES))
    name = load_rule(f"{EXAMPLES / 'best_by_ratio.py'}:BestByRatio")
    try:
        draft, target = tm.random_markov(3, 1.0, 5), tm.random_markov(3, 1.0, 6)
        loaded = exact_analysis(make_verifier(name, draft=draft, target=target, K=2, L=2), draft, target, 2, 2)
        plain = exact_analysis(BestByRatio(draft, target, 2, 2), draft, target, 2, 2)
        enumerated = exact_analysis(BestByRatio(draft, target, 2, 2), draft, target, 2, 2, recursion=False)
        assert loaded.expected_accepted == plain.expected_accepted
        assert loaded.expected_accepted == pytest.approx(enumerated.expected_accepted, abs=1e-14)
        assert loaded.is_lossless and enumerated.is_lossless
        binary = exact_analysis(make_verifier(name, draft=TOY.draft, target=TOY.target, K=2, L=2),
                                TOY.draft, TOY.target, 2, 2)
        assert Fraction(binary.expected_accepted).limit_denominator(1000) == Fraction(377, 243)
    finally:
        unload_rule(name)


def test_a_module_rule_loads_by_name_and_brings_its_package(tmp_path):
    package = tmp_path / "lab_rules"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text("GREETING = 'hello'\n")
    (package / "first.py").write_text(RULE_FILE.replace("import time", "from lab_rules.helpers import GREETING"))
    sys.path.insert(0, str(tmp_path))
    try:
        name = load_rule("lab_rules.first:FirstBV")
        assert REGISTRY[name].__module__ == "lab_rules.first"
        files = USER_SPECS[name].files()
        assert set(files) == {"lab_rules/__init__.py", "lab_rules/helpers.py", "lab_rules/first.py"}
        unload_rule(name)
    finally:
        sys.path.remove(str(tmp_path))
        for module in [m for m in sys.modules if m.startswith("lab_rules")]:
            del sys.modules[module]


@pytest.mark.parametrize("spec, message", [
    ("{file}:NotARule", "NotARule is not a subclass of core.rules.base.Verifier"),
    ("{file}:Nowhere", "the module has no Nowhere"),
    ("{file}:NoSummary", "NoSummary's summary = '' is not a non-empty string"),
    ("{file}:Clash", "the name 'bv' is a registered rule's; give the class another name"),
    ("{missing}:FirstBV", "does not exist"),
    ("{broken}:FirstBV", "its module does not import (SyntaxError"),
    ("no_such_module_here:Rule", "its module does not import (ModuleNotFoundError: No module named 'no_such_module_here')"),
    ("just_a_name", "is not MODULE:CLASS or PATH.py:CLASS"),
])
def test_a_rule_that_cannot_be_loaded_is_refused_in_one_sentence(rule_file, tmp_path, spec, message):
    broken = tmp_path / "broken.py"
    broken.write_text("def (:\n")
    spec = spec.format(file=rule_file, missing=tmp_path / "missing.py", broken=broken)
    with pytest.raises(RuleLoadError) as info:
        load_rule(spec)
    assert message in str(info.value) and "\n" not in str(info.value)
    out = cli("exact", "--preset", "binary-toy", "--K", "1", "--L", "2", "--rule", spec, "--method", "bv")
    assert out.returncode == 2 and out.stdout == "" and out.stderr.count("\n") == 1 and message in out.stderr


def test_two_rules_of_one_name_are_refused(rule_file, tmp_path):
    load_rule(f"{rule_file}:FirstBV")
    other = tmp_path / "other.py"
    other.write_text(RULE_FILE)
    with pytest.raises(RuleLoadError, match="the name 'first_bv' is already taken by the rule loaded from"):
        load_rule(f"{other}:FirstBV")


def test_the_environment_variable_loads_rules_for_the_library_and_the_command_line(rule_file):
    env = {"EXPLORER_RULES": f"{rule_file}:FirstBV, {EXAMPLES / 'best_by_ratio.py'}:BestByRatio"}
    code = "from core.rules.registry import user_rules; import core; print(user_rules(), core.method_names()[-2:])"
    out = subprocess.run([PY, "-c", code], cwd=ROOT, capture_output=True, text=True, env={**os.environ, **env})
    assert out.stdout.strip() == "['first_bv', 'best_by_ratio'] ['first_bv', 'best_by_ratio']", out.stderr
    exact = cli("exact", "--preset", "binary-toy", "--K", "2", "--L", "2", "--method", "best_by_ratio", "--json", env=env)
    data = json.loads(exact.stdout)
    assert data["expected_accepted_fraction"] == "377/243" and data["fidelity_tv_fraction"] == "0"
    bad = cli("exact", "--preset", "binary-toy", "--K", "1", "--L", "2", "--method", "bv",
              env={"EXPLORER_RULES": f"{rule_file}:Clash"})
    assert bad.returncode == 2 and bad.stderr == (f"error: EXPLORER_RULES: rule '{rule_file}:Clash': the name 'bv' "
                                                  f"is a registered rule's; give the class another name\n")


# ------------------------------------------------------------------------------------------------
# Containment
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("cls, message", [
    ("Raises", r"^raises raised KeyError \('no such key'\) on the drafts 0$"),
    ("Outside", r"^outside accepted \(9,\), which is not a node of the drafted tree on the drafts [01]$"),
    ("Negative", r"^negative returned a residual with a negative entry \(-0\.667\) on the drafts 0$"),
])
def test_a_rule_that_misbehaves_is_stopped_in_one_sentence_naming_it_and_the_drafts(rule_file, cls, message):
    name = load_rule(f"{rule_file}:{cls}")
    with pytest.raises(RuleFailure, match=message):
        exact_analysis(name, TOY.draft, TOY.target, 1, 1)


def test_a_rule_past_its_time_is_stopped_and_the_process_goes_on(rule_file):
    name = load_rule(f"{rule_file}:Forever")
    with pytest.raises(RuleFailure, match=r"^forever ran past its time limit of 0.5 s on V=2, K=1, L=1$"):
        exact_analysis(name, TOY.draft, TOY.target, 1, 1, max_seconds=0.5)
    assert exact_analysis("bv", TOY.draft, TOY.target, 1, 2).expected_accepted == pytest.approx(11 / 9)


def test_exact_all_goes_on_with_the_other_rules_when_one_fails(rule_file):
    out = cli("exact", "--preset", "binary-toy", "--K", "1", "--L", "2", "--method", "all", "--rule",
              f"{rule_file}:Raises", "--json")
    data = json.loads(out.stdout)
    assert out.returncode == 0 and "bv" in [r["method"] for r in data["results"]]
    assert data["skipped"] == [{"method": "raises", "reason": "raises raised KeyError ('no such key') on the drafts 00"}]
    alone = cli("exact", "--preset", "binary-toy", "--K", "1", "--L", "2", "--method", "raises", "--rule",
                f"{rule_file}:Raises")
    assert alone.returncode == 2 and alone.stderr == "error: raises raised KeyError ('no such key') on the drafts 00\n"


def test_a_sweep_keeps_a_failed_rules_rows_apart_and_every_other_row(rule_file, tmp_path):
    from core.sweep.config import SweepConfig
    from core.sweep.engine import run_sweep
    from core.sweep.store import ResultsStore, read_results
    from core.sweep.summary import format_leaderboard, leaderboard

    load_rule(f"{rule_file}:Raises")
    config = SweepConfig(("iid",), (2,), (1,), (2,), 3, ("bv", "raises", "spectr_gbv"), bounds=("lp",))
    run_sweep(config, ResultsStore(tmp_path / "s.parquet", config))
    frame = read_results(tmp_path / "s.parquet")
    failed = frame[frame["method"] == "raises"]
    assert len(failed) == 3 and failed["expected_accepted"].isna().all()
    assert failed["failure"].iloc[0] == "raises raised KeyError ('no such key') on the drafts 00 (instance iid V=2 K=1 L=2 #0)"
    assert frame[frame["method"] == "bv"]["expected_accepted"].notna().all()
    board = leaderboard(frame)
    assert [m["method"] for m in board["methods"]] == ["bv", "spectr_gbv", "raises"]
    assert board["methods"][-1] == {"method": "raises", "n": 0, "lossless": False, "failures": 3,
                                    "failure": failed["failure"].iloc[0]}
    text = format_leaderboard(board)
    assert "lossy rules (TV from q above 1e-09 on some instance): ranked apart" in text
    assert "raises failed on 3 analyses; the first: raises raised KeyError" in text


# ------------------------------------------------------------------------------------------------
# The selected-draft law
# ------------------------------------------------------------------------------------------------

def test_the_selected_draft_law_of_any_score_is_the_law_of_the_best_of_K_drafts():
    """P*(x) = p(x)/E(x)·[(1 − A)^K − (1 − A − E)^K] against the brute force over every ordered K-tuple
    of drafts (the first draft of the highest score kept), for a score with ties (the first token
    only: every path of a first token ties); and the q/p ranking's closed form against the general
    enumeration with the same score."""
    import itertools
    from core.rules.selection import RANK, SelectedDraftLaw, rank_score

    draft, target = tm.random_markov(3, 1.0, 11), tm.random_markov(3, 1.0, 12)
    V, L, K = 3, 2, 3

    def first_token(path, p, q):
        return q(())[path[0]] / p(())[path[0]]
    law = SelectedDraftLaw(first_token, draft.cond, target.cond, V, L, K)
    brute = np.zeros((V,) * L)
    paths = list(itertools.product(range(V), repeat=L))
    for drafts in itertools.product(paths, repeat=K):
        prob = np.prod([draft.joint(x) for x in drafts])
        scores = [first_token(x, draft.cond, target.cond) for x in drafts]
        brute[drafts[int(np.argmax(scores))]] += prob       # argmax: the first of the highest
    assert np.abs(law.masses() - brute).max() <= 1e-15
    rows = law.path_rows((2, 1))
    assert rows[1][1] == pytest.approx(brute[2, 1] / brute[2].sum(), abs=1e-15)
    general = SelectedDraftLaw(lambda x, p, q: rank_score(x, p, q), draft.cond, target.cond, V, L, K).levels()
    closed = SelectedDraftLaw(RANK, draft.cond, target.cond, V, L, K).levels()
    assert max(np.abs(a - b).max() for a, b in zip(general, closed)) <= 1e-15


def test_a_selection_rule_verified_against_p_star_is_lossless_and_against_p_is_not():
    """The example rule (largest q(x)/p(x), BV against p*) is lossless; its lossy twin draws the
    correction from q: TV 19/243 on the binary toy at K = 2, L = 2 (both keep the same blocks, E[τ]
    377/243 each)."""
    names = [load_rule(f"{EXAMPLES / f}") for f in ("best_by_ratio.py:BestByRatio", "best_by_ratio_q.py:BestByRatioQ")]
    try:
        good, bad = (exact_analysis(make_verifier(n, draft=TOY.draft, target=TOY.target, K=2, L=2), TOY.draft,
                                    TOY.target, 2, 2) for n in names)
        assert good.is_lossless and good.expected_accepted == pytest.approx(377 / 243, abs=1e-14)
        assert bad.expected_accepted == pytest.approx(377 / 243, abs=1e-14)
        assert bad.fidelity_tv == pytest.approx(19 / 243, abs=1e-14)
    finally:
        for n in names:
            unload_rule(n)


# ------------------------------------------------------------------------------------------------
# A lossy rule is never crowned
# ------------------------------------------------------------------------------------------------

def test_a_beats_claim_won_by_a_lossy_rule_says_the_gain_is_bought_with_loss():
    t = beats_trial("hsd", "bv")(TOY.draft, TOY.target, 1, 2)
    assert t.holds and t.numbers[BOUGHT] is True and t.numbers["gain"] == pytest.approx(1 / 9, abs=1e-14)
    fair = beats_trial("bv", "sd")(TOY.draft, TOY.target, 1, 2)
    assert fair.holds and BOUGHT not in fair.numbers


# ------------------------------------------------------------------------------------------------
# The court
# ------------------------------------------------------------------------------------------------

def test_the_court_of_a_lossy_rule_finds_the_smallest_counterexample_and_never_counts_its_gains():
    """The lossy example rule: lossy on the binary toy (TV 19/243 at K = 2, L = 2); the search's smallest
    size is V = 2, K = 1, L = 1, on its first rational pair, whose probabilities are shown as
    fractions.  There the one draft x is accepted with min(1, q(x)/p(x)) and a rejection draws y ~ q, so
    P(y) = min(p, q)(y) + (1 − α)·q(y) with α = Σ min(p, q): lossy wherever p ≠ q."""
    from core.claims.court import court

    name = load_rule(f"{EXAMPLES / 'best_by_ratio_q.py'}:BestByRatioQ")
    try:
        result = court(name)
    finally:
        unload_rule(name)
    lossless = result.verdict("lossless")
    assert lossless.status == FAILS and result.user
    found = lossless.numbers["counterexample"]
    assert found["found"] and (found["V"], found["K"], found["L"], found["kind"]) == (2, 1, 1, "rational")
    p, q = (np.array([float(Fraction(x)) for x in found[m]["probs"]]) for m in ("draft", "target"))
    alpha = np.minimum(p, q).sum()
    produced = np.minimum(p, q) + (1 - alpha) * q
    assert found["fidelity_tv"] == pytest.approx(0.5 * np.abs(produced - q).sum(), abs=1e-14)
    assert found["fidelity_tv"] > LOSSLESS_TOL
    assert all("/" in str(x) for x in found["draft"]["probs"])
    against = result.verdict("against").numbers
    assert sum(c["wins"] for c in against["versus"].values()) + sum(
        c["wins_bought_with_loss"] for c in against["versus"].values()) > 0
    mine = next(r for r in against["ranking"] if r["rule"] == name)
    assert mine["rank"] is None and not mine["lossless"]
    assert [r["lossless"] for r in against["ranking"]] == sorted((r["lossless"] for r in against["ranking"]), reverse=True)
    stream = result.verdict("stream")
    assert stream.status == FAILS and not stream.numbers["stateful"]


def test_the_court_of_a_registered_rule_on_the_command_line(capsys):
    out = cli_here(capsys, "court", "--method", "bv", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    verdicts = {v["key"]: v for v in data["verdicts"]}
    assert verdicts["lossless"]["status"] == HOLDS and verdicts["monotone"]["status"] == HOLDS
    assert verdicts["lossless"]["numbers"]["presets"][0]["expected_accepted_fraction"] == "11/9"
    assert verdicts["optimal"]["numbers"]["optimal"] == 36 and verdicts["optimal"]["numbers"]["of"] == 108   # K = 1
    ranking = verdicts["against"]["numbers"]["ranking"]
    lossy = [r["rule"] for r in ranking if not r["lossless"]]
    assert [r for r in lossy if r in ("typical", "hsd", "spectr_gbv")] == ["typical", "hsd", "spectr_gbv"]
    # the engines' ports that are lossy on K i.i.d. chains, ranked apart too; llama.cpp's runs on top-k trees only
    assert {"typical", "hsd", "spectr_gbv", "vllm_shared_gumbel", "vllm_ascend_block", "hf_ensemble", "trtllm_tree",
            "sglang_tree", "sglang_rocm_greedy"} <= set(lossy) and "llamacpp_tree" not in {r["rule"] for r in ranking}
    assert verdicts["drafts"]["verdict"] == "K i.i.d. chains only (token_trees is False)"
    text = cli_here(capsys, "court", "--method", "typical", "--param", "epsilon=0.2")
    assert text.returncode == 0 and text.stdout.startswith("court of typical with epsilon=0.2:")
    assert "lossy  typical" in text.stdout                    # typical is lossy at any ε: ranked apart
    assert cli("court").stderr == "error: give one rule: --rule SPEC (a rule of your own) or --method NAME\n"


# ------------------------------------------------------------------------------------------------
# Through every command: exact, montecarlo, claims, a sweep on a real two-process Dask cluster
# ------------------------------------------------------------------------------------------------

def test_a_rule_file_runs_through_montecarlo_and_claims(rule_file, capsys):
    spec = f"{EXAMPLES / 'best_by_ratio.py'}:BestByRatio"
    mc = json.loads(cli("montecarlo", "--preset", "binary-toy", "--K", "2", "--L", "2", "--rule", spec,
                        "--method", "best_by_ratio", "--n", "4000", "--seed", "1", "--json").stdout)
    lo, hi = mc["expected_accepted_ci"]
    assert lo <= 377 / 243 <= hi
    claims = cli_here(capsys, "claims", "--source", "medusa", "--rule", spec, loads=["best_by_ratio"])
    assert claims.returncode == 0, claims.stderr
    assert "court/best_by_ratio/lossless: holds here. Lossless: lossless on 5 of 5 presets" in claims.stdout


@pytest.mark.skipif(shutil.which("dask") is None and not Path(PY).with_name("dask").exists(),
                    reason="the dask command is not installed")
def test_a_sweep_on_a_separate_scheduler_and_two_workers_receives_the_rule(tmp_path):
    """A scheduler and two workers started as their own processes, from a folder without this
    checkout, with no EXPLORER_RULES: the rule file, named by --rule in the client only, travels with
    the job, and the rows equal a serial run's."""
    dask = str(Path(PY).with_name("dask")) if Path(PY).with_name("dask").exists() else shutil.which("dask")
    rule = tmp_path / "elsewhere" / "ratio.py"
    rule.parent.mkdir()
    rule.write_text((EXAMPLES / "best_by_ratio.py").read_text())
    spec = f"{rule}:BestByRatio"
    env = {k: v for k, v in os.environ.items() if k not in ("EXPLORER_RULES", "PYTHONPATH")}
    run_dir = tmp_path / "cluster"
    run_dir.mkdir()
    port = 8786 + os.getpid() % 1000
    procs = [subprocess.Popen([dask, "scheduler", "--port", str(port), "--no-dashboard"], cwd=run_dir, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        import time
        time.sleep(3)
        procs += [subprocess.Popen([dask, "worker", f"tcp://127.0.0.1:{port}", "--nthreads", "1", "--no-dashboard"],
                                   cwd=run_dir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                  for _ in range(2)]
        common = ["sweep", "--family", "iid", "markov", "--V", "2", "--K", "2", "--L", "2", "--n", "2",
                  "--methods", "bv,best_by_ratio", "--bounds", "lp", "--rule", spec, "--json"]
        out = cli(*common, "--scheduler", f"tcp://127.0.0.1:{port}", "--out", str(tmp_path / "dask.parquet"),
                  "--batch", "1")
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["tasks"] == 4
        serial = cli(*common, "--workers", "0", "--out", str(tmp_path / "serial.parquet"))
        assert serial.returncode == 0, serial.stderr
        from core.sweep.store import read_results
        a, b = (read_results(tmp_path / f) for f in ("dask.parquet", "serial.parquet"))
        mine = a[a["method"] == "best_by_ratio"]
        assert len(mine) == 4 and (mine["fidelity_tv"] <= LOSSLESS_TOL).all()
        assert a["expected_accepted"].tolist() == b["expected_accepted"].tolist()
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)


def test_a_sweep_records_the_rules_parameters(tmp_path):
    out = cli("sweep", "--family", "iid", "--V", "2", "--tree", "2,1", "--law", "topk", "--n", "1", "--methods",
              "rrs,typical", "--param", "epsilon=0.2", "--workers", "0", "--out", str(tmp_path / "p.parquet"), "--json")
    assert out.returncode == 0, out.stderr
    saved = json.loads((tmp_path / "p.parquet" / "_sweep.json").read_text())["config"]
    assert saved["params"] == [["typical", "epsilon", "0.2"]]
    none = cli("sweep", "--family", "iid", "--V", "2", "--K", "1", "--L", "1", "--n", "1", "--methods", "bv",
               "--param", "epsilon=0.2", "--workers", "0", "--out", str(tmp_path / "q.parquet"))
    assert none.returncode == 2 and none.stderr == "error: no rule run here takes the parameter epsilon; typical does\n"


# ------------------------------------------------------------------------------------------------
# The app
# ------------------------------------------------------------------------------------------------

def lab_table(at):
    """The toy laboratory's table of every method (the data frame with an E[τ] column)."""
    return next(d.value for d in at.dataframe if "E[τ]" in d.value.columns)


PAGES = ["pages/start.py", "pages/toy_lab.py", "pages/draft_trees.py", "pages/one_step.py", "pages/live_decoder.py",
         "pages/sweeps.py", "pages/claims.py", "pages/leaderboard.py"]


@pytest.fixture()
def two_rules(rule_file):
    """A model-free rule of one's own (it runs on the live decoder too) and the docs' example, which
    needs the toy models; unloaded after the test."""
    return load_rule(f"{rule_file}:FirstBV"), load_rule(f"{EXAMPLES / 'best_by_ratio.py'}:BestByRatio")


def test_every_page_takes_a_rule_of_ones_own_in_a_reserve_colour(two_rules):
    from pages.ui import figures
    from tests.apptest import open_page

    first, ratio = two_rules
    assert (figures.color(first), figures.color(ratio)) == figures.USER_PALETTE[:2]
    assert (figures.symbol(first), figures.symbol(ratio)) == figures.USER_SYMBOLS[:2]
    assert figures.short(first) == "First-BV (your rule)"        # its own colour (#0072b2, BV's) is not used
    for page in PAGES:
        at = open_page(page)
        assert not at.exception, (page, [e.value for e in at.exception])
        for e in at.error:
            assert "Traceback" not in e.value and "\n" not in e.value, (page, e.value)
    lab = open_page("pages/toy_lab.py", query={"source": "Preset", "preset": "binary-toy", "K": "2", "L": "2"})
    table = lab_table(lab)
    mine = table[table["method"] == "Ratio+BV (your rule)"].iloc[0]
    assert mine["E[τ] as a fraction"] == "377/243" and mine["lossless?"] == "yes" and mine["rank"].isdigit()
    lossy = table[table["lossless?"] == "NO"]
    assert len(lossy) and (lossy["rank"] == "lossy: not ranked").all()
    step = open_page("pages/one_step.py", state={"step_method": first})
    assert not step.exception and step.session_state["step_method"] == first
    decoder = open_page("pages/live_decoder.py")
    assert "First-BV (your rule): block verification of draft 1 alone" in decoder.selectbox(key="dec_method").options


def test_the_rule_parameters_are_controls_and_travel_in_the_link():
    from tests.apptest import open_page

    query = {"source": "Preset", "preset": "binary-toy", "K": "1", "L": "2", "T": "0.5", "methods": "eagle,bv",
             "params": "eagle.release:eagle2"}
    at = open_page("pages/toy_lab.py", query=query)
    assert at.session_state["rule_params"] == {"eagle": {"release": "eagle2"}}
    assert at.selectbox(key="param_eagle_release").value == "eagle2"
    assert at.query_params["params"] == "eagle.release:eagle2"
    table = lab_table(at)
    eagle = table[table["method"] == "EAGLE"].iloc[0]
    # EAGLE-2's release at T = 1/2 on the binary toy, K = 1, L = 2: TV 128/9375 (tests/test_eagle.py)
    assert eagle["fidelity error (TV)"] == pytest.approx(128 / 9375, abs=1e-12) and eagle["lossless?"] == "NO"
    at.selectbox(key="param_eagle_release").set_value("current").run()
    assert "params" not in at.query_params and at.session_state["rule_params"] == {}
    table = lab_table(at)
    assert table[table["method"] == "EAGLE"].iloc[0]["lossless?"] == "yes"
    bad = open_page("pages/toy_lab.py", query={**query, "params": "typical.epsilon:3"})
    assert any("params=typical.epsilon:3 is not a value this page offers" in w.value for w in bad.warning)


def test_pasting_a_rule_is_off_unless_the_owner_allows_it(monkeypatch):
    from tests.apptest import open_page

    monkeypatch.delenv("EXPLORER_ALLOW_CODE", raising=False)
    at = open_page("pages/claims.py")
    assert any("Pasting a rule's code is off: a hosted app never runs a visitor's code" in c.value for c in at.caption)
    assert not [t for t in at.text_area if t.key == "court_code"]
    monkeypatch.setenv("EXPLORER_ALLOW_CODE", "1")
    at = open_page("pages/claims.py")
    at.text_area(key="court_code").set_value(RULE_FILE)
    at.text_input(key="court_class").set_value("FirstBV")
    at.button(key="court_load").click().run()
    try:
        assert "first_bv" in user_rules() and not at.exception
        assert any(m.value.startswith("| verdict | on | numbers |") and "lossless on 5 of 5 presets" in m.value
                   for m in at.markdown)
    finally:
        if "first_bv" in user_rules():
            unload_rule("first_bv")


def test_the_app_takes_the_rules_the_environment_variable_names():
    """A server started with EXPLORER_RULES: the rule is on the toy laboratory, and its court on the
    claims page (a process of its own, as a server is)."""
    script = textwrap.dedent(f'''
        from streamlit.testing.v1 import AppTest
        at = AppTest.from_file({str(ROOT / "app.py")!r}, default_timeout=300)
        at.query_params.update(source="Preset", preset="binary-toy", K="2", L="2")
        at.run()
        at.switch_page("pages/toy_lab.py").run()
        table = next(d.value for d in at.dataframe if "E[τ]" in d.value.columns)
        print(table[table["method"] == "Ratio+BV (your rule)"]["E[τ] as a fraction"].iloc[0])
        at.switch_page("pages/claims.py").run()
        at.button(key="court_best_by_ratio").click().run()
        print(not at.exception, any("lossless on 5 of 5 presets" in m.value for m in at.markdown))
    ''')
    env = {**os.environ, "EXPLORER_RULES": f"{EXAMPLES / 'best_by_ratio.py'}:BestByRatio"}
    out = subprocess.run([PY, "-c", script], cwd=ROOT, capture_output=True, text=True, env=env, timeout=900)
    assert out.stdout.split("\n")[-3:] == ["377/243", "True True", ""], out.stdout + out.stderr[-2000:]


def test_a_claims_instance_carries_the_rules_parameters_in_its_link():
    from core.claims.base import Instance

    inst = Instance(1, 2, preset="binary-toy", T=0.5, methods=("eagle",), params={"eagle": {"release": "eagle2"}})
    assert inst.query()["params"] == "eagle.release:eagle2"
    assert inst.to_json()["params"] == {"eagle": {"release": "eagle2"}}
    assert "params" not in Instance(1, 2, preset="binary-toy").query()


def test_the_worked_example_of_the_docs_reproduces(tmp_path, capsys):
    """docs/your_rule.md's worked example, run as written there (the rule files copied elsewhere):
    each row and verdict it shows is what the commands print."""
    doc = (ROOT / "docs" / "your_rule.md").read_text()
    shown = {line.rstrip() for line in doc.splitlines()}
    for name in ("best_by_ratio.py", "best_by_ratio_q.py"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    rules = ["--rule", f"{tmp_path}/best_by_ratio.py:BestByRatio", "--rule", f"{tmp_path}/best_by_ratio_q.py:BestByRatioQ"]
    exact = cli("exact", *rules, "--preset", "binary-toy", "--K", "2", "--L", "2", "--method", "all")
    rows = [line.rstrip() for line in exact.stdout.splitlines() if line.startswith(("best_of_k_bv", "best_by_ratio"))]
    assert len(rows) == 3 and set(rows) <= shown, rows
    court = cli_here(capsys, "court", "--rule", f"{tmp_path}/best_by_ratio.py:BestByRatio", loads=["best_by_ratio"])
    verdicts = [line.rstrip() for line in court.stdout.splitlines()[1:7]]
    assert set(verdicts) <= shown, verdicts
    lossy = cli_here(capsys, "court", "--rule", f"{tmp_path}/best_by_ratio_q.py:BestByRatioQ",
                     loads=["best_by_ratio_q"]).stdout.splitlines()
    assert {lossy[1].rstrip(), lossy[4].rstrip(), lossy[6].rstrip()} <= shown
    sweep = cli("sweep", "--family", "iid", "markov", "--V", "2", "3", "--K", "2", "3", "--L", "2", "--n", "5",
                "--seed", "1", "--workers", "0", *rules, "--methods", "bv,rbv,best_of_k_bv,otv,best_by_ratio,best_by_ratio_q",
                "--out", str(tmp_path / "s.parquet"))
    assert sweep.returncode == 0, sweep.stderr
    board = cli("sweep", "--summarize", str(tmp_path / "s.parquet")).stdout.split("\n\n")
    table = [line.rstrip() for part in board[:3] for line in part.splitlines() if not line.startswith("---")]
    assert set(table) <= shown, sorted(set(table) - shown)
