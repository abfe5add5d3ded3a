"""Sweeps on Dask (``core.sweep``, ``python -m core sweep``): the same rows as a serial loop, resumed
without loss or duplicates, surviving a killed worker; the leaderboard's figures; one-line errors."""
from __future__ import annotations

import itertools
import json
import math
import os
import shutil
import signal
from dataclasses import replace
from pathlib import Path

import numpy as np
import scipy.stats
import pandas as pd
import pytest

from core.analysis.exact import LOSSLESS_TOL, exact_analysis
from core.cli import main as cli_main
from core.bounds import topk_tree_value
from core.data.shapes import Shape
from core.rules.registry import REGISTRY, resolve
from core.sweep.config import (DRAFT_LAWS, InstanceKey, SweepConfig, SweepError, default_methods, draft_methods,
                               skipped_drafts)
from core.sweep.engine import dask_client, is_loopback, run_sweep
from core.sweep.instances import instance_models, reopen
from core.sweep.store import ResultsStore, read_results
from core.sweep.summary import format_leaderboard, leaderboard, shape_label
from core.sweep.work import KEY_COLUMNS, group_columns

CONFIG = SweepConfig(families=("iid", "near"), Vs=(2,), Ks=(2,), Ls=(1, 2), n=4,
                     methods=default_methods(), bounds=("lp", "cic"))


def frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows).sort_values([*KEY_COLUMNS, "method"], kind="stable").reset_index(drop=True)


@pytest.fixture(scope="module")
def client():
    """The embedded cluster the app and the CLI start (``dask_client``), with two workers."""
    with dask_client(workers=2) as c:
        yield c


@pytest.fixture(scope="module")
def serial() -> pd.DataFrame:
    """The reference: every row of CONFIG computed in this process, no Dask, no store."""
    rows: list[dict] = []
    report = run_sweep(CONFIG, None, sink=rows.extend)
    assert report.computed == len(CONFIG.instances()) == 16
    return frame(rows)


def test_the_default_methods_come_from_the_registry_metadata():
    expected = [n for n, c in REGISTRY.items() if not c.needs_models and not c.released_port
                and (c.lossless_by_theory or n == "spectr_gbv")]
    assert list(default_methods()) == expected
    assert "lp_optimal" not in default_methods() and "spectr_gbv" in default_methods()
    assert "exact_match" not in default_methods()   # lossless, but a released port
    # a draft sweep's: the same, specinfer under its tree name, the LP-optimal rule and typical (lossy)
    assert draft_methods() == (*("rrs" if m == "specinfer" else m for m in default_methods()), "lp_optimal", "typical")
    assert "typical" not in default_methods()      # today's sweeps keep their rows


def test_an_instance_is_a_pure_function_of_its_key_and_a_row_reopens_to_its_models(serial):
    key = InstanceKey("near", 2, 2, 2, 3)
    (d1, t1, e1), (d2, t2, e2) = instance_models(key, 0), instance_models(key, 0)
    assert d1.to_json() == d2.to_json() and t1.to_json() == t2.to_json() and e1 == e2 == 0.3
    assert instance_models(key, 1)[1].to_json() != t1.to_json()
    row = serial[(serial.family == "near") & (serial.L == 2) & (serial["index"] == 3)
                 & (serial.method == "bv")].iloc[0]
    draft, target = reopen(row)
    assert exact_analysis("bv", draft, target, 2, 2).expected_accepted == row.expected_accepted
    # p = (1 − ε)·q + ε/V at every prefix
    np.testing.assert_allclose(draft.cond((1,)), 0.7 * target.cond((1,)) + 0.15, rtol=0, atol=1e-15)


def test_a_sweep_on_a_local_cluster_gives_exactly_the_serial_rows(client, serial, tmp_path):
    report = run_sweep(CONFIG, ResultsStore(tmp_path / "s.parquet", CONFIG), client=client, batch_size=3)
    assert (report.computed, report.skipped, report.tasks) == (16, 0, 8)   # 4 cells × ceil(4/3)
    pd.testing.assert_frame_equal(read_results(tmp_path / "s.parquet"), serial, check_exact=True)


