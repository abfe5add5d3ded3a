"""The budget question (docs/maths.md, "The budget question"): the shapes of a budget, the table of
``python -m core trees`` against the contract's vectors (trees.md §5) as fractions, the exact LP
certificates (``core.bounds.certify``), and the name ``rrs`` in every token-tree output."""
from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pytest

import toy_models as tm
from core.analysis.budget import VERIFIERS, budget_shapes, budget_table, topk_programme
from core.analysis.exact import exact_analysis
from core.bounds.certify import (_dual_bound, _solve_exact, certify_chains_lp,
                                 certify_tree_lp, exact_levels, exact_node_set_law, rational)
from core.bounds.closed_form import topk_tree_value
from core.bounds.lp import optimal_lp, optimal_tree_lp, solve_block_system, tree_lp_system
from core.data.coins import enumerate_outcomes
from core.data.drafting import node_set_law
from core.data.shapes import Shape
from core.errors import InvalidInput
from core.rules.registry import display_name, make_verifier
from tests.test_trees import TOYS, TRI, VECTORS, cli, shape_of

F = Fraction


# ---------------------------------------------------------------------------------------------
# The shapes of a budget
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n, L", [(n, L) for n in range(1, 13) for L in range(1, 5)])
def test_the_shapes_of_a_budget_are_every_branching_vector(n, L):
    """Against brute force over every b with b_d ≤ n: Σ_d b_1⋯b_d = n; chains first when L | n."""
    if n < L:
        with pytest.raises(InvalidInput, match="at least"):
            budget_shapes(n, L)
        return
    brute = [b for b in itertools.product(range(1, n + 1), repeat=L)
             if sum(math.prod(b[:d + 1]) for d in range(L)) == n]
    shapes = budget_shapes(n, L)
    chains = [s for s in shapes if s.chains]
    assert [s.branching for s in shapes if not s.chains] == brute
    assert all(s.budget == n and s.L == L for s in shapes)
    assert [s.K for s in chains] == ([n // L] if L >= 2 and n % L == 0 else [])


def test_the_spec_budgets_have_the_spec_shapes():
    assert [s.label for s in budget_shapes(4, 2)] == ["chains 2×2", "b = (1, 3)", "b = (2, 1)"]
    assert [s.label for s in budget_shapes(6, 2)] == ["chains 3×2", "b = (1, 5)", "b = (2, 2)", "b = (3, 1)"]


# ---------------------------------------------------------------------------------------------
# Certified LP values (trees.md §3.3 "Solving": every value in §5 is certified)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("toy, shape, law, lp", [(v[0], v[1], v[2], v[5]) for v in VECTORS])
def test_every_own_law_lp_of_the_contract_is_certified(toy, shape, law, lp):
    cert = certify_tree_lp(*TOYS[toy], shape_of(shape), law)
    assert cert.certified and cert.exact == lp and cert.primal == cert.dual == lp, cert
    assert abs(cert.value - float(lp)) < 1e-9 and cert.fraction == str(lp)


@pytest.mark.parametrize("toy, K, lp", [("bin", 2, F(131, 81)), ("bin", 3, F(1351, 729)),
                                        ("tri", 2, F(1861, 1296)), ("tri", 3, F(953, 576))])
def test_the_iid_chains_lp_of_the_contract_is_certified(toy, K, lp):
    cert = certify_chains_lp(*TOYS[toy], K, 2)
    assert cert.certified and cert.exact == lp
    assert abs(optimal_lp(*TOYS[toy], K, 2).value - float(lp)) < 1e-9


def test_certification_is_refused_for_models_that_are_not_simple_rationals():
    """A tempered pair (T = 0.7) and a pair with a 7-digit probability: the value is the solver's,
    to 1e-9 of the plan's, with no fraction and the reason."""
    toy = tm.binary_toy()
    for draft, target in [(toy.draft.with_temperature(0.7), toy.target.with_temperature(0.7)),
                          (tm.IIDModel([0.1234567, 0.8765433]), tm.IIDModel([0.5, 0.5]))]:
        cert = certify_tree_lp(draft, target, Shape.tree((2, 1)), "wor")
        assert not cert.certified and cert.fraction is None and "is no fraction" in cert.reason
        assert abs(cert.value - optimal_tree_lp(draft, target, Shape.tree((2, 1)), "wor").value) < 1e-9
        assert "not certified" in cert.text()
    with pytest.raises(Exception, match="no fraction"):
        rational(math.pi / 4)
    assert rational(0.15) == F(3, 20) and rational(2 / 3) == F(2, 3)


def test_probabilities_renormalised_off_by_an_ulp_are_still_their_fractions():
    """(0.2, 0.7, 0.1) sums to 1 + 2⁻⁵² in floats, so the model renormalises it to
    (0.20000000000000004, …): each is still within 1e-15 of its fraction, and certified."""
    draft, target = tm.IIDModel([0.5, 0.25, 0.25]), tm.IIDModel([0.2, 0.7, 0.1])
    assert target.cond(())[0] != 0.2
    cert = certify_tree_lp(draft, target, Shape.tree((2, 1)), "wor")
    assert cert.certified and abs(float(cert.exact) - optimal_tree_lp(draft, target, Shape.tree((2, 1)), "wor").value) < 1e-9


def test_a_rationalised_distribution_must_sum_to_one():
    """Each entry a simple fraction, the row not a distribution in Q: refused (a model built past
    ``as_distribution``, which would renormalise)."""
    from core.bounds.certify import NotRational

    class Rows(tm.IIDModel):
        def _cond(self, prefix):
            return np.array([1 / 2, 1 / 4, 1 / 4 + 1 / 10_000])
    with pytest.raises(NotRational, match="sums to 10001/10000, not 1"):
        exact_levels(Rows([1 / 2, 1 / 4, 1 / 4]), 1)


RATIONAL_PAIRS = [
    (tm.MarkovModel([1 / 4, 3 / 4], [[1 / 3, 2 / 3], [5 / 6, 1 / 6]]),
     tm.MarkovModel([1 / 2, 1 / 2], [[3 / 4, 1 / 4], [1 / 5, 4 / 5]])),
    (tm.MarkovModel([1 / 2, 1 / 3, 1 / 6], [[1 / 4, 1 / 4, 1 / 2], [3 / 5, 1 / 5, 1 / 5], [1 / 3, 1 / 3, 1 / 3]]),
     tm.MarkovModel([1 / 6, 1 / 2, 1 / 3], [[1 / 2, 1 / 4, 1 / 4], [1 / 10, 3 / 10, 3 / 5], [7 / 12, 1 / 6, 1 / 4]])),
]


@pytest.mark.parametrize("pair", range(len(RATIONAL_PAIRS)))
@pytest.mark.parametrize("shape", [Shape.chains_of(2, 2), Shape.tree((2, 1, 1)), Shape.tree((1, 2))])
@pytest.mark.parametrize("law", ["iid", "wor", "topk", "greedy"])
def test_certificates_on_context_dependent_rational_pairs(pair, shape, law):
    """Beyond the toys: Markov pairs of simple fractions, L = 2 and 3 (the topk trees at L = 3 need
    the dual's martingale condition: W free in the certifying solve)."""
    draft, target = RATIONAL_PAIRS[pair]
    cert = certify_tree_lp(draft, target, shape, law)
    assert cert.certified, cert.reason
    assert abs(float(cert.exact) - optimal_tree_lp(draft, target, shape, law).value) < 1e-9


def test_the_dual_bound_holds_for_any_beta():
    """Weak duality, the certificate's upper half: whatever β is, v_D ≥ the certified optimum."""
    draft, target = TRI
    shape, law = Shape.tree((2, 2)), "wor"
    cert = certify_tree_lp(draft, target, shape, law)
    _, p_exact = exact_levels(draft, 1)
    q_float, q_exact = exact_levels(target, 2)
    law_t = exact_node_set_law(draft, shape, law, p_exact)
    sets = list(law_t)
    system = tree_lp_system(q_float, sets, np.array([float(law_t[t]) for t in sets]), 3, 2)
    rng = np.random.default_rng(0)
    for _ in range(5):
        duals = rng.uniform(-3, 3, system.b.size)
        assert _dual_bound(system, duals, sets, [law_t[t] for t in sets], q_exact) >= cert.exact
    res = solve_block_system(system, free_w=True)
    assert abs(-res.fun - float(cert.exact)) < 1e-9


def test_exact_gaussian_elimination():
    one = F(1)
    # x + y = 3, x − y = 1, 2x = 4 (consistent, overdetermined)
    assert _solve_exact([{0: one, 1: one}, {0: one, 1: -one}, {0: 2 * one}], [F(3), F(1), F(4)]) == {0: 2, 1: 1}
    assert _solve_exact([{0: one, 1: one}, {0: one, 1: one}], [F(1), F(2)]) is None
    x = _solve_exact([{0: one, 1: one, 2: F(1, 3)}], [F(1)])        # underdetermined: free ones 0
    assert sum(v * c for v, c in zip((1, 1, F(1, 3)), (x.get(0, 0), x.get(1, 0), x.get(2, 0)))) == 1


def test_exact_coins_give_the_node_set_law_exactly():
    draft = TRI[0]
    for law in ("iid", "wor", "topk", "greedy"):
        exact = node_set_law(draft.cond, Shape.tree((2, 2)), law, exact=rational)
        floats = node_set_law(draft.cond, Shape.tree((2, 2)), law)
        assert sum(exact.values()) == 1 and all(isinstance(v, F) for v in exact.values())
        assert exact.keys() == floats.keys() and max(abs(float(exact[t]) - floats[t]) for t in exact) < 1e-15
    # a Bernoulli coin, exactly
    runs = enumerate_outcomes(lambda c: (c.bernoulli(1 / 3), c.bernoulli(1 / 4)), exact=rational)
    assert {out: p for p, out in runs} == {(True, True): F(1, 12), (True, False): F(1, 4),
                                           (False, True): F(1, 6), (False, False): F(1, 2)}


# ---------------------------------------------------------------------------------------------
# The table (trees.md §4, §5)
# ---------------------------------------------------------------------------------------------

def table_json(preset: str, n: int, L: int = 2) -> dict:
    status, out, err = cli("trees", "--preset", preset, "--budget", str(n), "--L", str(L), "--json")
    assert status == 0 and err == "", err
    return json.loads(out)


def cells(data: dict) -> dict:
    """{(label, law, verifier): row}."""
    return {(r["label"], r["law"], r["verifier"]): r for r in data["rows"]}


PRESET = {"bin": "binary-toy", "tri": "three-token-toy"}
LABEL = {"chains 2x2": "chains 2×2", "2,1": "b = (2, 1)", "2,2": "b = (2, 2)", "3,1": "b = (3, 1)",
         "1,3": "b = (1, 3)"}


@pytest.fixture(scope="module")
def tables():
    return {(toy, n): table_json(PRESET[toy], n) for toy in PRESET for n in (4, 6)}


def test_the_table_gives_every_vector_of_the_contract(tables):
    """Each §5 row (and the b = (1, 3) note on the V = 3 toy) in the table of its budget, every
    value as its fraction, TV ≤ 1e-12 for rrs and traversal and ≤ 1e-9 for the LP's plan, every
    LP certified."""
    seen = 0
    for toy, shape, law, rrs, traversal, lp in VECTORS:
        n = shape_of(shape).budget
        table = cells(tables[(toy, n)])
        for verifier, expected in (("rrs", rrs), ("traversal", traversal), ("lp", lp)):
            row = table[(LABEL[shape], law, verifier)]
            assert row["refused"] is None
            assert row["expected_accepted_fraction"] == str(expected), (toy, shape, law, verifier, row)
            assert abs(row["expected_accepted"] - float(expected)) < 1e-12
            assert row["fidelity_tv"] <= (1e-9 if verifier == "lp" else 1e-12)
            if verifier == "lp":
                assert row["certified"] is True
            seen += 1
    assert seen == 3 * len(VECTORS)


def test_the_table_marks_the_laws_that_do_not_exist(tables):
    """Spec §5: on the binary toy only iid exists for b = (1, 3) and (1, 5) (and chains 3×2 need
    three distinct root tokens); each refusal carries its one-line reason."""
    for n, label, reason in [(4, "b = (1, 3)", "needs 3 distinct tokens"), (6, "b = (1, 5)", "needs 5 distinct tokens"),
                             (6, "chains 3×2", "needs 3 distinct tokens at node ∅")]:
        table = cells(tables[("bin", n)])
        assert table[(label, "iid", "rrs")]["refused"] is None
        for law in ("wor", "topk", "greedy"):
            for v in VERIFIERS:
                row = table[(label, law, v)]
                assert reason in row["refused"] and "\n" not in row["refused"]


def test_the_iid_chains_lp_and_the_topk_programme(tables):
    """Spec §5: the i.i.d.-chains LP at the same budget, and the topk DP (token paths)."""
    chains = {("bin", 4): F(131, 81), ("bin", 6): F(1351, 729), ("tri", 4): F(1861, 1296), ("tri", 6): F(953, 576)}
    topk = {("bin", 4): (F(5, 3), {"0", "1", "10", "11"}), ("bin", 6): (F(2), {"0", "1", "00", "01", "10", "11"}),
            ("tri", 4): (F(13, 12), {"0", "1", "2", "20"}), ("tri", 6): (F(3, 2), {"0", "1", "2", "20", "21", "22"})}
    for key, data in tables.items():
        lp = data["iid_chains_lp"]
        assert (lp["K"], lp["expected_accepted_fraction"], lp["certified"]) == (key[1] // 2, str(chains[key]), True)
        dp = data["topk_programme"]
        value, tree = topk[key]
        assert dp["context_independent"] and dp["expected_accepted_fraction"] == str(value)
        assert abs(dp["programme_value"] - float(value)) < 1e-12
        assert {"".join(map(str, u)) for u in dp["token_paths"]} == tree
        # "each beats the branching-vector topk trees of equal n, except bin n = 6" (complete)
        static = [r["expected_accepted"] for r in data["rows"] if r["shape"] == "tree" and r["law"] == "topk"
                  and r["verifier"] == "lp" and r["refused"] is None]
        assert static and (max(static) < float(value) - 1e-9 or key == ("bin", 6) and max(static) == 2)
    assert table_json("binary-toy", 5)["iid_chains_lp"] is None            # 5/2 chains: none


def test_the_winners_are_the_best_static_trees_of_the_contract(tables):
    """Spec §5, "best static tree per budget": the LP ceiling and where it is reached, and the best
    practical rule."""
    def winner(key, v):
        w = tables[key]["winners"][v]
        return w["expected_accepted_fraction"], {f"{a['label']} {a['law']}" for a in w["at"]}

    assert winner(("bin", 4), "lp") == ("17/9", {"chains 2×2 wor", "chains 2×2 topk", "chains 2×2 greedy",
                                                 "b = (2, 1) wor", "b = (2, 1) greedy"})
    assert winner(("bin", 4), "traversal")[0] == "16/9" and winner(("bin", 4), "rrs")[0] == "5/3"
    for v in VERIFIERS:
        assert winner(("bin", 6), v) == ("2", {"b = (2, 2) wor", "b = (2, 2) topk", "b = (2, 2) greedy"})
    assert winner(("tri", 4), "lp") == ("701/432", {"chains 2×2 wor", "b = (2, 1) wor"})
    assert winner(("tri", 4), "traversal") == ("53/36", {"chains 2×2 greedy", "b = (2, 1) greedy"})
    assert winner(("tri", 6), "lp")[0] == "17/9" and {"b = (3, 1) wor", "b = (3, 1) greedy"} <= winner(("tri", 6), "lp")[1]
    assert winner(("tri", 6), "traversal")[0] == "65/36" and "b = (3, 1) greedy" in winner(("tri", 6), "traversal")[1]


def test_the_text_table():
    status, out, err = cli("trees", "--preset", "binary-toy", "--budget", "4", "--L", "2")
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("budget n=4  L=2  V=2  T=1")
    assert lines[1].split() == ["shape", "law", "rrs", "traversal", "lp", "TV"]
    row = next(line for line in lines if line.startswith("b = (2, 1)  wor"))
    assert "5/3 = 1.666667" in row and "16/9 = 1.777778" in row and "17/9 = 1.888889" in row
    assert any(line.startswith("b = (1, 3)  topk    refused [") for line in lines)
    assert "i.i.d.-chains LP at n=4 (K=2 chains of L=2): 131/81 = 1.617284, certified" in lines
    assert any("exact on this context-independent pair): 5/3 = 1.666667, tree {0, 1, 10, 11}" in line for line in lines)
    assert any(line.split()[:4] == ["traversal", "16/9", "=", "1.777778"] for line in lines)


def test_a_context_dependent_pair_reports_sequoias_model_and_the_trees_exact_value():
    """On a Markov pair the programme's a_k are the root's: Sequoia's model.  Here p = (1/2, 1/3,
    1/6) then p(·|1) = (1/6, 1/3, 1/2), q = (1/6, 1/2, 1/3) then q(·|1) = (1/10, 3/10, 3/5), so
    a = (1/6, 1/2, 1/3) by p's rank, and the best tree of 4 nodes is ranks {1, 2, 3, 2·1}: the
    model says 1 + a_2·a_1 = 13/12.  Mapped rank → token at each node, the rank-1 child of token 1
    is token 2 (p(·|1)'s rank, not the root's), so the tree is {0, 1, 2, 12} and its exact E[τ] is
    q(0) + q(1) + q(2) + q(1)·q(2|1) = 1 + 1/2·3/5 = 13/10 (by hand)."""
    draft = tm.MarkovModel([1 / 2, 1 / 3, 1 / 6], [[1 / 3, 1 / 3, 1 / 3], [1 / 6, 1 / 3, 1 / 2], [1 / 3, 1 / 3, 1 / 3]])
    target = tm.MarkovModel([1 / 6, 1 / 2, 1 / 3], [[1 / 3, 1 / 3, 1 / 3], [1 / 10, 3 / 10, 3 / 5], [1 / 3, 1 / 3, 1 / 3]])
    dp = topk_programme(draft, target, 4, 2)
    assert not dp.positional and dp.ranks == ((1,), (2,), (3,), (2, 1))
    assert dp.tokens == ((0,), (1,), (2,), (1, 2))
    assert abs(dp.model - 13 / 12) < 1e-15 and abs(dp.exact - 13 / 10) < 1e-15
    # the complete tree (budget 6) is a branching vector: its exact value is rrs's on b = (2, 2)
    draft, target = RATIONAL_PAIRS[0]
    dp = topk_programme(draft, target, 6, 2)
    rrs = exact_analysis(make_verifier("rrs", draft, target, shape=Shape.tree((2, 2)), law="topk"), draft,
                         target, shape=Shape.tree((2, 2)), law="topk")
    assert abs(dp.exact - rrs.expected_accepted) < 1e-12 and abs(dp.exact - topk_tree_value(
        draft, target, Shape.tree((2, 2)))) < 1e-15
    status, out, _ = cli("trees", "--draft", "x.json", "--target", "y.json", "--budget", "4", "--L", "2")
    assert status == 2


def test_the_text_names_sequoias_model_on_a_context_dependent_pair():
    status, out, err = cli("trees", "--preset", "several-drafts", "--budget", "4", "--L", "2")
    assert status == 0
    line = next(x for x in out.splitlines() if x.startswith("best topk tree"))
    assert "Sequoia's positional model" in line and "not exact on this context-dependent pair" in line
    assert "has exact E[τ]" in line and "not certified" in out


def test_the_table_refuses_in_one_line(monkeypatch):
    for args, message in [
        (("--preset", "binary-toy", "--budget", "1", "--L", "2"), "the budget n=1 is smaller"),
        (("--preset", "three-token-toy", "--budget", "11", "--L", "3"), "lower the budget (--budget) or L (--L)"),
        (("--preset", "nope", "--budget", "4", "--L", "2"), "unknown preset"),
        (("--preset", "binary-toy", "--budget", "4"), "the following arguments are required: --L"),
        (("--preset", "binary-toy", "--budget", "0", "--L", "2"), "budget must be between 1 and 256"),
    ]:
        status, out, err = cli("trees", *args)
        assert (status, out) == (2, "") and err.startswith("error: ") and err.count("\n") == 1, err
        assert message in err, err


def test_the_table_reports_progress_on_stderr_when_long(monkeypatch):
    import core.cli.trees as trees
    monkeypatch.setattr(trees, "PROGRESS_SECONDS", 0.0)
    status, out, err = cli("trees", "--preset", "binary-toy", "--budget", "4", "--L", "2", "--json")
    assert status == 0 and json.loads(out)["budget"] == 4
    assert err.splitlines() == [f"trees: [{k}/12] {label} {law}" for k, (label, law) in enumerate(
        ((s, law) for s in ("chains 2×2", "b = (1, 3)", "b = (2, 1)") for law in ("iid", "wor", "topk", "greedy")),
        start=1)]


def test_the_library_table_matches_the_command_line(tables):
    toy = tm.binary_toy()
    table = budget_table(toy.draft, toy.target, 4, 2)
    assert table.describe() == {k: v for k, v in tables[("bin", 4)].items() if k != "temperature"}


# ---------------------------------------------------------------------------------------------
# The name rrs, and certificates, in token-tree outputs
# ---------------------------------------------------------------------------------------------

def test_the_name_of_the_rule_is_decided_in_one_place():
    tree = Shape.tree((2, 2))
    assert [display_name(n, tree) for n in ("specinfer", "rrs", "traversal", "lp_optimal")] == \
        ["rrs", "rrs", "traversal", "lp_optimal"]
    assert [display_name(n) for n in ("specinfer", "rrs", "bv")] == ["specinfer", "specinfer", "bv"]
    assert list(VERIFIERS) == ["rrs", "traversal", "lp"]


@pytest.mark.parametrize("args, method", [
    ("exact --preset binary-toy --tree 2,2 --method specinfer --json", "rrs"),
    ("exact --preset binary-toy --tree 2,2 --method rrs --json", "rrs"),
    ("exact --preset binary-toy --K 2 --L 2 --law wor --method specinfer --json", "rrs"),
    ("montecarlo --preset binary-toy --tree 2,1 --method specinfer --n 50 --json", "rrs"),
    ("montecarlo --preset binary-toy --K 2 --L 2 --law greedy --method rrs --n 50 --json", "rrs"),
    ("exact --preset binary-toy --K 2 --L 2 --method specinfer --json", "specinfer"),
    ("exact --preset binary-toy --K 2 --L 2 --method rrs --json", "specinfer"),
])
def test_token_tree_outputs_name_the_rule_rrs(args, method):
    status, out, err = cli(*args.split())
    assert status == 0 and json.loads(out)["method"] == method


def test_token_tree_text_outputs_name_the_rule_rrs():
    status, out, _ = cli("exact", "--preset", "binary-toy", "--tree", "2,1", "--law", "wor", "--method", "all")
    assert [line.split()[0] for line in out.splitlines()[3:6]] == ["rrs", "traversal", "lp_optimal"]
    assert "specinfer" not in out
    status, out, _ = cli("montecarlo", "--preset", "binary-toy", "--tree", "2,1", "--method", "specinfer", "--n", "20")
    assert out.splitlines()[3].split()[0] == "rrs"


def test_lp_values_in_tree_mode_carry_their_certificate():
    status, out, _ = cli("exact", "--preset", "three-token-toy", "--tree", "2,2", "--method", "lp_optimal", "--json")
    data = json.loads(out)
    assert (data["expected_accepted_fraction"], data["certified"]) == ("72331/46656", True)
    assert list(data)[list(data).index("expected_accepted_fraction") + 1] == "certified"
    status, out, _ = cli("bound", "--preset", "binary-toy", "--K", "2", "--L", "2", "--law", "iid", "--kind", "lp", "--json")
    data = json.loads(out)
    assert (data["value_fraction"], data["certified"]) == ("131/81", True)
    status, out, _ = cli("exact", "--preset", "binary-toy", "--tree", "2,1", "--law", "wor", "--method", "lp_optimal",
                         "--temperature", "0.7", "--json")
    data = json.loads(out)
    assert data["certified"] is False and data["expected_accepted_fraction"] is None
    status, out, _ = cli("exact", "--preset", "binary-toy", "--tree", "2,1", "--law", "wor", "--method", "lp_optimal",
                         "--temperature", "0.7")
    assert "not certified" in out.splitlines()[3]
    status, out, _ = cli("bound", "--preset", "binary-toy", "--tree", "2,1", "--law", "wor", "--kind", "lp")
    assert out.splitlines()[1].split()[4] == "fraction" and out.splitlines()[3].split()[4] == "17/9"
    # K i.i.d. chains carry theirs as the trees do
    status, out, _ = cli("bound", "--preset", "binary-toy", "--K", "2", "--L", "2", "--kind", "lp", "--json")
    data = json.loads(out)
    assert (data["value_fraction"], data["certified"]) == ("131/81", True)
