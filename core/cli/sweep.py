"""``python -m core sweep ...``: rule leaderboards over seeded instance families, run on Dask.

Runs the grid families × V × K × L with n instances per cell (``core.sweep``), writing a Parquet
results folder batch by batch (rerunning the same command resumes it), on a local Dask cluster by
default or on ``--scheduler``; ``--summarize FILE`` prints the leaderboard of a results folder.
``--law``, ``--tree`` and ``--budget`` make it a draft sweep (token trees: chains K×L, static trees,
or every shape of a budget, each drafted by each law; ``core.sweep.config``).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Sequence

from core.cli.args import (MAX_K, MAX_L, CLIError, Parser, add_param_option, add_rule_option, int_range,
                           load_rules, report_errors, rule_settings, temperature_arg)

#: The largest budget --budget takes (the exact analyses and LPs refuse far smaller trees first).
MAX_BUDGET = MAX_K * MAX_L


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
    from core.sweep.config import BOUNDS, DRAFT_LAWS, FAMILIES, GENERIC_FAMILIES, V_RANGE
    from core.sweep.engine import SCHEDULER_ENV

    p = Parser(prog="python -m core sweep", description=__doc__.splitlines()[0])
    p.add_argument("--family", nargs="+", default=["all"],
                   help=f"instance families: {', '.join(FAMILIES)} or all, the generic ones "
                        f"({', '.join(GENERIC_FAMILIES)}; the default)")
    p.add_argument("--V", nargs="+", type=int_list("V", *V_RANGE), default=[[2, 3]], help="vocabulary sizes, e.g. 2 3 or 2-4")
    p.add_argument("--K", nargs="+", type=int_list("K", 1, MAX_K), help="numbers of drafts (default 2 3)")
    p.add_argument("--L", nargs="+", type=int_list("L", 1, MAX_L), help="draft lengths (default 1 2)")
    p.add_argument("--law", nargs="+", metavar="LAW", help=f"draft laws, among {', '.join(DRAFT_LAWS)} or all: "
                   "each shape is drafted by each (a draft sweep; default for --tree and --budget: iid)")
    p.add_argument("--tree", nargs="+", metavar="B", help="static trees b1,b2,... (depth L = their length), "
                   "in place of --K and --L")
    p.add_argument("--budget", nargs="+", type=int_list("budget", 1, MAX_BUDGET), metavar="N",
                   help="every static tree of N drafted tokens at each --L, and the chains (N/L)×L, in place of --K")
    p.add_argument("--n", type=int_range("n", 1, 1_000_000), default=20, help="instances per grid cell")
    p.add_argument("--temperature", type=temperature_arg, default=1.0, help="temperature of both models")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--methods", help="comma-separated rules (default: every lossless rule of a paper that needs "
                   "no model of its own, plus spectr_gbv, and each --rule)")
    add_rule_option(p)
    add_param_option(p)
    p.add_argument("--bounds", help=f"comma-separated bounds among {','.join(BOUNDS)} (default all; lp for a "
                   "draft sweep, which adds the own-law LP and gives the others for the i.i.d. chains of each budget)")
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


def _trees(texts: list[str]) -> tuple[tuple[int, ...], ...]:
    from core.data.shapes import Shape

    return tuple(dict.fromkeys(Shape.parse(text).branching for text in texts))


def _config(args):
    from core.rules.registry import ALIASES, REGISTRY
    from core.sweep.config import BOUNDS, DRAFT_LAWS, GENERIC_FAMILIES, SweepConfig, default_methods, draft_methods

    if args.tree and (args.K or args.L or args.budget):
        raise CLIError("--tree gives the shapes and their depth; it cannot be combined with --K, --L or --budget")
    if args.budget and args.K:
        raise CLIError("--budget takes every shape of each budget; it cannot be combined with --K")
    families = GENERIC_FAMILIES if "all" in args.family else tuple(dict.fromkeys(args.family))
    laws = DRAFT_LAWS if args.law and "all" in args.law else tuple(dict.fromkeys(args.law or ()))
    trees = _trees(args.tree) if args.tree else ()
    budgets = _flat(args.budget) if args.budget else ()
    drafts = bool(laws or trees or budgets)
    Ks = () if trees or budgets else _flat(args.K or [[2, 3]])
    Ls = tuple(sorted({len(b) for b in trees})) if trees else _flat(args.L or [[1, 2]])
    methods = tuple(m for m in args.methods.split(",") if m) if args.methods else \
        (draft_methods() if drafts else default_methods())
    bounds = args.bounds if args.bounds is not None else ("lp" if drafts else ",".join(BOUNDS))
    config = SweepConfig(families, _flat(args.V), Ks, Ls, args.n, methods,
                         tuple(b for b in bounds.split(",") if b), args.temperature, args.seed,
                         laws, trees, budgets)
    if not args.param:
        return config
    known = [m for m in methods if m in REGISTRY or m in ALIASES]
    return config.with_settings({m: v for m, v in rule_settings(args.param, known, strict=False).items() if v})


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
    not_drafted = _note_skipped(config)
    store = ResultsStore(args.out, config)
    if workers == 0:
        report = run_sweep(config, store, batch_size=args.batch, progress=ProgressBar())
    else:
        with dask_client(scheduler, workers) as client:
            report = run_sweep(config, store, client=client, batch_size=args.batch, progress=ProgressBar())
    result = {"out": args.out, "instances": report.instances, "skipped": report.skipped,
              "computed": report.computed, "rows": report.rows, "tasks": report.tasks,
              "seconds": round(report.seconds, 3), **({"not_drafted": not_drafted} if config.drafts else {})}
    print(json.dumps(result) if args.json else
          f"{args.out}: {report.computed} instances computed ({report.rows} rows, {report.tasks} tasks, "
          f"{report.seconds:.1f} s), {report.skipped} already there; "
          f"`python -m core sweep --summarize {args.out}` prints the leaderboard")
    return 0


def _note_skipped(config) -> list[dict]:
    """The (V, shape, law) no instance can draft (``core.sweep.config.skipped_drafts``): one
    ``note:`` line per law on stderr; returned for the JSON report."""
    from core.sweep.config import skipped_drafts

    skipped = skipped_drafts(config)
    for law in dict.fromkeys(law for _, _, law in skipped):
        where = "; ".join(f"{shape.label} at V={V}" for V, shape, x in skipped if x == law)
        print(f"note: {law} skipped where it would draw more distinct tokens at a node than V: {where}",
              file=sys.stderr)
    return [{"V": V, "shape": shape.label, "law": law} for V, shape, law in skipped]


def main(argv: Sequence[str]) -> int:
    """``python -m core sweep ...``: the exit status (2 and one line for a user error)."""
    from core.errors import USER_ERRORS

    def run() -> int:
        args = build_parser().parse_args(list(argv)[1:])
        load_rules(args)
        try:
            return cmd_summarize(args) if args.summarize else cmd_sweep(args)
        except USER_ERRORS as exc:
            raise CLIError(str(exc)) from None

    return report_errors(run, "lower V, K or L, or --batch")
