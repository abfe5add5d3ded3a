"""Toy language models over a small vocabulary Ω = {0..V-1} (spec §1, §7).

A toy model is a map from a prefix u (a tuple of token ids, relative to the current context) to the
next-token distribution m(·|u), a float64 vector that sums to 1.  Three kinds:

- ``IIDModel``: context independent, m(·|u) = probs for every u.
- ``MarkovModel``: first order, m(·|∅) = initial, m(·|u) = transition[u_last].
- ``TableModel``: fully context dependent, one conditional per prefix.  A prefix that the table does
  not list backs off to its longest listed suffix (the empty prefix must be listed), so the model is
  defined at every depth, as an n-gram model with back-off would be.

Temperature (spec §1) acts on logits: m_T(x|u) ∝ exp(log m(x|u) / T) = m(x|u)^(1/T); T = 0 is the
argmax (ties go to the lowest token id).  ``with_temperature`` returns the tempered model.

JSON form (used by the CLI and the app)::

    {"kind": "iid", "probs": [...]}
    {"kind": "markov", "initial": [...], "transition": [[...], ...]}
    {"kind": "table", "conditionals": {"": [...], "0": [...], "0,1": [...]}}
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

#: Inputs whose sum is within this of 1 are accepted and renormalized.
NORMALIZATION_TOLERANCE = 1e-9

Prefix = tuple[int, ...]


class ToyModelError(ValueError):
    """Invalid toy-model input; the message is one sentence naming the problem."""


def as_distribution(values: Sequence[float], what: str = "distribution") -> np.ndarray:
    """Validate and renormalize a probability vector (float64).

    Raises ``ToyModelError`` for non-finite or negative entries, an empty vector, or a sum further
    than ``NORMALIZATION_TOLERANCE`` from 1.
    """
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ToyModelError(f"{what} must be a list of numbers") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ToyModelError(f"{what} must be a non-empty list of numbers")
    if not np.all(np.isfinite(arr)):
        raise ToyModelError(f"{what} has a NaN or infinite entry")
    if np.any(arr < 0):
        raise ToyModelError(f"{what} has a negative entry ({arr.min():g})")
    total = float(arr.sum())
    if abs(total - 1.0) > NORMALIZATION_TOLERANCE:
        raise ToyModelError(f"{what} sums to {total:.12g}, not 1")
    return arr / total


def temper(dist: np.ndarray, temperature: float) -> np.ndarray:
    """Apply temperature to a distribution: ∝ dist^(1/T); T = 0 gives the one-hot argmax.

    Zero-probability tokens (logit −∞) stay at zero for every T.
    """
    if temperature < 0 or not math.isfinite(temperature):
        raise ToyModelError(f"temperature must be a finite number ≥ 0, got {temperature}")
    if temperature == 0:
        out = np.zeros_like(dist)
        out[int(np.argmax(dist))] = 1.0
        return out
    if temperature == 1:
        return dist
    with np.errstate(divide="ignore"):
        logits = np.log(dist) / temperature
    logits -= logits.max()
    out = np.exp(logits)
    return out / out.sum()


class ToyModel:
    """Base class: subclasses implement ``_cond`` at temperature 1."""

    V: int
    temperature: float = 1.0

    def _cond(self, prefix: Prefix) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def cond(self, prefix: Sequence[int]) -> np.ndarray:
        """Next-token distribution m_T(·|prefix), float64, read-only."""
        key = tuple(int(t) for t in prefix)
        cache = self.__dict__.setdefault("_cache", {})
        out = cache.get(key)
        if out is None:
            out = temper(self._cond(key), self.temperature)
            out.setflags(write=False)
            cache[key] = out
        return out

    def joint(self, seq: Sequence[int]) -> float:
        """m(seq) = Π_i m(seq_i | seq_<i)."""
        prob = 1.0
        seq = tuple(int(t) for t in seq)
        for i, tok in enumerate(seq):
            prob *= float(self.cond(seq[:i])[tok])
            if prob == 0.0:
                break
        return prob

    def with_temperature(self, temperature: float) -> "ToyModel":
        """The same model with temperature T applied to its logits (spec §1)."""
        temper(np.ones(1), temperature)  # validates T
        clone = self._replace()
        clone.temperature = float(temperature)
        return clone

    def _replace(self) -> "ToyModel":  # pragma: no cover - abstract
        raise NotImplementedError

    def to_json(self) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass(eq=False)
class IIDModel(ToyModel):
    probs: np.ndarray

    def __post_init__(self):
        self.probs = as_distribution(self.probs, "probs")
        self.V = int(self.probs.size)

    def _cond(self, prefix: Prefix) -> np.ndarray:
        return self.probs

    def _replace(self):
        return IIDModel(self.probs.copy())

    def to_json(self) -> dict:
        return {"kind": "iid", "probs": self.probs.tolist()}


@dataclass(eq=False)
class MarkovModel(ToyModel):
    initial: np.ndarray
    transition: np.ndarray

    def __post_init__(self):
        self.initial = as_distribution(self.initial, "initial")
        V = self.initial.size
        try:
            rows = [np.asarray(r, dtype=np.float64) for r in self.transition]
        except (TypeError, ValueError):
            raise ToyModelError("transition must be a list of lists of numbers") from None
        if len(rows) != V:
            raise ToyModelError(f"transition has {len(rows)} rows but initial has {V} entries")
        self.transition = np.stack(
            [self._row(r, i, V) for i, r in enumerate(rows)]) if V else np.zeros((0, 0))
        self.V = int(V)

    @staticmethod
    def _row(row, i, V):
        if np.ndim(row) != 1 or len(row) != V:
            raise ToyModelError(f"transition row {i} has {np.size(row)} entries, expected {V}")
        return as_distribution(row, f"transition row {i}")

    def _cond(self, prefix: Prefix) -> np.ndarray:
        return self.initial if not prefix else self.transition[prefix[-1]]

    def _replace(self):
        return MarkovModel(self.initial.copy(), self.transition.copy())

    def to_json(self) -> dict:
        return {"kind": "markov", "initial": self.initial.tolist(),
                "transition": self.transition.tolist()}


@dataclass(eq=False)
class TableModel(ToyModel):
    conditionals: Mapping[Prefix, np.ndarray] = field(default_factory=dict)

    def __post_init__(self):
        table = {}
        V = None
        for key, row in self.conditionals.items():
            prefix = parse_prefix(key) if isinstance(key, str) else tuple(int(t) for t in key)
            label = "conditional at prefix '" + ",".join(map(str, prefix)) + "'"
            dist = as_distribution(row, label)
            if V is None:
                V = dist.size
            elif dist.size != V:
                raise ToyModelError(f"{label} has {dist.size} entries, expected {V}")
            table[prefix] = dist
        if () not in table:
            raise ToyModelError("conditionals must include the empty prefix \"\"")
        for prefix in table:
            if any(t < 0 or t >= V for t in prefix):
                raise ToyModelError(f"prefix {','.join(map(str, prefix))} uses a token outside 0..{V - 1}")
        self.conditionals = table
        self.V = int(V)

    def _cond(self, prefix: Prefix) -> np.ndarray:
        for start in range(len(prefix) + 1):  # longest listed suffix
            row = self.conditionals.get(prefix[start:])
            if row is not None:
                return row
        raise AssertionError("unreachable: the empty prefix is always listed")

    @property
    def depth(self) -> int:
        """Length of the longest listed prefix."""
        return max(len(k) for k in self.conditionals)

    def _replace(self):
        return TableModel({k: v.copy() for k, v in self.conditionals.items()})

    def to_json(self) -> dict:
        return {"kind": "table", "conditionals": {
            ",".join(map(str, k)): v.tolist() for k, v in sorted(self.conditionals.items())}}


def parse_prefix(key: str) -> Prefix:
    key = key.strip()
    if not key:
        return ()
    try:
        return tuple(int(t) for t in key.split(","))
    except ValueError:
        raise ToyModelError(f"prefix key {key!r} must be token ids joined by commas") from None


def from_json(obj) -> ToyModel:
    """Build a toy model from its JSON form (a dict, a JSON string, or a path)."""
    if isinstance(obj, (str, Path)) and not str(obj).lstrip().startswith("{"):
        return load(obj)
    if isinstance(obj, str):
        try:
            obj = json.loads(obj)
        except json.JSONDecodeError as exc:
            raise ToyModelError(f"not valid JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(obj, dict):
        raise ToyModelError("a toy model must be a JSON object with a \"kind\"")
    kind = obj.get("kind")
    try:
        if kind == "iid":
            return IIDModel(obj["probs"])
        if kind == "markov":
            return MarkovModel(obj["initial"], obj["transition"])
        if kind == "table":
            conds = obj["conditionals"]
            if not isinstance(conds, dict):
                raise ToyModelError("conditionals must be an object mapping prefixes to lists")
            return TableModel(conds)
    except KeyError as exc:
        raise ToyModelError(f"a {kind} model needs the field {exc.args[0]!r}") from None
    raise ToyModelError(f"unknown kind {kind!r}; expected iid, markov or table")


def load(path) -> ToyModel:
    """Read a toy model from a JSON file."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ToyModelError(f"cannot read {path}: {exc.strerror}") from None
    try:
        return from_json(json.loads(text))
    except json.JSONDecodeError as exc:
        raise ToyModelError(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}") from None


def to_json(model: ToyModel) -> dict:
    return model.to_json()
