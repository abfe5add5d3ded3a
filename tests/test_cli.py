"""The command-line interface: its JSON and every error path (one line, non-zero exit)."""
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from core import bounds
from toy_models import PRESETS

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture()
def toy_files(tmp_path):
    p = tmp_path / "p.json"
    q = tmp_path / "q.json"
    p.write_text(json.dumps({"kind": "iid", "probs": [2 / 3, 1 / 3]}))
    q.write_text(json.dumps({"kind": "iid", "probs": [1 / 3, 2 / 3]}))
    return str(p), str(q)


def write(tmp_path, name, obj):
    path = tmp_path / name
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return str(path)


def assert_one_line_error(out: subprocess.CompletedProcess, message: str) -> None:
    """Exit status 2, nothing on stdout, and stderr exactly one line (no NumPy warning) naming it."""
    assert out.returncode == 2, (out.returncode, out.stderr)
    assert out.stdout == ""
    assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1, out.stderr
    assert message in out.stderr


def test_exact_json(toy_files):
    p, q = toy_files
    out = run("exact", "--draft", p, "--target", q, "--method", "bv", "--K", "1", "--L", "2", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert {"method", "K", "L", "expected_accepted", "block_efficiency", "accepted_pmf", "fidelity_tv"} <= set(data)
    assert data["method"] == "bv" and data["K"] == 1 and data["L"] == 2
    assert Fraction(data["expected_accepted"]).limit_denominator(100) == Fraction(11, 9)
    assert data["block_efficiency"] == pytest.approx(20 / 9, abs=1e-12)
    assert sum(data["accepted_pmf"]) == pytest.approx(1.0, abs=1e-12) and len(data["accepted_pmf"]) == 3
    assert data["fidelity_tv"] < 1e-12


def test_exact_table_lists_every_method(toy_files):
    p, q = toy_files
    out = run("exact", "--draft", p, "--target", q, "--method", "all", "--K", "2", "--L", "2")
    assert out.returncode == 0, out.stderr
    for name in ("sd", "bv", "spectr", "specinfer", "spectr_gbv", "rbv", "best_of_k_bv"):
        assert any(line.startswith(name + " ") for line in out.stdout.splitlines()), name


def test_temperature_changes_the_answer(toy_files):
    p, q = toy_files
    hot = json.loads(run("exact", "--draft", p, "--target", q, "--method", "sd", "--K", "1", "--L", "2",
                         "--temperature", "3", "--json").stdout)
    cold = json.loads(run("exact", "--draft", p, "--target", q, "--method", "sd", "--K", "1", "--L", "2",
                          "--json").stdout)
    assert hot["expected_accepted"] > cold["expected_accepted"] + 0.1


@pytest.mark.parametrize("kind", ["lp", "acausal", "cic", "relaxation"])
def test_bound_json(toy_files, kind):
    p, q = toy_files
    out = run("bound", "--draft", p, "--target", q, "--K", "1", "--L", "2", "--kind", kind, "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["kind"] == kind and isinstance(data["value"], float)
    if kind == "acausal":
        assert Fraction(data["value"]).limit_denominator(100) == Fraction(12, 9)
    if kind == "lp":  # equals BV at K = 1
        assert data["value"] == pytest.approx(11 / 9, abs=1e-9)


def test_single_token_bound(toy_files):
    p, q = toy_files
    data = json.loads(run("bound", "--draft", p, "--target", q, "--K", "1", "--L", "1",
                          "--kind", "single_token", "--json").stdout)
    assert data["value"] == pytest.approx(2 / 3, abs=1e-12)  # Σ min(p, q) at K = 1


def test_renormalizes_input_within_tolerance(tmp_path, toy_files):
    _, q = toy_files
    p = write(tmp_path, "p2.json", {"kind": "iid", "probs": [2 / 3 + 5e-10, 1 / 3]})
    out = run("exact", "--draft", p, "--target", q, "--method", "sd", "--K", "1", "--L", "1", "--json")
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("draft, args, message", [
    ({"kind": "iid", "probs": [0.5, 0.6]}, [], "sums to"),
    ({"kind": "iid", "probs": [1.2, -0.2]}, [], "negative"),
    ('{"kind": "iid", "probs": [NaN, 1.0]}', [], "NaN"),
    ({"kind": "iid", "probs": [0.2, 0.3, 0.5]}, [], "must share a vocabulary"),
    ('{"kind": "iid", "probs": [0.5, 0.5]', [], "not valid JSON"),
    ({"kind": "iid", "probs": [0.5, 0.5]}, ["--K", "0"], "K must be between"),
    ({"kind": "iid", "probs": [0.5, 0.5]}, ["--L", "99"], "L must be between"),
    ({"kind": "iid", "probs": [0.5, 0.5]}, ["--method", "nope"], "unknown method"),
    ({"kind": "iid", "probs": [0.5, 0.5]}, ["--temperature", "-1"], "temperature"),
])
def test_exact_errors_are_one_line(tmp_path, toy_files, draft, args, message):
    _, q = toy_files
    p = write(tmp_path, "bad.json", draft)
    base = {"--method": "sd", "--K": "1", "--L": "2"}
    for flag, value in zip(args[::2], args[1::2]):
        base[flag] = value
    out = run("exact", "--draft", p, "--target", q, *[x for kv in base.items() for x in kv])
    assert out.returncode != 0
    assert message in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_missing_file_and_too_large_lp(toy_files):
    _, q = toy_files
    out = run("exact", "--draft", "/no/such.json", "--target", q, "--method", "sd", "--K", "1", "--L", "1")
    assert out.returncode != 0 and "cannot read" in out.stderr and "Traceback" not in out.stderr
    out = run("bound", "--preset", "three-token-toy", "--K", "8", "--L", "8", "--kind", "lp")
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "has 9,841 nodes (limit" in out.stderr


def test_exact_and_bound_do_not_import_torch():
    code = ("import sys; from core.cli import main; "
            "main(['exact','--preset','binary-toy','--method','bv','--K','1','--L','2','--json']); "
            "main(['bound','--preset','binary-toy','--kind','lp','--K','1','--L','2','--json']); "
            "print('torch' in sys.modules, 'streamlit' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.stdout.strip().splitlines()[-1] == "False False", out.stderr


def test_montecarlo_json_replays():
    args = ["montecarlo", "--preset", "binary-toy", "--method", "bv", "--K", "1", "--L", "2",
            "--n", "2000", "--seed", "3", "--json"]
    a, b = json.loads(run(*args).stdout), json.loads(run(*args).stdout)
    assert a == b
    lo, hi = a["expected_accepted_ci"]
    assert lo <= 11 / 9 <= hi


def test_report_errors_prints_one_line(capsys):
    """Both command lines report failures through ``report_errors``: one line, never a traceback."""
    from core.cli.args import CLIError, report_errors

    def fail(exc):
        def run():
            raise exc
        return run

    cases = [(CLIError("bad K"), 2, "error: bad K"),
             (MemoryError(), 2, "error: out of memory; lower K"),
             (KeyboardInterrupt(), 130, "error: interrupted"),
             (RuntimeError("boom\nsecond line"), 1, "error: RuntimeError: boom")]
    for exc, status, line in cases:
        assert report_errors(fail(exc), "lower K") == status
        err = capsys.readouterr().err
        assert err == line + "\n"
    assert report_errors(lambda: 0, "lower K") == 0


@pytest.mark.parametrize("T", ["1e-310", "5e-324"])
def test_subnormal_temperature_is_the_limit_law_not_nan(toy_files, T):
    """p = [2/3, 1/3], q = [1/3, 2/3]: as T → 0⁺ p drafts token 0 and q wants token 1, so τ = 0."""
    p, q = toy_files
    out = run("exact", "--draft", p, "--target", q, "--method", "all", "--K", "1", "--L", "2",
              "--temperature", T, "--json")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    for row in json.loads(out.stdout)["results"]:
        assert row["expected_accepted"] == 0.0 and row["accepted_pmf"] == [1.0, 0.0, 0.0], row
        assert row["fidelity_tv"] < 1e-12, row
    for kind in ("cic", "lp"):
        out = run("bound", "--draft", p, "--target", q, "--K", "1", "--L", "2", "--kind", kind,
                  "--temperature", T, "--json")
        assert out.returncode == 0 and out.stderr == "", out.stderr
        assert json.loads(out.stdout)["value"] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("json_mode", [True, False])
def test_a_non_finite_result_is_an_error_never_a_value(monkeypatch, capsys, json_mode):
    """The last guard of the output path: a NaN from any computation becomes one line, status 2."""
    from core import bounds
    from core.cli.lab import main

    monkeypatch.setattr(bounds, "claimed_cic", lambda *args: float("nan"))
    argv = ["bound", "--preset", "binary-toy", "--K", "1", "--L", "2", "--kind", "cic"]
    assert main(argv + ["--json"] * json_mode) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "error: the result value is not a finite number; the inputs are too extreme for float64\n"


def test_non_finite_entries_are_located():
    from core.cli.lab import _non_finite

    assert _non_finite({"results": [{"a": 1.0, "pmf": [0.5, 0.5]}, {"a": 2.0, "pmf": [1.0, float("inf")]}]}) \
        == "results[1].pmf[1]"
    assert _non_finite({"method": "sd", "K": 2, "pmf": [0.0, 1.0]}) is None


@pytest.mark.parametrize("model, message", [
    ('"SELF"', "must hold a JSON object with a \"kind\", got a JSON string"),
    ("[0.5, 0.5]", "got a JSON array"),
    ({"kind": "iid", "probs": [1e308, 1e308]}, "probs sums to inf, not 1"),
    ({"kind": "markov", "initial": [0.5, 0.5], "transition": [[[0.5, 0.5], [0.5, 0.5]]] * 2},
     "transition must be a 2×2 matrix (2 rows of 2 numbers, as initial has 2 entries), got shape (2, 2, 2)"),
    ({"kind": "iid", "probs": [True, False]}, "probs entry [0] is a boolean (true); probabilities must be numbers"),
    ({"kind": "markov", "initial": [0.5, 0.5], "transition": [[0.5, 0.5], [False, 1]]},
     "transition entry [1, 0] is a boolean (false)"),
])
def test_bad_model_files_are_one_line_errors(tmp_path, toy_files, model, message):
    _, q = toy_files
    path = tmp_path / "draft.json"
    path.write_text(json.dumps(str(path)) if model == '"SELF"' else  # a file that names itself
                    model if isinstance(model, str) else json.dumps(model))
    out = run("exact", "--draft", str(path), "--target", q, "--method", "sd", "--K", "1", "--L", "2")
    assert_one_line_error(out, message)
    assert out.stderr.startswith("error: draft: ")


def test_subnormal_probabilities_are_silent_and_exact(tmp_path, toy_files):
    """p = [5e-324, 1] is a valid draft; q/p overflows to inf where min(1, q/p) = 1 is meant."""
    _, q = toy_files
    p = write(tmp_path, "tiny.json", {"kind": "iid", "probs": [5e-324, 1.0]})
    zero = write(tmp_path, "zero.json", {"kind": "iid", "probs": [0.0, 1.0]})
    common = ["--target", q, "--method", "all", "--K", "2", "--L", "2", "--json"]
    out = run("exact", "--draft", p, *common)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    reference = json.loads(run("exact", "--draft", zero, *common).stdout)["results"]
    for row, ref in zip(json.loads(out.stdout)["results"], reference):
        assert row["expected_accepted"] == pytest.approx(ref["expected_accepted"], abs=1e-15), row["method"]
    for kind in ("cic", "lp"):
        out = run("bound", "--draft", p, "--target", p, "--K", "2", "--L", "2", "--kind", kind)
        assert out.returncode == 0 and out.stderr == "", out.stderr


def test_degenerate_monte_carlo_interval_contains_the_exact_value(tmp_path):
    """Every one of n = 1000 runs has τ = L = 2; the exact E[τ] = 1.9999934 is inside the interval."""
    p = write(tmp_path, "p.json", {"kind": "iid", "probs": [0.5, 0.5]})
    q = write(tmp_path, "q.json", {"kind": "iid", "probs": [0.5 + 2.2e-6, 0.5 - 2.2e-6]})
    common = ["--draft", p, "--target", q, "--method", "sd", "--K", "1", "--L", "2", "--json"]
    exact = json.loads(run("exact", *common).stdout)["expected_accepted"]
    out = run("montecarlo", *common, "--n", "1000", "--seed", "0")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    data = json.loads(out.stdout)
    lo, hi = data["expected_accepted_ci"]
    assert data["accepted_pmf"] == [0.0, 0.0, 1.0]
    assert lo < exact < 2.0 <= hi and hi - lo > 0.005


@pytest.mark.parametrize("args,message", [
    (["--pair", "nope", "--method", "sd"], "unknown bundled pair 'nope'"),
    (["--pair", "toy", "--method", "lp_optimal"], "needs toy models"),
    (["--pair", "toy", "--method", "nope"], "unknown method 'nope'"),
    (["--target", "/nonexistent/target", "--draft", "/nonexistent/draft", "--method", "sd"],
     "the target path /nonexistent/target is not a model directory"),
    (["--pair", "toy", "--target", "x", "--method", "sd"], "not both"),
])
def test_decode_refuses_bad_arguments_before_importing_torch(args, message):
    """A typo is refused at once (issue 15, item 16: it took 24-31 s, torch being imported first)."""
    code = ("import sys; from core.cli import main; "
            f"rc = main(['decode', *{args!r}]); print(rc, 'torch' in sys.modules, 'transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["2", "False", "False"], out.stdout + out.stderr
    assert out.stderr.count("\n") == 1 and message in out.stderr, out.stderr


def test_method_all_skips_a_rule_too_large_and_names_it_on_one_line():
    """Issue 24, item 5: at K = 8, L = 4 the tree LP of lp_optimal is past its limit; ``--method all``
    still computes the other rules (SD's E[τ] is Σ_{i≤4} (2/3)^i = 130/81 on the binary toy, with
    α = Σ min(p, q) = 2/3 per token) and says on one stderr line that lp_optimal was skipped and
    why; the JSON stays one valid object that lists it.  Asked for alone, the rule is an error."""
    from core.rules.registry import REGISTRY, method_names

    common = ("exact", "--preset", "binary-toy", "--method", "all", "--K", "8", "--L", "4")
    out = run(*common)
    assert out.returncode == 0, out.stderr
    skipped, = out.stderr.splitlines()
    assert skipped.startswith("note: lp_optimal skipped: the tree LP") and "too large" in skipped
    assert skipped.endswith("but the LP optimum's value is still computed (the lp bound)")
    # so "% of LP optimum" is filled: the LP in node form, 31 nodes, whatever K is
    lp = bounds.lp_optimum(PRESETS["binary-toy"].draft, PRESETS["binary-toy"].target, 8, 4).value
    assert f"{100 * (130 / 81) / lp:.1f}%" in out.stdout
    listed = [line.split()[0] for line in out.stdout.splitlines()[3:]]
    assert listed == [m for m in method_names() if m != "lp_optimal" and not REGISTRY[m].released_port]
    sd = next(line for line in out.stdout.splitlines() if line.startswith("sd "))
    assert sd.split()[1:4] == ["130/81", "=", "1.60494"]

    data = json.loads(run(*common, "--json").stdout)
    assert [r["method"] for r in data["results"]] == listed
    assert [s["method"] for s in data["skipped"]] == ["lp_optimal"] and "too large" in data["skipped"][0]["reason"]
    assert next(r for r in data["results"] if r["method"] == "sd")["expected_accepted"] == pytest.approx(130 / 81, abs=1e-12)

    assert_one_line_error(run("exact", "--preset", "binary-toy", "--method", "lp_optimal", "--K", "8", "--L", "4"),
                          "tree LP for V=2, K=8, L=4 is too large")


def test_method_all_skips_every_rule_that_refuses_by_size(tmp_path):
    """Issue 24, item 5: V = 8, K = 16, L = 1: TD-optimal's per-node LP, the tree LP and the
    enumerations of SpecTr, SpecInfer, Traversal and OTV are past their limits; each is skipped on
    its own stderr line with its reason, and the rules with a model-level programme are computed
    (SD's E[τ] = Σ min(p, q) = 1/8 + 7·0.1 = 0.825)."""
    p = write(tmp_path, "p.json", {"kind": "iid", "probs": [1 / 8] * 8})
    q = write(tmp_path, "q.json", {"kind": "iid", "probs": [0.3] + [0.1] * 7})
    out = run("exact", "--draft", p, "--target", q, "--method", "all", "--K", "16", "--L", "1", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    skipped = {s["method"]: s["reason"] for s in data["skipped"]}
    assert {"td_optimal", "lp_optimal", "spectr"} <= set(skipped)
    assert "td_optimal solves a linear program over every multiset of 16 tokens" in skipped["td_optimal"]
    assert "would take about" in skipped["spectr"]
    notes = out.stderr.splitlines()
    assert notes == [f"note: {m} skipped: {r}" for m, r in skipped.items()]
    # the LP optimum itself is computed in node form (9 nodes, whatever K is): α* at L = 1
    lp = bounds.single_token_optimum([1 / 8] * 8, [0.3] + [0.1] * 7, 16)
    assert all(r["percent_of_lp"] == pytest.approx(100 * r["expected_accepted"] / lp) for r in data["results"])
    computed = {r["method"]: r for r in data["results"]}
    assert set(computed).isdisjoint(skipped) and "sd" in computed
    assert computed["sd"]["expected_accepted"] == pytest.approx(0.825, abs=1e-12)
