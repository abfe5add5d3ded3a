"""``python -m core claims [--source ID] [--rule SPEC] [--json] [--ship]``: every registered claim's
verdict (``core.claims.registry``), on its default instance or over its seeded family, grouped by
source; with ``--rule`` (or ``EXPLORER_RULES``), then the court's verdicts on each rule of one's own
(``core.claims.court``), as the claims of a source "your rule".

Plain text prints one line per claim (its key, the verdict, the claim, and for a family its regime:
the source's premise, a generic family beside it, or every pair) under a line per source; ``--json``
prints a list of objects (source, claim, statement, computed, regime, verdict, numbers, instance).
``--ship`` decides every family claim and writes the verdicts the claims page shows at once
(``core/claims/families.json``, ``core.claims.shipped``).
Exit status 0 whatever the verdicts; every error is one line on stderr with exit status 2.
"""
from __future__ import annotations

import json
import sys
from typing import Sequence

from core.cli.args import Parser, add_rule_option, load_rules, report_errors


def build_parser() -> Parser:
    p = Parser(prog="python -m core claims", description=__doc__.splitlines()[0])
    p.add_argument("--source", default=None, help="only the claims of this source (its id)")
    add_rule_option(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--ship", action="store_true",
                   help="write every family claim's verdict to core/claims/families.json, which the claims page shows")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "claims":
        argv = argv[1:]

    def run() -> int:
        args = build_parser().parse_args(argv)
        load_rules(args)
        from core.claims.base import decide
        from core.claims.registry import claims_of
        if args.ship:
            from core.claims import shipped
            print(f"{shipped.write()} family verdicts written to {shipped.PATH.relative_to(shipped.PATH.parents[2])}")
            return 0

        chosen = claims_of(args.source)
        out, source = [], None
        for claim in chosen:
            v = decide(claim)
            if args.json:
                out.append({"source": claim.source.id, "source_title": claim.source.title,
                            "where": claim.source.where, "claim": claim.key, "statement": claim.statement,
                            "computed": claim.computed,
                            "regime": claim.family.regime_words() if claim.family else None, **v.to_json()})
                continue
            if claim.source.id != source:
                source = claim.source.id
                print(f"\n{claim.source.title} ({claim.source.where})")
            regime = f" [{claim.family.regime_words()}]" if claim.family else ""
            print(f"  {claim.key}: {v.words}{regime}. {claim.statement}")
        from core.rules.registry import USER_SPECS, user_rules

        for rule in user_rules():
            out += _court_claims(rule, USER_SPECS[rule].text, args.json)
        if args.json:
            print(json.dumps(out, indent=1, ensure_ascii=False, allow_nan=False))
        return 0

    return report_errors(run, "claims run on small instances only")


def _court_claims(rule: str, spec: str, as_json: bool) -> list[dict]:
    """The court's verdicts on a rule of one's own as claims of the source "your rule": printed, or
    returned as the JSON entries."""
    from core.claims.court import court

    result = court(rule)
    title = f"Your rule {rule} ({spec}), tried by the court in {result.seconds:.1f} s"
    if not as_json:
        print(f"\n{title}")
    out = []
    for v in result.verdicts:
        words = v.status or "report"
        if as_json:
            out.append({"source": "your-rule", "source_title": title, "where": spec, "claim": f"court/{rule}/{v.key}",
                        "statement": v.title, "computed": v.words, "status": v.status, "verdict": words,
                        "numbers": v.numbers})
        else:
            print(f"  court/{rule}/{v.key}: {words}. {v.title}: {v.words}")
    if not as_json:
        for failure in result.failures[:3]:
            print(f"  failed: {failure}")
    return out
