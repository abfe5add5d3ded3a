"""Randomness for verifiers, written once and used two ways.

Every verifier draws its internal randomness (acceptance coins, residual draws) through a ``Coins``
object.  ``RandomCoins`` samples with a seeded ``numpy.random.Generator``; ``enumerate_outcomes``
runs the same verifier code over *every* coin outcome, each with its exact probability, by replaying
the program with forced choices (depth-first over the choice tree).  The exact laws of docs/maths.md and
the sampled runs therefore come from one implementation and cannot drift apart.  Given ``exact`` (a
map from each float weight the program passes to the rational it stands for), the probabilities are
carried as ``fractions.Fraction`` instead, in exact arithmetic (the LP certificates of
``core.bounds.certify``).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Protocol

import numpy as np

from core.errors import ExplorerError, InvalidInput


class Coins(Protocol):
    def bernoulli(self, prob: float) -> bool:
        """True with probability ``prob`` (clipped to [0, 1])."""

    def categorical(self, probs: np.ndarray) -> int:
        """An index drawn with probability ∝ ``probs`` (non-negative, positive sum)."""


def normalized(weights: np.ndarray) -> np.ndarray:
    """weights / Σ weights, float64; raises if nothing has positive weight."""
    weights = np.asarray(weights, dtype=np.float64)
    total = float(weights.sum())
    if not total > 0:
        raise ValueError("cannot normalize a vector with no positive mass")
    return weights / total


def generator(seed) -> np.random.Generator:
    """``np.random.default_rng(seed)``, the one seed policy of the library.

    Anything ``default_rng`` takes is accepted (an int, a sequence of ints, a ``SeedSequence``; a
    ``Generator`` is returned unchanged, so a caller can thread one generator through several
    steps).  ``None`` is refused: it would draw fresh entropy from the system, and every random run
    must take a seed and replay exactly."""
    if seed is None:
        raise InvalidInput("a seed is required: every random run must replay exactly")
    return np.random.default_rng(seed)


class RandomCoins:
    """Coins from a seeded generator (``generator``): a run is replayed exactly by reusing the seed."""

    def __init__(self, seed):
        self.rng = generator(seed)

    def bernoulli(self, prob: float) -> bool:
        # U ~ U[0,1): prob 1 always passes and prob 0 never does.
        return bool(self.rng.random() < prob)

    def categorical(self, probs: np.ndarray) -> int:
        cdf = np.cumsum(np.asarray(probs, dtype=np.float64))
        u = self.rng.random() * cdf[-1]
        idx = int(np.searchsorted(cdf, u, side="right"))
        idx = min(idx, cdf.size - 1)
        # Never return a zero-probability index (possible only through rounding at the top end).
        while probs[idx] <= 0 and idx > 0:
            idx -= 1
        return idx


class _Branch:
    """Replays forced choices; at each new choice takes the first option and queues the others.
    With ``exact`` (float -> Fraction) the weights, hence the probabilities, are exact rationals."""

    __slots__ = ("forced", "pos", "prob", "pending", "exact")

    def __init__(self, forced: tuple, prob, pending: list, exact: Callable[[float], Any] | None = None):
        self.forced = forced
        self.pos = 0
        self.prob = prob
        self.pending = pending
        self.exact = exact

    def _choose(self, options: list[tuple[Any, float]]):
        if self.pos < len(self.forced):
            value = self.forced[self.pos]
            self.pos += 1
            return value
        taken = self.forced[: self.pos]
        for value, weight in options[1:]:
            self.pending.append((taken + (value,), self.prob * weight))
        value, weight = options[0]
        self.prob *= weight
        self.forced = taken + (value,)
        self.pos += 1
        return value

    def bernoulli(self, prob: float) -> bool:
        prob = min(max(float(prob), 0.0), 1.0)
        if prob >= 1.0:
            return True
        if prob <= 0.0:
            return False
        if self.exact is not None:
            exact = self.exact(prob)
            return self._choose([(True, exact), (False, 1 - exact)])
        return self._choose([(True, prob), (False, 1.0 - prob)])

    def categorical(self, probs: np.ndarray) -> int:
        if self.exact is not None:
            support = [i for i, x in enumerate(probs) if x > 0]
            if not support:
                raise ValueError("cannot normalize a vector with no positive mass")
            if len(support) == 1:
                return support[0]
            if self.pos < len(self.forced):           # a replayed choice: its weight is charged
                return self._choose(())
            weights = [self.exact(float(probs[i])) for i in support]
            total = sum(weights)
            return self._choose([(i, w / total) for i, w in zip(support, weights)])
        dist = normalized(probs)
        support = np.flatnonzero(dist > 0)
        if support.size == 1:
            return int(support[0])
        return self._choose([(int(i), float(dist[i])) for i in support])


class TooManyOutcomes(ExplorerError, RuntimeError):
    """The choice tree has more leaves than the caller allowed."""


def enumerate_outcomes(program: Callable[[Coins], Any], max_leaves: int | None = None,
                       exact: Callable[[float], Any] | None = None) -> list[tuple[Any, Any]]:
    """Run ``program(coins)`` over every coin outcome; return [(probability, result), ...].

    The probabilities sum to 1 (up to rounding).  The number of runs equals the number of leaves of
    the choice tree, so keep programs whose coin count is small (toy models).  Probabilities of a
    run are carried when the run is *forced*, so a replayed prefix is charged once.

    ``exact``, when given, maps every weight the program passes to the coins (a float) to the
    rational it stands for (``fractions.Fraction``); the probabilities are then exact and sum to 1
    exactly.  It may raise to refuse a weight that stands for no known rational.
    """
    results: list[tuple[Any, Any]] = []
    pending: list[tuple[tuple, Any]] = [((), 1.0 if exact is None else Fraction(1))]
    while pending:
        forced, prob = pending.pop()
        coins = _Branch(forced, prob, pending, exact)
        # The forced prefix's probability is already in ``prob``; new choices multiply into it.
        out = program(coins)
        results.append((coins.prob, out))
        if max_leaves is not None and len(results) > max_leaves:
            raise TooManyOutcomes(f"more than {max_leaves} coin outcomes")
    return results
