"""Capture what today's exact, bound and montecarlo invocations print, for the byte-for-byte check of
``tests/test_trees.py`` (token trees must leave the default output exactly as it was).

Run it on the code *before* token trees, e.g. a snapshot of main taken before merging them:

    git archive <main before the merge> | tar -x -C /tmp/before
    PYTHONPATH=/tmp/before python tests/data/capture_cli.py tests/data/cli_before_trees.json
"""
from __future__ import annotations

import contextlib
import io
import json
import sys

COMMANDS = [
    "exact --preset binary-toy --method all --K 2 --L 2",
    "exact --preset binary-toy --method all --K 2 --L 2 --json",
    "exact --preset binary-toy --method all --K 1 --L 2 --json",
    "exact --preset several-drafts --method all --K 2 --L 2 --temperature 0.7 --json",
    "exact --preset binary-toy --method specinfer --K 3 --L 2 --json",
    "exact --preset several-drafts --method traversal --K 3 --L 3 --json",
    "exact --preset binary-toy --method lp_optimal --K 3 --L 2 --json",
    "exact --preset several-drafts --method lp_optimal --K 2 --L 3",
    "bound --preset binary-toy --kind lp --K 2 --L 2 --json",
    "bound --preset several-drafts --kind lp --K 3 --L 2",
    "bound --preset binary-toy --kind acausal --K 2 --L 2 --json",
    "bound --preset binary-toy --kind cic --K 2 --L 2 --json",
    "bound --preset binary-toy --kind relaxation --K 3 --L 2 --json",
    "bound --preset binary-toy --kind single_token --K 3 --L 1 --json",
    "montecarlo --preset binary-toy --method specinfer --K 2 --L 2 --n 3000 --seed 1 --json",
    "montecarlo --preset several-drafts --method traversal --K 2 --L 3 --n 2000 --seed 4",
    "montecarlo --preset binary-toy --method lp_optimal --K 2 --L 2 --n 1000 --seed 2 --json",
]


def capture() -> dict[str, dict[str, str]]:
    """{command: {"stdout": ..., "stderr": ...}} for every command, each run in this process."""
    from core.cli.lab import main

    out = {}
    for command in COMMANDS:
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            status = main(command.split())
        if status != 0:
            raise SystemExit(f"{command!r} exited with status {status}: {stderr.getvalue()}")
        out[command] = {"stdout": stdout.getvalue(), "stderr": stderr.getvalue()}
    return out


if __name__ == "__main__":
    with open(sys.argv[1], "w") as f:
        json.dump(capture(), f, indent=1, ensure_ascii=False)
