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
and ``speedup_probe``: a smaller sweep run alternately on a 1-worker and a 2-worker cluster.
Figures, not assertions.
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

from core.bounds import optimal_lp
from core.rules.registry import REGISTRY
from core.sweep.config import SweepConfig, check_config
from core.sweep.engine import dask_client, run_sweep
from core.sweep.instances import instance_models
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
        optimal_lp(draft, target, key.K, key.L)
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
    import statistics

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
    import statistics

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
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    config = SweepConfig(**GRID, n=args.n, methods=lossless_methods(), bounds=("lp",))
    check_config(config)
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
    }
    if args.json:
        print(json.dumps(result))
    else:
        for name, value in result.items():
            print(f"{name:28s} {value}")
    return result


if __name__ == "__main__":
    main()
