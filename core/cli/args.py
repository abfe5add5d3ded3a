"""What both command lines share: the argument types, the parser that keeps errors to one line, and the
one place that maps errors to exit statuses."""
from __future__ import annotations

import argparse
import math
import sys

from core.data.laws import LAWS, DraftLaw
from core.errors import USER_ERRORS, ExplorerError

MAX_K = 16
MAX_L = 8


class CLIError(ExplorerError):
    """A user error found by the command line itself (its arguments): one line, exit status 2."""


def report_errors(run, oom_hint: str) -> int:
    """``run()``'s exit status, with every failure printed as one line on stderr, never a traceback.

    The one place that maps errors to exit statuses: a user error (``core.errors.USER_ERRORS``: the
    library's ``ExplorerError`` family, ``CLIError`` included, and ``ToyModelError``) or running out
    of memory (with ``oom_hint``) exits 2, an interruption 130 and anything unexpected 1 (its type
    and first line)."""
    try:
        return run()
    except USER_ERRORS as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        print(f"error: out of memory; {oom_hint}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the command line shows one line, whatever failed
        msg = str(exc).splitlines()[0] if str(exc) else ""
        print(f"error: {type(exc).__name__}: {msg}", file=sys.stderr)
        return 1


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse prints usage + message; keep it to one line
        raise CLIError(message)


def law_arg(text: str) -> DraftLaw:
    """An argparse type: the draft law named (``--law``), refused in argparse's words for a choice."""
    if text not in LAWS:
        raise argparse.ArgumentTypeError(
            f"invalid choice: {text!r} (choose from {', '.join(map(repr, LAWS))})")
    return LAWS[text]


#: ``--law``'s metavar: the names, as argparse shows a list of choices.
LAW_METAVAR = "{" + ",".join(LAWS) + "}"


def int_range(name: str, lo: int, hi: int | None = None):
    """An argparse type: an integer in [lo, hi] (no upper bound when hi is None)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}") from None
        if value < lo or (hi is not None and value > hi):
            bound = f"between {lo} and {hi}" if hi is not None else f"at least {lo}"
            raise argparse.ArgumentTypeError(f"{name} must be {bound}, got {value}")
        return value
    return parse


def temperature_arg(text: str) -> float:
    """An argparse type: a finite temperature ≥ 0.  0 is greedy; there is no floor on T > 0: a tiny
    (even subnormal) T is applied exactly, as the limit law on each argmax set
    (``toy_models.temper`` shows why that is exact in float64 and differs from greedy on ties)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"temperature must be a number, got {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"temperature must be a finite number ≥ 0, got {text}")
    return value