def test_resuming_after_an_interruption_loses_and_duplicates_nothing(client, serial, tmp_path):
    out = tmp_path / "s.parquet"

    def stop_after_two_batches(done, total, elapsed):
        if done >= 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(CONFIG, ResultsStore(out, CONFIG), client=client, batch_size=1, progress=stop_after_two_batches)
    kept = len(read_results(out)) // len(CONFIG.methods)
    assert 2 <= kept < 16
    report = run_sweep(CONFIG, ResultsStore(out, CONFIG), client=client, batch_size=2)
    assert (report.skipped, report.computed) == (kept, 16 - kept)
    pd.testing.assert_frame_equal(read_results(out), serial, check_exact=True)
    assert run_sweep(CONFIG, ResultsStore(out, CONFIG), client=client).computed == 0


def test_summary_figures_equal_a_direct_numpy_computation(serial):
    board = leaderboard(serial)
    assert board["score"] == "ratio_lp" and board["instances"] == 16
    e = {m: serial[serial.method == m].expected_accepted.to_numpy() for m in CONFIG.methods}
    tv = {m: serial[serial.method == m].fidelity_tv.to_numpy() for m in CONFIG.methods}
    lp = serial[serial.method == CONFIG.methods[0]].lp.to_numpy()
    lossless = np.array([[t <= LOSSLESS_TOL for t in tv[m]] for m in CONFIG.methods])
    best = np.where(lossless, np.array([e[m] for m in CONFIG.methods]), -np.inf).max(axis=0)
    for entry in board["methods"]:
        m = entry["method"]
        r = e[m] / lp
        half = scipy.stats.t.ppf(0.975, r.size - 1) * r.std(ddof=1) / np.sqrt(r.size)   # Student t, n - 1 dof
        assert entry["n"] == 16
        assert entry["mean"] == pytest.approx(r.mean(), abs=1e-15)
        assert (entry["ci_low"], entry["ci_high"]) == pytest.approx((r.mean() - half, r.mean() + half), abs=1e-12)
        assert entry["min"] == r.min() and entry["max_tv"] == tv[m].max()
        assert entry["best_share"] == np.mean((tv[m] <= LOSSLESS_TOL) & (e[m] >= best - 1e-9))
        worst = serial[serial.method == m].iloc[int(np.argmin(r))]
        assert entry["worst"] == {c: worst[c] for c in KEY_COLUMNS}
        for K in CONFIG.Ks:
            assert board["by"]["K"][str(K)][m] == pytest.approx(r.mean(), abs=1e-15)
        for family in CONFIG.families:
            sel = (serial[serial.method == m].family == family).to_numpy()
            assert board["by"]["family"][family][m] == pytest.approx(r[sel].mean(), abs=1e-15)
    # a lossy rule is never crowned: the lossless rules first, each group by its mean
    order = [(not m["lossless"], -m["mean"]) for m in board["methods"]]
    assert order == sorted(order) and [m["lossless"] for m in board["methods"]] == \
        sorted((bool(tv[m["method"]].max() <= LOSSLESS_TOL) for m in board["methods"]), reverse=True)
    assert any(not m["lossless"] for m in board["methods"]) and any(m["lossless"] for m in board["methods"])
    gbv = next(m for m in board["methods"] if m["method"] == "spectr_gbv")
    assert gbv["max_tv"] > 1e-3 and gbv["best_share"] == 0.0           # a lossy rule is never best
    assert sum(m["best_share"] for m in board["methods"]) >= 1.0       # every instance has a best rule
    assert format_leaderboard(board).splitlines()[0] == "16 instances; score E/LP (higher is better)"


