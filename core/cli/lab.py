"""Command-line interface: ``python -m core {exact,bound,montecarlo,trees,claims,decode,bench,sweep} ...``.

``exact``, ``bound`` and ``montecarlo`` work on toy models and never import torch, so they start
quickly; they take K i.i.d. drafts (``--K --L``) or a static token tree (``--tree b1,b2,...``), drafted
by a law (``--law iid|wor|topk|greedy``, default iid); ``decode`` and ``bench`` are handed to ``core.cli.decode`` (torch + transformers),
``sweep`` to ``core.cli.sweep``, ``trees`` to ``core.cli.trees`` and ``claims`` to ``core.cli.claims``.
Every error is one line on stderr naming the problem, with exit status 2; never a traceback.  A
result is printed only if every number in it is finite: a NaN or an infinity is an error, not a value.
``exact --method all`` skips a rule that refuses the configuration (too large) with one ``note:``
line on stderr per rule, and lists it under ``skipped`` in the JSON; that rule alone is an error.
A rule's own parameters (``--epsilon``, ``--delta``: ``typical``'s; ``--variant``: ``hsd``'s;
``--release``: ``eagle``'s, which also reads ``--temperature``) go to the rules that take them;
``--method all`` with --K/--L alone compares the papers' rules and leaves out the released ports
(``Verifier.released_port``), which it lists with --tree or --law.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Sequence

from core.cli.args import (LAW_METAVAR, MAX_K, MAX_K_BOUND, MAX_L, CLIError, Parser, add_param_option, add_rule_option,
                           int_range, law_arg, load_rules, report_errors, rule_settings, temperature_arg, tv_arg,
                           used_settings)
from core.data.laws import IID_LAW

BOUND_KINDS = ("lp", "frontier", "acausal", "cic", "single_token", "relaxation")
#: Why ``--method all`` skips a rule on a token tree or another law.
CHAINS_ONLY = "defined on K i.i.d. chains only"


def _add_models(p: argparse.ArgumentParser, drafts: bool = True, max_K: int = MAX_K) -> None:
    """The toy pair, the temperature and --json; with ``drafts``, --K (at most ``max_K``), --L,
    --tree and --law too."""
    p.add_argument("--draft", metavar="P.json", help="draft model p (toy-model JSON file)")
    p.add_argument("--target", metavar="Q.json", help="target model q (toy-model JSON file)")
    p.add_argument("--preset", help="a named toy configuration instead of --draft/--target "
                   "(binary-toy, several-drafts, gbv-lossless, three-token-toy)")
    if drafts:
        p.add_argument("--K", type=int_range("K", 1, max_K), help="number of drafts (chains)")
        p.add_argument("--L", type=int_range("L", 1, MAX_L), help="draft length")
        p.add_argument("--tree", metavar="b1,b2,...", help="a static token tree instead of --K/--L: "
                       "a node of depth d gets b_(d+1) draws per copy")
        p.add_argument("--law", type=law_arg, metavar=LAW_METAVAR, help="the draft law (default iid): at the root of "
                       "chains, at every node of a tree")
    p.add_argument("--temperature", type=temperature_arg, default=1.0,
                   help="temperature applied to both models (0 = greedy)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _add_parameters(p: argparse.ArgumentParser) -> None:
    """``--rule``, ``--param`` and the older names of some rules' parameters, kept as aliases of
    ``--param NAME=VALUE`` with the same output: typical's ``--epsilon`` and ``--delta``, hsd's
    ``--variant``, eagle's ``--release``."""
    add_rule_option(p)
    add_param_option(p)
    p.add_argument("--epsilon", type=float, help="typical's hard threshold ε (Medusa's "
                   "posterior_threshold; default 0.09, Medusa's): --param epsilon=E")
    p.add_argument("--delta", type=float, help="typical's entropy factor δ (Medusa's "
                   "posterior_alpha; default 0.3, Medusa's): --param delta=D")
    p.add_argument("--variant", choices=("transformers", "algorithm_clean"), help="hsd's released "
                   "version (default transformers: the repository's transformers/generation/utils.py): "
                   "--param variant=V")
    p.add_argument("--release", choices=("current", "eagle2"), help="eagle's release (default current; "
                   "eagle2 draws the bonus token at temperature 1): --param release=R")


#: The options that are aliases of ``--param NAME=VALUE``.
ALIASES = ("epsilon", "delta", "variant", "release")


