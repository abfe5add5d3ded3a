"""What both command lines share: the argument types, the parser that keeps errors to one line, and the
one place that maps errors to exit statuses."""
from __future__ import annotations

import argparse
import math
import sys

from core.data.laws import LAWS, DraftLaw
from core.errors import USER_ERRORS, ExplorerError

MAX_K = 16
#: The most drafts ``bound`` takes: the optimal-verifier LP's size does not grow with K.
MAX_K_BOUND = 1024
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


def tv_arg(text: str) -> float:
    """An argparse type: a total variation, a number in [0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"the total variation must be a number, got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"the total variation must be in [0, 1], got {value}")
    return value


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


# ------------------------------------------------------------------------------------------------
# Rules from outside the project and the rules' own parameters, shared by every subcommand that
# runs a rule (``--rule``, ``--param``; docs/your_rule.md).

def add_rule_option(p: argparse.ArgumentParser) -> None:
    """``--rule SPEC`` (repeatable): a rule of one's own, then named by its class's ``name``."""
    p.add_argument("--rule", action="append", default=[], metavar="SPEC",
                   help="a rule of your own: MODULE:CLASS or PATH.py:CLASS, a Verifier subclass (repeatable; "
                        "also EXPLORER_RULES=SPEC,...); then name it with --method (docs/your_rule.md)")


def add_param_option(p: argparse.ArgumentParser) -> None:
    """``--param NAME=VALUE`` (repeatable): a rule's own parameter, ``RULE.NAME=VALUE`` for one rule."""
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a rule's own parameter (repeatable; RULE.NAME=VALUE where several rules take NAME); "
                        "`python -m core court --method NAME` lists a rule's parameters")


def load_rules(args) -> list[str]:
    """Refuse a bad ``EXPLORER_RULES`` specification, then load every ``--rule``: the names loaded."""
    from core.rules.registry import check_loaded, load_rules as load

    check_loaded()
    return load(getattr(args, "rule", []) or [])


def rule_settings(assignments: list[str], rules: list[str], given: dict | None = None,
                  context: dict | None = None, strict: bool = True) -> dict[str, dict]:
    """The parameters each of ``rules`` is given, {rule: {name: value or text}}: ``given`` (the named
    aliases, e.g. {"epsilon": 0.1}) and each ``--param [RULE.]NAME=VALUE`` of ``assignments``, and
    for a parameter filled from the models (``Param.context``) its value in ``context`` (e.g.
    {"temperature": 0.5}).  A name goes to every listed rule that declares it; with ``strict`` (one
    rule asked for) a name no listed rule takes is passed on, so that ``make_verifier`` refuses it in
    its own words; without it (``--method all``) it is refused here only when no listed rule takes it.
    Values are checked where the rule is made (``make_verifier``)."""
    from core.rules.params import ParamError, assignment, by_name
    from core.rules.registry import ALIASES, REGISTRY, resolve

    declared = {rule: by_name(resolve(rule)) for rule in rules}
    settings: dict[str, dict] = {rule: {} for rule in rules}
    items = [(None, name, value) for name, value in (given or {}).items() if value is not None]
    items += [assignment(text) for text in assignments]
    for rule, name, value in items:
        if rule is not None:
            target = ALIASES.get(rule, rule)
            match = [r for r in rules if ALIASES.get(r, r) == target]
            if not match:
                raise ParamError(f"--param names the rule {rule!r}, which is not among those run here "
                                 f"({', '.join(rules)})")
            takers = match
        else:
            takers = [r for r in rules if name in declared[r]]
        for r in takers:
            param = declared[r].get(name)
            if param is None:
                raise ParamError(f"{resolve(r).name} takes no parameter {name}")
            if not param.settable:
                raise ParamError(f"{resolve(r).name}'s {name} is the models' {param.context}; set it with "
                                 f"--{param.context}")
            settings[r][name] = value
        if not takers:
            if strict:
                for r in rules:
                    settings[r][name] = value
            else:
                owners = [n for n, c in REGISTRY.items() if name in by_name(c)]
                raise ParamError(f"no rule run here takes the parameter {name}"
                                 + (f"; {', '.join(owners)} does" if owners else ""))
    for r in rules:
        for name, param in declared[r].items():
            if param.context is not None and context and param.context in context:
                settings[r][name] = context[param.context]
    return settings


def used_settings(verifier) -> dict:
    """The values of a rule instance's own parameters, for its row (nothing for a rule without any)."""
    from core.rules.params import declared

    return {p.name: getattr(verifier, p.name) for p in declared(type(verifier))}
