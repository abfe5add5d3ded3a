import json

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
    ({"kind": "markov", "initial": [0.5, 0.5], "transition": [[1, 0], [1, 0, 0]]}, "entries"),
    ({"kind": "table", "conditionals": {"0": [1, 0]}}, "empty prefix"),
    ({"kind": "table", "conditionals": {"": [1, 0], "x": [1, 0]}}, "token ids"),
    ({"kind": "nope"}, "unknown kind"),
    ({"kind": "iid"}, "needs the field"),
])
def test_bad_models_raise_one_sentence(obj, message):
    with pytest.raises(ToyModelError, match=message):
        tm.from_json(obj)