def test_a_results_folder_is_never_overwritten_silently(tmp_path, capsys):
    out = tmp_path / "s.parquet"
    small = replace(CONFIG, families=("iid",), Ls=(1,), n=1)
    run_sweep(small, ResultsStore(out, small))
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(SweepError, match=r"another configuration \(seed 0 there, 1 here\)"):
        ResultsStore(out, replace(small, seed=1))
    assert cli_main(["sweep", "--family", "iid", "--V", "2", "--K", "2", "--L", "1", "--n", "1",
                     "--bounds", "lp,cic", "--seed", "5", "--workers", "0", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "another configuration (seed 0 there, 5 here)" in err
    plain = tmp_path / "notes.parquet"
    plain.write_text("my notes")
    assert cli_main(["sweep", "--workers", "0", "--out", str(plain)]) == 2
    assert "exists and is not a sweep results folder" in capsys.readouterr().err
    assert plain.read_text() == "my notes"
    assert cli_main(["sweep", "--V", "2", "--workers", "0", "--out", str(out)]) == 2
    assert "(families iid there, iid,markov,table,near here)" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


@pytest.mark.parametrize("argv, message", [
    (["--family", "gaussian"], "unknown family 'gaussian'; choose from iid, markov, table, near"),
    (["--methods", "bv,nope"], "unknown method 'nope'"),
    (["--V", "2-x"], "V takes integers or ranges like 2-4, got '2-x'"),
    (["--V", "11", "--K", "4", "--L", "3"], "cell V=11, K=4, L=3: the optimal-verifier LP for V=11, L=3 has 1,464 nodes"),
    (["--scheduler", "tcp://127.0.0.1:9"], "cannot reach the Dask scheduler at tcp://127.0.0.1:9"),
    (["--scheduler", "tcp://127.0.0.1:9", "--workers", "2"], "--workers sizes the local cluster"),
])
def test_bad_input_is_one_line_and_exit_status_2(argv, message, tmp_path, capsys):
    out = tmp_path / "s.parquet"
    assert cli_main(["sweep", "--n", "1", "--out", str(out), *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and message in captured.err, captured.err


@pytest.mark.parametrize("address, local", [
    ("tcp://127.0.0.1:8786", True), ("127.0.0.1:8786", True), ("tcp://localhost:8786", True),
    ("tcp://[::1]:8786", True), ("tcp://127.3.2.1:9", True), ("tcp://10.0.0.7:8786", False),
    ("tcp://scheduler.example.org:8786", False), ("tls://203.0.113.9:8786", False), ("garbage", False),
])
def test_a_loopback_scheduler_address_is_told_from_any_other(address, local):
    """The Leaderboard page connects, unasked, only to this machine (pages/leaderboard.py)."""
    assert is_loopback(address) is local


def test_a_corrupt_results_file_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 this is not parquet")
    assert cli_main(["sweep", "--summarize", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a readable sweep results file" in err
    assert cli_main(["sweep", "--summarize", str(tmp_path / "missing")]) == 2
    assert "no results at" in capsys.readouterr().err


def test_the_command_line_runs_serially_resumes_and_summarizes(serial, tmp_path, capsys):
    out = str(tmp_path / "s.parquet")
    argv = ["sweep", "--family", "iid", "near", "--V", "2", "--K", "2", "--L", "1-2", "--n", "4",
            "--bounds", "lp,cic", "--workers", "0", "--out", out, "--json"]
    assert cli_main(argv) == 0
    assert '"computed": 16' in capsys.readouterr().out
    assert cli_main(argv) == 0
    assert '"skipped": 16, "computed": 0' in capsys.readouterr().out
    pd.testing.assert_frame_equal(read_results(out), serial, check_exact=True)
    assert cli_main(["sweep", "--summarize", out]) == 0
    text = capsys.readouterr().out
    assert text.startswith("16 instances; score E/LP") and "mean E/LP by family" in text


def test_the_embedded_cluster_keeps_its_housekeeping_quiet(client):
    """An idle embedded cluster took about a quarter of a core with Dask's defaults, part of it in
    the app's own process (``engine.QUIET_CLUSTER``).  Its scheduler checks its event loop once a
    second, not every 20 ms, and its workers sample no profiles (every 10 ms by default), the workers
    included, which take the settings from their nannies."""
    tick_ms = client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.periodic_callbacks["tick"].callback_time)
    assert tick_ms == 1000
    callbacks = client.run(lambda dask_worker: sorted(dask_worker.periodic_callbacks))
    assert len(callbacks) == 2
    assert all("heartbeat" in names and "profile" not in names for names in callbacks.values())
    ticks = client.run(lambda dask_worker: dask_worker.periodic_callbacks["tick"].callback_time)
    assert set(ticks.values()) == {1000}


def test_the_embedded_cluster_takes_no_fixed_port(client):
    """Its scheduler's HTTP server (no dashboard) listens on a free port of 127.0.0.1, not on Dask's
    8787, which a second cluster on the machine would find taken (tornado's ``_sockets``: the
    server has no public accessor for its address); the scheduler and the workers listen on the
    loopback interface only (docs/sweeps.md)."""
    assert client.scheduler.address.startswith("tcp://127.0.0.1:")
    assert all(w.startswith("tcp://127.0.0.1:") for w in client.scheduler_info()["workers"])
    addresses = client.run_on_scheduler(
        lambda dask_scheduler: [s.getsockname()[:2] for s in dask_scheduler.http_server._sockets.values()])
    assert addresses and all(host == "127.0.0.1" and port != 8787 for host, port in addresses)


# ------------------------------------------------------------------------------------------------
# Draft sweeps: laws, static trees and budgets (issue 26, item 4)
# ------------------------------------------------------------------------------------------------

BEFORE_LAWS = Path(__file__).parent / "data" / "sweep_before_laws"
#: The configuration of ``BEFORE_LAWS``, written by main at d88de51 (before draft sweeps) with
#: ``python -m core sweep --family iid --V 2 --K 2 --L 1-2 --n 1 --bounds lp,cic --workers 0``.
BEFORE = SweepConfig(("iid",), (2,), (2,), (1, 2), 1, default_methods(), ("lp", "cic"))
DRAFTS = SweepConfig(families=("iid", "table"), Vs=(2, 3), Ks=(), Ls=(2,), n=1, methods=draft_methods(),
                     bounds=("lp", "cic"), laws=DRAFT_LAWS, budgets=(4,))


@pytest.fixture(scope="module")
def draft_serial() -> pd.DataFrame:
    rows: list[dict] = []
    report = run_sweep(DRAFTS, None, sink=rows.extend)
    assert report.computed == len(DRAFTS.instances()) == 4          # 2 families × 2 V × budget 4 × n 1
    return read_frame(rows)


def read_frame(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    return frame.sort_values([*group_columns(frame), "method"], kind="stable").reset_index(drop=True)


def test_the_shapes_of_a_budget_are_every_branching_vector_of_that_budget():
    """Shape.of_budget against a brute force over every b with b_d ≤ n."""
    for L in range(1, 5):
        for n in range(1, 16):
            brute = [b for b in itertools.product(range(1, n + 1), repeat=L)
                     if sum(math.prod(b[:d + 1]) for d in range(L)) == n]
            assert [s.branching for s in Shape.of_budget(n, L)] == brute
    assert [s.label for s in DRAFTS.draft_shapes(2)] == ["b = (1, 3)", "b = (2, 1)", "chains 2×2"]
    assert [s.label for s in replace(DRAFTS, budgets=(3,), Ls=(1,)).draft_shapes(1)] == ["b = (3)"]  # no chains 3×1
    assert [s.label for s in replace(DRAFTS, budgets=(6,), Ls=(3,)).draft_shapes(3)] == \
        ["b = (1, 1, 4)", "b = (2, 1, 1)", "chains 2×3"]


def test_a_sweep_without_laws_writes_what_it_wrote_before_and_resumes_an_old_folder(tmp_path):
    """Rows, columns and the saved configuration are those main wrote before draft sweeps existed;
    an old folder resumes (nothing to compute) and is read as it was."""
    saved = json.loads((BEFORE_LAWS / "_sweep.json").read_text())
    assert saved == {"format": 1, "config": BEFORE.to_json()}
    assert (BEFORE_LAWS / "_sweep.json").read_text() == json.dumps(saved, indent=1)
    old = read_results(BEFORE_LAWS)
    rows: list[dict] = []
    run_sweep(BEFORE, None, sink=rows.extend)
    assert list(rows[0]) == list(old.columns)                       # no new column, same order
    # the LP optimum is now solved in node form: the same optimum, to the solvers' tolerance
    new, lp_columns = frame(rows), ["lp", "ratio_lp"]
    pd.testing.assert_frame_equal(new.drop(columns=lp_columns), old.drop(columns=lp_columns), check_exact=True)
    pd.testing.assert_frame_equal(new[lp_columns], old[lp_columns], check_exact=False, atol=1e-9, rtol=0)
    out = tmp_path / "old.parquet"
    shutil.copytree(BEFORE_LAWS, out)
    assert run_sweep(BEFORE, ResultsStore(out, BEFORE)).computed == 0
    assert_close(leaderboard(old), leaderboard(frame(rows)))


def assert_close(a, b, tol: float = 1e-9) -> None:
    """``a == b`` for nested dicts and lists, numbers within ``tol``."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b)
        for key in a:
            assert_close(a[key], b[key], tol)
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_close(x, y, tol)
    elif isinstance(a, float):
        assert b == pytest.approx(a, abs=tol)
    else:
        assert a == b


def test_a_draft_sweep_row_is_the_library_value_of_its_shape_law_and_rule(draft_serial):
    """Every row against exact_analysis and the LPs called directly: E[τ], TV, the own-law LP and the
    i.i.d.-chains LP of the same budget; lossless rules within their own law's optimum."""
    from core.bounds.lp import optimal_lp, optimal_tree_lp

    seen = set()
    for (family, V, index), rows in draft_serial.groupby(["family", "V", "index"]):
        draft, target = reopen(rows.iloc[0])
        lp_iid = optimal_lp(draft, target, 2, 2).value
        for (kind, branching, law), part in rows.groupby(["shape", "branching", "law"]):
            b = tuple(map(int, branching.split(",")))
            shape = Shape.chains_of(b[0], 2) if kind == "chains" else Shape.tree(b)
            lp = optimal_tree_lp(draft, target, shape, law).value
            assert part.lp.unique() == pytest.approx([lp], abs=1e-9)
            assert part.lp_iid.to_numpy() == pytest.approx(lp_iid, abs=1e-9)
            assert (part.budget == 4).all() and (part.K == b[0]).all()
            assert sorted(part.method) == sorted(m for m in DRAFTS.methods if resolve(m).supports(shape, law))
            for row in part.itertuples():
                if row.method == "lp_optimal":
                    assert row.expected_accepted == pytest.approx(lp, abs=1e-9)
                    continue
                direct = exact_analysis(row.method, draft, target, shape=shape, law=law)
                assert row.expected_accepted == direct.expected_accepted
                assert row.fidelity_tv == direct.fidelity_tv
                if resolve(row.method).lossless_by_theory:
                    assert row.fidelity_tv <= 1e-12 and row.expected_accepted <= lp + 1e-9
            if law == "topk" and kind == "tree":           # the closed form Σ q(s) = rrs = traversal = LP
                value = topk_tree_value(draft, target, shape)
                lossless = part[[resolve(m).lossless_by_theory for m in part.method]]
                assert sorted(lossless.method) == ["lp_optimal", "rrs", "traversal"]
                assert lossless.expected_accepted.to_numpy() == pytest.approx(value, abs=1e-12)
            seen.add((V, shape.label, law))
    # at V = 2 the distinct-token laws cannot draw b = (1, 3)'s three children: no rows, a note
    assert {(2, "b = (1, 3)", law) for law in ("wor", "topk", "greedy")}.isdisjoint(seen)
    assert len(seen) == 2 * 3 * 4 - 3
    assert skipped_drafts(DRAFTS) == [(2, Shape.tree((1, 3)), law) for law in ("wor", "topk", "greedy")]


def test_a_draft_sweep_on_a_local_cluster_gives_the_serial_rows_and_resumes(client, draft_serial, tmp_path):
    out = tmp_path / "d.parquet"
    report = run_sweep(DRAFTS, ResultsStore(out, DRAFTS), client=client, batch_size=1)
    assert (report.computed, report.tasks) == (4, 4)
    assert sorted(p.name for p in out.glob("part-*")) == [f"part-{f}-V{V}-L2-n4-000000-000000.parquet"
                                                          for f in ("iid", "table") for V in (2, 3)]
    pd.testing.assert_frame_equal(read_results(out), draft_serial, check_exact=True)
    assert run_sweep(DRAFTS, ResultsStore(out, DRAFTS), client=client).computed == 0
    with pytest.raises(SweepError, match=r"another configuration \(laws iid,wor,topk,greedy there, wor here\)"):
        ResultsStore(out, replace(DRAFTS, laws=("wor",)))


def test_the_law_board_equals_a_direct_computation(draft_serial):
    board = leaderboard(draft_serial)
    assert (board["instances"], board["analyses"]) == (4, 4 * 12 - 2 * 3)
    laws = board["laws"]
    f = draft_serial
    analyses = f.drop_duplicates(["family", "V", "index", "shape", "branching", "law"])
    for entry in laws["own_over_iid"]:
        mine = analyses[analyses.law == entry["law"]]
        ratio = (mine.lp / mine.lp_iid).to_numpy()
        assert entry["per_shape"]["n"] == ratio.size
        assert (entry["per_shape"]["mean"], entry["per_shape"]["median"], entry["per_shape"]["min"]) == \
            pytest.approx((ratio.mean(), np.median(ratio), ratio.min()), abs=1e-15)
        best = np.array([g.lp.max() / g.lp_iid.iloc[0] for _, g in mine.groupby(["family", "V", "index"])])
        assert entry["best_shape"]["n"] == 4
        assert (entry["best_shape"]["mean"], entry["best_shape"]["min"]) == \
            pytest.approx((best.mean(), best.min()), abs=1e-15)
        for cell in entry["by_cell"]:                   # the same per V (one L and one budget here)
            mine_V = mine[mine.V == cell["V"]]
            gains = [g.lp.max() / g.lp_iid.iloc[0] for _, g in mine_V.groupby(["family", "index"])]
            assert (cell["L"], cell["budget"], cell["n"]) == (2, 4, 2)
            assert cell["mean"] == pytest.approx(np.mean(gains), abs=1e-15)
    iid = next(e for e in laws["own_over_iid"] if e["law"] == "iid")
    assert iid["best_shape"]["max"] == pytest.approx(1.0, abs=1e-9)     # i.i.d. chains are among the shapes
    for entry in laws["shares"]:
        rows = f[(f.law == entry["law"]) & (f.method == entry["method"])]
        ratio = (rows.expected_accepted / rows.lp).to_numpy()
        assert entry["n"] == ratio.size and entry["mean"] == pytest.approx(ratio.mean(), abs=1e-15)
        assert entry["min"] == pytest.approx(ratio.min(), abs=1e-15)
        assert entry["max_tv"] == rows.fidelity_tv.max() and entry["mean_tv"] == rows.fidelity_tv.mean()
        for kind, part in entry["by_shape"].items():
            sel = rows[rows["shape"] == kind]
            assert part["n"] == len(sel) and part["mean"] == pytest.approx((sel.expected_accepted / sel.lp).mean(), abs=1e-15)
        if entry["law"] == "topk" and entry["method"] in ("rrs", "traversal"):   # trees: the closed form, the LP
            assert entry["by_shape"]["tree"]["min"] == pytest.approx(1.0, abs=1e-12)
    gbv = next(e for e in laws["shares"] if e["method"] == "spectr_gbv")
    assert gbv["law"] == "iid" and gbv["lossless_share"] == 0.0
    for entry in laws["best_shapes"]:
        part = f[(f.V == entry["V"]) & (f.budget == entry["budget"])]
        if entry["law"] != "any":
            part = part[part.law == entry["law"]]
        for what, b in entry["by"].items():
            rows = part.drop_duplicates(["family", "index", "shape", "branching", "law"]) if what == "lp" \
                else part[part.method == what]
            value = rows.lp if what == "lp" else rows.expected_accepted
            label = [shape_label(s, br) + ("" if entry["law"] != "any" else f" {law}")
                     for s, br, law in zip(rows["shape"], rows["branching"], rows["law"])]
            means = value.groupby(label).mean()
            assert b["mean"] == pytest.approx(means.max(), abs=1e-15)
            assert set(b["tied"]) == set(means.index[means >= means.max() - 1e-9])
            assert b["best"] in b["tied"]
        assert set(entry["by"]) == {"lp", "rrs", "traversal", "typical"}
    # chains 2×2 and b = (2, 1) draft alike but for topk: their means tie for iid, wor and greedy
    tie = next(e for e in laws["best_shapes"] if (e["V"], e["law"]) == (2, "iid"))
    assert set(tie["by"]["lp"]["tied"]) == {"b = (2, 1)", "chains 2×2"}
    text = format_leaderboard(board)
    assert text.startswith("4 instances (pairs of models), 42 analyses")
    assert "own LP / iid LP, best shape: mean" in text and "mean E/LP by law" in text


def test_draft_rows_at_several_temperatures_stay_apart(tmp_path):
    """Two sweeps of one grid at T = 1 and T = 2 under one folder are summarised per temperature."""
    small = replace(DRAFTS, families=("iid",), Vs=(3,), laws=("topk",), methods=("rrs", "traversal"))
    for T in (1.0, 2.0):
        config = replace(small, temperature=T)
        run_sweep(config, ResultsStore(tmp_path / f"T{T:g}", config))
    both = read_results(tmp_path)
    board = leaderboard(both)
    assert board["instances"] == 2 and set(board["by"]["temperature"]) == {"1.0", "2.0"}
    shares = {(e["temperature"], e["method"]): e for e in board["laws"]["shares"]}
    assert set(shares) == {(T, m) for T in (1.0, 2.0) for m in ("rrs", "traversal")}
    assert all(e["max_tv"] <= 1e-12 for e in shares.values())         # top-k drafting, rrs: lossless at any T
    assert format_leaderboard(board).count("\nT ") >= 3


@pytest.mark.parametrize("argv, message", [
    (["--tree", "2,2", "--K", "2"], "--tree gives the shapes and their depth"),
    (["--budget", "4", "--K", "2"], "--budget takes every shape of each budget"),
    (["--law", "beam"], "unknown draft law 'beam'; choose from iid, wor, topk, greedy"),
    (["--tree", "2,0"], "b_2 must be an integer ≥ 1, got 0"),
    (["--budget", "2", "--L", "3"], "no shape of budget 2 has depth 3"),
    (["--tree", "2,1", "--law", "wor", "--temperature", "0"], "at T = 0 the draft is one-hot"),
])
def test_bad_draft_sweeps_are_one_line_and_exit_status_2(argv, message, tmp_path, capsys):
    assert cli_main(["sweep", "--n", "1", "--V", "2", "--workers", "0", "--out", str(tmp_path / "s"), *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and message in captured.err, captured.err
    assert not (tmp_path / "s").exists()


def test_the_command_line_runs_a_draft_sweep_notes_what_it_skips_and_summarizes(draft_serial, tmp_path, capsys):
    out = str(tmp_path / "d.parquet")
    argv = ["sweep", "--family", "iid", "table", "--V", "2", "3", "--budget", "4", "--L", "2", "--law", "all",
            "--n", "1", "--bounds", "lp,cic", "--workers", "0", "--out", out, "--json"]
    assert cli_main(argv) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["computed"] == 4 and report["not_drafted"] == [
        {"V": 2, "shape": "b = (1, 3)", "law": law} for law in ("wor", "topk", "greedy")]
    notes = [line for line in captured.err.splitlines() if line.startswith("note: ")]
    assert notes == [f"note: {law} skipped where it would draw more distinct tokens at a node than V: "
                     f"b = (1, 3) at V=2" for law in ("wor", "topk", "greedy")]
    pd.testing.assert_frame_equal(read_results(out), draft_serial, check_exact=True)
    assert cli_main(["sweep", "--summarize", out, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(leaderboard(draft_serial)))
    # a draft sweep's defaults: the draft methods (rrs by its tree name) and the lp bound only
    assert cli_main(["sweep", "--family", "iid", "--V", "2", "--tree", "1,1", "--n", "1", "--workers", "0",
                     "--out", str(tmp_path / "t.parquet"), "--json"]) == 0
    capsys.readouterr()
    saved = json.loads((tmp_path / "t.parquet" / "_sweep.json").read_text())["config"]
    assert saved["methods"] == list(draft_methods()) and saved["bounds"] == ["lp"]
    assert saved["trees"] == [[1, 1]] and saved["Ls"] == [2] and saved["Ks"] == [] and "laws" not in saved


def test_a_folder_holding_sweeps_of_both_kinds_reads_every_column(draft_serial, tmp_path):
    run_sweep(BEFORE, ResultsStore(tmp_path / "a-chains", BEFORE))
    run_sweep(DRAFTS, ResultsStore(tmp_path / "b-drafts", DRAFTS))
    both = read_results(tmp_path)
    assert len(both) == 18 + len(draft_serial) and both.law.notna().sum() == len(draft_serial)


def test_killing_a_worker_mid_sweep_loses_no_row(client, serial, tmp_path):
    """Runs last: the killed worker's nanny starts a new one, the scheduler reruns its tasks."""
    pids = client.run(os.getpid)
    killed = []

    def kill_one_worker(done, total, elapsed):
        if not killed:
            pid = next(iter(pids.values()))
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    out = tmp_path / "s.parquet"
    report = run_sweep(CONFIG, ResultsStore(out, CONFIG), client=client, batch_size=1, progress=kill_one_worker)
    assert killed and report.computed == 16
    pd.testing.assert_frame_equal(read_results(out), serial, check_exact=True)
    assert killed[0] not in client.run(os.getpid).values()


def test_a_single_chain_drafted_by_wor_or_greedy_repeats_no_chains_only_rule():
    """One draw by wor or greedy is one sample from p, so the chain b = (1, 1) is one i.i.d. draft
    under iid, wor and greedy: every rule is defined there, but the rules defined on K i.i.d. chains
    only run under iid (their rows under the other two would repeat these), while rrs, traversal
    and the LP run under each law, with equal values."""
    config = replace(DRAFTS, families=("markov",), Vs=(3,), Ls=(2,), budgets=(), trees=((1, 1),),
                     laws=("iid", "wor", "greedy"))
    rows: list[dict] = []
    run_sweep(config, None, sink=rows.extend)
    f = pd.DataFrame(rows)
    by_law = {law: set(part.method) for law, part in f.groupby("law")}
    assert by_law["iid"] == set(config.methods)
    assert by_law["wor"] == by_law["greedy"] == {"rrs", "traversal", "lp_optimal", "typical"}
    values = f.pivot(index="method", columns="law", values="expected_accepted").dropna()
    assert (values["wor"] == values["iid"]).all() and (values["greedy"] == values["iid"]).all()
