"""Two Gumbel-max draws that share one noise vector, exactly (docs/maths.md, "vLLM's shared Gumbel
noise (`vllm_shared_gumbel`)").

Gumbel-max sampling draws i = argmax_v (log a(v) + G_v) with G_v i.i.d. standard Gumbel, which is a
draw from a normalised.  Written as an exponential race, G_v = −ln E_v with E_v ~ Exp(1): i =
argmin_v E_v/a(v).  When a second law b is drawn with the *same* vector, k = argmin_v E_v/b(v), the
two draws are coupled, and the law of k given i is no longer b.  It is computed here in closed form,
by integrating over the noise.

Let A = Σ a, σ_v = a(v)/b(v) (∞ where b(v) = 0, 0 where a(v) = 0 < b(v)).  Given that i wins the
a-race at time m = E_i/a(i) (m ~ Exp(A), independent of i, which wins with probability a(i)/A),
every other E_j is m·a(j) plus a fresh Exp(1) (memorylessness), so in the b-race token j ≠ i arrives
at m·σ_j plus an Exp(b(j)) delay, and i arrives at m·σ_i exactly.  With t = m·τ, no token j ≠ i
has arrived by m·τ with probability exp(−m·Λ(τ)), Λ(τ) = Σ_(j≠i) b(j)·(τ − σ_j)₊, so

    P(k = i | i)  = ∫ A e^(−A m) e^(−m Λ(σ_i)) dm          = A / (A + Λ(σ_i)),
    P(k = j | i)  = ∫ A e^(−A m) ∫_(σ_j)^(σ_i) m b(j) e^(−m Λ(τ)) dτ dm
                  = A·b(j)·∫_(σ_j)^(σ_i) dτ / (A + Λ(τ))²        (j ≠ i; 0 where σ_j ≥ σ_i).

Λ is piecewise linear in τ with breakpoints at the σ_j, so on a piece where A + Λ(τ) = α + βτ the
integral is (τ₂ − τ₁)/((α + βτ₁)(α + βτ₂)), and (α + βτ₁)⁻¹/β up to τ₂ = ∞ (β > 0 there).  The
row costs O(V log V).  The tests check the rows against the joint law's marginals (Σ_i a(i)/A ·
row_i = b/Σb), against quadrature of the same integral, and against the mechanism itself sampled
with seeded noise.
"""
from __future__ import annotations

import numpy as np


def _cumulative(A: float, sigma: np.ndarray, rate: np.ndarray):
    """The function τ ↦ ∫_0^τ dτ'/(A + Λ(τ'))², Λ(τ) = Σ_j rate_j·(τ − σ_j)₊, as a vectorised callable
    (τ may be ∞ where some rate is positive beyond the last breakpoint)."""
    order = np.argsort(sigma, kind="stable")
    knots = np.concatenate(([0.0], sigma[order]))
    slopes = np.concatenate(([0.0], np.cumsum(rate[order])))            # β on [knots[i], knots[i+1])
    offsets = A - np.concatenate(([0.0], np.cumsum(rate[order] * sigma[order])))   # α on that piece

    def piece(alpha, beta, t1, t2):
        lo = alpha + beta * t1
        if np.isinf(t2):
            return 1.0 / (beta * lo)
        return (t2 - t1) / (lo * (alpha + beta * t2))

    at_knots = np.zeros(knots.size)
    for n in range(1, knots.size):
        at_knots[n] = at_knots[n - 1] + piece(offsets[n - 1], slopes[n - 1], knots[n - 1], knots[n])

    def G(tau: float) -> float:
        if tau <= 0.0:
            return 0.0
        n = int(np.searchsorted(knots, tau, side="right")) - 1
        return float(at_knots[n] + piece(offsets[n], slopes[n], knots[n], tau))
    return G


def shared_noise_row(a: np.ndarray, b: np.ndarray, i: int) -> np.ndarray:
    """The law of argmax(log b + G) given argmax(log a + G) = i, G one Gumbel vector (module
    docstring): a row over the V tokens summing to 1.  ``a`` and ``b`` are non-negative weights
    (normalised here); a(i) must be positive and b must have positive mass."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a, b = a / a.sum(), b / b.sum()
    if not a[i] > 0:
        raise ValueError(f"token {i} cannot win the first race: its weight is 0")
    A = 1.0
    others = np.arange(a.size) != i
    with np.errstate(divide="ignore"):
        sigma = np.where(b > 0, a / np.where(b > 0, b, 1.0), np.inf)
    live = others & (b > 0)                  # tokens that can win the second race besides i
    G = _cumulative(A, sigma[live], b[live])
    row = np.zeros(a.size)
    top = G(sigma[i])                        # σ_i = ∞ where b(i) = 0: i never wins the second race
    for j in np.flatnonzero(live):
        if sigma[j] < sigma[i]:
            row[j] = A * b[j] * (top - G(sigma[j]))
    if b[i] > 0:
        row[i] = A / (A + float(np.sum(b[live] * np.maximum(sigma[i] - sigma[live], 0.0))))
    return row


def shared_noise_joint(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """J[i, k] = P(argmax(log a + G) = i, argmax(log b + G) = k) for one Gumbel vector G: row i is
    a(i)/Σa times ``shared_noise_row(a, b, i)`` (0 where a(i) = 0)."""
    a = np.asarray(a, dtype=np.float64)
    a = a / a.sum()
    joint = np.zeros((a.size, a.size))
    for i in np.flatnonzero(a > 0):
        joint[i] = a[i] * shared_noise_row(a, b, i)
    return joint
