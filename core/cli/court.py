"""``python -m core court --rule SPEC | --method NAME [--param NAME=VALUE ...] [--json]``: every verdict
for one rule (``core.claims.court``): lossless on the presets, a seeded family and the smallest
counterexample a search finds; E[τ] over the LP optimum; monotone in K; against every registered rule
(a lossy rule's gain never counted as a win); the drafts it runs on; the generated stream.

Plain text prints one line per verdict and the rules ranked by mean E/LP, the lossless ones apart from
the lossy ones; ``--json`` prints one object.  Exit status 0 whatever the verdicts; every error is one
line on stderr with exit status 2.  Progress goes to stderr.
"""
from __future__ import annotations

import json
import sys
from typing import Sequence

from core.cli.args import (CLIError, Parser, add_param_option, add_rule_option, int_range, load_rules,
                           report_errors, rule_settings)


def build_parser() -> Parser:
    p = Parser(prog="python -m core court", description=__doc__.splitlines()[0])
    add_rule_option(p)
    p.add_argument("--method", help="a registered rule's name instead of --rule (or the name of a rule "
                   "EXPLORER_RULES loads)")
    add_param_option(p)
    p.add_argument("--workers", type=int_range("workers", 0, 1024), default=0,
                   help="run the seeded family on a local Dask cluster of this many worker processes "
                        "(default 0: in this process)")
    p.add_argument("--scheduler", help="run the seeded family on this Dask scheduler (tcp://HOST:8786)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _progress(stage: str, done: int, total: int) -> None:
    end = "\n" if stage != "family" or done == total else ""
    sys.stderr.write(f"\rcourt: {stage}" + (f" {done}/{total}" if stage == "family" else "") + end)
    sys.stderr.flush()


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "court":
        argv = argv[1:]

    def run() -> int:
        args = build_parser().parse_args(argv)
        loaded = load_rules(args)
        if bool(loaded) + bool(args.method) != 1 or len(loaded) > 1:
            raise CLIError("give one rule: --rule SPEC (a rule of your own) or --method NAME")
        from core.claims.court import court
        from core.rules.registry import resolve

        rule = loaded[0] if loaded else resolve(args.method).name
        settings = rule_settings(args.param, [rule])[rule]
        if args.scheduler or args.workers:
            from core.sweep.engine import dask_client

            with dask_client(args.scheduler, args.workers or None) as client:
                result = court(rule, settings, client=client, progress=_progress)
        else:
            result = court(rule, settings, progress=_progress)
        print(json.dumps(result.to_json(), ensure_ascii=False, allow_nan=False) if args.json else result.text())
        return 0

    return report_errors(run, "the court runs on small instances only")
