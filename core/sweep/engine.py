"""Running a sweep: batches of instances as Dask tasks, or the same batches in a plain serial loop.

By default a ``distributed.LocalCluster`` is started inside this process (one single-threaded worker
process per core; nothing to start by hand); a scheduler address (``tcp://HOST:8786``) runs the same
batches on an existing cluster, whose workers must be able to import this repository.  Each task is a
batch of instances of one grid cell (``batch_size`` of them, by default enough for about
``TASKS_PER_WORKER`` tasks per worker, so that the scheduler's few milliseconds per task are
negligible next to the work), submitted with ``retries`` so that a task whose worker died or raised
is run again.  Finished batches are written as they arrive (``core.sweep.store``).
"""
from __future__ import annotations

import logging
import math
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

from core.sweep.config import InstanceKey, SweepConfig, SweepError
from core.sweep.store import ResultsStore
from core.sweep.work import run_batch

TASKS_PER_WORKER = 8
MAX_BATCH = 50
RETRIES = 3
CONNECT_TIMEOUT = "3s"

#: ``progress(instances_done, instances_total, seconds_elapsed)``, called after each batch is stored.
Progress = Callable[[int, int, float], None]


@dataclass(frozen=True)
class SweepReport:
    instances: int      # instances of the configuration
    skipped: int        # already in the results folder before this run
    computed: int       # computed and written by this run
    rows: int           # rows written by this run
    tasks: int          # batches submitted
    seconds: float      # wall time of the computation (cluster start-up excluded)


def plan_batches(pending: list[InstanceKey], batch_size: int) -> list[list[InstanceKey]]:
    """Consecutive pending instances of one grid cell, ``batch_size`` at a time."""
    batches: list[list[InstanceKey]] = []
    for key in pending:
        last = batches[-1] if batches else None
        if last and len(last) < batch_size and last[-1][:4] == key[:4]:
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
    from distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise SweepError(f"cannot reach the Dask scheduler at {scheduler} "
                             f"({str(exc).splitlines()[0] or type(exc).__name__})") from None
        with client:
            yield client
        return
    with LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        yield client


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
    pending, skipped = _pending(config, store)
    workers = len(client.scheduler_info()["workers"]) if client is not None else 1
    batches = plan_batches(pending, batch_size or auto_batch_size(len(pending), workers))
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

    if client is None:
        for batch in batches:
            finished(batch, run_batch(config, batch))
    else:
        from distributed import as_completed

        futures = {client.submit(run_batch, config, batch, retries=RETRIES, pure=False): batch
                   for batch in batches}
        try:
            for future in as_completed(futures):
                finished(futures[future], future.result())
        finally:
            client.cancel(list(futures))
    return SweepReport(len(config.instances()), skipped, done, rows, len(batches), time.perf_counter() - start)