def _settings(args, names: list[str]) -> dict[str, dict]:
    """The parameters each rule of ``names`` is given (``core.cli.args.rule_settings``): the aliases and
    every ``--param``, and the models' temperature for a parameter that reads it (eagle's)."""
    return rule_settings(args.param, names, {key: getattr(args, key) for key in ALIASES},
                         {"temperature": args.temperature}, strict=args.method != "all")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m core", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    exact = sub.add_parser("exact", help="exact law of the accepted length and fidelity error")
    _add_models(exact)
    exact.add_argument("--method", required=True, help="a method name (rrs = specinfer), or 'all'")
    _add_parameters(exact)

    bound = sub.add_parser("bound", help="optimal-transport bounds on E[τ]")
    _add_models(bound, max_K=MAX_K_BOUND)
    bound.add_argument("--kind", required=True, choices=BOUND_KINDS)
    bound.add_argument("--tv", type=tv_arg, metavar="EPS", help="frontier: the total variation from q "
                       "allowed, in [0, 1] (the best E[τ] of any verifier that far from lossless)")

    mc = sub.add_parser("montecarlo", help="seeded Monte Carlo run with confidence intervals")
    _add_models(mc)
    mc.add_argument("--method", required=True)
    mc.add_argument("--n", type=int_range("n", 1, 10_000_000), default=10_000)
    mc.add_argument("--seed", type=int, default=0)
    _add_parameters(mc)

    for name in ("decode", "bench"):
        sub.add_parser(name, add_help=False, help=f"real-model {name} (see `python -m core {name} -h`)")
    sub.add_parser("trees", add_help=False, help="the budget question: every tree shape of n drafted "
                   "tokens × law × verifier (see `python -m core trees -h`)")
    sub.add_parser("sweep", add_help=False, help="rule leaderboards over instance families (see `python -m core sweep -h`)")
    sub.add_parser("claims", add_help=False, help="every registered claim's verdict (see `python -m core claims -h`)")
    sub.add_parser("court", add_help=False, help="every verdict for one rule, yours or a registered one "
                   "(see `python -m core court -h`)")
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


def _methods(name: str, chains: bool = False) -> list[str]:
    """The rules ``--method`` names; ``all`` on --K/--L alone (``chains``) leaves out the released
    ports (``Verifier.released_port``), which are listed with --tree or --law."""
    from core.rules.registry import ALIASES, method_names, resolve

    names = method_names()
    if name == "all":
        return [n for n in names if not (chains and resolve(n).released_port)]
    if name not in names and name not in ALIASES:
        raise CLIError(f"unknown method {name!r}; choose one of {', '.join(names)} or all")
    return [name]


def _drafts(args):
    """(shape, law) asked for with --tree/--law, or (None, ``iid``) for K i.i.d. drafts given as --K/--L;
    exactly one of --tree and --K/--L."""
    from core.data.shapes import Shape

    if args.tree is not None:
        if args.K is not None or args.L is not None:
            raise CLIError("give either --tree or --K/--L, not both")
        shape = Shape.parse(args.tree)
        if shape.L > MAX_L or max(shape.branching) > MAX_K:
            raise CLIError(f"--tree must have at most {MAX_L} levels of at most {MAX_K} draws each, "
                           f"got {args.tree}")
        return shape, args.law or IID_LAW
    if args.K is None or args.L is None:
        raise CLIError("give --K and --L (K drafts of length L), or --tree b1,b2,...")
    if args.law is not None:
        return Shape.chains_of(args.K, args.L), args.law
    return None, IID_LAW


def _header(args, shape, law, V) -> str:
    """The first line of a text table: K and L for --K/--L, the shape, law and budget otherwise."""
    if shape is None:
        return f"K={args.K}  L={args.L}  V={V}  T={args.temperature:g}"
    return (f"{shape.label}  law={law.name}  budget n={shape.budget}  L={shape.L}  V={V}  "
            f"T={args.temperature:g}")


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


def _non_finite(value, where: str = "") -> str | None:
    """The path (e.g. ``results[2].fidelity_tv``) of the first NaN or infinity in a result, else None."""
    if isinstance(value, dict):
        items = ((f"{where}.{key}" if where else str(key), v) for key, v in value.items())
    elif isinstance(value, (list, tuple)):
        items = ((f"{where}[{i}]", v) for i, v in enumerate(value))
    else:
        return where if isinstance(value, float) and not math.isfinite(value) else None
    return next((path for path in (_non_finite(v, w) for w, v in items) if path is not None), None)


