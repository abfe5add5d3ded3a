"""`td_optimal`, the best top-down rule (docs/maths.md), and the range of E[τ] over the top-down rules
whose every node plan is acceptance-optimal (``core.bounds.top_down``), checked exactly.

Every expected number is derived here independently: by hand with an LP-duality certificate
(binary toy), by hand from the structure of the instance (the counterexample), or by a second
computation (a full-coupling LP per node, the previous implementation's plan replayed)."""
import itertools
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

import toy_models as tm
from core.analysis.exact import exact_analysis
from core.analysis.toy_drafts import draw_block
from core.bounds import optimal_lp, single_token_lp
from core.bounds.closed_form import single_token_optimum
from core.bounds.lp import single_token_plan
from core.bounds.sizes import enumerate_multisets, multiset_probabilities
from core.bounds.top_down import node_flow, top_down
from core.rules.base import VerifierError
from core.rules.registry import get_verifier, make_verifier

ROOT = Path(__file__).resolve().parents[1]


def exact(draft, target, K, L, **kw):
    return exact_analysis(make_verifier("td_optimal", draft=draft, target=target, K=K, L=L),
                          draft, target, K, L, **kw)


# ---------------------------------------------------------------------------------------------
# Binary toy, p = (2/3, 1/3), q = (1/3, 2/3), exact
# ---------------------------------------------------------------------------------------------

# (K, L, td_optimal, range min, range max), derived by hand:
# At the last level the weights are 1, so V(s, k) = α*(k); tokens by q/p decreasing are 1 (q/p = 2),
# then 0, and α*(k) = 1 − max(0, 2/3 − (1 − (2/3)^k)): α*(1) = 2/3, α*(2) = 8/9, α*(3) = α*(4) = 1.
# A drafted token of multiplicity j earns w_j = 1 + V(child, j).
# K = 2: multisets 00, 01, 11 with P = 4/9, 4/9, 1/9; q = (1/3, 2/3).  The flow f(00,0) = 1/3,
#   f(11,1) = 1/9, f(01,1) = 4/9 puts the doubles (w_2 ≥ w_1) first; any f(01,0) = a > 0 takes a
#   from f(00,0) at a loss and also loses a of acceptance, so it is both the best and the only
#   acceptance-optimal flow.  L = 2: w_1 = 5/3, w_2 = 17/9: (4/9)(17/9) + (4/9)(5/3) = 128/81.
#   L = 3: depth-1 values V(1) = (2/3)(5/3) = 10/9 (SD), V(2) = 128/81, so w = 19/9 and 209/81:
#   (4/9)(209/81) + (4/9)(171/81) = 1520/729.  K = 1: SD, (2/3)(5/3) = 10/9.
# K = 3, L = 2: multisets 000, 001, 011, 111 with P = 8/27, 12/27, 6/27, 1/27; α*(3) = 1, so an
#   acceptance-optimal flow accepts everything: 000 → 0, 111 → 1, and 001 and 011 send a and b to
#   token 0 with a + b = 1/27.  w_1 = 5/3, w_2 = 17/9, w_3 = 2: E = 444/243 + (2/9)(a − b), so the
#   range is [442/243, 446/243].  The best flow is the top: the dual (u, v) with v = (2/9, 0),
#   u = (16/9, 5/3, 17/9, 2) is feasible (u_m + v_y ≥ w(m, y) for y ∈ m) with value 446/243.
# K = 4, L = 2: multisets 0000, 0001, 0011, 0111, 1111 with P = 16, 32, 24, 8, 1 (/81); all accepted:
#   0000 → 0, 1111 → 1, and 0001, 0011, 0111 send a, b, c to token 0 with a + b + c = 11/81;
#   w_3 = w_4 = 2: E = 1338/729 + (a − c)/3: max 1371/729 = 457/243 (a = 11/81), min
#   1314/729 = 146/81 (c = 8/81, b = 3/81).  Dual for the best: v = (1/3, 0),
#   u = (5/3, 5/3, 17/9, 2, 2), value 1371/729.
# L = 1: every weight is 1, so td_optimal = α*: 8/9 (K = 2) and 1 (K = 3).
BINARY = [
    (1, 2, Fraction(10, 9), Fraction(10, 9), Fraction(10, 9)),
    (2, 2, Fraction(128, 81), Fraction(128, 81), Fraction(128, 81)),
    (2, 3, Fraction(1520, 729), Fraction(1520, 729), Fraction(1520, 729)),
    (3, 2, Fraction(446, 243), Fraction(442, 243), Fraction(446, 243)),
    (4, 2, Fraction(457, 243), Fraction(146, 81), Fraction(457, 243)),
    (2, 1, Fraction(8, 9), Fraction(8, 9), Fraction(8, 9)),
    (3, 1, Fraction(1), Fraction(1), Fraction(1)),
]


