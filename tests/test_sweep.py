"""Sweeps on Dask (``core.sweep``, ``python -m core sweep``): the same rows as a serial loop, resumed
without loss or duplicates, surviving a killed worker; the leaderboard's figures; one-line errors."""
from __future__ import annotations

import os
import signal
from dataclasses import replace

import numpy as np
import scipy.stats
import pandas as pd
import pytest

from core.analysis.exact import LOSSLESS_TOL, exact_analysis
from core.cli import main as cli_main
from core.rules.registry import REGISTRY
from core.sweep.config import InstanceKey, SweepConfig, SweepError, default_methods
from core.sweep.engine import dask_client, is_loopback, run_sweep
from core.sweep.instances import instance_models, reopen
from core.sweep.store import ResultsStore, read_results
from core.sweep.summary import format_leaderboard, leaderboard
from core.sweep.work import KEY_COLUMNS

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
    expected = [n for n, c in REGISTRY.items() if not c.needs_models and (c.lossless_by_theory or n == "spectr_gbv")]
    assert list(default_methods()) == expected
    assert "lp_optimal" not in default_methods() and "spectr_gbv" in default_methods()


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
    assert [m["mean"] for m in board["methods"]] == sorted((m["mean"] for m in board["methods"]), reverse=True)
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
    (["--V", "6", "--K", "4", "--L", "3"], "cell V=6, K=4, L=3: the optimal LP for V=6, K=4, L=3 is too large"),
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
