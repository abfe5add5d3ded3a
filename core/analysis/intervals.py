"""Confidence intervals for the mean of a few runs: the decoder sweeps' points and the leaderboard.

Student's t: mean ± t_(0.975, n−1)·s/√n for n ≥ 2 independent runs, s the sample standard deviation.
"""
from __future__ import annotations

import math


def t_975(dof: int) -> float:
    """The 97.5% quantile of Student's t with ``dof`` ≥ 1 degrees of freedom (``scipy.stats.t``;
    12.706 at one degree of freedom, 2.042 at thirty, 1.960 in the limit)."""
    from scipy.stats import t   # imported here: listing rules or reading results does not need scipy

    if dof < 1:
        raise ValueError(f"Student's t needs at least one degree of freedom, got {dof}")
    return float(t.ppf(0.975, dof))


def standard_error(values) -> float | None:
    """s/√n of ``values`` (s the sample standard deviation): the noise of their mean, e.g. of block
    efficiency from the choice of prompts and seeds; None for fewer than two values."""
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n)
