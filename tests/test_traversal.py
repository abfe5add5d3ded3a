"""The traversal family (docs/maths.md): traversal verification, ordered traversal (OTV) and, in the
checks they share, the best top-down rule (TD-optimal; its own tests: tests/test_td_optimal.py),
checked exactly on toy models."""
import itertools
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import toy_models as tm
from core.analysis.exact import exact_analysis
from core.analysis.montecarlo import monte_carlo
from core.data.coins import enumerate_outcomes
from core.data.token_tree import TokenTree
from core.rules.registry import get_verifier, make_verifier

ROOT = Path(__file__).resolve().parents[1]
NEW = ["traversal", "otv", "td_optimal"]


def exact(method, draft, target, K, L, **kw):
    return exact_analysis(make_verifier(method, draft=draft, target=target, K=K, L=L), draft, target,
                          K, L, **kw)


def law_gap(a: dict, b: dict) -> float:
    return max(abs(a.get(u, 0.0) - b.get(u, 0.0)) for u in set(a) | set(b))


# Spec §4, binary toy p = (2/3, 1/3), q = (1/3, 2/3).
VECTORS = [
    ("traversal", 1, 2, Fraction(11, 9)), ("traversal", 2, 2, Fraction(115, 81)),
    ("traversal", 3, 2, Fraction(1136, 729)), ("traversal", 2, 3, Fraction(1415, 729)),
    ("traversal", 4, 2, Fraction(10870, 6561)),
    ("otv", 1, 2, Fraction(11, 9)), ("otv", 2, 2, Fraction(131, 81)),
    ("otv", 3, 2, Fraction(17930, 9747)), ("otv", 2, 3, Fraction(1621, 729)),
    ("otv", 2, 1, Fraction(8, 9)), ("otv", 3, 1, Fraction(512, 513)),
]   # td_optimal's row, under its present definition: tests/test_td_optimal.py


@pytest.mark.parametrize("method, K, L, expected", VECTORS)
def test_binary_toy_vectors(method, K, L, expected):
    toy = tm.binary_toy()
    r = exact(method, toy.draft, toy.target, K, L)
    assert abs(r.expected_accepted - float(expected)) < 1e-12, (r.expected_accepted, float(expected))
    assert Fraction(r.expected_accepted).limit_denominator(20000) == expected
    assert r.fidelity_tv <= 1e-12


