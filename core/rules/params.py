"""A rule's own parameters, declared on its class: one way from the command line, a link and a page's
controls to the rule's constructor.

A rule lists them in ``Verifier.parameters`` as ``Param`` objects (a bare name, the older form,
still works: ``declared`` reads its default and type from the constructor).  Each says its name,
type, default and one line of help, and what values it takes: ``choices``, or an interval
``within`` written as mathematics ("[0, 1)", "(0, inf)"), or any ``validate`` function; a value
outside is refused in one sentence.  ``context`` marks a parameter the caller fills from the models
rather than the user (EAGLE's ``temperature``: the models' T).

Where parameters are written down they are *settings*: {rule: {name: value}}.  On the command line
``--param NAME=VALUE`` (or ``RULE.NAME=VALUE`` where two rules declare one name) parses through
``assignment``; in a link the query entry ``params`` holds ``encode(settings)``, e.g.
``eagle.release:eagle2,typical.epsilon:0.05``, which ``decode`` reads back (``pages/ui`` and a
claim's link share it); a sweep's configuration and a claim's instance record the same mapping.
"""
from __future__ import annotations

import inspect
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from core.rules.base import VerifierError

#: The types a parameter may have (what a link and the command line can write).
TYPES = (float, int, str, bool)
#: How ``within`` is written: "[lo, hi]" with either end open ("(", ")") and "inf" for no bound.
_INTERVAL = re.compile(r"^\s*([\[(])\s*([^,\s]+)\s*,\s*([^,\s]+)\s*([\])])\s*$")
#: The separators of ``encode``: between settings, between a name and its value.
ITEM_SEP, VALUE_SEP = ",", ":"
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


class ParamError(VerifierError):
    """A parameter's value is not one it takes, or a setting names no parameter; one sentence."""


@dataclass(frozen=True)
class Param:
    """One parameter a rule declares (module docstring).

    >>> eps = Param("epsilon", float, 0.09, "hard threshold", within="[0, 1)", label="Medusa's posterior threshold")
    >>> eps.check("0.5"), eps.text(0.05)
    (0.5, '0.05')
    >>> eps.check(1)
    Traceback (most recent call last):
    ...
    core.rules.params.ParamError: epsilon (Medusa's posterior threshold) must be in [0, 1), got 1
    """
    name: str
    type: type
    default: Any
    help: str
    #: The values it takes, where they are few (a ``str`` parameter's variants).
    choices: tuple = ()
    #: The interval a number lies in, e.g. "[0, 1)"; "" for any finite number.
    within: str = ""
    #: What the name stands for, shown in brackets in a refusal: "Medusa's posterior threshold".
    label: str = ""
    #: Any further check: the value → None, or the phrase saying what it must be ("a power of 2").
    validate: Callable[[Any], str | None] | None = None
    #: Filled by the caller from the models instead of the user (its name: "temperature").
    context: str | None = None
    #: A knob: the values the loss-gain chart sweeps (each a point (TV, E[τ]) against the frontier
    #: of ``core.bounds.frontier``); () for a parameter that is not one.
    sweep: tuple = ()
    _bounds: tuple = field(init=False, repr=False, compare=False, default=())

    def __post_init__(self):
        if self.type not in TYPES:
            raise TypeError(f"parameter {self.name}: type must be one of float, int, str, bool")
        if not self.name.isidentifier():
            raise TypeError(f"parameter {self.name!r}: a name must be a Python identifier")
        if self.within:
            found = _INTERVAL.match(self.within)
            if not found or self.type not in (float, int):
                raise TypeError(f"parameter {self.name}: within must be an interval like [0, 1) on a number")
            lo, hi = float(found.group(2)), float(found.group(3))
            object.__setattr__(self, "_bounds", (lo, found.group(1) == "[", hi, found.group(4) == "]"))

    @property
    def interval(self) -> tuple[float, bool, float, bool] | None:
        """``within`` read: (low, low end included, high, high end included), or None."""
        return self._bounds or None

    @property
    def settable(self) -> bool:
        """Whether a user sets it (the command line's ``--param``, a page's control, a link)."""
        return self.context is None

    def _named(self) -> str:
        return f"{self.name} ({self.label})" if self.label else self.name

    def parse(self, text: str):
        """The value written as ``text`` (the command line, a link), checked (``check``)."""
        text = str(text).strip()
        if self.type is bool:
            if text.lower() not in _TRUE + _FALSE:
                raise ParamError(f"{self._named()} must be true or false, got {text!r}")
            return self.check(text.lower() in _TRUE)
        if self.type in (int, float):
            try:
                value = self.type(text)
            except ValueError:
                kind = "an integer" if self.type is int else "a number"
                raise ParamError(f"{self._named()} must be {kind}, got {text!r}") from None
            return self.check(value)
        return self.check(text)

    def check(self, value):
        """``value`` as the parameter's type, or ``ParamError`` saying in one sentence what it must be
        (a text is parsed first, so ``check`` also takes what ``text`` wrote)."""
        if isinstance(value, str) and self.type is not str:
            return self.parse(value)
        if self.type is float and isinstance(value, (int, float)) and not isinstance(value, bool):
            value = float(value)
        elif self.type is int and isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, self.type) or (self.type is int and isinstance(value, bool)):
            raise ParamError(f"{self._named()} must be of type {self.type.__name__}, got {value!r}")
        if self.choices and value not in self.choices:
            raise ParamError(f"{self._named()} must be one of {', '.join(map(str, self.choices))}, got {value!r}")
        if self.type in (int, float):
            if self._bounds:
                lo, lo_in, hi, hi_in = self._bounds
                inside = (value >= lo if lo_in else value > lo) and (value <= hi if hi_in else value < hi)
                if not (inside and math.isfinite(value)):
                    raise ParamError(f"{self._named()} must be {self.range_text()}, got {value:g}")
            elif not math.isfinite(value):
                raise ParamError(f"{self._named()} must be a finite number, got {value:g}")
        if self.validate is not None and (wanted := self.validate(value)):
            raise ParamError(f"{self._named()} must be {wanted}, got {value!r}")
        return value

    def range_text(self) -> str:
        """The values it takes in words: "in [0, 1)", "a finite number ≥ 0", "one of a, b"."""
        if self.choices:
            return "one of " + ", ".join(map(str, self.choices))
        if not self._bounds:
            return {bool: "true or false", str: "any text"}.get(self.type, "a finite number")
        lo, lo_in, hi, hi_in = self._bounds
        if math.isinf(hi) and not math.isinf(lo):
            return f"a finite number {'≥' if lo_in else '>'} {lo:g}"
        if math.isinf(lo) and not math.isinf(hi):
            return f"a number {'≤' if hi_in else '<'} {hi:g}"
        return f"in {self.within.strip()}"

    def text(self, value) -> str:
        """``value`` written so that ``parse`` reads it back exactly (a float's shortest repr)."""
        if self.type is bool:
            return "true" if value else "false"
        if self.type is float:
            value = float(value)
            return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
        return str(value)

    def describe(self) -> dict:
        """The declaration as JSON (``court --json``, docs)."""
        return {"name": self.name, "type": self.type.__name__, "default": self.default, "help": self.help,
                **({"choices": list(self.choices)} if self.choices else {}),
                **({"within": self.within} if self.within else {}),
                **({"context": self.context} if self.context else {})}