def _emit(result, text: str) -> None:
    """Print ``text`` (the table or the JSON of ``result``), or refuse a result holding a NaN or an
    infinity: the last guard between float64 arithmetic and what the user reads."""
    bad = _non_finite(result)
    if bad is not None:
        raise CLIError(f"the result {bad} is not a finite number; the inputs are too extreme for float64")
    print(text)


def _with_certificate(row: dict, key: str, cert) -> dict:
    """``row`` with an LP value's fraction (under ``key``) replaced by its certificate's
    (``core.bounds.certify``: a fraction only when an exact plan and an exact dual bound coincide)
    and ``certified`` (true/false) right after it."""
    out = {}
    for k, v in row.items():
        out[k] = cert.fraction if k == key else v
        if k == key:
            out["certified"] = cert.certified
    return out


def _lp_for(draft, target, shape, law, K, L) -> tuple[float | None, str | None]:
    """(the LP optimum of these drafts, None) or (None, why it is not computed)."""
    from core.analysis.optimum import optimum_value
    from core.data.shapes import Shape
    from core.errors import USER_ERRORS

    try:
        return optimum_value(draft, target, shape or Shape.chains_of(K, L), law), None
    except USER_ERRORS as exc:
        return None, str(exc).strip().splitlines()[0]


def _numbers(row: dict, lp: float | None) -> dict:
    """``row`` with E[τ] and the TV as fractions where they are exact, and E[τ]'s share of the LP
    optimum (``lp``) after the TV."""
    from core.analysis.optimum import percent_of
    from core.data.exact_fraction import fraction

    out = {}
    for key, value in row.items():
        out[key] = value
        if key == "expected_accepted" and "expected_accepted_fraction" not in row:
            out["expected_accepted_fraction"] = fraction(value, integers=True)
        if key == "fidelity_tv":
            out["fidelity_tv_fraction"] = fraction(value, integers=True)
            out["lp_optimum"] = lp
            out["percent_of_lp"] = percent_of(row["expected_accepted"], lp) if lp is not None else None
    return out


def exact_text(value: float, frac: str | None) -> str:
    """A value as the text tables write it: 'a/b = decimal' where it is a fraction, the integer where
    it is one, else the decimal."""
    if frac is None:
        return f"{value:.6g}"
    return frac if "/" not in frac else f"{frac} = {value:.6g}"


def _shown(row: dict) -> dict:
    """The text table's cells of a row: E[τ] and the TV as ``exact_text`` writes them, and "% of LP"
    (a lossy rule's marked, since only a lossless rule's share is a fair one)."""
    from core.analysis.exact import LOSSLESS_TOL

    lp = "" if row["percent_of_lp"] is None else f"{row['percent_of_lp']:.1f}%"
    if lp and row["fidelity_tv"] > LOSSLESS_TOL:
        lp += " (lossy)"
    if row.get("certified") is False:
        expected = f"{row['expected_accepted']:.9f} not certified"
    else:
        expected = exact_text(row["expected_accepted"], row["expected_accepted_fraction"])
    return {**row, "E[τ]": expected, "TV from q": exact_text(row["fidelity_tv"], row["fidelity_tv_fraction"]),
            "% of LP": lp}


