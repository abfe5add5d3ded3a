"""Running a sweep: batches of instances as Dask tasks, or the same batches in a plain serial loop.

By default a ``distributed.LocalCluster`` is started inside this process (one single-threaded worker
process per core; nothing to start by hand); a scheduler address (``tcp://HOST:8786``) runs the same
batches on an existing cluster, which needs the requirements installed but not this repository: the
code travels with the job (``core.sweep.ship``), and a cluster whose environment differs is refused
before anything is computed (``check_cluster``).  Each task is a batch of instances of one grid cell
(``batch_size`` of them, by default enough for about ``TASKS_PER_WORKER`` tasks per worker, so that
the scheduler's few milliseconds per task are negligible next to the work), submitted with
``retries`` so that a task whose worker died or raised is run again.  Finished batches are written
as they arrive, by this process only (``core.sweep.store``).  ``map_batches`` runs any pure function
over a list the same way (the app's counterexample search uses it).
"""
from __future__ import annotations

import atexit
import logging
import math
import os
import pickle
import time
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Callable, Iterator, Sequence, TypeVar

from core.sweep import ship
from core.sweep.config import InstanceKey, SweepConfig, SweepError
from core.sweep.store import ResultsStore
from core.sweep.work import run_batch

TASKS_PER_WORKER = 8
MAX_BATCH = 50
RETRIES = 3
CONNECT_TIMEOUT = "3s"
#: Names a scheduler when none is given (Dask's own convention: ``Client()`` reads it too).
SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"
#: How long a sweep waits for the first worker of a cluster that has none (seconds).
WORKER_TIMEOUT = 10

#: Dask's housekeeping, relaxed for the embedded cluster, which lives as long as the app's server and
#: is idle most of that time.  With Dask's defaults every server (the scheduler, here in this
#: process, and each worker and nanny) checks its event loop every 20 ms and its system load every
#: 0.5 s, each worker samples its own stack every 10 ms and its memory every 100 ms (and, where
#: gilknocker is installed, the GIL every 1 ms): an idle two-worker cluster took about a quarter of
#: one core, and in the app's process the scheduler's share held the interpreter's lock beside the
#: live decoder (docs/sweeps.md).  With these, about 2%.  What is lost is the profiles and load
#: history a dashboard would show, and none is served.
QUIET_CLUSTER = {
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.admin.system-monitor.gil.enabled": False,
    "distributed.worker.profile.enabled": False,
    "distributed.worker.memory.monitor-interval": "1s",
}

#: ``progress(instances_done, instances_total, seconds_elapsed)``, called after each batch is stored.
Progress = Callable[[int, int, float], None]
T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class SweepReport:
    instances: int      # instances of the configuration
    skipped: int        # already in the results folder before this run
    computed: int       # computed and written by this run
    rows: int           # rows written by this run
    tasks: int          # batches submitted
    seconds: float      # wall time of the computation (cluster start-up excluded)


def plan_batches(pending: list[InstanceKey], batch_size: int) -> list[list[InstanceKey]]:
    """Consecutive pending instances of one grid cell (every field of the key but the index, the
    last: ``InstanceKey`` or ``DraftKey``), ``batch_size`` at a time."""
    batches: list[list[InstanceKey]] = []
    for key in pending:
        last = batches[-1] if batches else None
        if last and len(last) < batch_size and last[-1][:-1] == key[:-1]:
            last.append(key)
        else:
            batches.append([key])
    return batches


def auto_batch_size(pending: int, workers: int) -> int:
    """Instances per task: about ``TASKS_PER_WORKER`` tasks per worker, at most ``MAX_BATCH``."""
    return max(1, min(MAX_BATCH, math.ceil(pending / (TASKS_PER_WORKER * max(1, workers)))))


@contextmanager
def dask_client(scheduler: str | None = None, workers: int | None = None) -> Iterator:
    """A ``distributed.Client``: on the scheduler at ``scheduler``, or on a new in-process
    ``LocalCluster`` of ``workers`` single-threaded worker processes (default: one per core)."""
    import dask
    from distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise SweepError(f"cannot reach the Dask scheduler at {scheduler} "
                             f"({str(exc).splitlines()[0] or type(exc).__name__})") from None
        with closing(client):
            yield client
        return
    # closing(), not the Client's own context: that one sets a context variable which can only be
    # reset in the context that set it, and a long-lived client (open_client) closes at exit.
    with dask.config.set(QUIET_CLUSTER):    # read as each server starts; the nannies pass it to workers
        # No dashboard; the scheduler's small HTTP server (health, metrics) on a free port of this
        # host, not on 8787: a second cluster on the machine (the app's and a CLI sweep, say) then
        # takes no port another holds, and prints no warning about it.
        cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                               dashboard_address=None, scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                               silence_logs=logging.ERROR)
    with cluster, closing(Client(cluster)) as client:
        yield client


def is_loopback(address: str) -> bool:
    """Whether a scheduler address (``tcp://HOST:PORT``, ``HOST:PORT``) names this machine through its
    loopback interface (127.0.0.0/8, ::1, localhost); False for anything else or unparsable."""
    import ipaddress

    from distributed.comm import parse_address, parse_host_port

    try:
        host = parse_host_port(parse_address(address)[1])[0]
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def open_client(scheduler: str | None = None, workers: int | None = None):
    """``dask_client`` kept open until the process exits: for a long-lived server that starts its
    cluster once (the app caches it) instead of once per request."""
    stack = ExitStack()
    client = stack.enter_context(dask_client(scheduler, workers))
    atexit.register(stack.close)
    return client


