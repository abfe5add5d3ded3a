"""Medusa's typical acceptance (``core/rules/typical.py``, docs/maths.md "Typical acceptance"):
its definition, exact fidelity errors derived by hand or by an independent brute force, beside the
lossless ``rrs`` on the same trees, at T = 0 and T > 0; what ε and δ do; the command line."""
from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy.stats import entropy as scipy_entropy

import toy_models as tm
from core.analysis.exact import exact_analysis
from core.analysis.montecarlo import monte_carlo
from core.analysis.toy_drafts import draw_block
from core.data.coins import enumerate_outcomes
from core.data.shapes import Shape
from core.data.token_tree import TokenTree
from core.rules.base import VerifierError
from core.rules.registry import REGISTRY, make_verifier
from core.rules.typical import MEDUSA_DELTA, MEDUSA_EPSILON, Typical, entropy, threshold

BIN = (tm.IIDModel([2 / 3, 1 / 3]), tm.IIDModel([1 / 3, 2 / 3]))
TRI = (tm.IIDModel([1 / 2, 1 / 3, 1 / 6]), tm.IIDModel([1 / 6, 1 / 3, 1 / 2]))
B21 = Shape.tree((2, 1))


def exact(method, toy, shape, law, **params):
    draft, target = toy
    verifier = make_verifier(method, draft, target, shape=shape, law=law, **params)
    return exact_analysis(verifier, draft, target, shape=shape, law=law)


def tempered(toy, T):
    return toy[0].with_temperature(T), toy[1].with_temperature(T)


def law_gap(a: dict, b: dict) -> float:
    return max(abs(a.get(u, 0.0) - b.get(u, 0.0)) for u in set(a) | set(b))


# ---------------------------------------------------------------------------------------------
# The definition and its parameters
# ---------------------------------------------------------------------------------------------

def test_medusa_defaults_and_the_parameters():
    """ε = 0.09 and δ = 0.3 are ``medusa_generate``'s posterior_threshold and posterior_alpha."""
    assert (MEDUSA_EPSILON, MEDUSA_DELTA) == (0.09, 0.3)
    v = make_verifier("typical")
    assert (v.epsilon, v.delta, v.extra_token) == (0.09, 0.3, "greedy")
    v = make_verifier("typical", *BIN, shape=B21, law="topk", epsilon=0.2, delta=None)
    assert (v.epsilon, v.delta) == (0.2, 0.3)
    assert [p.name for p in REGISTRY["typical"].parameters] == ["epsilon", "delta", "extra_token"]
    assert make_verifier("typical", extra_token="target").extra_token == "target"
    assert not REGISTRY["typical"].lossless_by_theory and REGISTRY["typical"].token_trees
    assert all(cls.supports(shape, law) for cls in [Typical] for shape in (B21, Shape.chains_of(2, 2))
               for law in ("iid", "wor", "topk", "greedy"))


@pytest.mark.parametrize("make, message", [
    (lambda: Typical(epsilon=1.0), r"^epsilon \(Medusa's posterior threshold\) must be in \[0, 1\), got 1$"),
    (lambda: Typical(epsilon=-0.1), r"must be in \[0, 1\), got -0.1$"),
    (lambda: Typical(epsilon=float("nan")), r"must be in \[0, 1\), got nan$"),
    (lambda: Typical(delta=-1), r"^delta \(Medusa's posterior alpha\) must be a finite number ≥ 0, got -1$"),
    (lambda: Typical(delta=float("inf")), r"got inf$"),
    (lambda: Typical(extra_token="sampled"), r"^extra_token must be one of greedy, target, got 'sampled'$"),
    (lambda: make_verifier("bv", epsilon=0.1), r"^bv takes no parameter epsilon; typical does$"),
    (lambda: make_verifier("rrs", delta=0.1, epsilon=0.2), r"^specinfer takes no parameter delta, epsilon; typical does$"),
])
def test_refusals_are_one_sentence(make, message):
    with pytest.raises(VerifierError, match=message):
        make()


