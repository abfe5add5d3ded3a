"""A float shown as the exact fraction it comes from, when it provably is one (docs/choices.md).

Exact laws computed in float64 carry rounding of about 1e-15, so a value that is a fraction a/b
comes back within that of it.  But every real number is close to *some* fraction: there are about
0.3·N² fractions with denominator ≤ N in [0, 1], so within ±1e-12 of a random number there is one
with denominator ≤ 10^6 more often than not.  A match is therefore accepted only to the tolerance

    |x − a/b| ≤ min(1e-12, 1e-4 / b²),

the fixed 1e-12 for b ≤ 10^4 and tighter above it, so that a number that is no
fraction at all is shown as one with probability below about 1e-3 whatever the denominator
(≈ 2·0.3·(2b)²·1e-4/b² summed over dyadic ranges of b), while 72331/46656 computed in float64
(error ~1e-16, tolerance 4.6e-14) is recognised.
"""
from __future__ import annotations

import math
from fractions import Fraction

#: Largest denominator a fraction may have.
MAX_DENOMINATOR = 10**6
#: The match required for small denominators (and the cap for large ones).
EXACT_TOL = 1e-12
#: The match required at denominator b is min(EXACT_TOL, SPREAD / b²).
SPREAD = 1e-4


def as_fraction(x, max_denominator: int = MAX_DENOMINATOR) -> Fraction | None:
    """The fraction a/b (b ≤ ``max_denominator``) that ``x`` equals to rounding, or None.

    >>> as_fraction(16 / 9), as_fraction(72331 / 46656), as_fraction(2 ** 0.5)
    (Fraction(16, 9), Fraction(72331, 46656), None)
    """
    if x is None or not math.isfinite(x):
        return None
    f = Fraction(float(x)).limit_denominator(max_denominator)
    if abs(float(f) - x) > min(EXACT_TOL, SPREAD / f.denominator ** 2):
        return None
    return f


def fraction(x, max_denominator: int = MAX_DENOMINATOR, integers: bool = False) -> str | None:
    """``x`` as "a/b" (b > 1) when it is that fraction to rounding (``as_fraction``); an integer
    as "a" when ``integers`` is true, else None; None for a number that is no fraction of
    denominator ≤ ``max_denominator``.

    >>> fraction(1072 / 729), fraction(2.0), fraction(2 - 2e-16, integers=True), fraction(0.1 + 1e-9)
    ('1072/729', None, '2', None)
    """
    f = as_fraction(x, max_denominator)
    if f is None or (f.denominator == 1 and not integers):
        return None
    return str(f)
