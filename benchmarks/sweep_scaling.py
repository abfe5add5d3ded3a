"""Scaling of a sweep on Dask: 1 worker against 2, and the overhead per task against a serial loop.

    python -m benchmarks.sweep_scaling [--n 25] [--json]

One run measures, side by side on the same sweep (every lossless rule that needs no model of its
own, and the LP; ``GRID`` × n instances, 300 by default): a plain serial loop over the instances in
this process (``instance_rows``, no Dask, no store), the same sweep on a ``LocalCluster`` of 1
worker and of 2 single-threaded worker processes (cluster start-up and the first imports excluded:
this process and every worker first analyse one tiny instance), then the serial loop again (the machine is shared and noisy; the
reference is the mean of the two serial passes).  Every run's rows are compared with the serial
rows, which must be identical.  Also: the LP's share of the per-instance cost, the scheduler's
round trip per task measured on no-op tasks, and ``overhead_probe``: one task-sized batch timed in a
worker and in this process alternately, which separates Dask's own cost from the machine's noise;
and ``speedup_probe``: a smaller sweep run alternately on a 1-worker and a 2-worker cluster;
and ``shipping_probe``: the cost of shipping the code with the job (``core.sweep.ship``) against
plain tasks on workers that import this checkout, side by side on clusters of separate processes.
Figures, not assertions.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import replace
from functools import partial
from pathlib import Path

from core.bounds import lp_optimum
from core.rules.registry import REGISTRY
from core.sweep.config import SweepConfig, check_config
from core.sweep import ship
from core.sweep.engine import check_cluster, dask_client, map_batches, run_sweep
from core.sweep.instances import instance_models
from core.sweep.processes import ProcessCluster
from core.sweep.work import instance_rows, run_batch

GRID = {"families": ("iid", "markov", "table"), "Vs": (2, 3), "Ks": (2, 4), "Ls": (2,)}
NOOP_TASKS = 500


def lossless_methods() -> tuple[str, ...]:
    return tuple(n for n, c in REGISTRY.items() if c.lossless_by_theory and not c.needs_models)


def serial_pass(config: SweepConfig) -> tuple[float, list[dict]]:
    start = time.perf_counter()
    rows = [row for key in config.instances() for row in instance_rows(config, key)]
    return time.perf_counter() - start, rows


def lp_seconds(config: SweepConfig) -> float:
    """Seconds spent in the LP alone over every instance (models rebuilt, not timed)."""
    total = 0.0
    for key in config.instances():
        draft, target, _ = instance_models(key, config.seed)
        start = time.perf_counter()
        lp_optimum(draft, target, key.K, key.L)
        total += time.perf_counter() - start
    return total


def _warm() -> None:
    """One tiny instance (V = 2, K = 2, L = 1) of every method: every import (scipy's takes about 2 s)
    happens before the clock starts, in this process and in each worker alike."""
    tiny = SweepConfig(("iid",), (2,), (2,), (1,), 1, lossless_methods(), ("lp",))
    instance_rows(tiny, tiny.instances()[0])


def _noop(i: int) -> int:
    return i


def _timed_batch(config: SweepConfig, keys: list) -> float:
    """Seconds ``run_batch`` takes, timed where it runs."""
    start = time.perf_counter()
    run_batch(config, keys)
    return time.perf_counter() - start


def overhead_probe(config: SweepConfig, batch: int, reps: int) -> dict:
    """The overhead of a task, separated from this machine's CPU-speed noise (single passes of the
    same work vary by tens of percent here).  One batch of ``batch`` instances runs ``reps`` times
    in a 1-worker cluster and in this process, alternately, so both see the same conditions:

    - *scheduling*: a task's round trip seen by the client minus the batch's time measured inside
      the task (submission, scheduling, transfer of the result);
    - *compute in the worker against in process*: the medians of the batch's own time in each place
      (would show a slower interpreter in the worker: threads, allocator, GIL contention)."""

    keys = config.instances()[:batch]
    inside, trips, local = [], [], []
    with dask_client(None, 1) as client:
        client.run(_warm)
        for _ in range(reps):
            start = time.perf_counter()
            inside.append(client.submit(_timed_batch, config, keys, pure=False).result())
            trips.append(time.perf_counter() - start)
            local.append(_timed_batch(config, keys))
    compute = statistics.median(inside)
    scheduling = statistics.median(t - c for t, c in zip(trips, inside))
    return {"batch": batch, "reps": reps, "worker_compute_median_s": compute,
            "in_process_median_s": statistics.median(local), "scheduling_median_s": scheduling,
            "scheduling_share": scheduling / compute,
            "worker_over_process": compute / statistics.median(local),
            "paired_ratio_median": statistics.median(c / x for c, x in zip(inside, local))}


def dask_pass(config: SweepConfig, workers: int, batch: int | None) -> dict:
    with dask_client(None, workers) as client:
        client.run(_warm)
        start = time.perf_counter()
        client.gather(client.map(_noop, range(NOOP_TASKS), pure=False))
        noop = (time.perf_counter() - start) / NOOP_TASKS
        rows: list[dict] = []
        report = run_sweep(config, None, client=client, batch_size=batch, sink=rows.extend)
    return {"seconds": report.seconds, "tasks": report.tasks, "noop_task_seconds": noop, "rows": rows}


def speedup_probe(config: SweepConfig, reps: int) -> dict:
    """2 workers against 1, with the machine's drift cancelled: a 1-worker and a 2-worker cluster
    both stay up, and the same sweep runs on each alternately, ``reps`` times (the order swapped at
    every repetition).  Returns the medians and the median of the paired ratios."""

    one, two = [], []
    with dask_client(None, 1) as c1, dask_client(None, 2) as c2:
        c1.run(_warm)
        c2.run(_warm)
        for rep in range(reps):
            for workers in ((1, 2) if rep % 2 == 0 else (2, 1)):
                seconds = run_sweep(config, None, client=c1 if workers == 1 else c2).seconds
                (one if workers == 1 else two).append(seconds)
    return {"instances": len(config.instances()), "reps": reps, "one_worker_s": one, "two_workers_s": two,
            "speedup_of_medians": statistics.median(one) / statistics.median(two),
            "paired_speedup_median": statistics.median(a / b for a, b in zip(one, two))}


def _plain(client, config: SweepConfig, batches: list) -> list:
    """The baseline: each batch a plain Dask task, ``run_batch`` pickled by name (the workers import
    this checkout)."""
    return client.gather([client.submit(run_batch, config, batch, pure=False) for batch in batches])


def _shipped(client, config: SweepConfig, batches: list) -> list:
    """The same batches as a sweep runs them: the code shipped with the job."""
    return map_batches(partial(run_batch, config), batches, client=client, batch_size=1)


def _first_call(pythonpath: Path | None, config: SweepConfig) -> float:
    """Seconds of the first task on a fresh one-worker cluster of separate processes, once its
    worker has joined: plain (``pythonpath``: the checkout) or shipped (nothing on the path)."""
    from distributed import Client

    with ProcessCluster(1, pythonpath=pythonpath) as cluster, Client(cluster.address) as client:
        client.wait_for_workers(1, timeout=120)
        client.run(_warm_numpy)
        start = time.perf_counter()
        (_plain if pythonpath else _shipped)(client, config, [[]])
        return time.perf_counter() - start


def _warm_numpy() -> None:
    import numpy  # noqa: F401  (both kinds of first call would pay it; only the code differs)


def shipping_probe(config: SweepConfig, tasks: int, reps: int) -> dict:
    """What shipping the code costs (``core.sweep.ship``), against the baseline of workers that
    import this checkout, on a one-worker cluster of separate processes whose path holds the
    checkout (so both kinds of task run on it), alternately ``reps`` times:

    - per task: ``tasks`` empty batches (``run_batch(config, [])``, all Dask and no work) each way;
      the difference, less the per-job cost, over ``tasks``;
    - per job, in the client: building the ``Shipped`` object (the sources' zip archive, pickled)
      and ``check_cluster`` (one ``get_versions`` round trip);
    - per worker, once per version of the sources: the first task on a fresh worker, shipped
      against plain (writing the archive and importing from it, compiling, against cached .pyc);
    - a real batch (``n`` instances of the grid's first cell) each way, for the share of the work."""
    from distributed import Client

    root = Path(__file__).resolve().parents[1]
    empty = [[] for _ in range(tasks)]
    real = [config.instances()[:len(config.instances()) // len(config.cells())]]
    plain, shipped, build, check, plain_real, shipped_real = [], [], [], [], [], []
    with ProcessCluster(1, pythonpath=root) as cluster, Client(cluster.address) as client:
        client.wait_for_workers(1, timeout=120)
        _plain(client, config, real), _shipped(client, config, real)   # imports, the archive installed
        for rep in range(reps):
            for kind in (("plain", "shipped") if rep % 2 == 0 else ("shipped", "plain")):
                run, times, real_times = ((_plain, plain, plain_real) if kind == "plain"
                                          else (_shipped, shipped, shipped_real))
                start = time.perf_counter()
                run(client, config, empty)
                times.append(time.perf_counter() - start)
                start = time.perf_counter()
                run(client, config, real)
                real_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            ship.Shipped.of(partial(run_batch, config)).to_bytes()
            build.append(time.perf_counter() - start)
            start = time.perf_counter()
            check_cluster(client)
            check.append(time.perf_counter() - start)
    first_plain, first_shipped = _first_call(root, config), _first_call(None, config)
    per_job = statistics.median(build) + statistics.median(check)
    per_task = (statistics.median(s - p for s, p in zip(shipped, plain)) - per_job) / tasks
    return {"tasks": tasks, "reps": reps, "plain_tasks_s": plain, "shipped_tasks_s": shipped,
            "per_task_s": per_task, "plain_task_s": statistics.median(plain) / tasks,
            "per_job_build_s": statistics.median(build), "per_job_check_s": statistics.median(check),
            "archive_bytes": len(ship.source_archive()),
            "first_task_plain_s": first_plain, "first_task_shipped_s": first_shipped,
            "real_batch_instances": len(real[0]), "real_batch_plain_s": plain_real,
            "real_batch_shipped_s": shipped_real,
            "real_batch_paired_ratio_median": statistics.median(s / p for s, p in zip(shipped_real, plain_real)),
            "per_task_share_of_real_batch": per_task / statistics.median(plain_real)}


def key(row: dict) -> tuple:
    return row["family"], row["V"], row["K"], row["L"], row["index"], row["method"]


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sweep_scaling", description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=25, help="instances per grid cell (25: 300 instances)")
    parser.add_argument("--batch", type=int, help="instances per task (default: the engine's automatic size)")
    parser.add_argument("--probe-reps", type=int, default=20,
                        help="alternations of one batch in a worker and in process (0: skip the probe)")
    parser.add_argument("--speedup-reps", type=int, default=5,
                        help="alternations of a smaller sweep (n = 10) on 1 and on 2 workers (0: skip)")
    parser.add_argument("--shipping-tasks", type=int, default=200,
                        help="empty tasks per pass of the shipping probe (0: skip it)")
    parser.add_argument("--shipping-reps", type=int, default=5, help="alternations of the shipping probe")
    parser.add_argument("--only-shipping", action="store_true", help="run the shipping probe alone")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    config = SweepConfig(**GRID, n=args.n, methods=lossless_methods(), bounds=("lp",))
    check_config(config)
    shipping = (shipping_probe(config, args.shipping_tasks, args.shipping_reps)
                if args.shipping_tasks else None)
    if args.only_shipping:
        print(json.dumps({"shipping_probe": shipping}) if args.json else shipping)
        return {"shipping_probe": shipping}
    _warm()
    first, rows = serial_pass(config)
    one = dask_pass(config, 1, args.batch)
    two = dask_pass(config, 2, args.batch)
    second, _ = serial_pass(config)
    lp = lp_seconds(config)
    n = len(config.instances())
    probe = overhead_probe(config, n // one["tasks"], args.probe_reps) if args.probe_reps else None
    speedup = (speedup_probe(replace(config, n=10), args.speedup_reps) if args.speedup_reps else None)
    reference = sorted(rows, key=key)
    same = all(sorted(run["rows"], key=key) == reference for run in (one, two))
    serial = (first + second) / 2
    result = {
        "instances": n, "methods": list(config.methods), "grid": {k: list(v) for k, v in GRID.items()},
        "serial_seconds": [first, second], "serial_per_instance": serial / n,
        "lp_share_of_instance": lp / serial,
        "one_worker_seconds": one["seconds"], "two_worker_seconds": two["seconds"],
        "tasks": one["tasks"], "tasks_two_workers": two["tasks"],
        "speedup_two_over_one": one["seconds"] / two["seconds"],
        "overhead_share_one_worker": one["seconds"] / serial - 1.0,
        "overhead_per_task_seconds": (one["seconds"] - serial) / one["tasks"],
        "noop_task_seconds": [one["noop_task_seconds"], two["noop_task_seconds"]],
        "rows_identical": same,
        "overhead_probe": probe,
        "speedup_probe": speedup,
        "shipping_probe": shipping,
    }
    if args.json:
        print(json.dumps(result))
    else:
        for name, value in result.items():
            print(f"{name:28s} {value}")
    return result


if __name__ == "__main__":
    main()