def test_command_line_gives_the_otv_vector_and_lists_the_new_rules():
    def run(*args):
        out = subprocess.run([sys.executable, "-m", "core", "exact", "--preset", "binary-toy", *args,
                              "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    one = run("--method", "otv", "--K", "3", "--L", "2")
    assert one["method"] == "otv"
    assert Fraction(one["expected_accepted"]).limit_denominator(20000) == Fraction(17930, 9747)
    assert abs(one["expected_accepted"] - 17930 / 9747) < 1e-12
    rows = run("--method", "all", "--K", "2", "--L", "2")["results"]
    methods = [row["method"] for row in rows]
    assert methods[methods.index("best_of_k_bv") + 1:methods.index("lp_optimal")] == NEW
    by = {row["method"]: row for row in rows}
    assert Fraction(by["traversal"]["expected_accepted"]).limit_denominator(1000) == Fraction(115, 81)


def instances(n: int, seed: int):
    """Seeded (kind, V, K, L, draft, target), p near q (mix 0.1) and far (mix 0.9), V^(K·L) ≤ 729."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        V, K, L = int(rng.integers(2, 5)), int(rng.integers(1, 5)), int(rng.integers(1, 4))
        if V ** (K * L) > 729:
            continue
        kind = ("iid", "markov", "table")[len(out) % 3]
        mix = (0.1, 0.9)[(len(out) // 3) % 2]
        draft, target = tm.random_pair(kind, V, alpha=float(rng.choice([0.3, 1.0, 3.0])), mix=mix,
                                       seed=int(rng.integers(1 << 30)), depth=L)
        out.append((kind, mix, V, K, L, draft, target))
    return out


INSTANCES = instances(36, seed=13)


def test_instances_cover_families_distances_and_sizes():
    assert {i[0] for i in INSTANCES} == {"iid", "markov", "table"}
    assert {i[1] for i in INSTANCES} == {0.1, 0.9}
    assert {i[3] for i in INSTANCES} >= {2, 3} and {i[4] for i in INSTANCES} >= {1, 2, 3}


@pytest.mark.parametrize("method", NEW)
def test_lossless_and_below_the_lp_on_random_instances(method):
    from core.bounds import optimal_lp
    for kind, mix, V, K, L, draft, target in INSTANCES:
        r = exact(method, draft, target, K, L)
        assert abs(r.tau_pmf.sum() - 1.0) < 1e-12
        assert r.fidelity_tv <= 1e-12, (method, kind, mix, V, K, L, r.fidelity_tv)
        assert r.expected_accepted <= optimal_lp(draft, target, K, L).value + 1e-9, (method, kind, V, K, L)


@pytest.mark.parametrize("method", NEW)
def test_p_equal_q_accepts_every_token(method):
    for kind, V, K, L in [("iid", 3, 2, 2), ("markov", 4, 3, 2), ("table", 2, 4, 3)]:
        _, target = tm.random_pair(kind, V, alpha=0.7, seed=V + K, depth=L)
        r = exact(method, target, target, K, L)
        assert abs(r.expected_accepted - L) < 1e-9, (method, kind, r.expected_accepted)


def test_pure_ratio_order_would_lose_where_otv_does_not():
    """Spec §2: p = q = (½, ½), K = 2, L = 1.  Ratio order (tie: token 0 first) visits 0 first with
    law B = (3/4, 1/4) and weight (1/2)/(3/4) = 2/3, or 1 first (both drafts 1) with weight 1.  Its
    rejection (probability 3/4·1/3 = 1/4) leaves T = δ_1, accepted surely by a second child 1, which
    exists unless both drafts were 0 (probability 1/3 given best = 0): P(τ = 0) = 1/4·1/3 = 1/12.
    OTV chooses draft-first there (first child's weight q/p = 1) and accepts surely."""
    from core.rules.otv import RankedState, ordered
    from core.rules.traversal_walk import traversal_output_law

    def ratio_only(p, q, w, k):
        state = ordered(p, q, w, k)
        return RankedState(p, state.order, state.position, state.allowed, k, False)

    p = np.array([0.5, 0.5])
    model = tm.IIDModel(p)
    assert ordered(p, p, 1.0, 2).draft_first
    np.testing.assert_allclose(ratio_only(p, p, 1.0, 2).law(), [0.75, 0.25], atol=1e-15)
    law, _ = traversal_output_law(ratio_only, model, model, 2, 1)
    assert sum(v for u, v in law.items() if len(u) == 2) == pytest.approx(11 / 12, abs=1e-15)
    assert exact("otv", model, model, 2, 1).expected_accepted == pytest.approx(1.0, abs=1e-15)


def test_k1_traversal_and_otv_are_bv_and_td_optimal_is_sd():
    for kind, mix, V, K, L, draft, target in INSTANCES[:18]:
        bv = exact("bv", draft, target, 1, L).output_law
        sd = exact("sd", draft, target, 1, L).output_law
        for method, ref in (("traversal", bv), ("otv", bv), ("td_optimal", sd)):
            gap = law_gap(exact(method, draft, target, 1, L).output_law, ref)
            assert gap < 1e-13, (method, kind, V, L, gap)


@pytest.mark.parametrize("method", NEW)
def test_model_level_law_equals_enumeration_of_every_draft_outcome(method):
    for kind, mix, V, K, L, draft, target in INSTANCES[:24]:
        a = exact(method, draft, target, K, L)
        b = exact(method, draft, target, K, L, recursion=False)
        assert law_gap(a.output_law, b.output_law) < 1e-13, (method, kind, V, K, L)


@pytest.mark.parametrize("method", NEW)
def test_monte_carlo_agrees_with_exact_law(method):
    draft, target = tm.random_pair("table", 3, alpha=0.7, seed=5, depth=3)
    verifier = make_verifier(method, draft=draft, target=target, K=2, L=3)
    ex = exact_analysis(verifier, draft, target, 2, 3)
    mc = monte_carlo(verifier, draft, target, 2, 3, n=3000, seed=1, confidence=0.999)
    lo, hi = mc.tau_interval()
    assert np.all((lo <= ex.tau_pmf + 1e-12) & (ex.tau_pmf <= hi + 1e-12)), (ex.tau_pmf, lo, hi)
    assert abs(mc.tau_mean - ex.expected_accepted) <= 1.7 * mc.tau_mean_halfwidth


@pytest.mark.parametrize("method", ["traversal", "otv"])
def test_trace_records_every_coin_in_visit_order(method):
    """Every coin of a traversal rule is an acceptance test in the trace: the product of the tests'
    probabilities (prob if passed, 1 − prob if not) is the outcome's probability, the visits come
    in the policy's order, and each 'residual' step follows a rejected child of that node."""
    toy = tm.binary_toy()
    verifier = get_verifier(method)
    for drafts in itertools.product(itertools.product(range(2), repeat=2), repeat=3):
        block = TokenTree.chains_from_models([list(d) for d in drafts], toy.draft.cond, toy.target.cond)
        for prob, out in enumerate_outcomes(lambda coins: verifier.run(block, coins)):
            tests = out.trace.tests
            product = np.prod([t.prob if t.passed else 1.0 - t.prob for t in tests])
            assert product == pytest.approx(prob, rel=1e-12)
            visits = [s for s in out.trace.steps if s.event == "visit"]
            assert [s.node for s in visits][:1] == [(int(drafts[0][0]),)] or method == "otv"
            for a, b in zip(out.trace.steps, out.trace.steps[1:]):
                if b.event == "residual":
                    assert a.event in ("residual", "visit", "enter") and b.vector is not None
                    assert abs(sum(b.vector) - 1.0) < 1e-12


def test_traversal_visits_children_in_order_of_first_appearance():
    """Tokens 1 and 2 have q/p = 4/9, so every weight on these drafts is below 1 and the outcome
    where every test fails has positive probability: its trace is the whole traversal."""
    draft, target = tm.IIDModel(np.array([0.1, 0.45, 0.45])), tm.IIDModel(np.array([0.6, 0.2, 0.2]))
    block = TokenTree.chains_from_models([[2, 1], [1, 1], [2, 2]], draft.cond, target.cond)
    rejected_all = [(prob, out) for prob, out in
                    enumerate_outcomes(lambda coins: get_verifier("traversal").run(block, coins))
                    if out.accepted == ()]
    assert len(rejected_all) == 1 and rejected_all[0][0] > 0
    trace = rejected_all[0][1].trace
    assert [s.node for s in trace.steps if s.event == "visit"] == [(2,), (2, 1), (2, 2), (1,), (1, 1)]
    assert [(t.node, t.kind, t.passed) for t in trace.tests] == [
        ((2, 1), "full-block", False), ((2, 2), "full-block", False), ((2,), "sub-block", False),
        ((1, 1), "full-block", False), ((1,), "sub-block", False)]
    first = next(s for s in trace.steps if s.event == "visit")
    assert (first.values["w"], first.values["S"], first.values["T"]) == pytest.approx((4 / 9, 0.45, 0.2))
