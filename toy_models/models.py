"""Toy language models over a small vocabulary Ω = {0..V-1} (docs/maths.md).

A toy model is a map from a prefix u (a tuple of token ids, relative to the current context) to the
next-token distribution m(·|u), a float64 vector that sums to 1.  Three kinds:

- ``IIDModel``: context independent, m(·|u) = probs for every u.
- ``MarkovModel``: first order, m(·|∅) = initial, m(·|u) = transition[u_last].
- ``TableModel``: fully context dependent, one conditional per prefix.  A prefix that the table does
  not list backs off to its longest listed suffix (the empty prefix must be listed), so the model is
  defined at every depth, as an n-gram model with back-off would be.

Temperature (docs/maths.md) acts on logits: m_T(x|u) ∝ exp(log m(x|u) / T) = m(x|u)^(1/T); T = 0 is the
argmax (ties go to the lowest token id).  ``with_temperature`` returns the tempered model.  Every
finite T > 0, however small (subnormal included), is computed exactly: see ``temper``.

Probabilities must be JSON numbers: booleans, strings and nulls are refused, naming the entry.

JSON form (used by the CLI and the app)::

    {"kind": "iid", "probs": [...]}
    {"kind": "markov", "initial": [...], "transition": [[...], ...]}
    {"kind": "table", "conditionals": {"": [...], "0": [...], "0,1": [...]}}
"""
from __future__ import annotations

import json
import math
import numbers
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

#: Inputs whose sum is within this of 1 are accepted and renormalized.
NORMALIZATION_TOLERANCE = 1e-9

Prefix = tuple[int, ...]


class ToyModelError(ValueError):
    """Invalid toy-model input; the message is one sentence naming the problem."""


def _non_number(values, index: tuple[int, ...] = ()) -> tuple[tuple[int, ...], object] | None:
    """(index, entry) of the first entry of a nested list that is not a real number, else None.

    ``np.asarray(..., float64)`` would read JSON ``true``/``false`` as 1/0 and ``"0.5"`` as 0.5;
    neither is a probability.  Numeric arrays are checked by dtype, without a walk.
    """
    if isinstance(values, np.ndarray) and values.dtype != object:
        if values.dtype.kind in "iuf":
            return None
        return (index + (0,) * values.ndim, values.flat[0]) if values.size else None
    if isinstance(values, (list, tuple, np.ndarray)):
        for i, entry in enumerate(values):
            found = _non_number(entry, index + (i,))
            if found is not None:
                return found
        return None
    if isinstance(values, (bool, np.bool_)) or not isinstance(values, numbers.Real):
        return index, values
    return None


def _numbers(values, what: str) -> np.ndarray:
    """``values`` (a possibly nested list of numbers) as a float64 array; ``ToyModelError`` naming the
    first entry that is not a number (a boolean, a string, null), or when the rows are ragged."""
    found = _non_number(values)
    if found is not None:
        index, entry = found
        if not index:
            raise ToyModelError(f"{what} must be a list of numbers, got {type(entry).__name__}")
        shown = json.dumps(entry) if isinstance(entry, (bool, np.bool_, str, type(None))) else repr(entry)
        kind = "a boolean" if isinstance(entry, (bool, np.bool_)) else "not a number"
        raise ToyModelError(f"{what} entry [{', '.join(map(str, index))}] is {kind} ({shown}); "
                            "probabilities must be numbers")
    try:
        return np.asarray(values, dtype=np.float64)
    except ValueError:  # ragged: the leaves are numbers, so only the lengths can disagree
        lengths = ", ".join(str(len(row)) if isinstance(row, (list, tuple, np.ndarray)) else "1"
                            for row in values)
        raise ToyModelError(f"{what} has rows of unequal lengths ({lengths})") from None