def test_entropy_is_in_nats_and_the_threshold_is_the_smaller_of_the_two():
    q = np.array([1 / 3, 2 / 3])
    assert entropy(q) == pytest.approx(math.log(3) - 2 / 3 * math.log(2), abs=1e-15)
    assert entropy(np.array([0.0, 1.0, 0.0])) == 0.0
    # exp(−H) = 2^(2/3)/3 ≈ 0.529: δ = 0.3 gives 0.159, so ε = 0.09 binds; δ = 0.1 gives 0.053
    assert threshold(q, 0.09, 0.3) == 0.09
    assert threshold(q, 0.09, 0.1) == pytest.approx(0.1 * 2 ** (2 / 3) / 3, abs=1e-15)


# ---------------------------------------------------------------------------------------------
# Exact fidelity errors derived by hand, beside rrs on the same tree
# ---------------------------------------------------------------------------------------------

def test_binary_toy_b21_topk_at_T1_by_hand():
    """Binary toy p = (2/3, 1/3), q = (1/3, 2/3), b = (2, 1) drafted by topk: the root's children are
    p's top 2, tokens 0 and 1 (positions 0, 1), and each gets p's top 1, token 0: the paths 00, 10.

    Threshold at every node (q is context-independent): H(q) = ln 3 − (2/3) ln 2, exp(−H) = 2^(2/3)/3
    ≈ 0.529, δ·exp(−H) ≈ 0.159 > ε = 0.09, so the threshold is 0.09 and both q(0) = 1/3 and
    q(1) = 2/3 pass: every node passes, τ = 2.  Of the two passing paths of length 2, 10 is the more
    likely (q(10) = 2/9 > q(00) = 1/9); the extra token is argmax q = 1.  So O = 101 for every draw
    (the topk tree is fixed and the rule tosses no coin): E[τ] = 2 and the completed law is the point
    mass at 101, TV = 1 − q(101) = 1 − (2/3)(1/3)(2/3) = 23/27.  Drawing the extra token from q instead
    (``extra_token="target"``) completes 10 with q: TV = 1 − q(10) = 7/9.

    With ε = 0.4, δ = 0.9: δ·exp(−H) ≈ 0.476, the threshold is 0.4; token 0 (1/3) fails and token 1
    (2/3) passes, at the root and below.  So s = 1 (its child 0 fails), y = 1: O = 11, E[τ] = 1,
    TV = 1 − q(11) = 5/9.  On the same tree rrs accepts E[τ] = q(0) + q(1) + q(00) + q(10) = 4/3
    (spec §3.4) with TV 0."""
    r = exact("typical", BIN, B21, "topk")
    assert r.output_law == {(1, 0, 1): 1.0} and r.expected_accepted == 2
    assert r.fidelity_tv == pytest.approx(23 / 27, abs=1e-15)
    target = exact_analysis(Typical(extra_token="target"), *BIN, shape=B21, law="topk")
    assert target.expected_accepted == 2 and target.fidelity_tv == pytest.approx(7 / 9, abs=1e-15)
    r = exact("typical", BIN, B21, "topk", epsilon=0.4, delta=0.9)
    assert r.output_law == {(1, 1): 1.0} and r.fidelity_tv == pytest.approx(5 / 9, abs=1e-15)
    rrs = exact("rrs", BIN, B21, "topk")
    assert rrs.summary()["expected_accepted_fraction"] == "4/3" and rrs.fidelity_tv <= 1e-15


def test_binary_toy_b21_topk_at_other_temperatures_by_hand():
    """The same tree at T = 1/2 and T = 2.  At T, q_T ∝ q^(1/T) and p_T ∝ p^(1/T) keep their ranks,
    so the tree is still {00, 10}.  T = 1/2: q_T = (1/5, 4/5), exp(−H) ≈ 0.606, threshold 0.09, every
    node passes, s = 10, y = 1: TV = 1 − (4/5)(1/5)(4/5) = 109/125.  T = 2: q_T = (1, √2)/(1 + √2),
    the threshold is again 0.09, O = 101 and TV = 1 − 2/(1 + √2)³ = 15 − 10√2."""
    for T, tv in [(0.5, 109 / 125), (2.0, 15 - 10 * math.sqrt(2))]:
        toy = tempered(BIN, T)
        r = exact("typical", toy, B21, "topk")
        assert r.output_law == {(1, 0, 1): 1.0} and r.fidelity_tv == pytest.approx(tv, abs=1e-14)
        assert exact("rrs", toy, B21, "topk").fidelity_tv <= 1e-15


