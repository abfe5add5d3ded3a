"""Exact tests of ``core.bounds`` and the LP-optimal verifier (docs/maths.md).

Every expected number is derived here independently: closed forms in exact fractions, BV's
W-recursion written out from the spec, brute force over all token subsets, and the verifier's
exact law summed over every ordered draft tuple.
"""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from core import bounds
from core.bounds import (BoundsTooLarge, acausal_bound, check_size, claimed_cic, greedy_relaxation,
                         optimal_lp, single_token_bound, single_token_lp, single_token_optimum)
from core.rules.lp_optimal import LPOptimal
from core.data.token_tree import TokenTree
from core.rules.registry import REGISTRY, VerifierError
from toy_models import IIDModel, binary_toy, random_pair

TOL = 1e-9


def pair(kind: str, V: int, seed: int, mix: float = 0.5):
    return random_pair(kind, V, alpha=1.0, mix=mix, seed=seed, depth=3)


RANDOM = [(kind, V, L, seed) for kind in ("iid", "markov", "table") for V in (2, 3)
          for L in (1, 2, 3) for seed in (0, 1)]


# ------------------------------------------------------------------------------------------------
# Independent references
# ------------------------------------------------------------------------------------------------

def bv_closed_form(draft, target, L: int) -> float:
    """E[τ_BV] = Σ_(s≠∅) W(s), W(∅) = 1, W(s·y) = min(q(y|s)·W(s), p(s·y)) (docs/maths.md)."""
    W = {(): 1.0}
    total = 0.0
    for depth in range(L):
        for s in itertools.product(range(draft.V), repeat=depth):
            for y in range(draft.V):
                W[s + (y,)] = min(float(target.cond(s)[y]) * W[s], draft.joint(s + (y,)))
                total += W[s + (y,)]
    return total


def brute_force_alpha(p, q, K: int) -> float:
    """min over every subset A ⊆ Ω of q(A) + 1 − p(A)^K."""
    V = len(p)
    best = 1.0
    for r in range(1, V + 1):
        for A in itertools.combinations(range(V), r):
            best = min(best, sum(q[i] for i in A) + 1.0 - sum(p[i] for i in A) ** K)
    return best


def exact_output_law(verifier, draft, target, K: int, L: int) -> dict[tuple, float]:
    """P(O = s·y) = Σ over every ordered draft tuple (Π_k p(x^(k))) of the verifier's exact law."""
    paths = list(itertools.product(range(draft.V), repeat=L))
    law: dict[tuple, float] = {}
    for drafts in itertools.product(paths, repeat=K):
        weight = float(np.prod([draft.joint(x) for x in drafts]))
        if weight == 0.0:
            continue
        block = TokenTree.chains_from_models(drafts, draft.cond, target.cond)
        for (s, y), prob in verifier.law(block).items():
            law[s + (y,)] = law.get(s + (y,), 0.0) + weight * prob
    return law


def fidelity_error(law: dict[tuple, float], target, L: int) -> float:
    """TV between the completed law Σ_j P(O = z_≤j)·q(z_>j | z_≤j) and q on Ω^(L+1) (docs/maths.md)."""
    tv = 0.0
    for z in itertools.product(range(target.V), repeat=L + 1):
        completed = 0.0
        for j in range(1, L + 2):
            tail = 1.0
            for i in range(j, L + 1):
                tail *= float(target.cond(z[:i])[z[i]])
            completed += law.get(z[:j], 0.0) * tail
        tv += abs(completed - target.joint(z))
    return tv / 2


# ------------------------------------------------------------------------------------------------
# Binary toy: exact fractions
# ------------------------------------------------------------------------------------------------

P_TOY = (Fraction(2, 3), Fraction(1, 3))
Q_TOY = (Fraction(1, 3), Fraction(2, 3))


def toy_joint(dist, s) -> Fraction:
    out = Fraction(1)
    for t in s:
        out *= dist[t]
    return out


def test_binary_toy_acausal_is_twelve_ninths():
    # E[LCP] = P(x_1 = z_1) + P(x = z) ≤ (1 − TV on Ω) + (1 − TV on Ω²); the identity coupling on
    # the common mass attains both terms at once (it sends 00 → 11, the only unmatched pair).
    overlap = sum(min(toy_joint(P_TOY, s), toy_joint(Q_TOY, s))
                  for t in (1, 2) for s in itertools.product(range(2), repeat=t))
    assert overlap == Fraction(12, 9)
    toy = binary_toy()
    for method in ("tree", "transport"):
        assert abs(acausal_bound(toy.draft, toy.target, 1, 2, method=method) - 12 / 9) <= 1e-12


def test_binary_toy_k1_is_bv_eleven_ninths():
    toy = binary_toy()
    # W(0) = min(1/3, 2/3) = 1/3, W(1) = min(2/3, 1/3) = 1/3; W(00) = min(1/9, 4/9) = 1/9,
    # W(01) = min(2/9, 2/9), W(10) = min(1/9, 2/9), W(11) = min(2/9, 1/9): Σ = 2/3 + 5/9 = 11/9.
    plan = optimal_lp(toy.draft, toy.target, 1, 2)
    assert plan.status == 0
    assert abs(plan.value - 11 / 9) <= 1e-12


