"""Exact checks of every rule (docs/maths.md): closed forms as rationals, losslessness measured on
random instances, reductions between rules, and the model-level dynamic programmes against plain
enumeration of every draft outcome."""
import itertools
from fractions import Fraction

import numpy as np
import pytest

import toy_models as tm
from core import get_verifier, method_names
from core.analysis.compensation import compensation, iterate_exact
from core.analysis.exact import exact_analysis
from core.rules.registry import REGISTRY, chains_rules, make_verifier
from core.analysis.montecarlo import monte_carlo
from core.analysis.toy_drafts import draw_block

LOSSLESS = ["sd", "bv", "spectr", "specinfer", "rbv", "best_of_k_bv", "vllm_onehot", "vllm_block"]
DP_METHODS = ["sd", "bv", "spectr", "specinfer", "spectr_gbv", "rbv", "best_of_k_bv", "traversal", "otv",
              "td_optimal", "lp_optimal", "hsd", "eagle", "vllm_onehot", "vllm_block", "vllm_shared_gumbel",
              "vllm_ascend_block", "hf_ensemble"]
TREE_METHODS = ["specinfer", "traversal", "lp_optimal", "llamacpp_tree"]


def as_fraction(x: float, limit: int = 1000) -> Fraction:
    return Fraction(x).limit_denominator(limit)


@pytest.fixture(scope="module")
def toy():
    return tm.binary_toy()


@pytest.mark.parametrize("method, expected", [("sd", Fraction(10, 9)), ("bv", Fraction(11, 9))])
def test_binary_toy_closed_forms(toy, method, expected):
    """Sun et al. (ICLR 2025): SD 10/9 and BV 11/9 on p = (2/3, 1/3), q = (1/3, 2/3), L = 2."""
    r = exact_analysis(method, toy.draft, toy.target, 1, 2)
    assert as_fraction(r.expected_accepted) == expected
    assert abs(r.expected_accepted - float(expected)) < 1e-12
    assert r.fidelity_tv < 1e-12


def test_binary_toy_by_hand(toy):
    """Independent derivation of SD's law of τ: a_1 = P(accept x_1) = Σ min(p, q) = 2/3 with
    acceptance per token 2/3 for both positions (context independent), so P(τ=0) = 1/3,
    P(τ=1) = 2/3·1/3, P(τ=2) = (2/3)^2."""
    r = exact_analysis("sd", toy.draft, toy.target, 1, 2)
    np.testing.assert_allclose(r.tau_pmf, [1 / 3, 2 / 9, 4 / 9], atol=1e-15)


def test_spectr_gbv_data_point(toy):
    """Spec §5: as released, K = 1, L = 2 gives E[τ] = 4/3 with fidelity error 1/9."""
    r = exact_analysis("spectr_gbv", toy.draft, toy.target, 1, 2)
    assert as_fraction(r.expected_accepted) == Fraction(4, 3)
    assert as_fraction(r.fidelity_tv) == Fraction(1, 9)
    assert abs(r.fidelity_tv - 1 / 9) < 1e-12


def random_instances(n: int, seed: int):
    rng = np.random.default_rng(seed)
    kinds = ["iid", "markov", "table"]
    out = []
    while len(out) < n:
        V, K, L = int(rng.integers(2, 5)), int(rng.integers(1, 5)), int(rng.integers(1, 5))
        if V ** (L + 1) > 1024 or (V ** L) * K > 400:  # keep each exact run small
            continue
        kind = kinds[len(out) % 3]
        draft, target = tm.random_pair(kind, V, alpha=float(rng.choice([0.3, 1.0, 3.0])),
                                       mix=float(rng.uniform(0.1, 0.9)), seed=int(rng.integers(1 << 30)),
                                       depth=L)
        out.append((kind, V, K, L, draft, target))
    return out


INSTANCES = random_instances(240, seed=2026)


