"""EAGLE's released sampling verification (core/rules/eagle.py): the current release is lossless;
the EAGLE-2 release draws the bonus at temperature 1 and is lossy at T ≠ 1."""
from fractions import Fraction

import pytest

from toy_models import PRESETS, random_pair

from core.analysis.exact import exact_analysis
from core.analysis.released_ports import eagle_numbers
from core.data.shapes import Shape
from core.rules.base import VerifierError
from core.rules.eagle import RELEASES, Eagle

TOY = PRESETS["binary-toy"]


def frac(x: float) -> Fraction:
    return Fraction(x).limit_denominator(10000)


@pytest.mark.parametrize("release", RELEASES)
def test_T1_both_releases_are_the_same_lossless_rule(release):
    # One chain: y ~ q moves on iff it is the drafted token, so E[τ] = Σpq + (Σpq)² = 4/9 + 16/81.
    one = eagle_numbers(release, 1.0, K=1)
    assert frac(one["expected_accepted"]) == Fraction(52, 81) and one["lossless"]
    # Two chains: P(τ ≥ 1) = Σ_a q(a)(1 − (1 − p(a))²) = 8/27 + 10/27; under a, m chains start with
    # a (m = 2 w.p. p(a)², 1 w.p. 2p(a)(1 − p(a))) and cover y_2 with 2/3 (m = 2) or 4/9 (m = 1):
    # P(τ ≥ 2) = 1/3·(4/9·2/3 + 4/9·4/9) + 2/3·(1/9·2/3 + 4/9·4/9) = 28/81; E[τ] = 2/3 + 28/81 = 82/81.
    two = eagle_numbers(release, 1.0, K=2)
    assert frac(two["expected_accepted"]) == Fraction(82, 81) and two["lossless"]


def test_T_half_eagle2_is_lossy_current_is_not():
    # At T = 1/2: p_T = (4/5, 1/5), q_T = (1/5, 4/5), Σ p_T q_T = 8/25.  K = 1: E[τ] = 8/25 + 64/625
    # = 264/625; the eagle2 bonus after a full block (mass 64/625) is q_1 = (1/3, 2/3) instead of
    # (1/5, 4/5), TV 2/15, so TV = 64/625·2/15 = 128/9375.  K = 2: P(τ ≥ 1) = 12/25,
    # P(τ = 2) = 1/5·(16/25·12/25 + 8/25·8/25) + 4/5·(1/25·12/25 + 8/25·8/25) = 112/625,
    # E[τ] = 412/625, TV = 112/625·2/15 = 224/9375.
    for K, tau, tv in [(1, Fraction(264, 625), Fraction(128, 9375)), (2, Fraction(412, 625), Fraction(224, 9375))]:
        old = eagle_numbers("eagle2", 0.5, K=K)
        now = eagle_numbers("current", 0.5, K=K)
        assert frac(old["expected_accepted"]) == tau == frac(now["expected_accepted"])
        assert frac(old["tv"]) == tv and not old["lossless"]
        assert now["lossless"]


def test_greedy_temperature_is_lossless_in_both_releases():
    for release in RELEASES:
        assert eagle_numbers(release, 0.0, K=2)["lossless"]


@pytest.mark.parametrize("seed", [0, 1])
def test_current_release_is_lossless_on_topk_trees(seed):
    # EAGLE-2 drafts its tree by top-k: the current release stays lossless on it at T ≠ 1.
    draft, target = random_pair("markov", V=3, alpha=0.5, mix=0.6, seed=seed)
    draft, target = draft.with_temperature(0.7), target.with_temperature(0.7)
    result = exact_analysis(Eagle("current", 0.7), draft, target, shape=Shape.tree((2, 2)), law="topk")
    assert result.is_lossless
    old = exact_analysis(Eagle("eagle2", 0.7), draft, target, shape=Shape.tree((2, 2)), law="topk")
    assert old.fidelity_tv > 1e-4


