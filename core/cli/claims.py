"""``python -m core claims [--source ID] [--json]``: every registered claim's verdict
(``core.claims.registry``), on its default instance or over its seeded family, grouped by source.

Plain text prints one line per claim (its key, the verdict, the claim) under a line per source;
``--json`` prints a list of objects (source, claim, statement, computed, verdict, numbers, instance).
Exit status 0 whatever the verdicts; every error is one line on stderr with exit status 2.
"""
from __future__ import annotations

import json
import sys
from typing import Sequence

from core.cli.args import Parser, report_errors


def build_parser() -> Parser:
    p = Parser(prog="python -m core claims", description=__doc__.splitlines()[0])
    p.add_argument("--source", default=None, help="only the claims of this source (its id)")
    p.add_argument("--json", action="store_true", help="print JSON")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "claims":
        argv = argv[1:]

    def run() -> int:
        args = build_parser().parse_args(argv)
        from core.claims.base import decide
        from core.claims.registry import claims_of

        chosen = claims_of(args.source)
        out, source = [], None
        for claim in chosen:
            v = decide(claim)
            if args.json:
                out.append({"source": claim.source.id, "source_title": claim.source.title,
                            "where": claim.source.where, "claim": claim.key, "statement": claim.statement,
                            "computed": claim.computed, **v.to_json()})
                continue
            if claim.source.id != source:
                source = claim.source.id
                print(f"\n{claim.source.title} ({claim.source.where})")
            print(f"  {claim.key}: {v.words}. {claim.statement}")
        if args.json:
            print(json.dumps(out, indent=1, ensure_ascii=False, allow_nan=False))
        return 0

    return report_errors(run, "claims run on small instances only")
