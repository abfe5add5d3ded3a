"""transformers' static ensemble verification (core/rules/hf_ensemble.py) and its claims
(core/claims/hf_static_ensemble.py): E[τ] and TV on the binary toy by hand for every w, speculative
sampling coin by coin at w = 1, the model law against the enumeration, the knob's range, and the
verdicts against the loss-gain frontier."""
from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

from toy_models import PRESETS, random_pair

from core.analysis.exact import exact_analysis
from core.bounds.frontier import frontier
from core.claims.base import FAILS, HOLDS, decide
from core.claims.registry import get_claim
from core.data.token_tree import TokenTree
from core.rules.hf_ensemble import HFEnsemble
from core.rules.params import ParamError, by_name
from core.rules.registry import make_verifier

TOY = PRESETS["binary-toy"]                       # p = (2/3, 1/3), q = (1/3, 2/3), TV(p, q) = 1/3
P, Q = TOY.draft, TOY.target


def frac(x: float) -> Fraction:
    return Fraction(x).limit_denominator(100000)


@pytest.mark.parametrize("w", [Fraction(0), Fraction(1, 4), Fraction(1, 2), Fraction(9, 10), Fraction(1)])
def test_binary_toy_by_hand_for_every_w(w):
    """Token x passes with (1 − w)p(x) + w·min(p, q)(x): α = 1 − w/3 per token (i.i.d. toy), E[τ] = α + α².
    Completed law over z_1 z_2 z_3: q(z_3)·[a(z_1)·v(z_2) + c(z_1)·q(z_2)] with a = ((2 − w)/3, 1/3), c =
    (0, w/3), v = a + c; its distance from q sums (1 − w)(3 − w)/9 + w(1 − w)/9 + 0 + (1 − w)/3 over the four
    prefixes, 2(1 − w)/3: TV = (1 − w)/3."""
    alpha = 1 - w / 3
    r = exact_analysis(HFEnsemble(float(w)), P, Q, 1, 2)
    assert frac(r.expected_accepted) == alpha + alpha ** 2
    assert frac(r.fidelity_tv) == (1 - w) / 3


@pytest.mark.parametrize("seed", range(3))
def test_w1_is_speculative_sampling_coin_by_coin(seed):
    draft, target = random_pair("markov", V=3, alpha=0.5, mix=0.6, seed=seed)
    sd = make_verifier("sd")
    for x in itertools.product(range(3), repeat=2):
        block = TokenTree.chains_from_models([x], draft.cond, target.cond)
        for s in range(4):
            a, b = HFEnsemble(1.0).verify(block, s), sd.verify(block, s)
            assert (a.accepted, a.extra) == (b.accepted, b.extra)
        assert HFEnsemble(1.0).law(block) == pytest.approx(sd.law(block), abs=1e-15)


@pytest.mark.parametrize("w", [0.0, 0.3, 0.8])
def test_the_model_law_is_the_enumeration(w):
    draft, target = random_pair("table", V=3, alpha=0.5, mix=0.6, seed=2)
    fast, slow = (exact_analysis(HFEnsemble(w), draft, target, 1, 3, recursion=r) for r in (True, False))
    assert fast.tau_pmf == pytest.approx(slow.tau_pmf, abs=1e-13)
    assert fast.fidelity_tv == pytest.approx(slow.fidelity_tv, abs=1e-13)


def test_w_is_a_knob_in_0_1_refused_outside_in_one_sentence():
    w = by_name(HFEnsemble)["w"]
    assert w.sweep and min(w.sweep) == 0.0 and max(w.sweep) == 1.0 and w.default == 0.5
    with pytest.raises(ParamError, match=r"^w \(the ensemble weight\) must be in \[0, 1\], got 2$"):
        make_verifier("hf_ensemble", w=2)
    with pytest.raises(ParamError, match=r"^w \(the ensemble weight\) must be in \[0, 1\], got -0\.1$"):
        make_verifier("hf_ensemble", w="-0.1")


def test_the_knob_against_the_frontier():
    """At one token the ensemble is on the loss-gain frontier for every w (E[τ] = 2/3 + ε at TV ε); on
    blocks of two it is below: at w = 1 the frontier is BV's 11/9 and the ensemble SD's 10/9."""
    for w in (0.0, 0.5, 0.9, 1.0):
        one = exact_analysis(HFEnsemble(w), P, Q, 1, 1)
        assert one.expected_accepted == pytest.approx(frontier(P, Q, 1, 1, one.fidelity_tv).value, abs=1e-7)
        assert one.expected_accepted == pytest.approx(2 / 3 + one.fidelity_tv, abs=1e-14)
    two = exact_analysis(HFEnsemble(1.0), P, Q, 1, 2)
    assert frontier(P, Q, 1, 2, 0.0).value == pytest.approx(11 / 9, abs=1e-9)
    assert two.expected_accepted == pytest.approx(10 / 9, abs=1e-14)


def test_the_claims_verdicts():
    rate = decide(get_claim("transformers-ensemble/acceptance-rate"))
    # one token, w = 1/2: 1 − (1/2)(1/3) = 5/6, SD's 2/3
    assert rate.status == HOLDS and rate.numbers["hf_ensemble_expected_accepted"] == pytest.approx(5 / 6, abs=1e-15)
    assert rate.numbers["sd_expected_accepted"] == pytest.approx(2 / 3, abs=1e-15)
    one = decide(get_claim("transformers-ensemble/pareto-one-token"))
    assert one.status == HOLDS and one.numbers["frontier"] == pytest.approx(5 / 6, abs=1e-7)
    two = decide(get_claim("transformers-ensemble/pareto-blocks"))
    # L = 2, w = 1/2: E[τ] = 5/6 + 25/36 = 55/36 at TV 1/6.  A verifier that runs BV (E[τ] 11/9, TV 0) or
    # accepts every drafted token (E[τ] 2, TV 1/3: w = 0 above) on a fair coin has TV ≤ 1/6 (TV is convex) and
    # E[τ] = 29/18 = 58/36: the frontier at 1/6 is at least that, above the ensemble.
    assert two.status == FAILS and two.numbers["hf_ensemble_expected_accepted"] == pytest.approx(55 / 36, abs=1e-14)
    assert two.numbers["frontier"] >= 29 / 18 - 1e-9
    assert two.numbers["frontier"] == pytest.approx(frontier(P, Q, 1, 2, 1 / 6).value, abs=1e-9)
