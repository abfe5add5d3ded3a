"""A Dask cluster of separate processes on this machine, started as a user would start one by hand:
``dask scheduler`` and ``dask worker`` from an empty folder, with nothing of this project on their
path (no ``PYTHONPATH``), so that they see only the installed requirements.

The tests use it to check that a sweep runs on such a cluster (``tests/test_cluster.py``), the
benchmarks to measure one (``benchmarks/sweep_scaling.py``, ``benchmarks/leaderboard.py``).  Every process it starts is a new
session (its own process group), ended by ``close`` by its id: the ``dask worker`` command's nannies
and worker processes go with it.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: Seconds to wait for the scheduler's file and for the workers to join.
START_TIMEOUT = 120


def dask_command() -> str:
    """The ``dask`` command of this environment (beside this interpreter, else on ``PATH``)."""
    beside = Path(sys.executable).with_name("dask")
    found = str(beside) if beside.exists() else shutil.which("dask")
    if found is None:
        raise FileNotFoundError("the `dask` command is not installed (pip install 'dask[distributed]')")
    return found


class ProcessCluster:
    """``dask scheduler`` on a free port of 127.0.0.1 and ``workers`` single-threaded workers (one
    ``dask worker`` command with its nannies), in ``folder`` (by default a new temporary folder,
    removed by ``close``).

    ``with ProcessCluster(2) as cluster:`` starts them and waits until the scheduler has written its
    file; ``cluster.address`` is its address; ``Client(cluster.address).wait_for_workers(n)`` waits
    for the workers.  ``close()`` ends every process it started.  ``pythonpath`` (a folder) puts a
    checkout on their path instead: the baseline a benchmark compares shipped code with."""

    def __init__(self, workers: int = 2, folder: str | os.PathLike | None = None, env: dict | None = None,
                 pythonpath: str | os.PathLike | None = None):
        self.workers = workers
        self._made_folder = folder is None      # a temporary folder of its own, removed by close()
        self.folder = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="dask-cluster-"))
        environ = {k: v for k, v in (env if env is not None else os.environ).items() if k != "PYTHONPATH"}
        if pythonpath is not None:
            environ["PYTHONPATH"] = str(pythonpath)
        # One thread for numpy's and scipy's BLAS in each worker: the workers are the parallelism.
        self.env = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", **environ}
        self.processes: list[subprocess.Popen] = []
        self.address: str | None = None

    def _start(self, *args: str, log: str) -> subprocess.Popen:
        with open(self.folder / log, "ab") as out:
            process = subprocess.Popen([dask_command(), *args], cwd=self.folder, env=self.env,
                                       stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       start_new_session=True)
        self.processes.append(process)
        return process

    def start(self) -> str:
        """Start the scheduler and the workers; the scheduler's address once it is listening."""
        self.folder.mkdir(parents=True, exist_ok=True)
        info = self.folder / "scheduler.json"
        scheduler = self._start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                "--scheduler-file", str(info), log="scheduler.log")
        deadline = time.monotonic() + START_TIMEOUT
        while self.address is None:
            if scheduler.poll() is not None:
                raise RuntimeError(f"dask scheduler exited with status {scheduler.returncode}: "
                                   f"{self.log('scheduler.log')[-2000:]}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"dask scheduler wrote no {info.name} within {START_TIMEOUT} s")
            try:
                self.address = json.loads(info.read_text())["address"]
            except (OSError, ValueError, KeyError):
                time.sleep(0.05)   # polling a file the scheduler writes once it listens
        if self.workers:
            self.add_workers(self.workers)
        return self.address

    def add_workers(self, n: int) -> subprocess.Popen:
        """Start ``n`` more single-threaded workers (one ``dask worker`` command with ``n`` nannies)."""
        return self._start("worker", self.address, "--nworkers", str(n), "--nthreads", "1", "--no-dashboard",
                           "--local-directory", str(self.folder / "workers"), log="workers.log")

    def log(self, name: str) -> str:
        path = self.folder / name
        return path.read_text(errors="replace") if path.exists() else ""

    def close(self) -> None:
        """End every process this cluster started (workers first), each by its process group; remove
        the folder if it made it."""
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in reversed(self.processes):
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            try:   # the nannies' worker processes, should the command have left any
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
        self.processes.clear()
        if self._made_folder:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> "ProcessCluster":
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()