def test_binary_toy_claimed_cic_and_greedy_in_fractions():
    toy = binary_toy()
    for K in (1, 2, 3):
        cic = Fraction(0)
        for t in (1, 2):
            for s in itertools.product(range(2), repeat=t):
                p, q = toy_joint(P_TOY, s), toy_joint(Q_TOY, s)
                m = min(p / q, Fraction(1))
                cic += q * (1 - (1 - m) ** K)
        assert abs(claimed_cic(toy.draft, toy.target, K, 2) - float(cic)) <= 1e-12
        W, greedy = {(): Fraction(1)}, Fraction(0)
        for s in [(), (0,), (1,)]:
            for y in (0, 1):
                reach = 1 - (1 - toy_joint(P_TOY, s + (y,))) ** K
                W[s + (y,)] = min(Q_TOY[y] * W[s], reach)
                greedy += W[s + (y,)]
        assert abs(greedy_relaxation(toy.draft, toy.target, K, 2) - float(greedy)) <= 1e-12
    assert abs(claimed_cic(toy.draft, toy.target, 1, 2) - 4 / 3) <= 1e-12   # docs/maths.md data point


# ------------------------------------------------------------------------------------------------
# The optimal LP against closed forms
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind,V,L,seed", RANDOM)
def test_optimal_lp_at_k1_equals_bv(kind, V, L, seed):
    """Both K = 1 forms (node columns; per-path columns as for K ≥ 2) reach BV's value."""
    draft, target = pair(kind, V, seed)
    bv = bv_closed_form(draft, target, L)
    for general in (False, True):
        plan = optimal_lp(draft, target, 1, L, general=general)
        assert plan.status == 0
        assert abs(plan.value - bv) <= TOL, general


def test_k1_node_form_is_smaller_and_spreads_stops_where_proportional_split_fails():
    """The node form has one column per node.  Its per-path plan must still be lossless where
    the naive split 'accept u given x with probability W(u)/p(u)' is not a valid plan
    (W(u·y)/p(u·y) > W(u)/p(u)): here p = (0.9, 0.1) then (0.01, 0.99) after token 0, q uniform
    on the first token then (0.99, 0.01) after 0, so W(0) = 0.5 < p(0) = 0.9 but
    W(00) = min(0.99·0.5, 0.009) = p(00)."""
    from toy_models import TableModel
    draft = TableModel({(): [0.9, 0.1], (0,): [0.01, 0.99], (1,): [0.5, 0.5]})
    target = TableModel({(): [0.5, 0.5], (0,): [0.99, 0.01], (1,): [0.5, 0.5]})
    node, general = optimal_lp(draft, target, 1, 2), optimal_lp(draft, target, 1, 2, general=True)
    assert node.n_variables == 2 + 4 < general.n_variables
    assert abs(node.value - bv_closed_form(draft, target, 2)) <= 1e-12
    assert abs(node.value - general.value) <= 1e-12
    law = exact_output_law(LPOptimal(plan=node), draft, target, 1, 2)
    assert fidelity_error(law, target, 2) <= 1e-12


@pytest.mark.parametrize("V,seed", [(2, 0), (3, 1), (4, 2)])
def test_single_token_formula_lp_and_optimal_lp_agree(V, seed):
    draft, target = pair("iid", V, seed, mix=0.7)
    p, q = draft.cond(()), target.cond(())
    for K in (1, 2, 3, 4):
        expected = brute_force_alpha(list(p), list(q), K)
        assert abs(single_token_optimum(p, q, K) - expected) <= TOL
        assert abs(single_token_lp(p, q, K) - expected) <= TOL
        assert abs(single_token_bound(draft, target, K) - expected) <= TOL
        assert abs(optimal_lp(draft, target, K, 1).value - expected) <= TOL


def test_single_token_with_zero_probabilities():
    cases = [((0.5, 0.5, 0.0), (0.0, 0.5, 0.5)), ((0.0, 1.0, 0.0), (0.2, 0.3, 0.5)),
             ((0.3, 0.0, 0.7, 0.0), (0.0, 0.0, 0.6, 0.4)), ((0.25, 0.25, 0.5), (0.25, 0.25, 0.5))]
    for p, q in cases:
        for K in (1, 2, 3):
            expected = brute_force_alpha(p, q, K)
            assert abs(single_token_optimum(p, q, K) - expected) <= TOL
            assert abs(single_token_lp(p, q, K) - expected) <= TOL
            got = optimal_lp(IIDModel(list(p)), IIDModel(list(q)), K, 1)
            assert abs(got.value - expected) <= TOL


SMALL = [("iid", 2, 2, 0), ("markov", 2, 3, 1), ("table", 2, 2, 2), ("markov", 3, 2, 3),
         ("table", 3, 2, 4)]


