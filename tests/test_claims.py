"""The verdicts of ``core.claims.spectr_gbv`` against facts known independently on the binary toy of
the block-verification paper (p = (2/3, 1/3), q = (1/3, 2/3), L = 2), and the counterexample search."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from core.claims import spectr_gbv as claims
from core.claims.spectr_gbv import FAILS, HOLDS, NA, STATUSES
from core.analysis.exact import exact_analysis
from core.errors import InvalidInput
from toy_models import PRESETS

TOY = PRESETS["binary-toy"]
P, Q, L = TOY.draft, TOY.target, 2


def exact(x: Fraction):
    """A value known as a fraction, to float64 rounding."""
    return pytest.approx(float(x), abs=1e-12)


def test_k1_is_not_lossless_with_tv_one_ninth():
    v = claims.lossless_claim(P, Q, 1, L)
    assert v.status == FAILS
    assert v.numbers["fidelity_tv"] == exact(Fraction(1, 9))


def test_k1_accepts_more_than_the_lp_optimum_which_is_bv():
    v = claims.optimal_claim(P, Q, 1, L)
    assert v.status == FAILS
    assert v.numbers["expected_accepted"] == exact(Fraction(4, 3))
    assert v.numbers["lp_optimum"] == exact(Fraction(11, 9))
    assert v.numbers["above_optimum"] and not v.numbers["lossless"]
    assert exact_analysis("bv", P, Q, 1, L).expected_accepted == exact(Fraction(11, 9))


def test_e_cic_is_attained_at_k1_but_not_at_k2():
    one, two = claims.cic_claim(P, Q, 1, L), claims.cic_claim(P, Q, 2, L)
    assert one.status == HOLDS and one.numbers["claimed_cic"] == exact(Fraction(4, 3))
    assert one.numbers["unattainable"]                       # 4/3 > 11/9: no lossless rule reaches it
    assert two.status == FAILS
    assert two.numbers["claimed_cic"] == exact(Fraction(19, 12))   # 1.58333…
    assert two.numbers["expected_accepted"] == pytest.approx(1.4034, abs=1e-4)


def test_algorithm_2_repairs_k1_but_not_k2():
    one, two = claims.repair_claim(P, Q, 1, L), claims.repair_claim(P, Q, 2, L)
    assert one.status == HOLDS and not one.numbers["over_emission"]
    assert two.status == FAILS and two.numbers["over_emission"]
    assert two.numbers["worst_prefix"] == (1,)
    assert two.numbers["min_F"] == pytest.approx(-0.0238, abs=1e-4)


def test_repair_iterations_compensated_target_is_lossless_but_emits_fewer_tokens():
    plain, compensated = claims.repair_iterations(P, Q, 1, L)
    assert not plain.compensated and compensated.compensated
    assert plain.tv > 0.1 and compensated.tv == pytest.approx(0.0, abs=1e-12)
    assert compensated.tokens_per_iteration < plain.tokens_per_iteration
    assert claims.repair_iterations(P, Q, 4, L) is None


def test_does_not_reduce_to_bv_at_k1():
    v = claims.k1_claim(P, Q, L)
    assert v.status == FAILS
    assert v.numbers["rule_expected_accepted"] == exact(Fraction(4, 3))
    assert v.numbers["bv_expected_accepted"] == exact(Fraction(11, 9))
    assert v.numbers["law_tv"] > 0.1


def test_monotone_verdict_finds_the_first_drop():
    assert claims.monotone_claim(P, Q, 2, L).status == HOLDS      # 4/3, 1.4034, 1.4995, 1.5771
    v = claims.monotone_verdict([(1, 1.0), (2, 1.5), (3, 1.2), (4, 1.1)])
    assert v.status == FAILS and v.numbers["drop"] == (2, 1.5, 3, 1.2)
    assert claims.monotone_Ks(2) == range(1, 5) and claims.monotone_Ks(6) == range(1, 8)


@pytest.mark.parametrize("method", ["bv", "rbv"])
def test_a_lossless_rule_holds(method):
    assert claims.lossless_claim(P, Q, 2, L, method).status == HOLDS
    assert claims.repair_claim(P, Q, 2, L, method).status == HOLDS


def test_lossless_bv_is_optimal_at_k1_and_reduces_to_itself():
    assert claims.optimal_claim(P, Q, 1, L, "bv").status == HOLDS
    assert claims.k1_claim(P, Q, L, "bv").status == HOLDS


def test_optimal_is_na_without_the_lp():
    v = claims.optimal_verdict(exact_analysis("bv", P, Q, 1, L), None)
    assert v.status == NA


def test_timing_verdict_fits_the_exponent():
    Vs = (16, 64, 256)
    assert claims.timing_verdict(Vs, [1e-3 * V for V in Vs]).numbers["exponent"] == pytest.approx(1.0)
    assert claims.timing_verdict(Vs, [1e-3 * V for V in Vs]).status == HOLDS
    assert claims.timing_verdict(Vs, [1e-6 * V ** 2 for V in Vs]).status == FAILS
    measured = claims.timing_claim(1, 2, Vs=(16, 64), blocks=2)
    assert len(measured.numbers["seconds"]) == 2 and min(measured.numbers["seconds"]) > 0


def test_search_is_deterministic_and_finds_counterexamples():
    rows = claims.search_counterexamples(0, 20, lp_limit=6_000)
    again = claims.search_counterexamples(0, 20, lp_limit=6_000)
    assert [r.as_dict() for r in rows] == [r.as_dict() for r in again]
    assert [r.config.index for r in rows] == list(range(1, 21))
    assert any(r.broken for r in rows)
    assert all(r.config.V ** (r.config.K * r.config.L) <= 4096 for r in rows)


def test_each_break_names_its_claim_and_the_row_says_so():
    """A search row's claims are decided here again from the exact results (TV, E[τ] at K and K + 1,
    E_CIC), independently of ``search_row``, and its table row carries one yes/no column per claim."""
    from core import bounds

    rows = claims.search_counterexamples(0, 20, lp_limit=0)        # no LP: the other three claims
    assert {c for r in rows for c in r.claims} >= {"Lossless", "Attains its stated E_CIC"}
    for r in rows:
        c = r.config
        draft, target = c.models()
        here, there = (exact_analysis(claims.GBV, draft, target, k, c.L) for k in (c.K, c.K + 1))
        cic = bounds.claimed_cic(draft, target, c.K, c.L)
        expected = {"Lossless": here.fidelity_tv > 1e-9,
                    "Attains its stated E_CIC": abs(here.expected_accepted - cic) > 1e-9,
                    "Monotone in K": there.expected_accepted < here.expected_accepted - 1e-9,
                    "Not above the LP optimum": False}
        assert set(r.claims) == {k for k, v in expected.items() if v}, c
        assert len(r.broken) == len(r.claims)
        row = r.as_dict()
        assert {k: row[f"breaks: {k}"] for k in claims.SEARCH_CLAIMS} == expected


def test_search_config_depends_only_on_seed_and_index():
    assert claims.search_configs(3, 5) == claims.search_configs(3, 12)[:5]
    assert claims.search_configs(3, 5) != claims.search_configs(4, 5)


def test_statuses_are_the_three_allowed():
    assert set(STATUSES) == {HOLDS, FAILS, NA} and len(STATUSES) == 3
    verdicts = [claims.lossless_claim(P, Q, 2, L), claims.repair_claim(P, Q, 2, L),
                claims.optimal_claim(P, Q, 2, L), claims.cic_claim(P, Q, 2, L),
                claims.monotone_claim(P, Q, 2, L), claims.k1_claim(P, Q, L)]
    assert all(v.status in STATUSES for v in verdicts)
    with pytest.raises(ValueError):
        claims.ClaimVerdict("Lossless", "maybe", {}, {})


def test_search_defaults_keep_the_first_released_draws():
    """Seed 0's first configurations, as drawn before V, T and the families could vary."""
    got = [(c.kind, c.V, c.K, c.L, c.alpha, c.mix, c.seed, c.T) for c in claims.search_configs(0, 3)]
    assert got == [("markov", 3, 2, 1, 0.3, 0.11, 40973, 1.0), ("iid", 3, 2, 3, 1.0, 0.68, 606635, 1.0),
                   ("markov", 3, 2, 3, 0.3, 0.1, 815853, 1.0)]


def test_search_draws_V_family_and_temperature_as_asked():
    configs = claims.search_configs(5, 40, kinds=("table",), V_range=(4, 6), temperature=0.5)
    assert {c.kind for c in configs} == {"table"} and {c.V for c in configs} == {4, 5, 6}
    assert all(c.T == 0.5 and c.V ** (c.K * c.L) <= 4096 for c in configs)
    draft, target = configs[0].models()
    base_draft, _ = claims.random_pair("table", configs[0].V, configs[0].alpha, configs[0].mix, configs[0].seed)
    assert draft.temperature == 0.5 and target.temperature == 0.5
    assert not np.allclose(draft.cond(()), base_draft.cond(()))         # T = 0.5 sharpens p
    with pytest.raises(InvalidInput):
        claims.search_configs(0, 1, V_range=(2, claims.SEARCH_V_MAX + 1))
