"""Sweeps on a real Dask cluster of separate processes (``core.sweep.processes.ProcessCluster``):
``dask scheduler`` and ``dask worker`` started from an empty folder with nothing of this project on
their path, as a user starts them by hand (docs/sweeps.md).  The code travels with the job
(``core.sweep.ship``): the rows equal the serial ones, a killed worker loses and duplicates nothing,
resuming adds nothing, workers never run stale code, a differing environment is refused before
anything is computed, and the Leaderboard page runs on the cluster's address."""
from __future__ import annotations

import importlib.util
import io
import os
import pickle
import signal
import zipfile
from functools import partial

import pandas as pd
import pytest

pytest.importorskip("distributed")

from dask.utils import apply  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402

from core.cli import main as cli_main  # noqa: E402
from core.sweep import engine, ship  # noqa: E402
from core.sweep.config import SweepConfig, SweepError, default_methods  # noqa: E402
from core.sweep.engine import SCHEDULER_ENV, check_cluster, run_sweep  # noqa: E402
from core.sweep.processes import ProcessCluster  # noqa: E402
from core.sweep.store import read_results  # noqa: E402
from core.sweep.work import KEY_COLUMNS, run_batch  # noqa: E402

CONFIG = SweepConfig(families=("iid", "near"), Vs=(2,), Ks=(2,), Ls=(1, 2), n=4,
                     methods=default_methods(), bounds=("lp", "cic"))
ARGV = ["sweep", "--family", "iid", "near", "--V", "2", "--K", "2", "--L", "1-2", "--n", "4",
        "--bounds", "lp,cic", "--json"]
WORKERS = 2
#: Generous: a loaded 2-core CI machine starts a worker (imports dask, numpy) in seconds, not tens.
READY_S = 120


def rows_of(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows).sort_values([*KEY_COLUMNS, "method"], kind="stable").reset_index(drop=True)


def serial_rows(config: SweepConfig) -> pd.DataFrame:
    """The reference: every row of ``config`` computed in this process, no Dask, no store."""
    rows: list[dict] = []
    run_sweep(config, None, sink=rows.extend)
    return rows_of(rows)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A scheduler and two single-threaded workers started from an empty folder, with no
    ``PYTHONPATH``; every process they started is ended, by process group, when the module ends."""
    processes = ProcessCluster(WORKERS, folder=tmp_path_factory.mktemp("cluster"))
    try:
        processes.start()
        yield processes
    finally:
        processes.close()


@pytest.fixture(scope="module")
def client(cluster):
    with Client(cluster.address, timeout=READY_S) as c:
        c.wait_for_workers(WORKERS, timeout=READY_S)
        yield c


@pytest.fixture(scope="module")
def serial() -> pd.DataFrame:
    return serial_rows(CONFIG)


def test_the_cluster_has_nothing_of_the_project(cluster, client):
    """What the issue's user had: the requirements, not the repository, not even on the path."""
    assert set(client.run(importlib.util.find_spec, "core").values()) == {None}
    assert set(client.run(importlib.util.find_spec, "toy_models").values()) == {None}
    assert client.run_on_scheduler(importlib.util.find_spec, "core") is None
    assert set(client.run(os.environ.get, "PYTHONPATH").values()) == {None}
    assert set(client.run(os.getcwd).values()) == {str(cluster.folder)}


def test_the_command_line_on_the_cluster_writes_the_serial_rows(cluster, client, serial, tmp_path, capsys):
    out = tmp_path / "s.parquet"
    assert cli_main([*ARGV, "--out", str(out), "--scheduler", cluster.address]) == 0
    report = capsys.readouterr().out
    assert '"computed": 16' in report
    pd.testing.assert_frame_equal(read_results(out), serial, check_exact=True)
    # Only the client writes results; each worker holds the job's code archive in its own folder.
    assert not list(cluster.folder.rglob("*.parquet"))
    archives = {p.name for p in (cluster.folder / "workers").rglob(f"{ship.ARCHIVE_PREFIX}*.zip")}
    digest = ship.Shipped(ship.source_archive(), b"", {}).digest
    assert archives == {f"{ship.ARCHIVE_PREFIX}{digest}.zip"}


