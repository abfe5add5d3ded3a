"""The large rule leaderboard (docs/rules_benchmark.md), rebuilt on a Dask cluster of separate
processes started here: every lossless rule, the LP and ``spectr_gbv`` on every family, V ≤ 4, K ≤ 4,
L ≤ 3, the K chains drafted by each draft law (``--law``, by default iid, wor, topk and greedy).

    OMP_NUM_THREADS=1 python -m benchmarks.leaderboard --n 76 --workers 16 \\
        --out artifacts/leaderboard_10k --summary docs/leaderboard_10k.json

starts ``dask scheduler`` and ``--workers`` single-threaded ``dask worker`` processes from an empty
folder (``core.sweep.processes``; ``--scheduler ADDRESS`` uses a running cluster instead), then runs
one ``python -m core sweep`` per sub-grid (``SUBGRIDS``: a sweep is a full product V × K × L, and the
three cells whose LP is too large, V=3 K=4 L=3, V=4 K=3 L=3 and V=4 K=4 L=3, are left out), each into
its own folder under ``--out``, and writes the leaderboard of all of them (``--summarize`` of the
parent folder) with the run's wall time, workers and per-instance cost to ``--summary``.  The
commands are printed first, so they can be run by hand instead.  Rerunning the same command resumes
(every sub-sweep computes only the instances its folder lacks).  ``--n 2`` is the dry run: 264
instances, whose time projects the full run's (``projected_wall_s``).

33 cells × 4 families × n instances: n = 76 gives 10,032 pairs of models × K chains, each analysed
under every law (a draft sweep: ``core.sweep.config``): rules defined on K i.i.d. chains only run
under ``iid``; ``specinfer`` (= ``rrs``), ``traversal`` and the own-law LP under every law that can
draw K distinct tokens at the root (wor, topk and greedy need K ≤ V: at V = 2 they skip K = 3, 4;
at V = 3, K = 4).  ``--law none`` sweeps K i.i.d. chains as before the laws existed (rows without
the law columns).  ``--extra`` passes more options to every sweep.  Figures, not assertions.
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

from core.cli import main as cli_main
from core.data.laws import IID_LAW
from core.sweep import ship
from core.sweep.config import DRAFT_LAWS, GENERIC_FAMILIES as FAMILIES, SweepConfig, SweepError, check_config, default_methods
from core.sweep.processes import ProcessCluster
from core.sweep.store import read_results
from core.sweep.summary import format_leaderboard, leaderboard
from core.sweep.work import KEY_COLUMNS

#: Every lossless rule (``lp_optimal``'s value is the ``lp`` column) and ``spectr_gbv``.
METHODS = (*default_methods(), "td_optimal")
#: The LP (the score's denominator) and the claimed E_CIC (a closed form).  Not the acausal LP: at
#: V = 3, K = 3, L = 3 it costs as much as the LP, each about half of an instance's time.
BOUNDS = ("lp", "cic")
#: The region V ≤ 4, K ≤ 4, L ≤ 3 as full products V × K × L (a sweep's grid), less the three cells
#: ``check_config`` refuses (their LP is too large to solve quickly); ``covered_cells`` checks both.
SUBGRIDS = (
    {"name": "L1-2", "V": (2, 3, 4), "K": (1, 2, 3, 4), "L": (1, 2)},
    {"name": "V2-L3", "V": (2,), "K": (1, 2, 3, 4), "L": (3,)},
    {"name": "V3-L3", "V": (3,), "K": (1, 2, 3), "L": (3,)},
    {"name": "V4-L3", "V": (4,), "K": (1, 2), "L": (3,)},
)
REGION = {"V": (2, 3, 4), "K": (1, 2, 3, 4), "L": (1, 2, 3)}
#: benchmarks/rules.py draws K ≥ 2 and V^(K·L) ≤ 4096.
RULES_BENCHMARK_PATHS = 4096


def feasible(V: int, K: int, L: int, laws: tuple[str, ...] = ()) -> bool:
    try:
        check_config(SweepConfig(FAMILIES, (V,), (K,), (L,), 1, METHODS, BOUNDS, laws=laws))
        return True
    except SweepError:
        return False


def covered_cells(laws: tuple[str, ...] = ()) -> list[tuple[int, int, int]]:
    """The cells of ``SUBGRIDS``, after checking that they are exactly the feasible cells of
    ``REGION`` (with these draft laws) and that no cell is in two sub-grids."""
    cells = [(V, K, L) for g in SUBGRIDS for V in g["V"] for K in g["K"] for L in g["L"]]
    wanted = [(V, K, L) for V in REGION["V"] for K in REGION["K"] for L in REGION["L"] if feasible(V, K, L, laws)]
    if sorted(cells) != sorted(wanted) or len(set(cells)) != len(cells):
        raise SystemExit(f"SUBGRIDS covers {sorted(set(cells) ^ set(wanted))} wrongly; update it")
    return cells


def sweep_argv(grid: dict, n: int, seed: int, out: Path, scheduler: str, extra: list[str],
               laws: tuple[str, ...] = ()) -> list[str]:
    return ["sweep", "--family", "all", "--V", *map(str, grid["V"]), "--K", *map(str, grid["K"]),
            "--L", *map(str, grid["L"]), *(["--law", *laws] if laws else []), "--n", str(n), "--seed", str(seed),
            "--methods", ",".join(METHODS), "--bounds", ",".join(BOUNDS), "--out", str(out / grid["name"]),
            "--scheduler", scheduler, "--json", *extra]


def draft_laws(option: list[str]) -> tuple[str, ...]:
    """``--law``: the laws in their canonical order, ``all`` for every one, ``none`` for none."""
    if option == ["none"]:
        return ()
    laws = DRAFT_LAWS if "all" in option else tuple(law for law in DRAFT_LAWS if law in option)
    unknown = set(option) - {*DRAFT_LAWS, "all"}
    if unknown or not laws:
        raise SystemExit(f"--law takes {', '.join(DRAFT_LAWS)}, all or none, got {' '.join(option)}")
    return laws


def run(args) -> dict:
    laws = draft_laws(args.law)
    cells = covered_cells(laws)
    out = Path(args.out)
    with contextlib.ExitStack() as stack:
        from distributed import Client

        address = args.scheduler or stack.enter_context(ProcessCluster(args.workers)).address
        with Client(address, timeout=120) as client:
            client.wait_for_workers(1 if args.scheduler else args.workers, timeout=300)
            workers = len(client.scheduler_info()["workers"])
        commands = [sweep_argv(g, args.n, args.seed, out, address, args.extra, laws) for g in SUBGRIDS]
        for argv in commands:
            print("python -m core", shlex.join(argv), flush=True)
        load_before = os.getloadavg()
        start = time.perf_counter()
        parts = []
        for grid, argv in zip(SUBGRIDS, commands):
            stdout = io.StringIO()
            with contextlib.redirect_stdout(stdout):
                status = cli_main(argv)
            if status != 0:
                raise SystemExit(f"{grid['name']}: python -m core {shlex.join(argv)} exited with {status}")
            parts.append({"name": grid["name"], **json.loads(stdout.getvalue())})
            print(json.dumps(parts[-1]), flush=True)
        wall = time.perf_counter() - start
        load_after = os.getloadavg()
    frame = read_results(out)
    board = leaderboard(frame)
    # The region of the 200-instance benchmark (benchmarks/rules.py: K i.i.d. chains), to set its
    # figures beside these.
    region = frame[(frame.K >= 2) & (frame.V ** (frame.K * frame.L) <= RULES_BENCHMARK_PATHS)]
    if "law" in region.columns:
        region = region[region.law == IID_LAW.name]
    computed = sum(p["computed"] for p in parts)
    result = {
        "leaderboard": board,
        "leaderboard_rules_benchmark_region": leaderboard(region) if len(region) else None,
        "run": {
            # an instance: a pair of models and K (the laws' analyses of it are one unit of work)
            "instances": int(frame[list(KEY_COLUMNS)].drop_duplicates().shape[0]),
            "analyses": board.get("analyses", board["instances"]), "cells": len(cells) * len(FAMILIES), "n": args.n,
            "seed": args.seed, "methods": list(METHODS), "bounds": list(BOUNDS), "laws": list(laws),
            "extra": args.extra,
            "commands": ["python -m core " + shlex.join(argv) for argv in commands],
            "workers": workers, "scheduler": args.scheduler or "ProcessCluster (dask scheduler + dask worker)",
            "wall_s": wall, "computed": computed, "rows": int(len(frame)), "parts": parts,
            # CPU-seconds of worker time per instance computed by this run (wall × workers / instances).
            "worker_s_per_instance": wall * workers / computed if computed else None,
            "load_average_before": load_before, "load_average_after": load_after,
            "machine": {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine()},
            "versions": ship.versions(),
        },
    }
    if args.project_n and computed:
        result["run"]["projected_wall_s"] = {str(n): wall * n / args.n for n in args.project_n}
    return result


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.leaderboard", description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=76, help="instances per cell (76: 10,032 in all; 2: the dry run)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="single-threaded worker processes to start (default: one per core)")
    parser.add_argument("--scheduler", help="run on this running cluster instead of starting one")
    parser.add_argument("--out", default="artifacts/leaderboard_10k", help="parent of the sweeps' results folders")
    parser.add_argument("--summary", help="write the leaderboard and the run's figures here (JSON)")
    parser.add_argument("--law", nargs="+", default=["all"], metavar="LAW",
                        help=f"draft laws of the K chains: {', '.join(DRAFT_LAWS)}, all (default) or none "
                             "(K i.i.d. chains without the law columns)")
    parser.add_argument("--project-n", type=int, nargs="*", default=[76],
                        help="project the wall time of a run with these n, from this run's (linear in n)")
    parser.add_argument("--extra", nargs=argparse.REMAINDER, default=[],
                        help="more options for every sweep (the rest of the command line)")
    args = parser.parse_args(argv)
    return report(run(args), args.summary)


def report(result: dict, summary: str | None) -> dict:
    """Write ``result`` (the leaderboard and the run's figures) to ``summary`` as JSON, and print the
    leaderboard's tables and the run's figures (``benchmarks.tree_findings`` does the same)."""
    if summary:
        Path(summary).write_text(json.dumps(result, indent=1) + "\n")
    print(format_leaderboard(result["leaderboard"]))
    print(json.dumps({k: v for k, v in result["run"].items() if k not in ("parts", "commands")}))
    return result


if __name__ == "__main__":
    main()