def cmd_exact(args) -> int:
    from core.analysis.exact import exact_analysis
    from core.bounds.certify import certify_tree_lp
    from core.errors import USER_ERRORS
    from core.rules.registry import display_name, make_verifier, resolve
    from core.rules.base import runs_on_words

    shape, law = _drafts(args)
    draft, target = _load_models(args)
    names = _methods(args.method, chains=shape is None)
    if args.method == "all" and (args.epsilon, args.delta) != (None, None) and \
            not any(resolve(n).parameters for n in names):
        raise CLIError("--epsilon and --delta are typical's, which --method all lists with --tree or "
                       "--law only; add one, or use --method typical")
    rows, skipped = [], []
    if shape is not None and args.method == "all":
        # rules not defined on these drafts are skipped together, before anything is computed
        chains_only = [name for name in names if not resolve(name).supports(shape, law)]
        skipped = [{"method": name, "reason": CHAINS_ONLY if not resolve(name).runs_on else
                    f"runs on {runs_on_words(resolve(name).runs_on)} only"} for name in chains_only]
        names = [name for name in names if name not in chains_only]
    for option, rule in (("variant", "hsd"), ("release", "eagle")):
        if args.method == "all" and getattr(args, option) is not None and rule not in names:
            raise CLIError(f"--{option} is {rule}'s, which --method all does not list on these drafts; "
                           f"use --method {rule}")
    settings = _settings(args, names)
    for name in names:
        try:
            if shape is None:
                verifier = make_verifier(name, draft=draft, target=target, K=args.K, L=args.L, **settings[name])
                rows.append({**exact_analysis(verifier, draft, target, args.K, args.L).summary(),
                             **used_settings(verifier)})
            else:
                verifier = make_verifier(name, draft=draft, target=target, shape=shape, law=law, **settings[name])
                summary = exact_analysis(verifier, draft, target, shape=shape, law=law).summary()
                summary = {**summary, "method": display_name(name, shape), **used_settings(verifier)}
                if resolve(name).name == "lp_optimal":
                    summary = _with_certificate(summary, "expected_accepted_fraction",
                                                certify_tree_lp(draft, target, shape, law))
                rows.append(summary)
        except USER_ERRORS as exc:
            # One rule asked for alone reports its refusal as the error; among all of them, a rule
            # refused here (the tree LP too large, an enumeration too long, a rule of one's own that
            # failed) is skipped and named, and every other rule is still computed.
            if args.method != "all":
                raise
            skipped.append({"method": display_name(name, shape) if shape is not None else name,
                            "reason": str(exc).strip().splitlines()[0]})
    if not rows:
        raise CLIError("every rule was refused on this configuration: "
                       + "; ".join(f"{s['method']}: {s['reason']}" for s in skipped))
    lp, no_lp = _lp_for(draft, target, shape, law, args.K, args.L)
    rows = [_numbers(row, lp) for row in rows]
    result = rows[0] if args.method != "all" else {"results": rows, "skipped": skipped}
    columns = ["method", "E[τ]", "block_efficiency", "TV from q", "% of LP", "accepted_pmf"]
    if args.json:
        _emit(result, json.dumps(result))
    else:
        _emit(result, _header(args, shape, law, target.V) + "\n" + _table([_shown(r) for r in rows], columns))
    # one line per reason on stderr; stdout holds the table or valid JSON alone
    grouped = [s["method"] for s in skipped if s["reason"] == CHAINS_ONLY]
    if grouped:
        print(f"note: {', '.join(grouped)} skipped: {CHAINS_ONLY}", file=sys.stderr)
    for s in skipped:
        if s["reason"] != CHAINS_ONLY:
            print(f"note: {s['method']} skipped: {s['reason']}", file=sys.stderr)
    if no_lp is not None:
        print(f"note: the LP optimum is not computed ({no_lp})", file=sys.stderr)
    return 0


def cmd_bound(args) -> int:
    from core import bounds

    shape, law = _drafts(args)
    draft, target = _load_models(args)
    if shape is not None and args.kind not in ("lp", "frontier"):
        raise CLIError(f"the {args.kind} bound is defined for K i.i.d. chains only; use --kind lp "
                       f"(the own-law LP) with --tree or --law")
    if (args.kind == "frontier") != (args.tv is not None):
        raise CLIError("--tv goes with --kind frontier, and --kind frontier needs --tv EPS")
    if args.kind in ("lp", "frontier"):
        from core.data.shapes import Shape

        drafts = shape or Shape.chains_of(args.K, args.L)
        if args.kind == "lp":
            result = _lp_result(draft, target, drafts, law)
        else:
            from core.bounds.frontier import tree_frontier

            solved = tree_frontier(draft, target, drafts, law, args.tv)
            result = {"kind": "frontier", "tv": args.tv, "value": solved.value if solved.converged else None,
                      "K": solved.tree.shape.K, "L": solved.tree.L, **solved.summary()}
        if shape is not None:
            result = {**result, **shape.describe(), "law": law.name}
        header = _header(args, shape, law, target.V) + "\n" if shape is not None else ""
        _emit(result, json.dumps(result) if args.json else header + _lp_table(result))
        return 0
    if args.kind == "acausal":
        value = bounds.acausal_bound(draft, target, args.K, args.L)
    elif args.kind == "cic":
        value = bounds.claimed_cic(draft, target, args.K, args.L)
    elif args.kind == "relaxation":
        value = bounds.greedy_relaxation(draft, target, args.K, args.L)
    else:
        if args.L != 1:
            raise CLIError("the single-token bound is for L = 1; pass --L 1")
        value = bounds.single_token_bound(draft, target, args.K)
    result = {"kind": args.kind, "value": float(value), "K": args.K, "L": args.L}
    _emit(result, json.dumps(result) if args.json else _table([result], ["kind", "K", "L", "value"]))
    return 0