def test_three_token_toy_b21_topk_at_T1_by_hand():
    """p = (1/2, 1/3, 1/6), q = (1/6, 1/3, 1/2), b = (2, 1), topk: root children 0, 1, each with
    child 0: paths 00, 10.  H(q) = (1/6) ln 6 + (1/3) ln 3 + (1/2) ln 2 ≈ 1.011, exp(−H) ≈ 0.364,
    δ·exp(−H) ≈ 0.109 > 0.09: the threshold is 0.09 < q(0) = 1/6, so every node passes.  q(10) = 1/18
    > q(00) = 1/36: s = 10, y = argmax q = 2, O = 102, TV = 1 − (1/3)(1/6)(1/2) = 35/36 (rrs on this
    tree: 7/12, TV 0).

    At T = 1/2, q_T = (1, 4, 9)/14 and p_T = (9, 4, 1)/14 keep their ranks, so the trees are the same.
    H(q_T) ≈ 0.830, δ·exp(−H) ≈ 0.131: the threshold is 0.09 > q_T(0) = 1/14, so token 0 fails
    everywhere and tokens 1, 2 pass.  b = (2, 1): s = 1 (its child 0 fails), y = 2, O = 12, TV =
    1 − (4/14)(9/14) = 40/49.  b = (3, 1): the root also has child 2; of the passing 1 and 2 the more
    likely is 2, so O = 22 and TV = 1 − (9/14)² = 115/196."""
    r = exact("typical", TRI, B21, "topk")
    assert r.output_law == {(1, 0, 2): 1.0} and r.fidelity_tv == pytest.approx(35 / 36, abs=1e-15)
    assert exact("rrs", TRI, B21, "topk").summary()["expected_accepted_fraction"] == "7/12"
    half = tempered(TRI, 0.5)
    r = exact("typical", half, B21, "topk")
    assert r.output_law == {(1, 2): 1.0} and r.fidelity_tv == pytest.approx(40 / 49, abs=1e-14)
    r = exact("typical", half, Shape.tree((3, 1)), "topk")
    assert r.output_law == {(2, 2): 1.0} and r.fidelity_tv == pytest.approx(115 / 196, abs=1e-14)
    for shape in (B21, Shape.tree((3, 1))):
        assert exact("rrs", half, shape, "topk").fidelity_tv <= 1e-15


def test_ties_in_likelihood_go_to_medusa_candidate_order():
    """q = (1/2, 1/2), p = (3/5, 2/5), b = (2, 1), topk: paths 00 (positions (0, 0)) and 10 ((1, 0))
    both pass with q = 1/4.  Medusa lists its candidates by decreasing (length, positions), so row 0
    is 10 and ``torch.argmax`` keeps the first of equal likelihoods: s = 10; y = argmax q(·|10) = 0,
    the smaller id among equal probabilities."""
    toy = (tm.IIDModel([3 / 5, 2 / 5]), tm.IIDModel([1 / 2, 1 / 2]))
    assert exact("typical", toy, B21, "topk").output_law == {(1, 0, 0): 1.0}


# ---------------------------------------------------------------------------------------------
# An independent brute force on seeded random instances
# ---------------------------------------------------------------------------------------------

