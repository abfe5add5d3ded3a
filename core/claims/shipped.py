"""Verdicts over families, computed once and shipped with the code, so that the claims page shows
every verdict at once and never makes a class wait for a family's trials.

``families.json`` beside this module holds, for every family claim of the registry, the verdict
``decide`` reached (``Verdict.to_json``) and the claim as it was then (``fingerprint``: its
statement, what is computed, its family, the rules its instance shows).  ``verdict(claim)`` returns
the shipped verdict while the claim is the one it was computed for, else None, and the caller
decides it afresh.  The file is written by ``python -m core claims --ship`` (``write``), and
``tests/test_claims_registry.py`` decides every family claim again and compares: a change to a rule
or a trial that moves a verdict fails there until the file is written again.  Nothing in it is
typed in: every number is the lab's.
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from core.claims.base import Claim, Verdict, decide

#: The shipped verdicts.
PATH = Path(__file__).with_name("families.json")


def fingerprint(claim: Claim) -> dict:
    """What a shipped verdict was computed for: the claim's statement, what it computes, its family
    (every field, regime included) and the rules its instance shows."""
    return {"statement": claim.statement, "computed": claim.computed, "family": asdict(claim.family),
            "methods": list(claim.methods)}


def family_claims() -> list[Claim]:
    from core.claims.registry import CLAIMS
    return [c for c in CLAIMS if c.family is not None]


def write(path: Path = PATH, client=None) -> int:
    """Decide every family claim and write the verdicts to ``path``; returns how many."""
    kept = {c.key: {"claim": fingerprint(c), "verdict": decide(c, client=client).to_json()} for c in family_claims()}
    path.write_text(json.dumps(kept, indent=1, ensure_ascii=False, allow_nan=False) + "\n")
    return len(kept)


_LOADED: dict | None = None


def load() -> dict:
    """The shipped file, read once per process ({} when there is none)."""
    global _LOADED
    if _LOADED is None:
        _LOADED = json.loads(PATH.read_text()) if PATH.exists() else {}
    return _LOADED


def verdict(claim: Claim) -> Verdict | None:
    """The shipped verdict of a family claim, or None where none was shipped for the claim as it is."""
    kept = load().get(claim.key)
    if kept is None or kept["claim"] != json.loads(json.dumps(fingerprint(claim))):
        return None
    return Verdict.from_json(kept["verdict"])
