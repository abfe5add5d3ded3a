"""The Monte Carlo interval for E[τ]: honest for a degenerate sample, and covering at its level."""
from statistics import NormalDist

import numpy as np
import pytest

import toy_models as tm
from core.analysis.exact import exact_analysis
from core.analysis.montecarlo import monte_carlo

Z95 = NormalDist().inv_cdf(0.975)


def test_degenerate_sample_keeps_a_positive_width_around_the_exact_value():
    """p ≈ q: single-draft speculative decoding rejects with probability ≈ 3·2.2e-6 per block, so
    n = 1000 runs all give τ = L = 2 while the exact E[τ] is just below 2."""
    draft, target = tm.IIDModel([0.5, 0.5]), tm.IIDModel([0.5 + 2.2e-6, 0.5 - 2.2e-6])
    exact = exact_analysis("sd", draft, target, 1, 2).expected_accepted
    assert exact == pytest.approx(1.9999934, abs=1e-7) and exact < 2.0
    mc = monte_carlo("sd", draft, target, 1, 2, n=1000, seed=0)
    np.testing.assert_array_equal(mc.tau_counts, [0, 0, 1000])  # sample sd 0: a normal CI is [2, 2]
    lo, hi = mc.tau_mean_interval()
    assert lo == pytest.approx(2 * 1000 / (1000 + Z95 ** 2), rel=1e-12)  # Wilson at Ȳ = 1: n/(n + z²)
    assert hi - lo > 0.005 and lo < exact <= hi
    assert mc.tau_mean == 2.0 and mc.tau_mean_halfwidth == pytest.approx(2.0 - lo)


def test_interval_covers_the_exact_mean_at_its_level():
    """200 seeded runs of n = 50 on the binary toy (E[τ] = 11/9 for bv): the 95% interval covers the
    exact value in at least 90% of them, and stays informative."""
    pre = tm.binary_toy()
    exact = exact_analysis("bv", pre.draft, pre.target, 1, 2).expected_accepted
    assert exact == pytest.approx(11 / 9, abs=1e-12)
    covered, widths = 0, []
    for seed in range(200):
        lo, hi = monte_carlo("bv", pre.draft, pre.target, 1, 2, n=50, seed=seed).tau_mean_interval()
        covered += lo <= exact <= hi
        widths.append(hi - lo)
    assert covered >= 180
    assert 0 < min(widths) and np.mean(widths) < 0.6  # 2·2·1.96·√(μ(1 − μ)/50) ≈ 0.54, μ = 11/18


def test_student_t_quantile_against_the_printed_table():
    """core.analysis.intervals.t_975 (the sweeps page's and the leaderboard's intervals) against a
    printed table of t_(0.975, ν) (three decimals) and the normal quantile 1.95996 in the limit."""
    from core.analysis.intervals import t_975
    table = {1: 12.706, 2: 4.303, 5: 2.571, 10: 2.228, 30: 2.042, 120: 1.980}
    for dof, printed in table.items():
        assert t_975(dof) == pytest.approx(printed, abs=5e-4)
    assert t_975(10**7) == pytest.approx(1.959964, abs=1e-6)
    # closed forms: ν = 1 is Cauchy, tan(π(p − ½)); ν = 2 gives (2p − 1)/√(2p(1 − p))
    import math
    assert t_975(1) == pytest.approx(math.tan(0.475 * math.pi), rel=1e-12)
    assert t_975(2) == pytest.approx(0.95 / math.sqrt(2 * 0.975 * 0.025), rel=1e-12)
    with pytest.raises(ValueError, match="at least one degree of freedom"):
        t_975(0)


def test_standard_error_of_a_mean():
    """s/√n with the sample standard deviation: [1, 2, 3, 4] has s² = 5/3, so s/√4 = √(5/12)."""
    import math

    from core.analysis.intervals import standard_error
    assert standard_error([1.0, 2.0, 3.0, 4.0]) == pytest.approx(math.sqrt(5 / 12), rel=1e-15)
    assert standard_error([2.5]) is None and standard_error([]) is None
