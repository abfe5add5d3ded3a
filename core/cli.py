"""Command-line interface: ``python -m core {exact,bound,montecarlo,decode,bench} ...``.

``exact``, ``bound`` and ``montecarlo`` work on toy models and never import torch, so they start
quickly; ``decode`` and ``bench`` are handed to ``core.decoding_cli`` (torch + transformers).
Every error is one line on stderr naming the problem, with exit status 2; never a traceback.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Sequence

MAX_K = 16
MAX_L = 8
BOUND_KINDS = ("lp", "acausal", "cic", "single_token", "relaxation")


class CLIError(Exception):
    """A user error: printed as one line, exit status 2."""


def report_errors(run, oom_hint: str) -> int:
    """``run()``'s exit status, with every failure printed as one line on stderr, never a traceback:
    a user error or running out of memory (with ``oom_hint``) exits 2, an interruption 130 and
    anything unexpected 1 (its type and first line)."""
    try:
        return run()
    except CLIError as exc:
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
    """An argparse type: a finite temperature ≥ 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"temperature must be a number, got {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"temperature must be a finite number ≥ 0, got {text}")
    return value


def _add_models(p: argparse.ArgumentParser) -> None:
    p.add_argument("--draft", metavar="P.json", help="draft model p (toy-model JSON file)")
    p.add_argument("--target", metavar="Q.json", help="target model q (toy-model JSON file)")
    p.add_argument("--preset", help="a named toy configuration instead of --draft/--target "
                   "(binary-toy, several-drafts, gbv-lossless)")
    p.add_argument("--K", type=int_range("K", 1, MAX_K), required=True, help="number of drafts")
    p.add_argument("--L", type=int_range("L", 1, MAX_L), required=True, help="draft length")
    p.add_argument("--temperature", type=temperature_arg, default=1.0,
                   help="temperature applied to both models (0 = greedy)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m core", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    exact = sub.add_parser("exact", help="exact law of the accepted length and fidelity error")
    _add_models(exact)
    exact.add_argument("--method", required=True, help="a method name, or 'all'")

    bound = sub.add_parser("bound", help="optimal-transport bounds on E[τ]")
    _add_models(bound)
    bound.add_argument("--kind", required=True, choices=BOUND_KINDS)

    mc = sub.add_parser("montecarlo", help="seeded Monte Carlo run with confidence intervals")
    _add_models(mc)
    mc.add_argument("--method", required=True)
    mc.add_argument("--n", type=int_range("n", 1, 10_000_000), default=10_000)
    mc.add_argument("--seed", type=int, default=0)

    for name in ("decode", "bench"):
        sub.add_parser(name, add_help=False, help=f"real-model {name} (see `python -m core {name} -h`)")
    return parser


def _load_models(args):
    from toy_models import PRESETS, ToyModelError, load

    if args.preset is not None:
        if args.draft or args.target:
            raise CLIError("give either --preset or --draft/--target, not both")
        if args.preset not in PRESETS:
            raise CLIError(f"unknown preset {args.preset!r}; choose one of {', '.join(PRESETS)}")
        preset = PRESETS[args.preset]
        draft, target = preset.draft, preset.target
    else:
        if not (args.draft and args.target):
            raise CLIError("give --draft P.json and --target Q.json (or --preset NAME)")
        try:
            draft = load(args.draft)
        except ToyModelError as exc:
            raise CLIError(f"draft: {exc}") from None
        try:
            target = load(args.target)
        except ToyModelError as exc:
            raise CLIError(f"target: {exc}") from None
    if draft.V != target.V:
        raise CLIError(f"draft has {draft.V} tokens but target has {target.V}; they must share a vocabulary")
    return draft.with_temperature(args.temperature), target.with_temperature(args.temperature)


def _methods(name: str) -> list[str]:
    from .verifier import method_names

    names = method_names()
    if name == "all":
        return names
    if name not in names:
        raise CLIError(f"unknown method {name!r}; choose one of {', '.join(names)} or all")
    return [name]


def _table(rows: list[dict], columns: list[str]) -> str:
    def fmt(v):
        if isinstance(v, float):
            return f"{v:.6g}"
        if isinstance(v, list):
            return "[" + ", ".join(f"{x:.4f}" for x in v) + "]"
        return str(v)
    cells = [[fmt(r[c]) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(lines)


def cmd_exact(args) -> int:
    from .exact import TooLarge, exact_analysis
    from .verifier import make_verifier

    draft, target = _load_models(args)
    rows = []
    for name in _methods(args.method):
        try:
            verifier = make_verifier(name, draft=draft, target=target, K=args.K, L=args.L)
            rows.append(exact_analysis(verifier, draft, target, args.K, args.L).summary())
        except (TooLarge, ValueError) as exc:
            raise CLIError(str(exc)) from None
    if args.json:
        print(json.dumps(rows[0] if len(rows) == 1 else {"results": rows}))
    else:
        print(f"K={args.K}  L={args.L}  V={target.V}  T={args.temperature:g}")
        print(_table(rows, ["method", "expected_accepted", "block_efficiency", "fidelity_tv", "accepted_pmf"]))
    return 0


def cmd_bound(args) -> int:
    from . import bounds

    draft, target = _load_models(args)
    try:
        if args.kind == "lp":
            value = bounds.optimal_lp(draft, target, args.K, args.L).value
        elif args.kind == "acausal":
            value = bounds.acausal_bound(draft, target, args.K, args.L)
        elif args.kind == "cic":
            value = bounds.claimed_cic(draft, target, args.K, args.L)
        elif args.kind == "relaxation":
            value = bounds.greedy_relaxation(draft, target, args.K, args.L)
        else:
            if args.L != 1:
                raise CLIError("the single-token bound is for L = 1; pass --L 1")
            value = bounds.single_token_bound(draft, target, args.K)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if args.json:
        print(json.dumps({"kind": args.kind, "value": float(value), "K": args.K, "L": args.L}))
    else:
        print(_table([{"kind": args.kind, "K": args.K, "L": args.L, "value": float(value)}],
                     ["kind", "K", "L", "value"]))
    return 0


def cmd_montecarlo(args) -> int:
    from .montecarlo import monte_carlo
    from .verifier import make_verifier

    draft, target = _load_models(args)
    [name] = _methods(args.method) if args.method != "all" else (None,)
    if name is None:
        raise CLIError("montecarlo runs one method at a time")
    try:
        verifier = make_verifier(name, draft=draft, target=target, K=args.K, L=args.L)
        result = monte_carlo(verifier, draft, target, args.K, args.L, args.n, args.seed)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    lo, hi = result.tau_interval()
    summary = {"method": name, "K": args.K, "L": args.L, "n": args.n, "seed": args.seed,
               "expected_accepted": result.tau_mean,
               "expected_accepted_ci": [result.tau_mean - result.tau_mean_halfwidth,
                                        result.tau_mean + result.tau_mean_halfwidth],
               "accepted_pmf": result.tau_pmf.tolist(), "accepted_pmf_lo": lo.tolist(),
               "accepted_pmf_hi": hi.tolist()}
    if args.json:
        print(json.dumps(summary))
    else:
        print(_table([summary], ["method", "n", "seed", "expected_accepted", "accepted_pmf"]))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("decode", "bench"):
        try:
            from .decoding_cli import main as decoding_main
        except ImportError as exc:
            print(f"error: the real decoder is unavailable ({exc})", file=sys.stderr)
            return 2
        return decoding_main(argv)
    def run() -> int:
        args = build_parser().parse_args(argv)
        handler = {"exact": cmd_exact, "bound": cmd_bound, "montecarlo": cmd_montecarlo}[args.command]
        return handler(args)

    return report_errors(run, "lower V, K or L")
