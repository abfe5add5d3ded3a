"""Seeded random toy models and drafts derived from a target (the mismatch is a knob).

Every generator takes an explicit ``seed`` and is replayable: the same arguments give the same model.
Conditionals are drawn from a symmetric Dirichlet(α); small α gives peaked distributions.
"""
from __future__ import annotations

import itertools

import numpy as np

from .models import IIDModel, MarkovModel, TableModel, ToyModel, ToyModelError, temper


def _check(V: int, alpha: float) -> None:
    if not (isinstance(V, (int, np.integer)) and 2 <= V <= 64):
        raise ToyModelError(f"vocabulary size V must be an integer in 2..64, got {V}")
    if not alpha > 0:
        raise ToyModelError(f"Dirichlet concentration must be > 0, got {alpha}")


def _dirichlet(rng: np.random.Generator, V: int, alpha: float, size=None) -> np.ndarray:
    out = rng.dirichlet(np.full(V, float(alpha)), size=size)
    # Dirichlet draws with tiny α can underflow to exact zeros; keep them strictly positive so that
    # q/p ratios stay finite unless a user asks for zeros explicitly.
    out = np.maximum(out, 1e-12)
    return out / out.sum(axis=-1, keepdims=True)


def random_iid(V: int, alpha: float = 1.0, seed: int = 0) -> IIDModel:
    _check(V, alpha)
    return IIDModel(_dirichlet(np.random.default_rng(seed), V, alpha))


def random_markov(V: int, alpha: float = 1.0, seed: int = 0) -> MarkovModel:
    _check(V, alpha)
    rng = np.random.default_rng(seed)
    return MarkovModel(_dirichlet(rng, V, alpha), _dirichlet(rng, V, alpha, size=V))


def random_table(V: int, depth: int, alpha: float = 1.0, seed: int = 0) -> TableModel:
    """One Dirichlet conditional for every prefix of length 0..depth (V^0 + … + V^depth rows)."""
    _check(V, alpha)
    if not 0 <= depth <= 8 or V ** depth > 100_000:
        raise ToyModelError(f"table depth {depth} is too large for V={V}")
    rng = np.random.default_rng(seed)
    table = {}
    for d in range(depth + 1):
        for prefix in itertools.product(range(V), repeat=d):
            table[prefix] = _dirichlet(rng, V, alpha)
    return TableModel(table)


def _map_conditionals(model: ToyModel, fn) -> ToyModel:
    """Apply ``fn(prefix, dist) -> dist`` to every stored conditional of ``model`` (at T = 1)."""
    if isinstance(model, IIDModel):
        return IIDModel(fn((), model.probs))
    if isinstance(model, MarkovModel):
        return MarkovModel(fn((), model.initial),
                           np.stack([fn((i,), row) for i, row in enumerate(model.transition)]))
    if isinstance(model, TableModel):
        return TableModel({k: fn(k, v) for k, v in model.conditionals.items()})
    raise ToyModelError(f"cannot derive a draft from {type(model).__name__}")


def mixed_draft(target: ToyModel, mix: float, alpha: float = 1.0, seed: int = 0) -> ToyModel:
    """Draft p(·|u) = (1 − mix)·q(·|u) + mix·r(·|u), r a seeded Dirichlet(α) noise model.

    mix = 0 gives p = q (every method accepts everything); mix = 1 gives an unrelated draft.
    """
    if not 0.0 <= mix <= 1.0:
        raise ToyModelError(f"mix must be in [0, 1], got {mix}")
    rng = np.random.default_rng(seed)

    def fn(prefix, dist):
        noise = _dirichlet(rng, dist.size, alpha)
        out = (1.0 - mix) * dist + mix * noise
        return out / out.sum()

    return _map_conditionals(target, fn)


def tempered_draft(target: ToyModel, temperature: float) -> ToyModel:
    """Draft p(·|u) ∝ q(·|u)^(1/temperature): a flatter (T > 1) or sharper (T < 1) copy of q."""
    if not temperature > 0:
        raise ToyModelError(f"draft temperature must be > 0, got {temperature}")
    return _map_conditionals(target, lambda prefix, dist: temper(dist, temperature))


def random_pair(kind: str, V: int, alpha: float = 1.0, mix: float = 0.5, seed: int = 0,
                depth: int = 3) -> tuple[ToyModel, ToyModel]:
    """A seeded (draft, target) pair of the given kind: the target from Dirichlet(α), the draft
    mixed with noise (``mixed_draft``).  ``depth`` is the table depth for kind 'table'."""
    if kind == "iid":
        target = random_iid(V, alpha, seed)
    elif kind == "markov":
        target = random_markov(V, alpha, seed)
    elif kind == "table":
        target = random_table(V, depth, alpha, seed)
    else:
        raise ToyModelError(f"unknown kind {kind!r}; expected iid, markov or table")
    return mixed_draft(target, mix, alpha, seed + 1_000_003), target