def test_bad_parameters_are_one_sentence():
    with pytest.raises(VerifierError, match="release must be one of current, eagle2"):
        Eagle("eagle1")
    with pytest.raises(VerifierError, match="temperature must be a finite number"):
        Eagle("eagle2", -1)


def test_command_line_passes_the_release_and_the_models_temperature():
    import json
    import subprocess
    import sys
    from pathlib import Path
    out = subprocess.run([sys.executable, "-m", "core", "exact", "--preset", "binary-toy", "--K", "1", "--L", "2",
                          "--method", "eagle", "--release", "eagle2", "--temperature", "0.5", "--json"],
                         cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout)
    assert (row["release"], row["temperature"]) == ("eagle2", 0.5)
    assert frac(row["fidelity_tv"]) == Fraction(128, 9375)          # test_T_half_eagle2_is_lossy_current_is_not


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("V, K, L, T", [(2, 2, 3, 1.0), (3, 2, 2, 0.5), (3, 3, 2, 2.0)])
def test_chains_formula_equals_the_coin_enumeration(release, V, K, L, T):
    for seed in range(2):
        draft, target = random_pair("markov", V=V, alpha=0.5, mix=0.6, seed=seed)
        draft, target = draft.with_temperature(T), target.with_temperature(T)
        fast = exact_analysis(Eagle(release, T), draft, target, K, L)
        plain = exact_analysis(Eagle(release, T), draft, target, K, L, recursion=False)
        outputs = set(fast.output_law) | set(plain.output_law)
        assert max(abs(fast.output_law.get(u, 0) - plain.output_law.get(u, 0)) for u in outputs) < 1e-14


def test_smallest_lossy_instance_one_token():
    # K = L = 1 at T = 1/2: the full block has probability Σ p_T q_T = 8/25, and its bonus law is
    # (1/3, 2/3) instead of (1/5, 4/5): TV = 8/25·2/15 = 16/375.
    assert frac(eagle_numbers("eagle2", 0.5, K=1, L=1)["tv"]) == Fraction(16, 375)


def _membership_value(draft, target, shape, law) -> float:
    """E[τ] = Σ_(v ≠ ∅, |v| ≤ L) q(v)·P(v is drafted), from every drafted tree: the rule walks a target
    path while it is drafted, so τ ≥ |v| exactly when the target path starts with a drafted v."""
    import itertools

    from core.data.drafting import enumerate_trees
    total = 0.0
    for weight, tree in enumerate_trees(draft, target, shape, law):
        drafted = {()} | {u + (c,) for u, children in tree.table().items() for c in children}
        for depth in range(1, shape.L + 1):
            for v in itertools.product(range(target.V), repeat=depth):
                if v in drafted:
                    total += weight * target.joint(v)
    return total


# The Draft trees page's configurations (tests/test_draft_trees.py) and their values.
PAGE_CASES = [("binary-toy", Shape.chains_of(2, 2), "greedy", Fraction(13, 9)),
              ("binary-toy", Shape.tree((2, 2)), "iid", Fraction(842, 729)),
              ("binary-toy", Shape.tree((2, 2)), "wor", Fraction(2)),
              ("binary-toy", Shape.tree((2, 1)), "topk", Fraction(4, 3)),
              ("three-token-toy", Shape.tree((3, 1)), "greedy", Fraction(23, 18)),
              ("three-token-toy", Shape.chains_of(2, 2), "greedy", Fraction(115, 162))]


@pytest.mark.parametrize("preset, shape, law, value", PAGE_CASES)
def test_tree_values_equal_the_membership_formula(preset, shape, law, value):
    toy = PRESETS[preset]
    result = exact_analysis("eagle", toy.draft, toy.target, shape=shape, law=law)
    assert result.expected_accepted == pytest.approx(_membership_value(toy.draft, toy.target, shape, law), abs=1e-14)
    assert result.is_lossless
    if value is not None:
        assert frac(result.expected_accepted) == value