def brute_force_topk(draft, target, b, epsilon, delta):
    """The output O of typical acceptance on the topk tree b, from the definition alone: every
    root-to-leaf path by position (rank in p, ties to the smaller id), the passing prefixes (H from
    scipy), the longest, the most likely, the lexicographically largest positions; then argmax q."""
    def children(u, k):
        P = draft.cond(u)
        return sorted(range(draft.V), key=lambda x: (-P[x], x))[:k]

    def passes(u, x):
        Q = target.cond(u)
        return Q[x] > min(epsilon, delta * math.exp(-scipy_entropy(Q)))

    candidates = [((), 1.0, ())]
    level = [((), ())]
    for k in b:
        level = [(u + (x,), pos + (i,)) for u, pos in level for i, x in enumerate(children(u, k))]
        for u, pos in level:
            if all(passes(u[:d], u[d]) for d in range(len(u))):
                candidates.append((u, math.prod(target.cond(u[:d])[u[d]] for d in range(len(u))), pos))
    top = max(len(u) for u, _, _ in candidates)
    longest = [c for c in candidates if len(c[0]) == top]
    best = max(c[1] for c in longest)
    s = max((c for c in longest if abs(c[1] - best) <= 1e-12 * best), key=lambda c: c[2])[0]
    return s + (int(np.argmax(target.cond(s))),)


def test_topk_trees_on_seeded_random_instances_against_a_brute_force():
    """A topk tree and the rule are deterministic, so O is one output and the completed law is q
    conditioned on extending it: TV = 1 − q(O).  The lab's TV and output law against that, with O
    found by ``brute_force_topk``; rrs on the same tree is lossless."""
    rng = np.random.default_rng(2026)
    checked = 0
    for i in range(12):
        kind = ("iid", "markov", "table")[i % 3]
        V = int(rng.integers(3, 5))
        b = [(2, 1), (2, 2), (3, 1), (1, 2), (2, 1, 2), (3,)][i % 6]
        draft, target = tm.random_pair(kind, V, alpha=0.5, mix=float(rng.uniform(0.2, 0.8)),
                                       seed=int(rng.integers(1 << 30)), depth=len(b))
        T = (0.5, 1.0, 2.0)[i % 3]
        toy = tempered((draft, target), T)
        epsilon, delta = [(MEDUSA_EPSILON, MEDUSA_DELTA), (0.3, 0.5), (0.05, 1.0)][i % 3]
        shape = Shape.tree(b)
        r = exact("typical", toy, shape, "topk", epsilon=epsilon, delta=delta)
        O = brute_force_topk(*toy, b, epsilon, delta)
        q_O = math.prod(toy[1].cond(O[:d])[O[d]] for d in range(len(O)))
        assert r.output_law == {O: 1.0}, (i, kind, V, b, T)
        assert r.fidelity_tv == pytest.approx(1 - q_O, abs=1e-12), (i, kind, V, b, T)
        assert exact("rrs", toy, shape, "topk").fidelity_tv <= 1e-12
        checked += r.fidelity_tv > 0.1
    assert checked >= 10      # lossy on (almost) every instance, not only somewhere


# The table of docs/maths.md ("Is top-k drafting lossless at T > 0?"): rrs's E[τ] from the closed form
# Σ q(s) of a topk tree, typical's TV = 1 − q(O) with O from the brute force, and with y ~ q(·|s)
# TV = 1 − q(s) (the completed law is q conditioned on extending s)
DOCS_TABLE = [
    ("bin", (2, 1), 0.5, "6/5", "109/125", "21/25"),
    ("bin", (2, 1), 1.0, "4/3", "23/27", "7/9"),
    ("bin", (2, 1), 2.0, math.sqrt(2), 15 - 10 * math.sqrt(2), 5 - 3 * math.sqrt(2)),
    ("bin", (2, 2), 1.0, "2", "19/27", "5/9"),
    ("tri", (2, 1), 0.5, "75/196", "40/49", "5/7"),
    ("tri", (2, 1), 1.0, "7/12", "35/36", "17/18"),
    ("tri", (3, 1), 0.5, "15/14", "115/196", "5/14"),
    ("tri", (3, 1), 1.0, "7/6", "23/24", "11/12"),
]


