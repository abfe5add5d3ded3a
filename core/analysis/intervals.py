"""Confidence intervals for the mean of a few runs (the decoder sweeps' points).

Student's t: mean ± t_(0.975, n−1)·s/√n for n ≥ 2 independent runs; no scipy needed (the app never
imports it for this).
"""
from __future__ import annotations

from statistics import NormalDist

#: The 97.5% quantile of Student's t with ν = 1, …, 30 degrees of freedom (the printed table).
T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042)


def t_975(dof: int) -> float:
    """The 97.5% quantile of Student's t with ``dof`` ≥ 1 degrees of freedom: T_975 up to 30, beyond
    it the Cornish–Fisher expansion about the normal quantile z, t ≈ z + Σ_{i=1..4} g_i(z)/ν^i
    (Abramowitz & Stegun 26.7.5; error below 1e-7 for ν > 30)."""
    if dof <= len(T_975):
        return T_975[dof - 1]
    z = NormalDist().inv_cdf(0.975)
    g = ((z**3 + z) / 4, (5 * z**5 + 16 * z**3 + 3 * z) / 96, (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384,
         (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160)
    return z + sum(gi / dof ** (i + 1) for i, gi in enumerate(g))