@pytest.mark.parametrize("kind,V,L,seed", SMALL)
def test_lp_is_below_its_upper_bounds_and_monotone_in_k(kind, V, L, seed):
    draft, target = pair(kind, V, seed)
    previous = 0.0
    for K in (1, 2, 3):
        value = optimal_lp(draft, target, K, L).value
        tree = acausal_bound(draft, target, K, L)
        transport = acausal_bound(draft, target, K, L, method="transport")
        assert abs(tree - transport) <= TOL               # two formulations of one bound
        assert value <= tree + TOL
        assert value <= greedy_relaxation(draft, target, K, L) + TOL
        assert value >= previous - TOL
        previous = value


# ------------------------------------------------------------------------------------------------
# The LP-optimal verifier
# ------------------------------------------------------------------------------------------------

VERIFIER_CASES = [("binary", 2, 2, 2, 0), ("table", 2, 2, 2, 5), ("markov", 3, 2, 2, 6),
                  ("iid", 2, 3, 2, 7), ("markov", 2, 2, 3, 8), ("binary", 2, 1, 2, 0),
                  ("table", 3, 1, 3, 9), ("markov", 2, 1, 4, 10)]


@pytest.mark.parametrize("kind,V,K,L,seed", VERIFIER_CASES)
def test_lp_verifier_is_lossless_and_attains_the_lp_value(kind, V, K, L, seed):
    if kind == "binary":
        toy = binary_toy()
        draft, target = toy.draft, toy.target
    else:
        draft, target = pair(kind, V, seed)
    plan = optimal_lp(draft, target, K, L)
    for entries in plan.plans:
        assert all(w > 0 for w in entries.values())
        assert abs(sum(entries.values()) - 1.0) <= 1e-12
    verifier = LPOptimal(plan=plan)
    law = exact_output_law(verifier, draft, target, K, L)
    assert abs(sum(law.values()) - 1.0) <= 1e-12
    assert fidelity_error(law, target, L) <= TOL
    expected_tau = sum((len(u) - 1) * w for u, w in law.items())
    assert abs(expected_tau - plan.value) <= TOL
    # The plan's own aggregate law (no sampling) agrees with the verifier's.
    agg = plan.output_law()
    assert max(abs(agg.get(u, 0.0) - law.get(u, 0.0)) for u in set(agg) | set(law)) <= TOL


def test_lp_verifier_interface():
    assert REGISTRY["lp_optimal"] is LPOptimal
    assert LPOptimal.order_invariant and LPOptimal.needs_models and LPOptimal.short == "LP-optimal"
    toy = binary_toy()
    verifier = LPOptimal(toy.draft, toy.target, K=2, L=2)
    block = TokenTree.chains_from_models([(1, 0), (0, 1)], toy.draft.cond, toy.target.cond)
    swapped = TokenTree.chains_from_models([(0, 1), (1, 0)], toy.draft.cond, toy.target.cond)
    assert verifier.law(block) == verifier.law(swapped)
    for seed in range(20):
        verdict = verifier.verify(block, seed)
        s = verdict.accepted
        if s:
            assert block.draft(verdict.draft)[: len(s)] == s
            assert all(block.draft(k)[: len(s)] != s for k in range(verdict.draft))
        else:
            assert verdict.draft == -1
        assert verdict.residual[verdict.extra] == 1.0
        assert "plan_prob" in verdict.trace.quantities[s]
    with pytest.raises(VerifierError):
        LPOptimal()
    with pytest.raises(VerifierError):
        LPOptimal(toy.draft, toy.target)             # K and L missing


def test_lp_verifier_rejects_drafts_of_probability_zero():
    draft, target = IIDModel([1.0, 0.0]), IIDModel([0.5, 0.5])
    plan = optimal_lp(draft, target, 1, 2)
    assert plan.multisets == (((0, 0),),)              # the only path with p > 0
    block = TokenTree.chains_from_models([(0, 1)], draft.cond, target.cond)
    with pytest.raises(VerifierError):
        LPOptimal(plan=plan).law(block)
    # Still lossless and BV-optimal: W(0) = min(1/2, 1), W(00) = min(1/4, 1): E[τ] = 3/4.
    assert abs(plan.value - 0.75) <= TOL


# ------------------------------------------------------------------------------------------------
# Size guard
# ------------------------------------------------------------------------------------------------

def test_bounds_too_large():
    with pytest.raises(BoundsTooLarge, match="multisets"):
        check_size(10, 5, 5)
    assert issubclass(BoundsTooLarge, ValueError)
    draft, target = pair("markov", 6, 0)
    for fn in (optimal_lp, acausal_bound):
        with pytest.raises(BoundsTooLarge):
            fn(draft, target, 3, 4)
    with pytest.raises(BoundsTooLarge):
        single_token_lp(np.full(64, 1 / 64), np.full(64, 1 / 64), 8)
    assert check_size(3, 3, 3).size == bounds.num_multisets(3, 3, 3) * 10   # C(29, 3) × (1 + 9)
    # K = 1: the node form has Σ_(d=1..L) V^d columns and rows; the plan still has V^L·(L+1)
    k1 = check_size(4, 1, 6)
    assert (k1.columns, k1.rows, k1.size) == (5460, 5460, 4096 * 7)
    assert check_size(4, 1, 6, kind="tree").columns == 4096 * 7 + 2 * 5460
