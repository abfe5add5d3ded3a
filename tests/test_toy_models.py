import json
import warnings

import numpy as np
import pytest

import toy_models as tm
from toy_models import ToyModelError


def test_binary_toy_preset_is_the_spec_toy():
    pre = tm.binary_toy()
    assert pre.L == 2 and pre.K == 1
    np.testing.assert_array_equal(pre.draft.cond(()), [2 / 3, 1 / 3])
    np.testing.assert_array_equal(pre.target.cond((0, 1, 1)), [1 / 3, 2 / 3])


def test_markov_and_table_conditionals():
    m = tm.MarkovModel([0.5, 0.5], [[0.9, 0.1], [0.2, 0.8]])
    np.testing.assert_allclose(m.cond(()), [0.5, 0.5])
    np.testing.assert_allclose(m.cond((0, 1)), [0.2, 0.8])
    assert m.joint((0, 0, 1)) == pytest.approx(0.5 * 0.9 * 0.1)
    t = tm.TableModel({"": [0.5, 0.5], "0": [1, 0], "1,0": [0.25, 0.75]})
    np.testing.assert_allclose(t.cond((0,)), [1, 0])
    np.testing.assert_allclose(t.cond((1, 0)), [0.25, 0.75])
    np.testing.assert_allclose(t.cond((1, 1, 0)), [0.25, 0.75])  # backs off to suffix "1,0"
    np.testing.assert_allclose(t.cond((1,)), [0.5, 0.5])         # backs off to ""


def test_temperature_is_applied_to_logits():
    m = tm.IIDModel([0.2, 0.3, 0.5])
    hot = m.with_temperature(2.0).cond(())
    expected = np.sqrt([0.2, 0.3, 0.5])
    np.testing.assert_allclose(hot, expected / expected.sum())
    np.testing.assert_array_equal(m.with_temperature(0).cond(()), [0, 0, 1])
    assert m.cond(())[2] == 0.5  # the original is untouched


@pytest.mark.parametrize("kind", ["iid", "markov", "table"])
def test_json_round_trip_and_seeded_generators(kind):
    d1, q1 = tm.random_pair(kind, 3, seed=4, depth=2)
    d2, q2 = tm.random_pair(kind, 3, seed=4, depth=2)
    for prefix in [(), (0,), (2, 1)]:
        np.testing.assert_array_equal(d1.cond(prefix), d2.cond(prefix))
        back = tm.from_json(json.dumps(q1.to_json()))
        np.testing.assert_allclose(back.cond(prefix), q1.cond(prefix), rtol=0, atol=1e-15)
    d3, _ = tm.random_pair(kind, 3, seed=5, depth=2)
    assert not np.allclose(d1.cond(()), d3.cond(()))


def test_mixed_draft_knob():
    target = tm.random_markov(4, seed=1)
    same = tm.mixed_draft(target, 0.0, seed=2)
    np.testing.assert_allclose(same.cond((3,)), target.cond((3,)))
    far = tm.mixed_draft(target, 1.0, seed=2)
    assert not np.allclose(far.cond((3,)), target.cond((3,)))


def test_near_normalized_input_is_renormalized():
    m = tm.IIDModel([0.5 + 4e-10, 0.5])
    assert m.cond(()).sum() == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize("obj, message", [
    ({"kind": "iid", "probs": [0.5, 0.6]}, "sums to"),
    ({"kind": "iid", "probs": [1.5, -0.5]}, "negative"),
    ({"kind": "iid", "probs": [float("nan"), 1.0]}, "NaN"),
    ({"kind": "markov", "initial": [0.5, 0.5], "transition": [[1, 0]]}, "rows"),
    ({"kind": "markov", "initial": [0.5, 0.5], "transition": [[1, 0], [1, 0, 0]]}, r"unequal lengths \(2, 3\)"),
    ({"kind": "markov", "initial": [0.5, 0.5], "transition": [[[0.5, 0.5]] * 2] * 2},
     r"2×2 matrix .* got shape \(2, 2, 2\)"),
    ({"kind": "iid", "probs": [True, False]}, r"probs entry \[0\] is a boolean \(true\)"),
    ({"kind": "markov", "initial": [0.5, 0.5], "transition": [[1, 0], [0, True]]},
     r"transition entry \[1, 1\] is a boolean \(true\)"),
    ({"kind": "table", "conditionals": {"": [0.5, 0.5], "1": [False, 1]}},
     r"prefix '1' entry \[0\] is a boolean \(false\)"),
    ({"kind": "iid", "probs": ["0.5", 0.5]}, r"entry \[0\] is not a number \(\"0.5\"\)"),
    ('"model.json"', "must be a JSON object with a \"kind\", got a JSON string"),
    ({"kind": "table", "conditionals": {"0": [1, 0]}}, "empty prefix"),
    ({"kind": "table", "conditionals": {"": [1, 0], "x": [1, 0]}}, "token ids"),
    ({"kind": "nope"}, "unknown kind"),
    ({"kind": "iid"}, "needs the field"),
])
def test_bad_models_raise_one_sentence(obj, message):
    with pytest.raises(ToyModelError, match=message):
        tm.from_json(obj)


