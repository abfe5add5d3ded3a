"""``python -m core sweep ...``: rule leaderboards over seeded instance families, run on Dask.

Runs the grid families × V × K × L with n instances per cell (``core.sweep``), writing a Parquet
results folder batch by batch (rerunning the same command resumes it), on a local Dask cluster by
default or on ``--scheduler``; ``--summarize FILE`` prints the leaderboard of a results folder.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Sequence

from core.cli.args import MAX_K, MAX_L, CLIError, Parser, int_range, report_errors, temperature_arg


def int_list(name: str, lo: int, hi: int):
    """An argparse type for one token of a list option: an integer or an inclusive range ``a-b``."""
    def parse(text: str) -> list[int]:
        first, sep, last = text.partition("-")
        try:
            values = list(range(int(first), int(last) + 1)) if sep else [int(text)]
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} takes integers or ranges like 2-4, got {text!r}") from None
        if not values or values[0] < lo or values[-1] > hi:
            raise argparse.ArgumentTypeError(f"{name} must be between {lo} and {hi}, got {text}")
        return values
    return parse


def build_parser() -> argparse.ArgumentParser:
    from core.sweep.config import BOUNDS, FAMILIES, V_RANGE
    from core.sweep.engine import SCHEDULER_ENV

    p = Parser(prog="python -m core sweep", description=__doc__.splitlines()[0])
    p.add_argument("--family", nargs="+", default=["all"],
                   help=f"instance families: {', '.join(FAMILIES)} or all (default all)")
    p.add_argument("--V", nargs="+", type=int_list("V", *V_RANGE), default=[[2, 3]], help="vocabulary sizes, e.g. 2 3 or 2-4")
    p.add_argument("--K", nargs="+", type=int_list("K", 1, MAX_K), default=[[2, 3]], help="numbers of drafts")
    p.add_argument("--L", nargs="+", type=int_list("L", 1, MAX_L), default=[[1, 2]], help="draft lengths")
    p.add_argument("--n", type=int_range("n", 1, 1_000_000), default=20, help="instances per grid cell")
    p.add_argument("--temperature", type=temperature_arg, default=1.0, help="temperature of both models")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--methods", help="comma-separated rules (default: every lossless rule that needs no "
                   "model of its own, plus spectr_gbv)")
    p.add_argument("--bounds", default=",".join(BOUNDS), help=f"comma-separated bounds among {','.join(BOUNDS)}")
    p.add_argument("--out", default="sweep.parquet", help="results folder (Parquet dataset)")
    p.add_argument("--scheduler", help=f"Dask scheduler address, e.g. tcp://HOST:8786 (or ${SCHEDULER_ENV}); "
                   "its workers need the requirements, not this repository (docs/sweeps.md); "
                   "default: a local cluster in this process")
    p.add_argument("--workers", type=int_range("workers", 0, 1024), help="local cluster workers "
                   "(default: one per core; 0 runs serially in this process, without Dask)")
    p.add_argument("--batch", type=int_range("batch", 1, 100_000), help="instances per task (default: automatic)")
    p.add_argument("--summarize", metavar="FILE", help="print the leaderboard of a results folder and exit")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _flat(lists: list[list[int]]) -> tuple[int, ...]:
    return tuple(sorted({v for values in lists for v in values}))


def _config(args):
    from core.sweep.config import FAMILIES, SweepConfig, default_methods

    families = FAMILIES if "all" in args.family else tuple(dict.fromkeys(args.family))
    methods = tuple(m for m in args.methods.split(",") if m) if args.methods else default_methods()
    return SweepConfig(families, _flat(args.V), _flat(args.K), _flat(args.L), args.n, methods,
                       tuple(b for b in args.bounds.split(",") if b), args.temperature, args.seed)


class ProgressBar:
    """``[#####-----] done/total instances  elapsed, ETA`` on stderr, redrawn in place."""

    def __init__(self, stream=None, width: int = 30):
        self.stream, self.width = stream or sys.stderr, width

    def __call__(self, done: int, total: int, elapsed: float) -> None:
        filled = self.width * done // max(total, 1)
        eta = elapsed / done * (total - done) if done else float("nan")
        self.stream.write(f"\r[{'#' * filled}{'-' * (self.width - filled)}] {done}/{total} instances  "
                          f"{elapsed:.0f} s elapsed, ETA {eta:.0f} s ")
        if done == total:
            self.stream.write("\n")
        self.stream.flush()


def cmd_summarize(args) -> int:
    from core.sweep.store import read_results
    from core.sweep.summary import format_leaderboard, leaderboard

    board = leaderboard(read_results(args.summarize))
    print(json.dumps(board) if args.json else format_leaderboard(board))
    return 0


def cmd_sweep(args) -> int:
    from core.sweep.config import check_config
    from core.sweep.engine import SCHEDULER_ENV, dask_client, run_sweep
    from core.sweep.store import ResultsStore

    scheduler = args.scheduler or os.environ.get(SCHEDULER_ENV) or None
    workers = args.workers
    if scheduler and workers is not None:
        raise CLIError("--workers sizes the local cluster; it cannot be combined with --scheduler")
    config = _config(args)
    check_config(config)
    store = ResultsStore(args.out, config)
    if workers == 0:
        report = run_sweep(config, store, batch_size=args.batch, progress=ProgressBar())
    else:
        with dask_client(scheduler, workers) as client:
            report = run_sweep(config, store, client=client, batch_size=args.batch, progress=ProgressBar())
    result = {"out": args.out, "instances": report.instances, "skipped": report.skipped,
              "computed": report.computed, "rows": report.rows, "tasks": report.tasks,
              "seconds": round(report.seconds, 3)}
    print(json.dumps(result) if args.json else
          f"{args.out}: {report.computed} instances computed ({report.rows} rows, {report.tasks} tasks, "
          f"{report.seconds:.1f} s), {report.skipped} already there; "
          f"`python -m core sweep --summarize {args.out}` prints the leaderboard")
    return 0


def main(argv: Sequence[str]) -> int:
    """``python -m core sweep ...``: the exit status (2 and one line for a user error)."""
    from core.errors import USER_ERRORS

    def run() -> int:
        args = build_parser().parse_args(list(argv)[1:])
        try:
            return cmd_summarize(args) if args.summarize else cmd_sweep(args)
        except USER_ERRORS as exc:
            raise CLIError(str(exc)) from None

    return report_errors(run, "lower V, K or L, or --batch")