@pytest.mark.parametrize("toy, b, T, rrs_tau, tv, tv_target", DOCS_TABLE)
def test_the_docs_table_of_topk_trees(toy, b, T, rrs_tau, tv, tv_target):
    from core.bounds.closed_form import topk_tree_value
    from core.data.exact_fraction import fraction

    model = tempered({"bin": BIN, "tri": TRI}[toy], T)
    shape = Shape.tree(b)
    rrs = exact("rrs", model, shape, "topk")
    r = exact("typical", model, shape, "topk")
    y_from_q = exact_analysis(Typical(extra_token="target"), *model, shape=shape, law="topk")
    O = brute_force_topk(*model, b, MEDUSA_EPSILON, MEDUSA_DELTA)
    q = [math.prod(model[1].cond(u[:d])[u[d]] for d in range(len(u))) for u in (O, O[:-1])]
    assert rrs.fidelity_tv <= 1e-15 and rrs.expected_accepted == pytest.approx(topk_tree_value(*model, shape), abs=1e-14)
    assert r.fidelity_tv == pytest.approx(1 - q[0], abs=1e-14)
    assert y_from_q.fidelity_tv == pytest.approx(1 - q[1], abs=1e-14)
    for value, quoted in [(rrs.expected_accepted, rrs_tau), (r.fidelity_tv, tv), (y_from_q.fidelity_tv, tv_target)]:
        if isinstance(quoted, str):
            assert fraction(value, integers=True) == quoted
        else:
            assert value == pytest.approx(quoted, abs=1e-14)


def test_one_drafted_token_on_the_binary_toy_is_the_one_line_counterexample():
    """b = (1), topk, binary toy at T = 1: the draft is p's argmax, token 0; q(0) = 1/3 > 0.09
    passes; y = argmax q = 1.  The output is always 01, q(01) = 2/9: TV = 7/9.  rrs accepts token 0
    with probability q(0) = 1/3 and is lossless."""
    r = exact("typical", BIN, Shape.tree((1,)), "topk")
    assert r.output_law == {(0, 1): 1.0} and r.fidelity_tv == pytest.approx(7 / 9, abs=1e-15)
    rrs = exact("rrs", BIN, Shape.tree((1,)), "topk")
    assert rrs.summary()["expected_accepted_fraction"] == "1/3" and rrs.fidelity_tv <= 1e-15


# ---------------------------------------------------------------------------------------------
# T = 0
# ---------------------------------------------------------------------------------------------

def test_at_T0_typical_is_greedy_decoding_and_equals_rrs():
    """At T = 0 q is one-hot at its argmax (the smallest id among ties), so H = 0 and the threshold
    is min(ε, δ) < 1 (ε < 1 is enforced): exactly the argmax passes, as Medusa's code makes it by
    comparing with argmax.  The accepted path is the target's greedy path as far as it was drafted,
    and y continues it greedily: the output completed by q (itself deterministic) is the target's
    greedy sequence, TV = 0, and rrs (which accepts the argmax child with probability 1 and nothing
    else) has the same output law.  The lab tempers the draft too, so p is one-hot: topk and the
    other distinct-token laws exist only with b_d = 1, and iid draws repeat p's argmax; to draft a
    wider topk tree the draft below keeps T = 1 and only the target is at T = 0."""
    cases = []
    for kind, V in [("iid", 3), ("markov", 3), ("table", 2)]:
        draft, target = tm.random_pair(kind, V, alpha=0.5, mix=0.5, seed=7 * V, depth=3)
        lab = tempered((draft, target), 0.0)
        cases += [(lab, Shape.chains_of(2, 3), "iid"), (lab, Shape.tree((2, 2)), "iid"),
                  (lab, Shape.tree((1, 1, 1)), "topk"),
                  ((draft, target.with_temperature(0.0)), Shape.tree((2, 2)), "topk"),
                  ((draft, target.with_temperature(0.0)), Shape.tree((2, 1, 2)), "greedy")]
    for toy, shape, law in cases:
        rrs = exact("rrs", toy, shape, law)
        for epsilon, delta in [(MEDUSA_EPSILON, MEDUSA_DELTA), (0.0, 0.0), (0.999, 100.0)]:
            r = exact("typical", toy, shape, law, epsilon=epsilon, delta=delta)
            assert r.fidelity_tv <= 1e-15 and law_gap(r.output_law, rrs.output_law) <= 1e-14, (shape, law)