def test_instances_cover_the_grid():
    seen = {(kind, V, K, L) for kind, V, K, L, *_ in INSTANCES}
    assert {k for k, *_ in seen} == {"iid", "markov", "table"}
    assert {V for _, V, *_ in seen} == {2, 3, 4}
    assert {K for _, _, K, _ in seen} == {1, 2, 3, 4}
    assert {L for *_, L in seen} == {1, 2, 3, 4}


@pytest.mark.parametrize("method", LOSSLESS)
def test_lossless_methods_have_zero_fidelity_error(method):
    worst = 0.0
    for kind, V, K, L, draft, target in INSTANCES:
        r = exact_analysis(method, draft, target, K, L)
        assert abs(r.tau_pmf.sum() - 1) < 1e-12
        worst = max(worst, r.fidelity_tv)
        assert r.fidelity_tv <= 1e-12, (kind, V, K, L, r.fidelity_tv)
    assert worst <= 1e-12


def test_spectr_gbv_fidelity_is_measured_not_assumed():
    errors = [exact_analysis("spectr_gbv", d, q, K, L).fidelity_tv
              for _, V, K, L, d, q in INSTANCES[:60] if V ** (K * L) <= 100_000]
    assert max(errors) > 1e-3  # the released rule is not lossless on these instances
    assert min(errors) >= 0


@pytest.mark.parametrize("method", DP_METHODS)
def test_model_level_laws_equal_enumeration_of_every_draft_outcome(method):
    """The dynamic programmes must give exactly the law of the sampled rule run on every
    ordered K-tuple of drafts (or multiset, for order-invariant rules)."""
    for kind, V, K, L, draft, target in INSTANCES[:90]:
        if V ** (K * L) > 729:
            continue
        verifier = make_verifier(method, draft=draft, target=target, K=K, L=L)
        a = exact_analysis(verifier, draft, target, K, L)
        b = exact_analysis(verifier, draft, target, K, L, recursion=False)
        keys = set(a.output_law) | set(b.output_law)
        diff = max(abs(a.output_law.get(u, 0) - b.output_law.get(u, 0)) for u in keys)
        assert diff < 1e-13, (method, kind, V, K, L, diff)


def test_every_model_level_law_is_checked():
    assert sorted(DP_METHODS) == sorted(n for n, cls in REGISTRY.items()
                                        if hasattr(cls, "model_output_law"))
    # token trees: tests/test_trees.py compares every rule with a ``tree_output_law`` against the
    # enumeration of every drafted tree; these are the rules it compares
    assert sorted(TREE_METHODS) == sorted(n for n, cls in REGISTRY.items()
                                          if hasattr(cls, "tree_output_law"))
    assert all(REGISTRY[n].token_trees for n in TREE_METHODS)


def test_rbv_reduces_to_bv_at_k1_and_to_recursive_rejection_at_l1():
    for kind, V, K, L, draft, target in INSTANCES[:120]:
        rbv1 = exact_analysis("rbv", draft, target, 1, L).output_law
        bv = exact_analysis("bv", draft, target, 1, L).output_law
        assert max(abs(rbv1.get(u, 0) - bv.get(u, 0)) for u in set(rbv1) | set(bv)) < 1e-13
        rbvK = exact_analysis("rbv", draft, target, K, 1).output_law
        rrs = exact_analysis("specinfer", draft, target, K, 1).output_law
        assert max(abs(rbvK.get(u, 0) - rrs.get(u, 0)) for u in set(rbvK) | set(rrs)) < 1e-13


def test_single_draft_rules_agree_at_k1():
    """At K = 1 SpecTr's K-SEQ (ρ* = 1) and recursive rejection are token-level SD."""
    for kind, V, K, L, draft, target in INSTANCES[:60]:
        sd = exact_analysis("sd", draft, target, 1, L).expected_accepted
        for m in ("spectr", "specinfer"):
            assert abs(exact_analysis(m, draft, target, 1, L).expected_accepted - sd) < 1e-12