@pytest.mark.parametrize("T", [1e-310, 5e-324, 1e-5])
def test_tiny_temperatures_are_computed_not_nan(T):
    """(log m − log max m)/T sends every non-maximal logit to −∞: the limit law, finite, silent."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(tm.IIDModel([0.4, 0.6]).with_temperature(T).cond(()), [0, 1])
        # ties share the mass, as m^(1/T) does for every T > 0 (T = 0 would give [1, 0, 0])
        np.testing.assert_array_equal(tm.IIDModel([0.5, 0.5, 0.0]).with_temperature(T).cond(()),
                                      [0.5, 0.5, 0.0])
        np.testing.assert_array_equal(tm.temper(np.array([5e-324, 1.0]), T), [0, 1])


def test_small_temperature_matches_the_closed_form():
    r = (0.4 / 0.6) ** 100  # T = 0.01: weights ∝ m^100
    np.testing.assert_allclose(tm.IIDModel([0.4, 0.6]).with_temperature(0.01).cond(()),
                               [r / (1 + r), 1 / (1 + r)], rtol=1e-12)


def test_overflowing_sum_is_refused_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ToyModelError, match="probs sums to inf, not 1"):
            tm.IIDModel([1e308, 1e308])
        np.testing.assert_array_equal(tm.IIDModel([5e-324, 1.0]).cond(()), [5e-324, 1.0])


def test_a_file_holding_a_json_string_is_refused_not_followed(tmp_path):
    path = tmp_path / "self.json"
    path.write_text(json.dumps(str(path)))  # names itself: once recursed to the recursion limit
    with pytest.raises(ToyModelError, match=r"self.json must hold a JSON object .* got a JSON string"):
        tm.load(path)
    (tmp_path / "list.json").write_text("[0.5, 0.5]")
    with pytest.raises(ToyModelError, match="got a JSON array"):
        tm.load(tmp_path / "list.json")
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"kind": "iid", "probs": [0.25, 0.75]}))
    np.testing.assert_array_equal(tm.from_json(good).cond(()), [0.25, 0.75])  # a Path is a file


def test_several_drafts_preset_shows_every_rule_and_the_lp_at_K_1_to_4():
    """The Start page's flagship preset: at every K its pages offer (1..4) the optimal LP is solved
    without asking and the exact law of every registered rule the laboratory offers (those that take K
    i.i.d. drafts) is computed; several drafts clearly help."""
    from core import bounds
    from core.analysis.exact import estimated_seconds, exact_analysis
    from core.rules.registry import REGISTRY, chains_rules, make_verifier

    pre = tm.PRESETS["several-drafts"]
    V, L = pre.draft.V, pre.L
    assert pre.K <= 4
    lp = []
    for K in range(1, 5):
        assert bounds.check_size(V, K, L).size <= 6_000      # pages.ui.cached.LP_AUTO: no button
        lp.append(bounds.optimal_lp(pre.draft, pre.target, K, L).value)
        for name in chains_rules():
            cls = REGISTRY[name]
            assert estimated_seconds(cls, V, K, L) <= 1.0    # pages.ui.cached.EXACT_AUTO_SECONDS
            result = exact_analysis(make_verifier(name, pre.draft, pre.target, K, L), pre.draft,
                                    pre.target, K, L)
            assert result.expected_accepted <= lp[-1] + 1e-6 or not result.is_lossless
    assert all(b > a + 0.1 for a, b in zip(lp, lp[1:]))       # every extra draft helps
    assert lp[3] > 2 * lp[0]