# ---------------------------------------------------------------------------------------------
# What ε and δ do
# ---------------------------------------------------------------------------------------------

def test_accepted_length_never_grows_with_epsilon_or_delta():
    """Raising ε or δ raises every node's threshold min(ε, δ·exp(−H)), so the passing nodes of every
    drafted tree shrink and τ, the longest passing path, can only drop: E[τ] is non-increasing in
    each, for every law (a consequence of the definition, checked here on the laws' enumerations)."""
    rng = np.random.default_rng(5)
    grid = [0.0, 0.05, 0.09, 0.2, 0.35, 0.5, 0.8, 0.99]
    for i, law in enumerate(("iid", "wor", "topk", "greedy")):
        draft, target = tm.random_pair(("markov", "table")[i % 2], 3, alpha=0.5, mix=0.5,
                                       seed=int(rng.integers(1 << 30)), depth=2)
        shape = Shape.tree((2, 1)) if law == "iid" else Shape.tree((2, 2))
        by_eps = [exact("typical", (draft, target), shape, law, epsilon=e, delta=3.0).expected_accepted for e in grid]
        by_delta = [exact("typical", (draft, target), shape, law, epsilon=0.99, delta=d).expected_accepted
                    for d in [0.0, 0.2, 0.5, 1.0, 2.0, 3.0]]
        for values in (by_eps, by_delta):
            assert all(b <= a + 1e-12 for a, b in zip(values, values[1:])), (law, values)
            assert values[0] > values[-1]


def crafted():
    """V = 2 table models: q(·) = (0.6, 0.4), q(·|0) = (0.55, 0.45), q(·|1) = (0.95, 0.05), q = (1/2,
    1/2) at depth 2; the draft's top 1 is token 1 after 0 and token 0 after 1."""
    half = [0.5, 0.5]
    target = tm.TableModel({(): [0.6, 0.4], (0,): [0.55, 0.45], (1,): [0.95, 0.05],
                            (0, 0): half, (0, 1): half, (1, 0): half, (1, 1): half})
    draft = tm.TableModel({(): [0.5, 0.5], (0,): [0.3, 0.7], (1,): [0.9, 0.1]})
    return draft, target


@pytest.mark.parametrize("epsilon, delta, O, tv", [
    (0.3, 2.0, (1, 0, 0), 81 / 100),
    (0.42, 2.0, (0, 1, 0), 173 / 200),
    (0.5, 2.0, (0, 0), 67 / 100),
    (0.7, 2.0, (0,), 2 / 5),
    (0.99, 0.5, (1, 0, 0), 81 / 100),
    (0.99, 0.8, (0, 1, 0), 173 / 200),
    (0.99, 1.0, (0, 0), 67 / 100),
    (0.99, 1.5, (0,), 2 / 5),
])
def test_the_fidelity_error_is_not_monotone_in_epsilon_or_delta(epsilon, delta, O, tv):
    """On ``crafted()`` with b = (2, 1) topk the tree is {01, 10}: q(01) = 0.27, q(10) = 0.38, and the
    extra token after either is 0 (q = 1/2, the smaller id).  With δ = 2 the threshold is ε at every
    node (δ·exp(−H) ≥ δ/V = 1).  ε < 0.4: everything passes, s = 10 (the more likely), TV =
    1 − 0.38·0.5 = 0.81.  0.4 ≤ ε < 0.45: root token 1 fails, s = 01, TV = 1 − 0.27·0.5 = 0.865, *more*
    than before although less is accepted.  0.45 ≤ ε < 0.6: 1 after 0 fails, s = 0, y = 0 (0.55):
    TV = 1 − 0.6·0.55 = 0.67.  ε ≥ 0.6: s = ∅, y = 0: TV = 0.4.  With ε = 0.99 the threshold is
    δ·exp(−H(q(·|u))), and exp(−H) is 0.510 at the root, 0.503 after 0 and 0.820 after 1: root token
    1 fails from δ = 0.4/0.510 ≈ 0.784, token 1 after 0 from 0.45/0.503 ≈ 0.896, root token 0 from
    0.6/0.510 ≈ 1.18: the same four outputs in the same order, so TV rises, then falls, in δ too."""
    r = exact("typical", crafted(), B21, "topk", epsilon=epsilon, delta=delta)
    assert r.output_law == {O: 1.0}
    assert r.fidelity_tv == pytest.approx(tv, abs=1e-14)