def as_distribution(values: Sequence[float], what: str = "distribution") -> np.ndarray:
    """Validate and renormalize a probability vector (float64).

    Raises ``ToyModelError`` for an entry that is not a number (booleans included), non-finite or
    negative entries, an empty vector, or a sum further than ``NORMALIZATION_TOLERANCE`` from 1
    (a sum that overflows float64 is reported as inf).
    """
    arr = _numbers(values, what)
    if arr.ndim != 1 or arr.size == 0:
        raise ToyModelError(f"{what} must be a non-empty list of numbers, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ToyModelError(f"{what} has a NaN or infinite entry")
    if np.any(arr < 0):
        raise ToyModelError(f"{what} has a negative entry ({arr.min():g})")
    with np.errstate(over="ignore"):  # e.g. [1e308, 1e308]: the sum is inf, refused just below
        total = float(arr.sum())
    if abs(total - 1.0) > NORMALIZATION_TOLERANCE:
        raise ToyModelError(f"{what} sums to {total:.12g}, not 1")
    return arr / total


def temper(dist: np.ndarray, temperature: float) -> np.ndarray:
    """Apply temperature to a distribution: ∝ dist^(1/T); T = 0 gives the one-hot argmax.

    For T > 0 the result is exp((log dist − log max dist) / T), normalized.  Shifting the logits
    *before* dividing by T keeps the largest at exactly 0, so a tiny T can only send the others to
    −∞ (overflow of a negative number), giving them weight exp(−∞) = 0 — also the float64 value of
    their exact weight (dist / max dist)^(1/T).  Hence there is no temperature floor: every finite
    T > 0, subnormal included, gives the tempered law without overflow or NaN, and as T → 0⁺ that law
    becomes the uniform one on the argmax set.  On ties this limit differs from T = 0 (which puts all
    the mass on the lowest tied token id), so a tiny T is computed, never replaced by greedy.
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
    with np.errstate(divide="ignore", over="ignore"):  # log 0 = −∞ and (finite < 0)/tiny T = −∞
        logits = np.log(dist)
        logits = (logits - logits.max()) / temperature
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
        """The same model with temperature T applied to its logits (docs/maths.md): any finite T ≥ 0, with
        T = 0 greedy and no floor on T > 0 (``temper`` says why a tiny T is exact)."""
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
        matrix = _numbers(self.transition, "transition")
        if matrix.shape != (V, V):
            raise ToyModelError(f"transition must be a {V}×{V} matrix ({V} rows of {V} numbers, as "
                                f"initial has {V} entries), got shape {matrix.shape}")
        self.transition = np.stack([as_distribution(row, f"transition row {i}")
                                    for i, row in enumerate(matrix)])
        self.V = int(V)

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
    """Build a toy model from its JSON form: a dict, JSON text (a ``str``), or a ``Path`` to a file.

    A ``str`` is always JSON text, never a file name, and the parsed value must be a JSON object:
    a file holding the JSON string "other.json" is refused, not followed.
    """
    if isinstance(obj, Path):
        return load(obj)
    if isinstance(obj, str):
        try:
            obj = json.loads(obj)
        except json.JSONDecodeError as exc:
            raise ToyModelError(f"not valid JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(obj, dict):
        raise ToyModelError(f"a toy model must be a JSON object with a \"kind\", got {_json_type(obj)}")
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


def _json_type(value) -> str:
    """The JSON name of a parsed value's type: "a JSON string", "a JSON array", …"""
    names = {str: "string", list: "array", bool: "boolean", int: "number", float: "number",
             type(None): "null"}
    return f"a JSON {names[type(value)]}" if type(value) in names else f"a {type(value).__name__}"


def load(path) -> ToyModel:
    """Read a toy model from a JSON file, which must hold one JSON object."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ToyModelError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ToyModelError(f"{path} is not a UTF-8 text file") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToyModelError(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(obj, dict):  # a JSON string is not read as another path: no self-reference
        raise ToyModelError(f"{path} must hold a JSON object with a \"kind\", got {_json_type(obj)}")
    return from_json(obj)


def to_json(model: ToyModel) -> dict:
    return model.to_json()
