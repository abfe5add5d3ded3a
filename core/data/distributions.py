"""Small float64 helpers on next-token distributions shared by the verification rules."""
from __future__ import annotations

import numpy as np


def positive_part(x: np.ndarray) -> np.ndarray:
    """(x)₊ elementwise."""
    return np.maximum(x, 0.0)


def acceptance_ratio(q, p):
    """min(1, q/p), elementwise for arrays; a token the draft could not have produced (p = 0) is
    accepted outright, which is immaterial for the law since it occurs with probability 0.  A
    subnormal p can make q/p overflow to inf, which min(1, ·) turns into the right answer, 1."""
    with np.errstate(over="ignore"):
        if np.ndim(p) == 0:
            return 1.0 if p <= 0.0 else min(1.0, q / p)
        positive = p > 0
        return np.where(positive, np.minimum(1.0, q / np.where(positive, p, 1.0)), 1.0)


def residual(weights: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """normalize((weights)₊) along the last axis, or ``fallback`` (row by row) when no positive mass
    is left.

    The fallback is reached only on probability-zero branches (e.g. q = p at a node whose residual
    is never drawn) or through rounding, where any distribution keeps the law intact.
    """
    pos = positive_part(weights)
    if pos.ndim == 1:
        total = float(pos.sum())
        return pos / total if total > 1e-300 else fallback
    total = pos.sum(axis=-1, keepdims=True)
    return np.where(total > 1e-300, pos / np.where(total > 1e-300, total, 1.0), fallback)


def without(row: np.ndarray, token: int) -> np.ndarray:
    """``row`` with ``token`` removed, renormalised (``row`` itself where nothing else is left, a branch
    of probability 0): the law of a draw from ``row`` given that it is not ``token``."""
    others = np.array(row, dtype=np.float64)
    others[token] = 0.0
    return residual(others, row)
