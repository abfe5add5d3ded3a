"""The loss-gain frontier (``core.bounds.frontier``): the best E[τ] of any verifier within TV ε of q.

Expected values come from elsewhere: the LP optimum at ε = 0 (the node form and the contract's
fractions), a closed form derived below for one draft token, and every lossy rule's exact (TV, E[τ])
computed by the exact laboratory, which no verifier at that TV may beat.
"""
from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from core.analysis.exact import exact_analysis
from core.bounds import lp_optimum
from core.bounds.frontier import frontier, tree_frontier
from core.cli import main as cli_main
from core.data.shapes import Shape
from core.errors import InvalidInput
from core.rules.registry import make_verifier
from toy_models import PRESETS, random_pair

BIN = PRESETS["binary-toy"]
TOL = 1e-9


def test_no_loss_is_the_lp_optimum():
    assert str(Fraction(frontier(BIN.draft, BIN.target, 2, 2, 0.0).value).limit_denominator(1000)) == "131/81"
    tri = PRESETS["three-token-toy"]
    value = tree_frontier(tri.draft, tri.target, Shape.tree((2, 2)), "wor", 0.0).value
    assert str(Fraction(value).limit_denominator(1000)) == "259/144"


@pytest.mark.parametrize("eps", [0.01, 0.05, 0.1, 0.2, 1 / 3, 0.5, 1.0])
def test_one_draft_token_gains_what_it_loses(eps):
    """One draft token on the binary toy (p = (2/3, 1/3), q = (1/3, 2/3)).  A verifier accepts x with
    probability W(x) ≤ p(x), and every accepted token is output, so the output puts at least W(0) on
    token 0 where q puts 1/3: TV ≥ W(0) − 1/3, hence E[τ] = W(0) + W(1) ≤ (1/3 + ε) + 1/3.  Accepting
    token 0 with W(0) = 1/3 + ε and token 1 always, and giving the rest of the mass to token 1,
    attains it, until E[τ] = 1 at ε = 1/3: the frontier is min(1, 2/3 + ε)."""
    value = frontier(BIN.draft, BIN.target, 1, 1, eps).value
    assert value == pytest.approx(min(1.0, 2 / 3 + eps), abs=TOL)


def test_the_frontier_rises_and_bends():
    """An LP's value as its right-hand side grows is nondecreasing and concave."""
    draft, target = random_pair("markov", 3, alpha=1.0, mix=1.0, seed=343)
    eps = np.linspace(0.0, 0.4, 9)
    values = np.array([frontier(draft, target, 2, 3, e).value for e in eps])
    assert values[0] == pytest.approx(lp_optimum(draft, target, 2, 3).value, abs=TOL)
    assert np.all(np.diff(values) >= -TOL)
    assert np.all(np.diff(values, 2) <= TOL)


@pytest.mark.parametrize("eps, method", [(1e-4, "tangents"), (0.05, "cuts")])
def test_the_bounds_meet_where_antichains_are_tiny_and_the_loss_small(eps, method):
    """V = 4, L = 4: the lower bound mixes the point with the trivial verifier, so a violation of
    ~1e-10 on an antichain with g(A) ~ 6e-8, or on the TV row at ε = 1e-4, would cost ~1e-8 of
    E[τ]; the rows and the separation hold the ratios instead, and the bounds meet."""
    draft, target = random_pair("markov", 4, alpha=1.0, mix=1.0, seed=0)
    result = frontier(draft, target, 4, 4, eps, method=method)
    assert result.converged, result.unconverged_text()
    assert result.lower <= result.upper <= result.lower + TOL


LOSSY = [("typical", {"epsilon": 0.09, "delta": 0.3}), ("typical", {"epsilon": 0.3, "delta": 0.1}),
         ("hsd", {}), ("spectr_gbv", {})]


@pytest.mark.parametrize("rule, params", LOSSY)
@pytest.mark.parametrize("instance", ["binary", "markov"])
def test_no_lossy_rule_beats_the_frontier_at_its_own_loss(rule, params, instance):
    if instance == "binary":
        draft, target, K, L = BIN.draft, BIN.target, 2, 2
    else:
        draft, target = random_pair("markov", 3, alpha=1.0, mix=0.7, seed=11)
        K, L = 2, 2
    verifier = make_verifier(rule, draft=draft, target=target, K=K, L=L, **params)
    result = exact_analysis(verifier, draft, target, K, L)
    best = frontier(draft, target, K, L, min(1.0, result.fidelity_tv))
    assert result.expected_accepted <= best.upper + TOL


def test_bad_input_is_one_sentence(capsys):
    with pytest.raises(InvalidInput, match=r"in \[0, 1\], got 1.5"):
        frontier(BIN.draft, BIN.target, 1, 2, 1.5)
    assert cli_main(["bound", "--preset", "binary-toy", "--K", "1", "--L", "1", "--kind", "frontier",
                     "--tv", "0.1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert str(Fraction(out["value"]).limit_denominator(1000)) == "23/30" and out["tv"] == 0.1
    assert out["lower"] <= out["value"] <= out["upper"] <= out["lower"] + TOL
    assert cli_main(["bound", "--preset", "binary-toy", "--K", "1", "--L", "1", "--kind", "frontier"]) == 2
    assert "needs --tv" in capsys.readouterr().err
    assert cli_main(["bound", "--preset", "binary-toy", "--K", "1", "--L", "1", "--kind", "lp", "--tv", "0.1"]) == 2
    assert cli_main(["bound", "--preset", "binary-toy", "--K", "1", "--L", "1", "--kind", "frontier",
                     "--tv", "-1"]) == 2
    assert "must be in [0, 1]" in capsys.readouterr().err