def check_cluster(client) -> None:
    """Raise ``SweepError`` (one sentence) unless ``client``'s cluster can run this project's shipped
    code: at least one worker (waiting up to ``WORKER_TIMEOUT``), and the scheduler and every worker
    on the versions of ``ship.SHARED_PACKAGES`` this process has (``ship.SCHEDULER_PACKAGES`` for the
    scheduler, which runs none of it)."""
    address = client.scheduler.address
    try:
        client.wait_for_workers(1, timeout=WORKER_TIMEOUT)
    except TimeoutError:
        raise SweepError(f"no Dask worker joined the scheduler at {address} within {WORKER_TIMEOUT} s; "
                         f"start one with `dask worker {address}`") from None
    found = client.get_versions(packages=[p for p in ship.SHARED_PACKAGES if p != "python"])
    here = ship.versions()
    problems = [ship.mismatch({p: here[p] for p in ship.SCHEDULER_PACKAGES}, found["scheduler"]["packages"],
                              f"the scheduler {address}")]
    problems += [ship.mismatch(here, info["packages"], f"worker {worker}")
                 for worker, info in sorted(found["workers"].items()) if isinstance(info, dict)]
    problem = next((p for p in problems if p), None)
    if problem:
        raise SweepError(f"the Dask cluster's environment differs from this one ({problem}); "
                         f"install the same requirements on every machine (docs/sweeps.md)")


def _each_batch(client, task: Callable, batches: list, *args) -> Iterator[tuple[int, object]]:
    """(position, ``task(*args, batch)``) for each batch as it finishes: in order in this process
    when ``client`` is None, else as Dask tasks with ``RETRIES``, the code shipped with them
    (``core.sweep.ship``: one task holds this project's sources and ``task``, every batch task
    calls it in its worker; the scheduler sees bytes only).
    Closing the generator (the caller stopped, e.g. on an exception) cancels the tasks not yet
    finished."""
    if client is None:
        for i, batch in enumerate(batches):
            yield i, task(*args, batch)
        return
    from dask.utils import apply
    from distributed import as_completed

    code = client.submit(pickle.loads, ship.Shipped.of(partial(task, *args)).to_bytes(),
                         retries=RETRIES, pure=False)
    futures = {client.submit(apply, code, (ship.pack((batch,)),), retries=RETRIES, pure=False): i
               for i, batch in enumerate(batches)}
    try:
        # On this client's loop: as_completed defaults to the process's default client, which is
        # another one where a process holds two (the app's embedded cluster and a scheduler's).
        for future in as_completed(futures, loop=client.loop):
            yield futures[future], ship.unpack(future.result())
    finally:
        client.cancel([*futures, code])


def _workers(client) -> int:
    return len(client.scheduler_info()["workers"]) if client is not None else 1


def _apply(fn: Callable[[T], R], items: list[T]) -> list[R]:
    """One task of ``map_batches``."""
    return [fn(item) for item in items]


def map_batches(fn: Callable[[T], R], items: Sequence[T], *, client=None, batch_size: int | None = None,
                progress: Progress | None = None) -> list[R]:
    """``[fn(x) for x in items]``, computed as tasks of ``batch_size`` consecutive items on
    ``client``'s cluster (serially in this process when None), the same batching and retries as a
    sweep; ``progress(items_done, items_total, seconds)`` after each batch.  ``fn`` must be picklable
    (cloudpickle); this project's sources travel with it (``core.sweep.ship``)."""
    items = list(items)
    if client is not None:
        check_cluster(client)
    size = batch_size or auto_batch_size(len(items), _workers(client))
    batches = [items[i:i + size] for i in range(0, len(items), size)]
    results: list = [None] * len(batches)
    start, done = time.perf_counter(), 0
    with closing(_each_batch(client, _apply, batches, fn)) as finished:
        for i, result in finished:
            results[i], done = result, done + len(batches[i])
            if progress is not None:
                progress(done, len(items), time.perf_counter() - start)
    return [r for batch in results for r in batch]


def _pending(config: SweepConfig, store: ResultsStore | None) -> tuple[list[InstanceKey], int]:
    """The instances the store lacks, in grid order, and how many it already holds."""
    keys = config.instances()
    done = store.done() if store is not None else set()
    pending = [k for k in keys if k not in done]
    return pending, len(keys) - len(pending)


def run_sweep(config: SweepConfig, store: ResultsStore | None, *, client=None, batch_size: int | None = None,
              progress: Progress | None = None, sink: Callable[[list[dict]], None] | None = None) -> SweepReport:
    """Compute every instance the store lacks; ``client`` None runs the batches serially in this
    process (no Dask), otherwise as tasks on ``client``'s cluster.  Each finished batch goes to the
    store and to ``sink``; ``progress`` follows it.  An exception (from ``progress`` too) cancels the
    batches not yet finished; those already written stay, so rerunning resumes."""
    if client is not None:
        check_cluster(client)
    pending, skipped = _pending(config, store)
    batches = plan_batches(pending, batch_size or auto_batch_size(len(pending), _workers(client)))
    start = time.perf_counter()
    done = rows = 0

    def finished(batch: list[InstanceKey], result: list[dict]) -> None:
        nonlocal done, rows
        if store is not None:
            store.write(result)
        if sink is not None:
            sink(result)
        done, rows = done + len(batch), rows + len(result)
        if progress is not None:
            progress(done, len(pending), time.perf_counter() - start)

    with closing(_each_batch(client, run_batch, batches, config)) as results:
        for i, result in results:
            finished(batches[i], result)
    return SweepReport(len(config.instances()), skipped, done, rows, len(batches), time.perf_counter() - start)
