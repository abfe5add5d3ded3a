"""Confidence intervals for the mean of a few runs: the decoder sweeps' points and the leaderboard.

Student's t: mean ± t_(0.975, n−1)·s/√n for n ≥ 2 independent runs, s the sample standard deviation;
``bounded_t_interval`` cuts it to the values the mean can take.
"""
from __future__ import annotations

import math

import numpy as np


def t_975(dof: int) -> float:
    """The 97.5% quantile of Student's t with ``dof`` ≥ 1 degrees of freedom (``scipy.stats.t``;
    12.706 at one degree of freedom, 2.042 at thirty, 1.960 in the limit)."""
    from scipy.stats import t   # imported here: listing rules or reading results does not need scipy

    if dof < 1:
        raise ValueError(f"Student's t needs at least one degree of freedom, got {dof}")
    return float(t.ppf(0.975, dof))


def bounded_t_interval(mean, std, n, lower=-math.inf, upper=math.inf):
    """The 95% interval mean ± t_(0.975, n−1)·s/√n intersected with [lower, upper], the values the
    true mean can take (block efficiency: 1 to L + 1 tokens per target call; a speedup: ≥ 0).

    Element-wise over arrays (or scalars) ``mean``, ``std`` (s, the sample standard deviation) and
    ``n`` (runs); ``lower`` and ``upper`` broadcast with them.  Returns (lo, hi, cut): NaN ends where
    n < 2 (no spread is seen, so no interval is claimed), and ``cut`` True where a bound moved an end.

    Why cut, rather than widen or resample: the true mean μ is inside [lower, upper] for certain, so
    the t-interval contains μ exactly when its intersection with [lower, upper] does.  The cut
    interval has the t-interval's coverage and never names an impossible value (a block efficiency of
    0.7, a speedup of −0.04).  A bootstrap is no better here: a sweep point has 2 to 5 runs, whose
    resamples take a handful of distinct means, and its percentile interval covers well below 95%.

    >>> lo, hi, cut = bounded_t_interval(1.25, 0.5, 4, lower=1.0, upper=5.0)   # runs 1, 1, 1, 2
    >>> float(lo), round(float(hi), 4), bool(cut)          # 1.25 ± 3.1824·0.5/2: low end 0.4544 cut at 1
    (1.0, 2.0456, True)
    """
    mean, std = np.asarray(mean, dtype=np.float64), np.asarray(std, dtype=np.float64)
    n = np.asarray(n)
    t = np.vectorize(lambda k: t_975(int(k) - 1) if k >= 2 else np.nan, otypes=[np.float64])(n)
    half = t * std / np.sqrt(np.maximum(n, 1))
    raw_lo, raw_hi = mean - half, mean + half
    lo, hi = np.maximum(raw_lo, lower), np.minimum(raw_hi, upper)
    cut = (raw_lo < lower) | (raw_hi > upper)
    if lo.ndim == 0:
        return float(lo), float(hi), bool(cut)
    return lo, hi, cut


def standard_error(values) -> float | None:
    """s/√n of ``values`` (s the sample standard deviation): the noise of their mean, e.g. of block
    efficiency from the choice of prompts and seeds; None for fewer than two values."""
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n)
