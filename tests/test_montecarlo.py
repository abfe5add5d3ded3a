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


def test_output_law_test_by_hand_and_its_power():
    """Issue 24, item 9: the chi-square test of the sampled outputs s·y against an exact output law.
    By hand: counts (40, 40, 20) against n·P = (50, 30, 20) give X² = 10²/50 + 10²/30 = 16/3 on
    2 degrees of freedom, whose tail is exp(−X²/2) = exp(−8/3); TV = ½(0.1 + 0.1).  A sample of an
    impossible output rejects the law; small cells are pooled.  On the binary toy with K = 2, L = 2
    SpecTr-GBV's sampled outputs agree with its own exact law and not with RBV's (lossless) law,
    although both rules' E[τ] are close (1.4034 and 1.4198)."""
    import math

    from core.analysis.montecarlo import MonteCarloResult, output_law_test

    law = {(0,): 0.5, (1,): 0.3, (0, 1): 0.2}
    hand = MonteCarloResult("bv", 1, 1, 100, 0, 0.95, np.array([40, 60]), {(0,): 40, (1,): 40, (0, 1): 20})
    t = output_law_test(hand, law)
    assert t.statistic == pytest.approx(16 / 3, abs=1e-12) and (t.dof, t.bins) == (2, 3)
    assert t.p_value == pytest.approx(math.exp(-8 / 3), abs=1e-12) and t.tv == pytest.approx(0.1, abs=1e-12)
    assert t.agrees() and not t.agrees(level=0.1)
    exact_counts = MonteCarloResult("bv", 1, 1, 100, 0, 0.95, np.array([50, 50]), {(0,): 50, (1,): 30, (0, 1): 20})
    assert output_law_test(exact_counts, law).p_value == pytest.approx(1.0) and output_law_test(exact_counts, law).tv == 0.0
    impossible = MonteCarloResult("bv", 1, 1, 100, 0, 0.95, np.array([50, 50]),
                                  {(0,): 49, (1,): 30, (0, 1): 20, (1, 1): 1})
    t = output_law_test(impossible, law)
    assert (t.outside_support, t.p_value, t.agrees()) == (1, 0.0, False)
    # 0.02 and 0.03 of n = 100 are expected 2 and 3 times: pooled into one bin of 5
    pooled = MonteCarloResult("bv", 1, 1, 100, 0, 0.95, np.array([0, 0]), {(0,): 60, (1,): 35, (0, 1): 5})
    t = output_law_test(pooled, {(0,): 0.6, (1,): 0.35, (0, 1): 0.02, (1, 0): 0.03})
    assert (t.bins, t.dof) == (3, 2) and t.statistic == pytest.approx(0.0, abs=1e-12)

    pr = tm.PRESETS["gbv-lossless"]
    gbv = monte_carlo("spectr_gbv", pr.draft, pr.target, 2, 2, 3000, 0)
    own = exact_analysis("spectr_gbv", pr.draft, pr.target, 2, 2).output_law
    rbv = exact_analysis("rbv", pr.draft, pr.target, 2, 2).output_law
    assert output_law_test(gbv, own).agrees()
    assert output_law_test(gbv, rbv).p_value < 1e-10