def declared(cls) -> tuple[Param, ...]:
    """The parameters rule class ``cls`` declares (``Verifier.parameters``), each as a ``Param``; a
    bare name (the older form) becomes a ``Param`` whose default and type are the constructor's."""
    out = []
    for entry in getattr(cls, "parameters", ()):
        if isinstance(entry, Param):
            out.append(entry)
            continue
        default = inspect.signature(cls.__init__).parameters.get(entry)
        value = None if default is None or default.default is inspect.Parameter.empty else default.default
        kind = type(value) if type(value) in TYPES else str
        out.append(Param(entry, kind, value, ""))
    return tuple(out)


def by_name(cls) -> dict[str, Param]:
    return {p.name: p for p in declared(cls)}


def assignment(text: str) -> tuple[str | None, str, str]:
    """``NAME=VALUE`` or ``RULE.NAME=VALUE`` (the command line's ``--param``) as (rule or None, name,
    value text), or ``ParamError``."""
    key, sep, value = text.partition("=")
    rule, dot, name = key.strip().rpartition(".")
    if not sep or not name.isidentifier() or (dot and not rule):
        raise ParamError(f"--param takes NAME=VALUE (or RULE.NAME=VALUE), got {text!r}")
    return (rule or None), name, value.strip()


def encode(settings: Mapping[str, Mapping[str, Any]], classes: Mapping[str, type]) -> str:
    """Settings {rule: {name: value}} as a link's ``params`` entry: ``rule.name:value`` joined by
    commas, rules and names sorted, each value as its ``Param.text`` writes it."""
    items = []
    for rule in sorted(settings):
        params = by_name(classes[rule])
        for name in sorted(settings[rule]):
            items.append(f"{rule}.{name}{VALUE_SEP}{params[name].text(settings[rule][name])}")
    return ITEM_SEP.join(items)


def decode(text: str, classes: Mapping[str, type]) -> dict[str, dict[str, Any]]:
    """A link's ``params`` entry (``encode``) as settings, each value checked by its ``Param``;
    ``ParamError`` (one sentence) for a rule that is not in ``classes``, a name the rule does not
    declare as settable, or a value it does not take."""
    settings: dict[str, dict[str, Any]] = {}
    for item in (t for t in text.split(ITEM_SEP) if t.strip()):
        key, sep, value = item.partition(VALUE_SEP)
        rule, dot, name = key.strip().rpartition(".")
        if not (sep and dot and rule):
            raise ParamError(f"a rule parameter is written rule.name{VALUE_SEP}value, got {item!r}")
        if rule not in classes:
            raise ParamError(f"no rule {rule!r} takes parameters here")
        param = by_name(classes[rule]).get(name)
        if param is None or not param.settable:
            raise ParamError(f"{rule} has no parameter {name!r}")
        settings.setdefault(rule, {})[name] = param.parse(value)
    return settings