# ---------------------------------------------------------------------------------------------
# One coin programme for sampling and exact laws; chains; Monte Carlo
# ---------------------------------------------------------------------------------------------

def test_the_rule_tosses_no_coin_and_reads_chains_as_their_tree():
    """Given the drafts the rule is deterministic: one coin outcome, the extra token a point mass.
    On K i.i.d. chains (``run_chains``) it reads their token tree: the same law and the same tests,
    and every draft index (of s, of each test) names a draft through that node; the law does not
    depend on the drafts' order."""
    draft, target = tm.random_pair("markov", 3, alpha=0.5, mix=0.5, seed=4, depth=3)
    v = Typical()
    for seed in range(6):
        block = draw_block(draft, target, 3, 3, seed)
        runs = enumerate_outcomes(lambda coins: v.run(block, coins))
        assert len(runs) == 1 and runs[0][0] == 1.0
        out = runs[0][1]
        assert out.residual.sum() == 1.0 and out.residual.max() == 1.0
        assert v.law(block) == v.law(block, v.run_tree)
        assert [(t.node, t.passed) for t in out.trace.tests] == \
            [(t.node, t.passed) for t in v.run_tree(block, None).trace.tests]
        if out.accepted:
            assert block.draft(out.draft)[: out.tau] == out.accepted
        assert all(block.draft(t.draft)[: len(t.node)] == t.node for t in out.trace.tests)
        assert out.trace.tests and all(t.prob == float(t.passed) for t in out.trace.tests)
        verdict = v.verify(block, seed)
        assert (verdict.accepted, verdict.extra) == (out.accepted, int(np.argmax(out.residual)))
        # order_invariant: the law reads the node set (ties go to p's ranks, not to draw order)
        for order in itertools.permutations(range(block.K)):
            shuffled = TokenTree.chains_from_models([block.draft(k) for k in order], draft.cond, target.cond)
            assert v.law(shuffled) == v.law(block)


def test_chains_through_the_lab_equal_the_same_chains_as_a_tree():
    draft, target = tm.random_pair("table", 2, alpha=0.5, mix=0.5, seed=9, depth=3)
    a = exact_analysis("typical", draft, target, 2, 3)                       # K i.i.d. drafts
    b = exact_analysis("typical", draft, target, shape=Shape.tree((2, 1, 1)), law="wor")
    assert a.fidelity_tv > 0.05 and b.fidelity_tv > 0.05
    c = exact("typical", (draft, target), Shape.chains_of(2, 3), "iid")
    assert law_gap(a.output_law, c.output_law) == 0.0


@pytest.mark.parametrize("shape, law, K_L", [(Shape.tree((2, 2)), "iid", None),
                                              (Shape.tree((2, 1, 2)), "greedy", None),
                                              (None, "iid", (2, 3))])
def test_monte_carlo_agrees_with_the_exact_law(shape, law, K_L):
    draft, target = tm.random_pair("table", 3, alpha=0.7, seed=5, depth=3)
    v = Typical(epsilon=0.2, delta=0.5)
    kw = dict(shape=shape, law=law) if shape is not None else {}
    args = K_L or (None, None)
    ex = exact_analysis(v, draft, target, *args, **kw)
    mc = monte_carlo(v, draft, target, *args, n=3000, seed=1, confidence=0.999, **kw)
    lo, hi = mc.tau_interval()
    assert np.all((lo <= ex.tau_pmf + 1e-12) & (ex.tau_pmf <= hi + 1e-12)), (ex.tau_pmf, lo, hi)
    assert abs(mc.tau_mean - ex.expected_accepted) <= 1.7 * mc.tau_mean_halfwidth
    assert len(set(ex.tau_pmf.round(12)) - {0.0}) >= 2          # a law with more than one value of τ
    assert mc.output_counts == monte_carlo(v, draft, target, *args, n=3000, seed=1, **kw).output_counts


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------