def test_bv_matches_its_w_recursion():
    """E[τ_BV] = Σ_(s≠∅) W(s), W(∅) = 1, W(s·y) = min(q(y|s)·W(s), p(s·y)) (docs/maths.md)."""
    for kind, V, K, L, draft, target in INSTANCES[:80]:
        total = 0.0
        W = {(): 1.0}
        for depth in range(1, L + 1):
            for s in itertools.product(range(V), repeat=depth):
                W[s] = min(target.cond(s[:-1])[s[-1]] * W[s[:-1]], draft.joint(s))
                total += W[s]
        assert abs(exact_analysis("bv", draft, target, 1, L).expected_accepted - total) < 1e-12


@pytest.mark.parametrize("method", ["sd", "bv", "spectr", "spectr_gbv", "rbv", "best_of_k_bv"])
def test_expected_tau_given_drafts_matches_the_law(method):
    draft, target = tm.random_pair("markov", 3, seed=11)
    v = get_verifier(method)
    for seed in range(10):
        block = draw_block(draft, target, 3, 3, seed)
        law = v.law(block)
        assert abs(sum(pr * len(s) for (s, _), pr in law.items()) - v.expected_tau(block)) < 1e-12
        assert abs(sum(law.values()) - 1) < 1e-12


def test_greedy_temperature_reproduces_target_greedy_decoding():
    for kind, V, K, L, draft, target in INSTANCES[:45]:
        d0, q0 = draft.with_temperature(0), target.with_temperature(0)
        greedy = ()
        for _ in range(L + 1):
            greedy += (int(np.argmax(q0.cond(greedy))),)
        for m in LOSSLESS:
            r = exact_analysis(m, d0, q0, K, L)
            # Output is a prefix of the greedy sequence, completed by q it is the greedy sequence.
            assert all(greedy[: len(u)] == u for u, pr in r.output_law.items() if pr > 0)
            assert r.completed[greedy] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("method", ["bv", "spectr", "spectr_gbv", "rbv"])
def test_monte_carlo_agrees_with_exact_law(method):
    draft, target = tm.random_pair("table", 3, alpha=0.7, seed=5, depth=3)
    exact = exact_analysis(method, draft, target, 2, 3)
    mc = monte_carlo(method, draft, target, 2, 3, n=3000, seed=1, confidence=0.999)
    lo, hi = mc.tau_interval()
    assert np.all((lo <= exact.tau_pmf + 1e-12) & (exact.tau_pmf <= hi + 1e-12))
    assert abs(mc.tau_mean - exact.expected_accepted) <= 1.7 * mc.tau_mean_halfwidth  # 99.9%/95% widths


def test_runs_replay_exactly_from_their_seed():
    draft, target = tm.random_pair("markov", 4, seed=3)
    for m in chains_rules():          # every rule that takes K i.i.d. drafts (tests/test_engine_ports.py: the rest)
        if m == "lp_optimal":
            continue
        v = make_verifier(m, draft, target, 3, 3)      # td_optimal solves its plans from the models
        a = monte_carlo(v, draft, target, 3, 3, n=50, seed=9)
        b = monte_carlo(v, draft, target, 3, 3, n=50, seed=9)
        assert a.output_counts == b.output_counts


@pytest.mark.parametrize("method", LOSSLESS)
def test_compensation_is_the_identity_for_lossless_methods(method):
    for kind, V, K, L, draft, target in INSTANCES[:40]:
        if V ** L > 64:
            continue
        c = compensation(method, draft, target, K, L)
        assert not c.over_emission
        # c divides by the completion mass at u (down to ~1e-4 here), which scales rounding.
        assert c.identity_error <= 1e-9, (kind, V, K, L, c.identity_error)


