"""What a sweep is, and the checks that refuse a bad one up front with one sentence.

A sweep is the grid families × V × K × L with ``n`` instances per cell, every instance analysed
exactly for each method, with the requested bounds on E[τ] beside them.  The configuration is saved
with the results (``core.sweep.store``): a results folder holds one configuration only.
"""
from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass
from typing import NamedTuple

from core.analysis.exact import MAX_SECONDS, estimated_seconds
from core.bounds import BoundsTooLarge, check_size
from core.bounds.sizes import check_paths
from core.errors import ExplorerError
from core.rules.registry import REGISTRY

FAMILIES = ("iid", "markov", "table", "near")
BOUNDS = ("lp", "acausal", "cic")
#: The one lossy rule the default leaderboard shows beside the lossless ones (named by the issue).
DEFAULT_LOSSY = ("spectr_gbv",)
#: Vocabulary sizes the generators accept.
V_RANGE = (2, 64)
#: Largest V^L of a table target (``toy_models.random_table`` stores one conditional per prefix).
TABLE_PATHS = 100_000


class SweepError(ExplorerError, ValueError):
    """A sweep cannot run as asked (a bad option, a configuration too large, an unusable results
    folder or scheduler); the message is one sentence."""


class InstanceKey(NamedTuple):
    """Where one instance sits in the grid; with the configuration's seed it determines the models."""

    family: str
    V: int
    K: int
    L: int
    index: int


def default_methods() -> tuple[str, ...]:
    """Every registered lossless rule that needs no model of its own (``lp_optimal``'s value is the
    LP column), plus ``DEFAULT_LOSSY``; read from the registry's metadata at run time."""
    return tuple(name for name, cls in REGISTRY.items()
                 if not cls.needs_models and (cls.lossless_by_theory or name in DEFAULT_LOSSY))


@dataclass(frozen=True)
class SweepConfig:
    families: tuple[str, ...]
    Vs: tuple[int, ...]
    Ks: tuple[int, ...]
    Ls: tuple[int, ...]
    n: int
    methods: tuple[str, ...]
    bounds: tuple[str, ...] = BOUNDS
    temperature: float = 1.0
    seed: int = 0

    def to_json(self) -> dict:
        return {key: list(value) if isinstance(value, tuple) else value
                for key, value in asdict(self).items()}

    @classmethod
    def from_json(cls, obj: dict) -> "SweepConfig":
        return cls(**{key: tuple(value) if isinstance(value, list) else value for key, value in obj.items()})

    def cells(self) -> list[tuple[str, int, int, int]]:
        """(family, V, K, L) for every cell of the grid, in a fixed order."""
        return list(itertools.product(self.families, self.Vs, self.Ks, self.Ls))

    def instances(self) -> list[InstanceKey]:
        return [InstanceKey(*cell, i) for cell in self.cells() for i in range(self.n)]


def check_config(config: SweepConfig) -> None:
    """Raise ``SweepError`` (one sentence) unless every cell of the sweep can run in reasonable time:
    names known, V in range, each requested LP under ``core.bounds`` limits, each method's exact
    analysis under ``core.analysis.exact.MAX_SECONDS`` by its cost estimate."""
    def unknown(kind, names, known):
        bad = [x for x in names if x not in known]
        if bad:
            raise SweepError(f"unknown {kind} {bad[0]!r}; choose from {', '.join(known)}")

    unknown("family", config.families, FAMILIES)
    unknown("method", config.methods, tuple(REGISTRY))
    unknown("bound", config.bounds, BOUNDS)
    if not config.methods:
        raise SweepError("no methods to compare; pass --methods")
    if config.n < 1:
        raise SweepError(f"n must be at least 1, got {config.n}")
    for V in config.Vs:
        if not V_RANGE[0] <= V <= V_RANGE[1]:
            raise SweepError(f"V must be between {V_RANGE[0]} and {V_RANGE[1]}, got {V}")
    for V, K, L in sorted(set(itertools.product(config.Vs, config.Ks, config.Ls))):
        try:
            check_paths(V, L)
            if {"table", "near"} & set(config.families) and V ** L > TABLE_PATHS:
                raise BoundsTooLarge(f"a table target of depth {L} over {V} tokens has {V ** L:,} "
                                     f"prefixes of length L (limit {TABLE_PATHS:,})")
            if "lp" in config.bounds:
                check_size(V, K, L)
            if "acausal" in config.bounds:
                check_size(V, K, L, kind="acausal")
        except BoundsTooLarge as exc:
            raise SweepError(f"cell V={V}, K={K}, L={L}: {exc}") from None
        for name in config.methods:
            cost = estimated_seconds(REGISTRY[name], V, K, L)
            if cost > MAX_SECONDS:
                raise SweepError(f"the exact law of {name} for V={V}, K={K}, L={L} would take about "
                                 f"{cost:,.0f} s per instance (limit {MAX_SECONDS:g} s); lower V, K or L")
