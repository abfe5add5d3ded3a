"""The token-tree findings of docs/findings.md, rebuilt: draft sweeps over every family, V ∈ {2, 3, 4},
every shape of budgets 4 and 6 at L = 2 and of budget 6 at L = 3, each drafted by every law, at
T = 1 (the main sweep) and at T = 0.5, 2 and 0 (fewer instances: is top-k drafting lossless at
every T?), summarised together.

    OMP_NUM_THREADS=1 nice -n 10 python -m benchmarks.tree_findings --n 84 --workers 2 \\
        --out artifacts/tree_findings --summary docs/tree_findings.json

runs one ``python -m core sweep`` per entry of ``SWEEPS`` (printed first, so they can be run by
hand instead) on one embedded Dask cluster of ``--workers`` processes, each into its own folder
under ``--out``, then writes the leaderboard of all of them (``--summarize`` of the parent folder:
its law board is per temperature) with the run's wall time, workers and load to ``--summary``.
Rerunning the same command resumes; ``--resummarize`` recomputes only the summary from the folders
(the run's figures kept).  With n = 84 the T = 1 sweep holds 2,016 pairs of models
(4 families × 3 V × 2 L × 84), each analysed at every budget of its L; at T = 0.5 and 2,
n/4 each; at T = 0 the draft is one-hot, so only the iid law on every shape and every law on the
single chains b = (1, 1) and (1, 1, 1) are defined there.  Figures, not assertions.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import shlex
import time
from pathlib import Path

from benchmarks.leaderboard import report
from core.cli import main as cli_main
from core.sweep import ship
from core.sweep.engine import dask_client
from core.sweep.store import read_results
from core.sweep.summary import leaderboard

GRID = ["--family", "all", "--V", "2", "3", "4"]
#: (folder, options, share of --n): every sweep of the findings.
SWEEPS = (
    ("T1-L2", ["--L", "2", "--budget", "4", "6", "--law", "all", "--temperature", "1"], 1.0),
    ("T1-L3", ["--L", "3", "--budget", "6", "--law", "all", "--temperature", "1"], 1.0),
    *((f"T{T}-L{L}", ["--L", str(L), "--budget", *budgets, "--law", "all", "--temperature", T], 0.25)
      for T in ("0.5", "2") for L, budgets in ((2, ("4", "6")), (3, ("6",)))),
    ("T0-iid", ["--L", "2", "3", "--budget", "6", "--law", "iid", "--temperature", "0"], 0.25),
    ("T0-chain", ["--tree", "1,1", "1,1,1", "--law", "all", "--temperature", "0"], 0.25),
)


def sweep_argv(name: str, options: list[str], n: int, seed: int, out: Path) -> list[str]:
    return ["sweep", *GRID, *options, "--n", str(n), "--seed", str(seed), "--out", str(out / name), "--json"]


def run(args) -> dict:
    out = Path(args.out)
    commands = [(name, sweep_argv(name, options, max(1, round(args.n * share)), args.seed, out))
                for name, options, share in SWEEPS]
    for _, argv in commands:
        print("python -m core", shlex.join(argv), f"--workers {args.workers}", flush=True)
    parts = []
    load_before = os.getloadavg()
    start = time.perf_counter()
    with dask_client(workers=args.workers) as client:
        address = client.scheduler.address
        for name, argv in commands:
            stdout, begun = io.StringIO(), time.perf_counter()
            with contextlib.redirect_stdout(stdout):
                status = cli_main([*argv, "--scheduler", address])
            if status != 0:
                raise SystemExit(f"{name}: python -m core {shlex.join(argv)} exited with {status}")
            report = json.loads(stdout.getvalue())
            parts.append({"name": name, "wall_s": time.perf_counter() - begun, "load_average": os.getloadavg(),
                          **{k: v for k, v in report.items() if k != "not_drafted"},
                          "not_drafted": len(report.get("not_drafted", []))})
            print(json.dumps(parts[-1]), flush=True)
    wall = time.perf_counter() - start
    frame = read_results(out)
    board = leaderboard(frame)
    computed = sum(p["computed"] for p in parts)
    return {"leaderboard": board, "run": {
        "commands": ["python -m core " + shlex.join(argv) + f" --workers {args.workers}" for _, argv in commands],
        "n": args.n, "seed": args.seed, "workers": args.workers, "wall_s": wall, "computed_units": computed,
        "rows": int(len(frame)), "parts": parts,
        "worker_s_per_unit": wall * args.workers / computed if computed else None,
        "load_average_before": load_before, "load_average_after": os.getloadavg(),
        "machine": {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine()},
        "versions": ship.versions()}}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.tree_findings", description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=84, help="pairs per cell at T = 1 (84: 2,016 pairs)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2, help="embedded Dask cluster's worker processes")
    parser.add_argument("--out", default="artifacts/tree_findings", help="parent of the sweeps' results folders")
    parser.add_argument("--summary", help="write the leaderboard and the run's figures here (JSON)")
    parser.add_argument("--resummarize", action="store_true",
                        help="compute nothing: summarise --out again into --summary, keeping the run's figures there")
    args = parser.parse_args(argv)
    if args.resummarize:
        if not args.summary:
            parser.error("--resummarize rewrites --summary; name it")
        kept = json.loads(Path(args.summary).read_text())["run"]
        return report({"leaderboard": leaderboard(read_results(args.out)), "run": kept}, args.summary)
    return report(run(args), args.summary)


if __name__ == "__main__":
    main()