def test_compensated_spectr_gbv_on_the_binary_toy(toy):
    """K = 1: the released rule never over-emits on the toy, so the compensated chain of
    iterations reproduces q exactly while the plain rule drifts by at least its one-step error."""
    comp = compensation("spectr_gbv", toy.draft, toy.target, 1, 2)
    assert not comp.over_emission and comp.identity_error > 0.1
    fixed = iterate_exact("spectr_gbv", toy.draft, toy.target, 1, 2, 3)
    plain = iterate_exact("spectr_gbv", toy.draft, toy.target, 1, 2, 3, compensate_target=False)
    assert fixed.tv < 1e-12 and not fixed.over_emission
    assert plain.tv > 0.05


def test_over_emission_is_reported(toy):
    """At K = 2 on the toy, some prefix is emitted more often than q allows, so no later
    iteration can repair the law."""
    comp = compensation("spectr_gbv", toy.draft, toy.target, 2, 2)
    assert comp.over_emission and comp.min_F < -1e-3 and comp.modified_target is None


def test_spectr_gbv_trace_keeps_rejected_set_and_skips_it():
    """Two identical drafts: a sub-block rejected for draft 1 is in H and not tested again."""
    from core.data.token_tree import TokenTree
    toy = tm.binary_toy()
    block = TokenTree.chains_from_models([[0, 0, 0], [0, 0, 0]], toy.draft.cond, toy.target.cond)

    class Reject:  # every coin fails
        def bernoulli(self, prob):
            return False

        def categorical(self, probs):
            return int(np.argmax(probs))

    out = get_verifier("spectr_gbv").run(block, Reject())
    tested = [(t.node, t.draft, t.kind) for t in out.trace.tests]
    assert tested == [((0,), 0, "sub-block"), ((0, 0), 0, "sub-block"), ((0, 0, 0), 0, "full-block"),
                      ((0, 0, 0), 1, "full-block")]
    assert out.trace.rejected[:2] == [(0,), (0, 0)] and out.accepted == ()


def test_lp_optimum_dominates_every_lossless_method_and_equals_bv_at_k1():
    from core.bounds import optimal_lp
    for kind, V, K, L, draft, target in INSTANCES[:36]:
        if V ** (K * L) > 4096:
            continue
        lp = optimal_lp(draft, target, K, L).value
        for m in LOSSLESS + ["lp_optimal"]:
            v = get_verifier(m, draft=draft, target=target, K=K, L=L) if m == "lp_optimal" else m
            assert exact_analysis(v, draft, target, K, L).expected_accepted <= lp + 1e-9, (m, kind, V, K, L)
        bv = exact_analysis("bv", draft, target, 1, L).expected_accepted
        assert abs(optimal_lp(draft, target, 1, L).value - bv) < 1e-9


def test_spectr_gbv_reports_the_mass_drawn_from_our_fallback():
    """With p = q every child has m = 1, so r_S has no mass; the extra token then comes from q(·|S),
    a choice of ours.  The exact result reports that mass, and it equals the probability of the
    coin paths whose trace marks the fallback, summed by brute-force enumeration."""
    from core.data.coins import enumerate_outcomes
    from core.data.token_tree import TokenTree
    q = tm.IIDModel(np.array([0.5, 0.3, 0.2]))
    K, L = 2, 2
    result = exact_analysis("spectr_gbv", q, q, K, L)
    verifier = get_verifier("spectr_gbv")
    brute = 0.0
    for x in itertools.product(itertools.product(range(3), repeat=L), repeat=K):
        weight = float(np.prod([q.joint(d) for d in x]))
        block = TokenTree.chains_from_models([list(d) for d in x], q.cond, q.cond)
        for prob, out in enumerate_outcomes(lambda coins: verifier.run(block, coins)):
            if out.trace.quantities.get(out.accepted, {}).get("residual_fallback"):
                brute += weight * prob
    assert result.fallback_mass == pytest.approx(brute, abs=1e-12)
    assert 0.2 < result.fallback_mass < 0.22                     # 21% of the mass, as reported
    assert result.summary()["residual_fallback_mass"] == result.fallback_mass
    assert exact_analysis("rbv", q, q, K, L).fallback_mass == 0.0
    assert "residual_fallback_mass" not in exact_analysis("rbv", q, q, K, L).summary()