@pytest.fixture
def cli(capsys):
    """``python -m core ...`` in this process: (exit status, stdout, stderr)."""
    from core.cli.lab import main

    def run(*args: str) -> tuple[int, str, str]:
        status = main(list(args))
        out, err = capsys.readouterr()
        return status, out, err

    return run


def test_the_command_line_computes_typical_beside_rrs_on_a_tree(cli):
    status, out, _ = cli("exact", "--preset", "binary-toy", "--tree", "2,1", "--law", "topk",
                         "--method", "all", "--json")
    assert status == 0
    rows = {r["method"]: r for r in json.loads(out)["results"]}
    # and the engines' released rules that run on top-k trees (tests/test_engine_ports.py)
    assert list(rows) == ["rrs", "traversal", "lp_optimal", "typical", "eagle", "trtllm_tree", "sglang_tree",
                          "sglang_rocm_greedy", "llamacpp_tree"]
    assert rows["typical"]["fidelity_tv"] == pytest.approx(23 / 27, abs=1e-15)
    # EAGLE's released verification is rrs on a top-k tree (docs/maths.md): the same E[τ], lossless
    assert rows["eagle"]["expected_accepted"] == pytest.approx(rows["rrs"]["expected_accepted"], abs=1e-15)
    assert rows["eagle"]["fidelity_tv"] <= 1e-15
    assert (rows["typical"]["epsilon"], rows["typical"]["delta"], rows["typical"]["extra_token"]) == (0.09, 0.3, "greedy")
    assert rows["rrs"]["fidelity_tv"] <= 1e-15 and "epsilon" not in rows["rrs"]
    status, out, _ = cli("exact", "--preset", "binary-toy", "--tree", "2,1", "--law", "topk", "--method",
                         "typical", "--epsilon", "0.4", "--delta", "0.9", "--json")
    data = json.loads(out)
    assert status == 0 and data["expected_accepted_fraction"] == "1"
    assert data["fidelity_tv"] == pytest.approx(5 / 9, abs=1e-15) and data["epsilon"] == 0.4
    status, out, _ = cli("montecarlo", "--preset", "binary-toy", "--tree", "2,1", "--law", "iid",
                         "--method", "typical", "--epsilon", "0.5", "--n", "200", "--json")
    assert status == 0 and json.loads(out)["epsilon"] == 0.5
    status, out, _ = cli("exact", "--preset", "binary-toy", "--K", "2", "--L", "2", "--method", "all", "--json")
    assert "typical" not in [r["method"] for r in json.loads(out)["results"]]


@pytest.mark.parametrize("args, message", [
    ("exact --preset binary-toy --K 2 --L 2 --method all --epsilon 0.1",
     "error: --epsilon and --delta are typical's, which --method all lists with --tree or --law only; "
     "add one, or use --method typical\n"),
    ("exact --preset binary-toy --K 2 --L 2 --method bv --delta 0.1",
     "error: bv takes no parameter delta; typical does\n"),
    ("exact --preset binary-toy --tree 2,1 --method typical --epsilon 1",
     "error: epsilon (Medusa's posterior threshold) must be in [0, 1), got 1\n"),
    ("montecarlo --preset binary-toy --K 2 --L 2 --method typical --delta -0.5",
     "error: delta (Medusa's posterior alpha) must be a finite number ≥ 0, got -0.5\n"),
])
def test_command_line_refusals_are_one_line_with_status_2(cli, args, message):
    status, out, err = cli(*args.split())
    assert (status, out, err) == (2, "", message)


def test_the_help_states_medusa_defaults():
    from core.cli.lab import build_parser

    parser = build_parser()
    text = parser._subparsers._group_actions[0].choices["exact"].format_help()
    assert f"default {MEDUSA_EPSILON:g}" in text and f"default {MEDUSA_DELTA:g}" in text
