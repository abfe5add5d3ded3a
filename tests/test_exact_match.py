"""Exact-match acceptance (core/rules/exact_match.py): lossless at every temperature, with acceptance
Σ p·q per token against speculative sampling's Σ min(p, q)."""
from fractions import Fraction

import pytest

from toy_models import PRESETS, random_pair

from core.analysis.exact import exact_analysis
from core.analysis.released_ports import exact_match_numbers
from core.data.token_tree import TokenTree
from core.rules.base import Verifier
from core.rules.exact_match import ExactMatch

TOY = PRESETS["binary-toy"]


def frac(x: float) -> Fraction:
    return Fraction(x).limit_denominator(10000)


@pytest.mark.parametrize("K", [1, 2])
def test_binary_toy_L2(K):
    # A match has probability Σ_x p(x)q(x) = 2/3·1/3 + 1/3·2/3 = 4/9 per token (i.i.d. toy), so
    # E[τ] = 4/9 + (4/9)² = 52/81; SD accepts 2/3 + (2/3)² = 10/9.  Draft 0 alone, whatever K is.
    numbers = exact_match_numbers(K=K)
    assert frac(numbers["exact_match_expected_accepted"]) == Fraction(52, 81)
    assert frac(numbers["sd_expected_accepted"]) == Fraction(10, 9)
    assert numbers["exact_match_tv"] < 1e-15 and numbers["lossless"]


def test_closed_form_equals_the_coin_enumeration():
    rule = ExactMatch()
    for x in [(0, 0), (0, 1), (1, 1)]:
        block = TokenTree.chains_from_models([x], TOY.draft.cond, TOY.target.cond)
        # the base class enumerates the coins; the rule's override is the closed form
        assert rule.expected_tau(block) == pytest.approx(Verifier.expected_tau(rule, block), abs=1e-15)


@pytest.mark.parametrize("seed, temperature", [(0, 1.0), (1, 0.5), (2, 2.0), (3, 0.0)])
def test_lossless_on_markov_pairs_at_every_temperature(seed, temperature):
    draft, target = random_pair("markov", V=3, alpha=0.5, mix=0.6, seed=seed)
    draft, target = draft.with_temperature(temperature), target.with_temperature(temperature)
    result = exact_analysis("exact_match", draft, target, 1, 3)
    assert result.fidelity_tv < 1e-12
    assert result.expected_accepted <= exact_analysis("sd", draft, target, 1, 3).expected_accepted + 1e-12
