"""Scaling of a sweep on Dask: 1 worker against 2, and the overhead per task against a serial loop.

    python -m benchmarks.sweep_scaling [--n 25] [--json]

One run measures, side by side on the same sweep (every lossless rule that needs no model of its
own, and the LP; ``GRID`` × n instances, 300 by default): a plain serial loop over the instances in
this process (``instance_rows``, no Dask, no store), the same sweep on a ``LocalCluster`` of 1
worker and of 2 single-threaded worker processes (cluster start-up and the first imports excluded:
this process and every worker first analyse one tiny instance), then the serial loop again (the machine is shared and noisy; the
reference is the mean of the two serial passes).  Every run's rows are compared with the serial
rows, which must be identical.  Also: the LP's share of the per-instance cost, and the scheduler's
round trip per task measured on no-op tasks.  Figures, not assertions.
"""
from __future__ import annotations

import argparse
import json
import time

from core.bounds import optimal_lp
from core.rules.registry import REGISTRY
from core.sweep.config import SweepConfig, check_config
from core.sweep.engine import dask_client, run_sweep
from core.sweep.instances import instance_models
from core.sweep.work import instance_rows

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


def dask_pass(config: SweepConfig, workers: int, batch: int | None) -> dict:
    with dask_client(None, workers) as client:
        client.run(_warm)
        start = time.perf_counter()
        client.gather(client.map(_noop, range(NOOP_TASKS), pure=False))
        noop = (time.perf_counter() - start) / NOOP_TASKS
        rows: list[dict] = []
        report = run_sweep(config, None, client=client, batch_size=batch, sink=rows.extend)
    return {"seconds": report.seconds, "tasks": report.tasks, "noop_task_seconds": noop, "rows": rows}


def key(row: dict) -> tuple:
    return row["family"], row["V"], row["K"], row["L"], row["index"], row["method"]


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sweep_scaling", description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=25, help="instances per grid cell (25: 300 instances)")
    parser.add_argument("--batch", type=int, help="instances per task (default: the engine's automatic size)")
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
    reference = sorted(rows, key=key)
    same = all(sorted(run["rows"], key=key) == reference for run in (one, two))
    serial = (first + second) / 2
    n = len(config.instances())
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
    }
    if args.json:
        print(json.dumps(result))
    else:
        for name, value in result.items():
            print(f"{name:28s} {value}")
    return result


if __name__ == "__main__":
    main()