def _lp_result(draft, target, shape, law) -> dict:
    """The LP optimum of (shape, law) with its certificate: the bounds [lower, upper] that bracket it
    and how they were found (``core.bounds.node_lp``), and the exact fraction where the models are
    rational and the size allows (``core.bounds.certify``).  ``value`` is null when the bounds did
    not meet: they are reported instead, never a number as the optimum."""
    from core.bounds.certify import certify_tree_lp
    from core.bounds.node_lp import tree_lp_optimum

    solved = tree_lp_optimum(draft, target, shape, law)
    out = {"kind": "lp", "value": None, "K": shape.K, "L": shape.L}
    if solved.converged:
        cert = certify_tree_lp(draft, target, shape, law, solved=solved)
        out.update(value=float(cert.exact) if cert.certified else solved.value,
                   value_fraction=cert.fraction, certified=cert.certified,
                   not_certified_because=cert.reason or None)
    else:
        out.update(value_fraction=None, certified=False, not_certified_because=solved.unconverged_text())
    return {**out, **solved.summary()}


def _lp_table(result: dict) -> str:
    """The LP's row: its value and fraction, or its bounds when they did not meet."""
    if result["value"] is None:
        return (f"not converged: the optimum lies between {result['lower']:.9f} and "
                f"{result['upper']:.9f} ({result['rounds']:,} rounds, {result['nodes']:,} nodes)")
    row = {**result, "fraction": result.get("value_fraction") or "not certified",
           "bounds": f"[{result['lower']:.12f}, {result['upper']:.12f}]"}
    frontier = "tv" in result                      # it has no exact certificate
    return _table([row], ["kind", "K", "L", *(["tv"] if frontier else []), "value",
                          *([] if frontier else ["fraction"]), "bounds", "nodes", "rounds", "seconds"])


def cmd_montecarlo(args) -> int:
    from core.analysis.montecarlo import monte_carlo
    from core.rules.registry import display_name, make_verifier

    shape, law = _drafts(args)
    draft, target = _load_models(args)
    [name] = _methods(args.method) if args.method != "all" else (None,)
    if name is None:
        raise CLIError("montecarlo runs one method at a time")
    if shape is None:
        verifier = make_verifier(name, draft=draft, target=target, K=args.K, L=args.L,
                                 **_settings(args, [name])[name])
        result = monte_carlo(verifier, draft, target, args.K, args.L, args.n, args.seed)
        trees = {}
    else:
        verifier = make_verifier(name, draft=draft, target=target, shape=shape, law=law,
                                 **_settings(args, [name])[name])
        result = monte_carlo(verifier, draft, target, n=args.n, seed=args.seed, shape=shape, law=law)
        trees = {**shape.describe(), "law": law.name}
    lo, hi = result.tau_interval()
    summary = {"method": name if shape is None else display_name(name, shape), "K": result.K, "L": result.L, **trees, "n": args.n, "seed": args.seed,
               "expected_accepted": result.tau_mean,
               "expected_accepted_ci": list(result.tau_mean_interval()),
               "accepted_pmf": result.tau_pmf.tolist(), "accepted_pmf_lo": lo.tolist(),
               "accepted_pmf_hi": hi.tolist(), **used_settings(verifier)}
    table = _table([summary], ["method", "n", "seed", "expected_accepted", "accepted_pmf"])
    if shape is not None:
        table = _header(args, shape, law, target.V) + "\n" + table
    _emit(summary, json.dumps(summary) if args.json else table)
    return 0


def main(argv: Sequence[str]) -> int:
    """``python -m core exact|bound|montecarlo ...``: the exit status."""
    def run() -> int:
        args = build_parser().parse_args(list(argv))
        load_rules(args)
        handler = {"exact": cmd_exact, "bound": cmd_bound, "montecarlo": cmd_montecarlo}[args.command]
        return handler(args)

    return report_errors(run, "lower V, K or L")
