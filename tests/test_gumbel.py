"""Two Gumbel-max draws sharing one noise vector (``core.data.gumbel``): the closed form against values
derived by hand, the joint law's two marginals, a numerical integration over the noise itself (to
1e-9), and the mechanism sampled with seeded noise."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from core.data.gumbel import shared_noise_joint, shared_noise_row


def test_a_row_derived_by_hand():
    # a = (1/2, 1/4, 1/4) wins at token 0; b = (0, 1/4, 3/4).  A = 1, σ_1 = (1/4)/(1/4) = 1, σ_2 = (1/4)/(3/4) =
    # 1/3, σ_0 = ∞.  On [1/3, 1]: 1 + Λ = 3/4 + 3τ/4, from 1 to 3/2: ∫ = (2/3)/(1·3/2) = 4/9; beyond 1 the
    # slope is 1 from 3/2: ∫ = 2/3.  P(2 | 0) = (3/4)(4/9 + 2/3) = 5/6, P(1 | 0) = (1/4)(2/3) = 1/6.
    row = shared_noise_row([1 / 2, 1 / 4, 1 / 4], [0.0, 1 / 4, 3 / 4], 0)
    assert row == pytest.approx([0.0, 1 / 6, 5 / 6], abs=1e-15)
    # b = (0, 5/8, 3/8): σ_1 = 2/5, σ_2 = 2/3; on [2/5, 2/3] 1 + Λ runs from 1 to 7/6: ∫ = (4/15)(6/7) = 8/35;
    # beyond, slope 1 from 7/6: ∫ = 6/7.  P(1 | 0) = (5/8)(8/35 + 6/7) = 19/28, P(2 | 0) = (3/8)(6/7) = 9/28.
    row = shared_noise_row([1 / 2, 1 / 4, 1 / 4], [0.0, 5 / 8, 3 / 8], 0)
    assert row == pytest.approx([0.0, 19 / 28, 9 / 28], abs=1e-15)


def test_the_diagonal_is_one_over_the_sum_of_the_larger_ratios():
    # P(both races won by i) = 1 / Σ_j max(a_j/a_i, b_j/b_i): every E_j must exceed E_i times both ratios.
    a, b = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.5, 0.3])
    J = shared_noise_joint(a, b)
    for i in range(3):
        assert J[i, i] == pytest.approx(1 / np.maximum(a / a[i], b / b[i]).sum(), abs=1e-15)


@pytest.mark.parametrize("seed", range(6))
def test_the_joint_law_has_both_marginals(seed):
    rng = np.random.default_rng(seed)
    V = 2 + seed % 4
    a, b = rng.dirichlet(np.ones(V)), rng.dirichlet(np.ones(V))
    if seed % 2:
        b[0] = 0.0                           # a token the second race never picks
        b /= b.sum()
    J = shared_noise_joint(a, b)
    assert J.sum(axis=1) == pytest.approx(a, abs=1e-14)
    assert J.sum(axis=0) == pytest.approx(b, abs=1e-14)
    assert (J >= 0).all()


def _by_quadrature(a, b, i, k) -> float:
    """P(argmax(log a + G) = i, argmax(log b + G) = k) integrated over the noise itself: the density of
    the two Gumbels G_i and G_k, and for every other token the Gumbel distribution function at the
    smaller of its two ceilings, on the region where i wins the first race and k the second."""
    la, lb = np.log(a), np.log(b)
    others = [j for j in range(len(a)) if j not in (i, k)]

    def F(x):
        return math.exp(-math.exp(-x))

    def f(x):
        return math.exp(-x - math.exp(-x))

    if i == k:
        def one(g):
            top = [min(la[i] + g - la[j], lb[i] + g - lb[j]) for j in others]
            return f(g) * math.prod(F(t) for t in top)
        return integrate.quad(one, -8, 40, epsabs=1e-13, epsrel=1e-12, limit=400)[0]

    def two(gk, gi):
        if la[i] + gi < la[k] + gk or lb[k] + gk < lb[i] + gi:
            return 0.0
        top = [min(la[i] + gi - la[j], lb[k] + gk - lb[j]) for j in others]
        return f(gi) * f(gk) * math.prod(F(t) for t in top)

    def inner(gi):
        # g_k between the first race's ceiling la_i + g_i − la_k (below) and the second race's floor
        lo, hi = lb[i] + gi - lb[k], la[i] + gi - la[k]
        return integrate.quad(two, lo, hi, args=(gi,), epsabs=1e-13, epsrel=1e-12, limit=200)[0] if hi > lo else 0.0
    return integrate.quad(inner, -8, 40, epsabs=1e-12, epsrel=1e-11, limit=400)[0]


def test_the_closed_form_is_the_integral_over_the_noise_to_1e_9():
    a, b = np.array([0.5, 0.3, 0.2]), np.array([0.15, 0.25, 0.6])
    J = shared_noise_joint(a, b)
    for i in range(3):
        for k in range(3):
            assert J[i, k] == pytest.approx(_by_quadrature(a, b, i, k), abs=1e-9), (i, k)


def test_the_mechanism_sampled_with_seeded_noise_agrees():
    """Draw G, take both argmaxes: the frequencies lie within 5 standard errors of the closed form."""
    rng = np.random.default_rng(1)
    a, b = np.array([0.5, 0.25, 0.25]), np.array([0.0, 0.25, 0.75])
    n = 400_000
    G = rng.gumbel(size=(n, 3))
    with np.errstate(divide="ignore"):
        i, k = np.argmax(np.log(a) + G, axis=1), np.argmax(np.log(b) + G, axis=1)
    freq = np.zeros((3, 3))
    np.add.at(freq, (i, k), 1.0)
    freq /= n
    J = shared_noise_joint(a, b)
    assert np.abs(freq - J).max() <= 5 * math.sqrt(0.25 / n)
    # the coupling is real: given the first draw 0, token 1 comes out with 1/6, not b's 1/4
    assert freq[0, 1] / freq[0].sum() == pytest.approx(1 / 6, abs=0.005)


def test_a_token_that_cannot_win_the_first_race_is_refused():
    with pytest.raises(ValueError, match="cannot win the first race"):
        shared_noise_row([0.0, 1.0], [0.5, 0.5], 0)
