"""The command-line interface: its JSON and every error path (one line, non-zero exit)."""
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

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
    out = run("bound", "--preset", "several-drafts", "--K", "8", "--L", "6", "--kind", "lp")
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "too large" in out.stderr


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