def test_a_draft_sweep_on_the_cluster_writes_the_serial_rows(cluster, client, tmp_path, capsys):
    """Laws and trees travel too: shapes, laws and the own-law LP computed in workers that have
    nothing of the project but what the job ships."""
    argv = ["sweep", "--family", "table", "--V", "3", "--tree", "2,1", "1,2", "--law", "wor", "topk", "--n", "2",
            "--json"]
    out = tmp_path / "d.parquet"
    assert cli_main([*argv, "--out", str(out), "--scheduler", cluster.address]) == 0
    assert '"computed": 4' in capsys.readouterr().out            # budgets 4 and 3, two instances each
    assert cli_main([*argv, "--out", str(tmp_path / "serial.parquet"), "--workers", "0"]) == 0
    capsys.readouterr()
    frame = read_results(out)
    assert set(frame.law) == {"wor", "topk"} and set(frame.branching) == {"2,1", "1,2"}
    pd.testing.assert_frame_equal(frame, read_results(tmp_path / "serial.parquet"), check_exact=True)


def test_the_environment_variable_names_the_scheduler(cluster, client, serial, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(SCHEDULER_ENV, cluster.address)
    out = tmp_path / "s.parquet"
    assert cli_main([*ARGV, "--out", str(out)]) == 0
    assert '"computed": 16' in capsys.readouterr().out
    pd.testing.assert_frame_equal(read_results(out), serial, check_exact=True)


def test_a_differing_environment_is_refused_before_anything_is_computed(cluster, client, tmp_path, capsys,
                                                                       monkeypatch):
    real = ship.versions()
    monkeypatch.setattr(ship, "versions", lambda packages=ship.SHARED_PACKAGES: {**real, "numpy": "1.0.0"})
    out = tmp_path / "s.parquet"
    assert cli_main([*ARGV, "--out", str(out), "--scheduler", cluster.address]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert f"numpy 1.0.0 here, {real['numpy']} on worker tcp://127.0.0.1:" in err
    assert not list(out.glob("part-*"))


def test_a_worker_that_joins_with_another_environment_refuses_its_batches():
    """A worker that joined after the check (or a restarted one) compares the client's versions,
    carried by the shipped code, with its own before it imports anything."""
    shipped = ship.Shipped(ship.source_archive(), ship.pack(len), {**ship.versions(), "scipy": "0.1"})
    with pytest.raises(RuntimeError, match=r"differs from the client's \(scipy 0.1 in the client, .* on this worker\)"):
        shipped(ship.pack(([],)))


def test_a_cluster_without_workers_is_refused_in_one_sentence(monkeypatch):
    monkeypatch.setattr(engine, "WORKER_TIMEOUT", 0.2)
    with LocalCluster(n_workers=0, processes=False, dashboard_address=None,
                      scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}) as empty, Client(empty) as c:
        with pytest.raises(SweepError, match=r"^no Dask worker joined the scheduler at .* within 0.2 s; "
                                             r"start one with `dask worker "):
            run_sweep(CONFIG, None, client=c)


def _edited_archive() -> bytes:
    """This project's archive with ``run_batch`` replaced, as another checkout would ship it."""
    source, edited = zipfile.ZipFile(io.BytesIO(ship.source_archive())), io.BytesIO()
    with zipfile.ZipFile(edited, "w") as out:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "core/sweep/work.py":
                data += b"\n\ndef run_batch(config, keys):\n    return ['edited checkout']\n"
            out.writestr(info, data)
    return edited.getvalue()


def test_workers_never_run_stale_code(client, serial):
    """A job shipped from another checkout runs that checkout's code; the next job from this one runs
    this one's again, on the same worker processes."""
    shipped = ship.Shipped(_edited_archive(), ship.pack(partial(run_batch, CONFIG)), ship.versions())
    code = client.submit(pickle.loads, shipped.to_bytes(), pure=False)
    batches = [client.submit(apply, code, (ship.pack(([],)),), pure=False) for _ in range(4 * WORKERS)]
    assert [ship.unpack(b) for b in client.gather(batches)] == [["edited checkout"]] * (4 * WORKERS)
    del code, batches
    rows: list[dict] = []
    run_sweep(CONFIG, None, client=client, batch_size=1, sink=rows.extend)
    pd.testing.assert_frame_equal(rows_of(rows), serial, check_exact=True)


def test_killing_a_worker_mid_sweep_loses_no_row_and_resuming_adds_nothing(cluster, client, serial, tmp_path,
                                                                           capsys, monkeypatch):
    """The command line, one instance per task; its progress bar kills a worker process (one this
    module started) as the first batch arrives.  The scheduler reruns that worker's tasks elsewhere,
    its nanny starts a new one; the rows are the serial rows, each once, and rerunning computes
    nothing."""
    from core.cli import sweep as cli_sweep

    pids = client.run(os.getpid)
    killed = []

    class KillingProgressBar(cli_sweep.ProgressBar):
        def __call__(self, done, total, elapsed):
            if not killed:
                killed.append(next(iter(pids.values())))
                os.kill(killed[0], signal.SIGKILL)
            super().__call__(done, total, elapsed)

    monkeypatch.setattr(cli_sweep, "ProgressBar", KillingProgressBar)
    out = tmp_path / "s.parquet"
    argv = [*ARGV, "--out", str(out), "--scheduler", cluster.address]
    assert cli_main([*argv, "--batch", "1"]) == 0
    assert killed and '"computed": 16' in capsys.readouterr().out
    frame = read_results(out)
    assert not frame.duplicated([*KEY_COLUMNS, "method"]).any()
    pd.testing.assert_frame_equal(frame, serial, check_exact=True)
    assert cli_main(argv) == 0
    assert '"skipped": 16, "computed": 0' in capsys.readouterr().out
    pd.testing.assert_frame_equal(read_results(out), serial, check_exact=True)
    client.wait_for_workers(WORKERS, timeout=READY_S)      # the nanny restarted the killed one
    assert killed[0] not in client.run(os.getpid).values()


# The Leaderboard page on the same cluster ---------------------------------------------------------

LEADERBOARD = {"lb_families": ["iid"], "lb_V": [2], "lb_K": [1, 2], "lb_L": [1], "lb_n": 2, "lb_seed": 7,
               "lb_methods": ["sd", "bv", "rbv", "spectr_gbv"]}
PAGE_CONFIG = SweepConfig(("iid",), (2,), (1, 2), (1,), 2, ("sd", "bv", "rbv", "spectr_gbv"), bounds=("lp",), seed=7)


def _run_page(state: dict):
    pytest.importorskip("streamlit")
    from tests.apptest import no_errors, open_page

    at = open_page("pages/leaderboard.py", state={**LEADERBOARD, **state})
    at.button(key="lb_go").click().run()
    no_errors(at)
    return at


@pytest.fixture(scope="module")
def page_serial() -> pd.DataFrame:
    return serial_rows(PAGE_CONFIG)


def test_the_leaderboard_runs_on_the_address_in_the_sidebar(cluster, client, page_serial):
    at = _run_page({"lb_scheduler": cluster.address})
    assert at.sidebar.text_input(key="lb_scheduler").value == cluster.address
    pd.testing.assert_frame_equal(at.session_state["lb_result"]["frame"], page_serial, check_exact=True)
    assert f"on {WORKERS} Dask workers of the scheduler at {cluster.address}" in at.success[0].value


def test_the_leaderboard_takes_the_address_from_the_environment(cluster, client, page_serial, monkeypatch):
    monkeypatch.setenv(SCHEDULER_ENV, cluster.address)
    at = _run_page({})
    assert at.sidebar.text_input(key="lb_scheduler").value == cluster.address
    pd.testing.assert_frame_equal(at.session_state["lb_result"]["frame"], page_serial, check_exact=True)
    assert f"of the scheduler at {cluster.address}" in at.success[0].value


def test_the_leaderboard_connects_to_no_address_a_visitor_types(monkeypatch):
    """A Dask client unpickles what the cluster returns: a hosted app connects only to this machine
    or to its operator's scheduler, and says so in one sentence."""
    monkeypatch.delenv(SCHEDULER_ENV, raising=False)
    pytest.importorskip("streamlit")
    from tests.apptest import open_page

    at = open_page("pages/leaderboard.py", state={**LEADERBOARD, "lb_scheduler": "tcp://203.0.113.9:8786"})
    at.button(key="lb_go").click().run()
    assert not at.exception and len(at.error) == 1
    assert at.error[0].value.startswith("This app runs sweeps only on a scheduler on this machine")
    assert "lb_result" not in at.session_state