def close(x: float, expected: Fraction) -> bool:
    return abs(x - float(expected)) < 1e-12 and Fraction(x).limit_denominator(10 ** 6) == expected


@pytest.mark.parametrize("K, L, value, low, high", BINARY)
def test_binary_toy_values_and_range_as_fractions(K, L, value, low, high):
    toy = tm.binary_toy()
    r = exact(toy.draft, toy.target, K, L)
    assert close(r.expected_accepted, value), r.expected_accepted
    assert r.fidelity_tv <= 1e-12
    lo, hi = r.summary()["acceptance_optimal_range"]
    assert close(lo, low) and close(hi, high), (lo, hi)


def test_command_line_reports_the_range_for_td_optimal_only():
    def run(method):
        out = subprocess.run([sys.executable, "-m", "core", "exact", "--preset", "binary-toy", "--K", "3",
                              "--L", "2", "--method", method, "--json"], cwd=ROOT, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    td = run("td_optimal")
    assert close(td["expected_accepted"], Fraction(446, 243))
    lo, hi = td["acceptance_optimal_range"]
    assert close(lo, Fraction(442, 243)) and close(hi, Fraction(446, 243))
    # Every other rule's summary keeps exactly its old fields, with the command line's exact fractions
    # and share of the LP optimum beside E[τ] and the TV.
    assert list(run("otv")) == ["method", "K", "L", "V", "expected_accepted", "expected_accepted_fraction",
                                "block_efficiency", "accepted_pmf", "acceptance_per_position", "fidelity_tv",
                                "fidelity_tv_fraction", "lp_optimum", "percent_of_lp", "outcomes_enumerated"]
    assert "acceptance_optimal_range" not in run("otv")


# ---------------------------------------------------------------------------------------------
# Second computations: a full-coupling LP per node, and the previous implementation's plan
# ---------------------------------------------------------------------------------------------

def coupling_lp(p, q, k, continuation) -> float:
    """max Σ π(m, y)·1[y ∈ m]·(1 + U[y, c_m(y) − 1]) over full couplings π of P_k and q: the node
    problem as stated, not reduced to the accepted flow."""
    ms = enumerate_multisets(p.size, k)
    pm = multiset_probabilities(ms, p)
    V, M = p.size, ms.shape[0]
    gain = np.zeros((M, V))
    for i, m in enumerate(ms):
        for y in set(m.tolist()):
            gain[i, y] = 1.0 + continuation[y, list(m).count(y) - 1]
    j = np.arange(M * V)
    A = sp.csr_matrix((np.ones(2 * M * V), (np.concatenate([j // V, M + j % V]), np.concatenate([j, j]))))
    res = linprog(-gain.ravel(), A_eq=A[:-1], b_eq=np.concatenate([pm, q])[:-1], bounds=(0, None),
                  method="highs")
    assert res.status == 0
    return -res.fun


def previous_value(draft, target, K, L) -> float:
    """E[τ] of the previous td_optimal: at every node the unweighted single-token LP's flow f, played
    as 'select y ∈ m with f(m, y)/P(m), the rest spread over the drafts, then SD(r → q)', a residual
    draw on a drafted token descending.  Its plan is acceptance-optimal, one choice among many."""
    def value(s, k):
        p, q = draft.cond(s), target.cond(s)
        child = (lambda y, j: 0.0) if len(s) + 1 == L else (lambda y, j: value(s + (y,), j))
        plan = single_token_plan(p, q, k)
        ms, P = plan.multisets, plan.probabilities
        counts = np.array([[list(m).count(y) for y in range(p.size)] for m in ms], dtype=float)
        g = np.where(P[:, None] > 0, plan.flow / np.where(P > 0, P, 1)[:, None], 0)
        g /= np.maximum(g.sum(1), 1)[:, None]
        g += (1 - g.sum(1))[:, None] * counts / k
        r = P @ g
        keep = np.minimum(1, np.divide(q, r, out=np.ones_like(q), where=r > 0))
        rest = np.maximum(q - r, 0)
        rest = rest / rest.sum() if rest.sum() > 0 else rest
        total = 0.0
        for i, m in enumerate(ms):
            rejected = P[i] * (1 - g[i] @ keep)
            for y in np.flatnonzero(counts[i]):
                mass = P[i] * g[i, y] * keep[y] + rejected * rest[y]
                total += mass * (1 + child(int(y), int(counts[i, y])))
        return total
    return value((), K)


def instances(n: int, seed: int):
    """Seeded (kind, V, K, L, draft, target), K ≥ 2, p near q (mix 0.1) and far (mix 0.9)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        V, K, L = int(rng.integers(2, 5)), int(rng.integers(2, 5)), int(rng.integers(1, 4))
        if V ** (K * L) > 729:
            continue
        kind = ("iid", "markov", "table")[len(out) % 3]
        draft, target = tm.random_pair(kind, V, alpha=float(rng.choice([0.3, 1.0, 3.0])),
                                       mix=(0.1, 0.9)[(len(out) // 3) % 2],
                                       seed=int(rng.integers(1 << 30)), depth=L)
        out.append((kind, V, K, L, draft, target))
    return out


INSTANCES = instances(24, seed=26)


def test_instances_cover_families_and_sizes():
    assert {i[0] for i in INSTANCES} == {"iid", "markov", "table"}
    assert {i[2] for i in INSTANCES} >= {2, 3} and {i[3] for i in INSTANCES} >= {1, 2, 3}


def test_on_random_instances_lossless_above_the_range_below_the_lp():
    """TV ≤ 1e-12; min ≤ previous plan ≤ max ≤ td_optimal ≤ LP; td_optimal's exact E[τ] is the
    bottom-up value."""
    for kind, V, K, L, draft, target in INSTANCES:
        r = exact(draft, target, K, L)
        where = (kind, V, K, L)
        assert r.fidelity_tv <= 1e-12, (where, r.fidelity_tv)
        lo, hi = r.summary()["acceptance_optimal_range"]
        td, lp = r.expected_accepted, optimal_lp(draft, target, K, L).value
        assert abs(td - top_down(draft, target, K, L).value) < 1e-9, where
        assert lo - 1e-9 <= previous_value(draft, target, K, L) <= hi + 1e-9, where
        assert hi <= td + 1e-9 and td <= lp + 1e-9, (where, lo, hi, td, lp)


def test_equals_the_lp_at_l1():
    for kind, V, K, L, draft, target in INSTANCES:
        td = exact(draft, target, K, 1).expected_accepted
        lp = optimal_lp(draft, target, K, 1).value
        assert abs(td - lp) < 1e-9, (kind, V, K, td, lp)
        assert abs(lp - single_token_optimum(draft.cond(()), target.cond(()), K)) < 1e-9


def test_node_lps_against_the_closed_form_and_the_full_coupling():
    """At every node state of every instance: the unweighted flow LP's acceptance is the closed form
    α* (so the range's equality row is feasible and tight), the best flow accepts at most α*, the
    range's flows accept exactly α*, and the best flow's value is the full-coupling LP's."""
    for kind, V, K, L, draft, target in INSTANCES[:12]:
        tables = {mode: top_down(draft, target, K, L, mode) for mode in ("best", "max", "min")}
        for (s, k), plan in tables["best"].plans.items():
            p, q = draft.cond(s), target.cond(s)
            alpha = single_token_optimum(p, q, k)
            assert abs(single_token_lp(p, q, k) - alpha) < 1e-9, (kind, s, k)
            assert plan.flow.sum() <= alpha + 1e-9
            for mode in ("max", "min"):
                assert abs(tables[mode].plans[(s, k)].flow.sum() - alpha) < 1e-9, (kind, s, k, mode)
            below = np.zeros((V, k))
            if len(s) + 1 < L:
                below = np.array([[tables["best"].values.get((s + (y,), j), 0.0) for j in range(1, k + 1)]
                                  for y in range(V)])
            assert abs(plan.value - coupling_lp(p, q, k, below)) < 1e-9, (kind, s, k)


@pytest.mark.parametrize("K", [1, 2, 3, 4])
def test_closed_form_is_the_min_cut_in_both_forms(K):
    """α* = min_A [q(A) + 1 − p(A)^K] = 1 − max_B [q(B) − (1 − (1 − p(B))^K)] (B = Ω − A), by brute
    force over every subset, equals the closed form (prefixes by decreasing q/p) and the flow LP,
    zero probabilities included; and a maximising B is such a prefix."""
    rng = np.random.default_rng(K)
    for trial in range(25):
        V = int(rng.integers(2, 6))
        p, q = rng.dirichlet(np.ones(V)), rng.dirichlet(np.ones(V))
        if trial % 3 == 0:
            p[rng.integers(V)] = 0.0
            q[rng.integers(V)] = 0.0
            p, q = p / p.sum(), q / q.sum()
        cuts = {B: q[list(B)].sum() - (1 - (1 - p[list(B)].sum()) ** K)
                for n in range(V + 1) for B in itertools.combinations(range(V), n)}
        brute = 1 - max(cuts.values())
        assert abs(brute - min(q[list(A)].sum() + 1 - p[list(A)].sum() ** K
                               for n in range(V + 1) for A in itertools.combinations(range(V), n))) < 1e-12
        assert abs(single_token_optimum(p, q, K) - brute) < 1e-12
        assert abs(single_token_lp(p, q, K) - brute) < 1e-9
        ratio = np.where(p > 0, q / np.where(p > 0, p, 1), np.inf)
        order = np.argsort(-ratio, kind="stable")
        assert max(cuts[tuple(sorted(order[:j]))] for j in range(V + 1)) == pytest.approx(max(cuts.values()),
                                                                                         abs=1e-12)


# ---------------------------------------------------------------------------------------------
# The two instances the issue talks about
# ---------------------------------------------------------------------------------------------

def test_a_markov_instance_where_the_choice_matters_and_td_optimal_takes_the_top():
    """V = 2, K = 3, L = 2 (Markov, seed 89, α = 0.3, mix 0.5): the acceptance-optimal plans span
    E[τ] from 1.6575 to 1.8263; the previous plan gave the bottom (1.6575), td_optimal gives the
    top (the LP optimum is 1.9259)."""
    draft, target = tm.random_pair("markov", 2, alpha=0.3, mix=0.5, seed=89)
    r = exact(draft, target, 3, 2)
    lo, hi = r.summary()["acceptance_optimal_range"]
    assert hi - lo > 0.16
    assert abs(r.expected_accepted - hi) < 1e-9 and r.fidelity_tv <= 1e-12
    assert lo - 1e-9 <= previous_value(draft, target, 3, 2) <= hi + 1e-9
    assert r.expected_accepted <= optimal_lp(draft, target, 3, 2).value + 1e-9


def test_the_best_top_down_rule_can_give_up_acceptance():
    """The issue's claim "td_optimal equals the best acceptance-optimal plan" fails here (V = 4,
    K = 4, L = 4, Markov).  Tokens a, b, c, g = 0..3.  Root: p = (3/10, 1/5, 1/2, 0),
    q = (1/5, 4/5, 0, 0).  Below a: p = ½ c + ½ g, q = g; below g: p = q = g; below b and c:
    p = c, q = b.  So U(b, ·) = U(c, ·) = 0 and U(a, j) = 3·(1 − 2^(−j)): a drafted a of
    multiplicity j earns w_j = 1 + U(a, j) = 5/2, 13/4, 29/8, 61/16 (j = 1..4); b earns 1.
    Every multiset with a b (probability 1 − (4/5)^4 = 369/625) is accepted through b (q(b) = 4/5
    is enough), and a's capacity 1/5 can only add acceptance on the b-free multisets a^j c^(4−j):
    α* = 369/625 + 1/5 = 494/625.  The best acceptance-optimal plan gives a's capacity to the
    b-free multisets by decreasing multiplicity: a⁴ (81/10000), a³c (27/500), a²c² (27/200), and
    the rest, 29/10000, to ac³: E = 369/625 + Σ P·w = 40417/32000.  The best plan moves that rest
    from ac³ (5/2) to a³b (P = 27/1250; 29/8 from a instead of 1 from b), +1/8 per unit:
    E = 40417/32000 + 29/80000 = 202143/160000, accepting 494/625 − 29/10000 = 63/80 < α*."""
    D = tm.MarkovModel([0.3, 0.2, 0.5, 0], [[0, 0, .5, .5], [0, 0, 1, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
    T = tm.MarkovModel([0.2, 0.8, 0, 0], [[0, 0, 0, 1], [0, 1, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1]])
    r = exact(D, T, 4, 4)
    lo, hi = r.summary()["acceptance_optimal_range"]
    assert close(r.expected_accepted, Fraction(202143, 160000)) and r.fidelity_tv <= 1e-12
    assert close(hi, Fraction(40417, 32000)) and lo < hi
    best = top_down(D, T, 4, 4)
    root = best.plans[((), 4)]
    assert close(float(root.flow.sum()), Fraction(63, 80))
    assert close(single_token_optimum(D.cond(()), T.cond(()), 4), Fraction(494, 625))


# ---------------------------------------------------------------------------------------------
# The rule's interface
# ---------------------------------------------------------------------------------------------

def test_needs_its_models_to_verify_and_binds_them_in_the_exact_analysis():
    toy = tm.binary_toy()
    block = draw_block(toy.draft, toy.target, 2, 2, 0)
    with pytest.raises(VerifierError, match="needs the toy draft and target models"):
        get_verifier("td_optimal").verify(block, 0)
    # From a name, the exact analysis hands the models over.
    assert close(exact_analysis("td_optimal", toy.draft, toy.target, 2, 2).expected_accepted, Fraction(128, 81))
    bound = make_verifier("td_optimal", draft=toy.draft, target=toy.target, K=2, L=2)
    assert bound.verify(block, 0).tau in (0, 1, 2)
    with pytest.raises(VerifierError, match="solved for K=2, L=2"):
        bound.verify(draw_block(toy.draft, toy.target, 3, 2, 0), 0)
    other = tm.IIDModel([0.5, 0.5])
    with pytest.raises(VerifierError, match="not those of the models"):
        bound.verify(draw_block(other, toy.target, 2, 2, 0), 0)


def test_k1_plan_is_sd_without_an_lp():
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.2, 0.6])
    plan = node_flow(p, q, 1, np.array([[1.0], [0.5], [0.0]]), "best")
    np.testing.assert_allclose(np.diag(plan.flow), [0.2, 0.2, 0.2])
    assert plan.value == pytest.approx(0.2 * 2 + 0.2 * 1.5 + 0.2 * 1)


def test_refuses_too_large_configurations_in_one_sentence():
    draft, target = tm.random_pair("iid", 60, seed=1)
    with pytest.raises(VerifierError, match=r"^td_optimal solves .* use a smaller V or K$"):
        make_verifier("td_optimal", draft=draft, target=target, K=8, L=2)
