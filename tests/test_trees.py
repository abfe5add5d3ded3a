"""Token trees (docs/maths.md, "Token trees"): shapes, draft laws, rrs, traversal and the own-law LP
on every shape and law, checked exactly on toy models against the contract's vectors, against each
other, and against the rules on K i.i.d. drafts they generalise."""
from __future__ import annotations

import re

import contextlib
import io
import itertools
import json
import math
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import toy_models as tm
from core.analysis.exact import exact_analysis, estimated_seconds, outcome_count
from core.analysis.montecarlo import monte_carlo
from core.analysis.toy_drafts import draw_block, sample_drafts
from core.bounds.closed_form import topk_tree_value
from core.data.coins import RandomCoins, enumerate_outcomes
from core.data.drafting import draft_tree, enumerate_trees, node_set_law
from core.data.exact_fraction import fraction
from core.data.laws import (LAWS, first_appearance_table, get_law, is_iid_chains, node_set_count,
                            tree_outcome_count, tree_state_count, visit_order)
from core.data.shapes import Shape
from core.data.token_tree import TokenTree
from core.errors import InvalidInput
from core.rules.base import VerifierError, runs_on_words
from core.rules.registry import REGISTRY, chains_rules, display_name, get_verifier, make_verifier, method_names
from core.rules.specinfer import rrs_output_law, rrs_walk

ROOT = Path(__file__).resolve().parents[1]
BIN = (tm.IIDModel([2 / 3, 1 / 3]), tm.IIDModel([1 / 3, 2 / 3]))
TRI = (tm.IIDModel([1 / 2, 1 / 3, 1 / 6]), tm.IIDModel([1 / 6, 1 / 3, 1 / 2]))
TOYS = {"bin": BIN, "tri": TRI}
F = Fraction


def shape_of(text: str) -> Shape:
    return Shape.chains_of(2, 2) if text == "chains 2x2" else Shape.parse(text)


def exact(method, toy, shape, law, **kw):
    draft, target = toy
    verifier = make_verifier(method, draft, target, shape=shape, law=law)
    return exact_analysis(verifier, draft, target, shape=shape, law=law, **kw)


def law_gap(a: dict, b: dict) -> float:
    return max(abs(a.get(u, 0.0) - b.get(u, 0.0)) for u in set(a) | set(b))


# ---------------------------------------------------------------------------------------------
# The contract's vectors (spec §5): toy, shape, laws, rrs, traversal, own-law LP
# ---------------------------------------------------------------------------------------------

VECTORS = [
    ("bin", "chains 2x2", "iid", F(4, 3), F(115, 81), F(131, 81)),
    ("bin", "chains 2x2", "wor", F(5, 3), F(16, 9), F(17, 9)),
    ("bin", "chains 2x2", "topk", F(5, 3), F(16, 9), F(17, 9)),
    ("bin", "chains 2x2", "greedy", F(5, 3), F(16, 9), F(17, 9)),
    ("bin", "2,1", "iid", F(4, 3), F(115, 81), F(131, 81)),
    ("bin", "2,1", "wor", F(5, 3), F(16, 9), F(17, 9)),
    ("bin", "2,1", "topk", F(4, 3), F(4, 3), F(4, 3)),
    ("bin", "2,1", "greedy", F(5, 3), F(16, 9), F(17, 9)),
    ("bin", "2,2", "iid", F(346, 243), F(1072, 729), F(1271, 729)),
    ("bin", "2,2", "wor", F(2), F(2), F(2)),
    ("bin", "2,2", "topk", F(2), F(2), F(2)),
    ("bin", "2,2", "greedy", F(2), F(2), F(2)),
    ("tri", "chains 2x2", "iid", F(197, 162), F(821, 648), F(1861, 1296)),
    ("tri", "chains 2x2", "wor", F(35, 27), F(73, 54), F(701, 432)),
    ("tri", "chains 2x2", "topk", F(5, 6), F(35, 36), F(1)),
    ("tri", "chains 2x2", "greedy", F(25, 18), F(53, 36), F(3, 2)),
    ("tri", "2,1", "iid", F(197, 162), F(821, 648), F(1861, 1296)),
    ("tri", "2,1", "wor", F(35, 27), F(73, 54), F(701, 432)),
    ("tri", "2,1", "topk", F(7, 12), F(7, 12), F(7, 12)),
    ("tri", "2,1", "greedy", F(25, 18), F(53, 36), F(3, 2)),
    ("tri", "3,1", "iid", F(5075, 3888), F(10513, 7776), F(953, 576)),
    ("tri", "3,1", "wor", F(5, 3), F(31, 18), F(17, 9)),
    ("tri", "3,1", "topk", F(7, 6), F(7, 6), F(7, 6)),
    ("tri", "3,1", "greedy", F(5, 3), F(65, 36), F(17, 9)),
    ("tri", "2,2", "iid", F(1841, 1458), F(30371, 23328), F(72331, 46656)),
    ("tri", "2,2", "wor", F(112, 81), F(115, 81), F(259, 144)),
    ("tri", "2,2", "topk", F(3, 4), F(3, 4), F(3, 4)),
    ("tri", "2,2", "greedy", F(55, 36), F(29, 18), F(29, 18)),
    # the other shapes of equal budget (spec §5, notes)
    ("tri", "1,3", "iid", F(191, 162), F(263, 216), F(559, 432)),
    ("tri", "1,3", "wor", F(4, 3), F(4, 3), F(4, 3)),
    ("tri", "1,3", "greedy", F(4, 3), F(4, 3), F(4, 3)),
    ("tri", "1,3", "topk", F(1, 3), F(1, 3), F(1, 3)),
]


@pytest.mark.parametrize("toy, shape, law, rrs, traversal, lp", VECTORS)
def test_the_contract_vectors_as_exact_fractions(toy, shape, law, rrs, traversal, lp):
    """Each E[τ] to 1e-12 and as the fraction itself (``core.data.exact_fraction``); TV ≤ 1e-12 for rrs
    and traversal; the own-law LP to the solver's 1e-9 (the contract certifies it rationally)."""
    for method, expected in (("rrs", rrs), ("traversal", traversal)):
        r = exact(method, TOYS[toy], shape_of(shape), law)
        assert abs(r.expected_accepted - float(expected)) < 1e-12, (method, r.expected_accepted)
        assert r.summary()["expected_accepted_fraction"] == str(expected)
        assert r.fidelity_tv <= 1e-12 and abs(r.tau_pmf.sum() - 1.0) < 1e-12
    r = exact("lp_optimal", TOYS[toy], shape_of(shape), law)
    assert abs(r.expected_accepted - float(lp)) < 1e-9 and r.fidelity_tv <= 1e-9


@pytest.mark.parametrize("toy, K, expected", [("bin", 2, F(131, 81)), ("bin", 3, F(1351, 729)),
                                              ("tri", 2, F(1861, 1296)), ("tri", 3, F(953, 576))])
def test_the_iid_chains_lp_at_the_same_budget(toy, K, expected):
    from core.bounds.lp import optimal_lp
    assert abs(optimal_lp(*TOYS[toy], K, 2).value - float(expected)) < 1e-9


@pytest.mark.parametrize("b", [(1, 3), (1, 5)])
def test_on_the_binary_toy_only_iid_exists_for_b_1_3_and_1_5(b):
    shape = Shape.tree(b)
    r = exact("traversal", BIN, shape, "iid")
    assert r.fidelity_tv <= 1e-12 and 0 < r.expected_accepted < 2
    for law in ("wor", "topk", "greedy"):
        message = rf"^the {law} law needs {b[1]} distinct tokens at node \d but p gives only 2 tokens"
        with pytest.raises(InvalidInput, match=message):
            exact("rrs", BIN, shape, law)


def test_wor_and_greedy_share_the_lp_but_not_traversal_on_tri_3_1():
    """Spec §5: the two laws draw the same node-set law on tri (3,1), their visit orders differ."""
    assert exact("lp_optimal", TRI, Shape.tree((3, 1)), "wor").expected_accepted == \
        pytest.approx(exact("lp_optimal", TRI, Shape.tree((3, 1)), "greedy").expected_accepted, abs=1e-9)
    a, b = node_set_law(TRI[0].cond, Shape.tree((3, 1)), "wor"), node_set_law(TRI[0].cond, Shape.tree((3, 1)), "greedy")
    assert a.keys() == b.keys() and max(abs(a[t] - b[t]) for t in a) < 1e-15


def test_for_iid_neither_one_round_per_draw_nor_first_appearance_dominates():
    """L = 1, b = (3), p = (1/4, 1/3, 5/12), q = (0, 5/12, 7/12).  One round per draw (rrs): the
    target after each rejection does not depend on the draw, T = q, (0, 1/3, 2/3), (0, 0, 1), each
    round accepting Σ min(T, p) = 3/4, 3/4, 5/12: 3/4 + 1/4·3/4 + 1/16·5/12 = 185/192.  First
    appearance (traversal; at L = 1 the same rounds over distinct tokens with S = p without the
    visited ones): 557/576 > 185/192, computed below in rational arithmetic over the 27 draws."""
    p, q = [F(1, 4), F(1, 3), F(5, 12)], [F(0), F(5, 12), F(7, 12)]
    first = F(0)
    for xs in itertools.product(range(3), repeat=3):
        T, free, reach = q, [1, 1, 1], F(1)
        for c in dict.fromkeys(xs):
            S = [p[x] * free[x] / sum(p[y] * free[y] for y in range(3)) for x in range(3)]
            a = min(F(1), T[c] / S[c])
            first += p[xs[0]] * p[xs[1]] * p[xs[2]] * reach * a
            reach *= 1 - a
            rest = [max(T[x] - S[x], F(0)) for x in range(3)]
            if sum(rest) == 0:
                break
            T, free[c] = [r / sum(rest) for r in rest], 0
    assert first == F(557, 576)
    draft, target = tm.IIDModel([float(x) for x in p]), tm.IIDModel([float(x) for x in q])
    shape = Shape.tree((3,))
    assert exact("rrs", (draft, target), shape, "iid").summary()["expected_accepted_fraction"] == "185/192"
    assert exact("traversal", (draft, target), shape, "iid").summary()["expected_accepted_fraction"] == "557/576"


# ---------------------------------------------------------------------------------------------
# The laws: draws, visit order and S_i exact
# ---------------------------------------------------------------------------------------------

def draw_law(law, P, k):
    return {xs: prob for prob, xs in _merge(enumerate_outcomes(lambda c: LAWS[law].draw(P, k, c)))}


def _merge(runs):
    out = defaultdict(float)
    for prob, xs in runs:
        out[tuple(xs)] += prob
    return [(p, xs) for xs, p in out.items()]


def test_draws_follow_their_definitions():
    P = np.array([0.2, 0.4, 0.1, 0.3])
    wor = draw_law("wor", P, 2)
    assert wor[(1, 3)] == pytest.approx(0.4 * 0.3 / 0.6, abs=1e-15) and len(wor) == 12
    assert draw_law("topk", P, 3) == {(1, 3, 0): 1.0}
    greedy = draw_law("greedy", P, 3)
    assert set(greedy) == {(0, 1, 3), (2, 1, 3)} and greedy[(2, 1, 3)] == pytest.approx(1 / 3, abs=1e-15)
    iid = draw_law("iid", P, 2)
    assert len(iid) == 16 and iid[(3, 3)] == pytest.approx(0.09, abs=1e-15)
    # rank: decreasing P, ties to the smaller id; zero-probability tokens rank last
    assert draw_law("topk", np.array([0.0, 0.3, 0.4, 0.3]), 3) == {(2, 1, 3): 1.0}


@pytest.mark.parametrize("law, per_draw", [("iid", False), ("iid", True), ("wor", False), ("topk", False),
                                           ("greedy", False)])
def test_the_state_machine_is_the_exact_law_of_each_visited_child(law, per_draw):
    """For every prefix of the visit order, the state's ``branches`` equal the conditional law of the
    next visited child and its multiplicity given the children visited before (enumerated from
    ``draw``), and ``law()`` is its marginal S_i.  This is what makes rrs and traversal lossless.
    Per draw, round i's draw and its multiplicity from round i on have one law whatever the earlier
    rounds drew (``shared_after``)."""
    P = np.array([0.45, 0.25, 0.2, 0.1])
    k = 3
    # the visit sequence of every draw outcome: (c, j) per round
    sequences = defaultdict(float)
    for prob, xs in enumerate_outcomes(lambda c: LAWS[law].draw(P, k, c)):
        state = LAWS[law].state(P, k, per_draw)
        rounds = tuple((c, j) for c, _, _, j in visit_order(state, xs))
        if per_draw:     # per draw: the multiplicity counts the draws from that round on
            rounds = tuple((int(x), sum(1 for y in xs[i:] if y == x)) for i, x in enumerate(xs))
        sequences[rounds] += prob
    assert sum(sequences.values()) == pytest.approx(1.0, abs=1e-14)

    def check(prefix, state):
        if per_draw:      # each round's draw is fresh: its law does not depend on the earlier rounds
            i = len(prefix)
            given = {((),) * i + seq[i:]: pr for seq, pr in sequences.items() if len(seq) > i}
            given = {seq: sum(pr for s, pr in given.items() if s == seq) for seq in given}
            prefix = ((),) * i
        else:
            given = {seq: pr for seq, pr in sequences.items() if seq[:len(prefix)] == prefix and len(seq) > len(prefix)}
        total = sum(given.values())
        if not given:
            return
        nxt = defaultdict(float)
        for seq, pr in given.items():
            nxt[seq[len(prefix)]] += pr / total
        branches = {(c, j): pr for c, j, pr in state.branches()}
        assert branches.keys() == nxt.keys(), (prefix, branches, dict(nxt))
        assert max(abs(branches[key] - nxt[key]) for key in nxt) < 1e-14
        S = np.zeros(P.size)
        for (c, _), pr in nxt.items():
            S[c] += pr
        np.testing.assert_allclose(state.law(), S, atol=1e-14)
        for c, j in nxt:
            check(prefix + ((c, j),), state.after(c, j))
            if per_draw:
                break

    check((), LAWS[law].state(P, k, per_draw))


def test_iid_merges_equal_draws_and_the_chains_read_back_as_drafts():
    toy = tm.binary_toy()
    for seed in range(6):
        drafts = sample_drafts(toy.draft, 3, 2, seed)
        tree = draw_block(toy.draft, toy.target, 3, 2, seed)
        assert tree.iid_chains and tree.drafts.tolist() == drafts.tolist()
        for u in tree.nodes():
            through = [k for k in range(3) if tuple(drafts[k, :len(u)].tolist()) == u]
            if len(u) < 2:
                assert tree.draws[u] == tuple(int(drafts[k][len(u)]) for k in through)
                assert tree.children(u) == tuple(dict.fromkeys(tree.draws[u]))
            assert tree.multiplicity(u) == len(through)
        # the rows are read back from the draws alone, and the nodes come by depth, then by draft
        again = TokenTree(tree.shape, tree.law, tree.draws, tree.p, tree.q)
        assert again.drafts.tolist() == tree.drafts.tolist() and again.nodes() == tree.nodes()
        assert tree.nodes() == list(dict.fromkeys(tuple(x[:d]) for d in range(3) for x in drafts.tolist()))
    # a static iid tree: a child of multiplicity m gets m·b_(d+2) draws
    draws = draft_tree(toy.draft.cond, Shape.tree((2, 3)), "iid", RandomCoins(1))
    for c, (_, m) in first_appearance_table(draws[()]).items():
        assert len(draws[(c,)]) == 3 * m


def test_counts_price_the_new_outcome_spaces():
    """Ordered outcomes = the trees plain enumeration visits (all p > 0); the node-set bound holds
    and is the multiset count C(V^L + K − 1, K) for i.i.d. chains; the recursions visit at most
    the states their cost model counts."""
    draft, target = tm.random_pair("markov", 3, seed=4, depth=3)
    for shape, law in [(Shape.tree((2, 2)), "iid"), (Shape.tree((2, 1)), "wor"), (Shape.chains_of(2, 2), "greedy"),
                       (Shape.tree((1, 2)), "topk"), (Shape.tree((2, 1, 2)), "greedy")]:
        trees = enumerate_trees(draft, target, shape, law)
        assert len(trees) == tree_outcome_count(3, shape, law) == outcome_count(3, shape=shape, law=law)
        assert len(node_set_law(draft.cond, shape, law)) <= node_set_count(3, shape, law)
        for method, per_draw in (("rrs", True), ("traversal", False)):
            _, states = get_verifier(method).tree_output_law(draft, target, shape, law)
            assert states <= tree_state_count(3, shape, law, per_draw), (shape, law, method)
    assert node_set_count(4, Shape.chains_of(3, 2), "iid") == math.comb(16 + 2, 3)


# ---------------------------------------------------------------------------------------------
# Random instances: lossless, below the own-law LP, top-k closed form, model level = enumeration
# ---------------------------------------------------------------------------------------------

SHAPES = [Shape.chains_of(2, 2), Shape.chains_of(3, 2), Shape.tree((2, 1)), Shape.tree((2, 2)),
          Shape.tree((1, 2)), Shape.tree((3, 1)), Shape.tree((2, 1, 2)), Shape.tree((1, 1, 2))]


def instances(n: int, seed: int):
    """Seeded (kind, V, shape, law, draft, target) with at most 1728 drafted trees."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        V = int(rng.integers(2, 5))
        shape = SHAPES[int(rng.integers(len(SHAPES)))]
        law = ("iid", "wor", "topk", "greedy")[len(out) % 4]
        if (law != "iid" and max(shape.branching) > V) or tree_outcome_count(V, shape, law) > 1728:
            continue
        kind = ("iid", "markov", "table")[len(out) % 3]
        draft, target = tm.random_pair(kind, V, alpha=float(rng.choice([0.3, 1.0, 3.0])),
                                       mix=float(rng.uniform(0.1, 0.9)), seed=int(rng.integers(1 << 30)),
                                       depth=shape.L)
        out.append((kind, V, shape, law, draft, target))
    return out


INSTANCES = instances(36, seed=26)


def test_instances_cover_laws_shapes_and_families():
    assert {i[0] for i in INSTANCES} == {"iid", "markov", "table"}
    assert {i[3] for i in INSTANCES} == set(LAWS)
    assert {i[1] for i in INSTANCES} == {2, 3, 4}
    assert len({i[2] for i in INSTANCES}) >= 6


def test_rrs_and_traversal_are_lossless_and_never_exceed_the_own_law_lp():
    for kind, V, shape, law, draft, target in INSTANCES:
        lp = exact("lp_optimal", (draft, target), shape, law)
        assert lp.fidelity_tv <= 1e-9
        for method in ("rrs", "traversal"):
            r = exact(method, (draft, target), shape, law)
            assert r.fidelity_tv <= 1e-12, (method, kind, V, shape, law, r.fidelity_tv)
            assert r.expected_accepted <= lp.expected_accepted + 1e-9, (method, kind, V, shape, law)


def test_on_topk_trees_the_closed_form_rrs_traversal_and_the_lp_agree():
    rng = np.random.default_rng(7)
    for i, shape in enumerate([Shape.tree(b) for b in [(2, 1), (2, 2), (3, 1), (1, 3), (2, 1, 2), (3,)]]):
        draft, target = tm.random_pair(("iid", "markov", "table")[i % 3], 3, alpha=0.5, mix=0.6,
                                       seed=int(rng.integers(1 << 30)), depth=shape.L)
        value = topk_tree_value(draft, target, shape)
        for method in ("rrs", "traversal", "lp_optimal"):
            r = exact(method, (draft, target), shape, "topk")
            assert abs(r.expected_accepted - value) < (1e-9 if method == "lp_optimal" else 1e-12), (method, shape)
    with pytest.raises(InvalidInput, match="topk chains sample below the root"):
        topk_tree_value(draft, target, Shape.chains_of(2, 2))


@pytest.mark.parametrize("method", ["rrs", "traversal", "lp_optimal"])
def test_iid_chains_are_todays_rules_exactly(method):
    """The token-tree programmes on K i.i.d. chains give today's law (specinfer's tree walk,
    traversal, the multiset LP), and the coin programme gives today's law drafts by drafts."""
    from core.bounds.lp import optimal_lp, optimal_tree_lp
    from core.data.coins import enumerate_outcomes as every
    for kind, V, K, L in [("iid", 2, 2, 2), ("markov", 3, 2, 2), ("table", 2, 3, 3), ("markov", 2, 1, 3)]:
        draft, target = tm.random_pair(kind, V, alpha=0.7, mix=0.5, seed=V * K + L, depth=L)
        shape = Shape.chains_of(K, L)
        if method == "lp_optimal":
            today = optimal_lp(draft, target, K, L)
            trees = optimal_tree_lp(draft, target, shape, "iid", general=True)
            assert trees.shape == shape and today.shape is None
            assert abs(today.value - trees.value) < 1e-9
            assert law_gap(today.output_law(), trees.output_law()) < 1e-9
            continue
        v = get_verifier(method)
        today, _ = v.model_output_law(draft, target, K, L)
        generic, _ = v.tree_output_law(draft, target, shape, "iid")
        assert law_gap(today, generic) < 1e-14, (kind, V, K, L)
        for seed in range(4):
            block = draw_block(draft, target, K, L, seed)
            assert law_gap(v.law(block), v.law(block, v.run_tree)) < 1e-15
            # rule by rule, coin by coin: the same tests in the same order
            a = [(pr, [(t.node, t.prob, t.passed) for t in o.trace.tests]) for pr, o in every(lambda c: v.run_chains(block, c))]
            b = [(pr, [(t.node, t.prob, t.passed) for t in o.trace.tests]) for pr, o in every(lambda c: v.run_tree(block, c))]
            assert a == b


def test_one_chain_drafted_by_wor_or_greedy_is_one_iid_draft():
    """k = 1: one draw by wor or greedy is one sample from p, so a single chain is K = 1 i.i.d.
    drafts: every rule that takes those accepts it, and the token-tree programmes give SD (rrs) and BV (traversal)."""
    draft, target = tm.random_pair("table", 3, alpha=0.6, mix=0.5, seed=11, depth=3)
    sd = get_verifier("sd").model_output_law(draft, target, 1, 3)[0]
    bv = get_verifier("bv").model_output_law(draft, target, 1, 3)[0]
    for shape, law in [(Shape.chains_of(1, 3), "wor"), (Shape.tree((1, 1, 1)), "greedy")]:
        # every rule that takes K i.i.d. drafts (not a port that runs on its engine's top-k trees only)
        assert is_iid_chains(shape, law) and all(REGISTRY[m].supports(shape, law) for m in chains_rules())
        assert law_gap(get_verifier("rrs").tree_output_law(draft, target, shape, law)[0], sd) < 1e-14
        assert law_gap(get_verifier("traversal").tree_output_law(draft, target, shape, law)[0], bv) < 1e-14
        assert exact_analysis("bv", draft, target, shape=shape, law=law).output_law == \
            exact_analysis("bv", draft, target, 1, 3).output_law
    assert not is_iid_chains(Shape.chains_of(1, 3), "topk") and not is_iid_chains(Shape.tree((1, 2)), "wor")


def test_one_sample_laws_draw_p_once():
    """``one_sample`` (which single chains are i.i.d. drafts) says what the draws do at k = 1: a
    one-sample law's single draw has law P, exactly what ``draw`` enumerates; topk's is the top
    token whatever P.  ``is_iid_chains`` answers the same for a law and its name."""
    P = np.array([0.5, 0.3, 0.2])
    for name, law in LAWS.items():
        one = draw_law(name, P, 1)
        assert law.one_sample == (len(one) == 3 and all(abs(one[(x,)] - P[x]) < 1e-15 for x in range(3)))
        for shape in (Shape.chains_of(1, 3), Shape.chains_of(2, 2), Shape.tree((2, 1)), Shape.tree((1, 2))):
            assert is_iid_chains(shape, law) == is_iid_chains(shape, name)
    assert [n for n, law in LAWS.items() if law.one_sample] == ["iid", "wor", "greedy"]
    assert not is_iid_chains(Shape.chains_of(1, 3), "no such law")


def test_the_model_level_laws_equal_enumeration_of_every_tree():
    """Every drafted tree (``enumerate_trees``, the drafting coin programme) × ``Verifier.law`` of
    the rule's coin programme on it, against the model-level programme, on every law and shape, for
    every rule that has one (tests/test_exact.py fails if that set changes unnoticed)."""
    methods = [n for n, cls in REGISTRY.items() if hasattr(cls, "tree_output_law")]
    assert len(methods) == 4
    checked = set()
    for kind, V, shape, law, draft, target in INSTANCES[:24]:
        for method in (m for m in methods if REGISTRY[m].supports(shape, law)):
            checked.add(method)
            v = make_verifier(method, draft, target, shape=shape, law=law)
            a = exact_analysis(v, draft, target, shape=shape, law=law)
            b = exact_analysis(v, draft, target, shape=shape, law=law, recursion=False)
            assert law_gap(a.output_law, b.output_law) < 1e-13, (method, kind, V, shape, law)
    assert checked == set(methods)


def test_testing_a_wor_tree_against_p_is_lossy():
    """Spec §3.1: p = (1/2, 1/4, 1/4), q = (1/6, 1/3, 1/2), b = (2) drafted without replacement.
    The exact S_2 = p without the first child gives E[τ] = 11/12 and TV 0; testing the second child
    against p itself (SpecInfer's rule on an RRSw tree) gives 1 and TV exactly 1/12.  By hand:
    round 1 accepts Σ min(p, q) = 2/3 and leaves T = (0, 1/4, 3/4) after X_1 = 0; the true S_2 =
    (0, 1/2, 1/2) accepts 3/4 of it, S = p all of it, emitting token 1 with 1/4 + 1/3·1/2 = 5/12 > 1/3."""
    from core.analysis.exact import completed_law
    from core.data.laws import WithoutReplacement

    class AgainstP(WithoutReplacement):
        def law(self):                            # what the wrong rule tests against
            return self.p

        def branches(self):                       # what the draws really are: without replacement
            true = WithoutReplacement.law(self)
            return ((int(c), 1, float(true[c])) for c in np.flatnonzero(true > 0))

    def wrong(p, q, w, k):
        return AgainstP(p, np.ones(p.size, dtype=bool), k)

    draft, target = tm.IIDModel([1 / 2, 1 / 4, 1 / 4]), tm.IIDModel([1 / 6, 1 / 3, 1 / 2])
    shape = Shape.tree((2,))
    right = exact("rrs", (draft, target), shape, "wor")
    assert right.summary()["expected_accepted_fraction"] == "11/12" and right.fidelity_tv <= 1e-15
    law, _ = rrs_output_law([wrong], draft, target, shape.branching)
    completed, q = completed_law(law, target, 1)
    assert sum((len(u) - 1) * m for u, m in law.items()) == pytest.approx(1.0, abs=1e-15)
    assert 0.5 * np.abs(completed - q).sum() == pytest.approx(1 / 12, abs=1e-15)
    # the same wrong rule as a coin programme over every drafted tree agrees with its recursion
    walked = defaultdict(float)
    for weight, tree in enumerate_trees(draft, target, shape, "wor"):
        for prob, out in enumerate_outcomes(lambda c: rrs_walk(tree, c, [wrong])):
            for y in np.flatnonzero(out.residual > 0):
                walked[out.accepted + (int(y),)] += weight * prob * out.residual[y] / out.residual.sum()
    assert law_gap(walked, law) < 1e-15


@pytest.mark.parametrize("method, shape, law", [("rrs", Shape.tree((2, 2)), "wor"),
                                                ("traversal", Shape.tree((2, 1, 2)), "iid"),
                                                ("lp_optimal", Shape.chains_of(2, 3), "greedy")])
def test_monte_carlo_agrees_with_the_exact_law(method, shape, law):
    draft, target = tm.random_pair("table", 3, alpha=0.7, seed=5, depth=3)
    v = make_verifier(method, draft, target, shape=shape, law=law)
    ex = exact_analysis(v, draft, target, shape=shape, law=law)
    mc = monte_carlo(v, draft, target, n=3000, seed=1, confidence=0.999, shape=shape, law=law)
    lo, hi = mc.tau_interval()
    assert np.all((lo <= ex.tau_pmf + 1e-12) & (ex.tau_pmf <= hi + 1e-12)), (ex.tau_pmf, lo, hi)
    assert abs(mc.tau_mean - ex.expected_accepted) <= 1.7 * mc.tau_mean_halfwidth
    again = monte_carlo(v, draft, target, n=200, seed=1, shape=shape, law=law)
    assert again.output_counts == monte_carlo(v, draft, target, n=200, seed=1, shape=shape, law=law).output_counts


# ---------------------------------------------------------------------------------------------
# Refusals and the rules' metadata
# ---------------------------------------------------------------------------------------------

def test_only_rrs_traversal_and_lp_optimal_accept_every_shape_and_law():
    """Of this project's rules, the lossless ones defined on every shape and law are rrs, traversal and
    the LP; the lossy ones there are Medusa's typical acceptance (tests/test_typical.py) and EAGLE's
    released verification, lossy in its EAGLE-2 release at T ≠ 1 (tests/test_eagle.py).  Read from the
    registry: a rule added to it keeps this test as it is, and is checked by the loop below."""
    trees = [n for n, c in REGISTRY.items() if c.token_trees]
    lossless = [n for n in trees if REGISTRY[n].lossless_by_theory]
    assert {"specinfer", "traversal", "lp_optimal"} <= set(lossless) and lossless[:3] == ["specinfer", "traversal", "lp_optimal"]
    assert {"typical", "eagle"} <= set(trees) - set(lossless)
    assert type(get_verifier("rrs")) is REGISTRY["specinfer"] and "rrs" not in method_names()
    toy = tm.binary_toy()
    for name in method_names():
        cls = REGISTRY[name]
        if cls.runs_on:             # a released port runs on its engine's drafts (tests/test_engine_ports.py)
            continue
        assert cls.supports(Shape.chains_of(2, 2), "iid") and cls.supports(Shape.tree((3, 1, 1)), "iid")
        assert cls.supports(Shape.tree((2, 2)), "iid") == cls.token_trees
        assert cls.supports(Shape.chains_of(2, 2), "wor") == cls.token_trees
        if not cls.token_trees:
            message = (rf"^{name} is defined on K i\.i\.d\. chains only, not on chains 2×2 drafted by "
                       r"greedy; use the iid law on chains, or one of specinfer \(rrs\), traversal, lp_optimal$")
            if cls.runs_on:         # an engine's rule names the drafts its engine makes
                message = rf"^{name} runs on {re.escape(cls.runs_on)} only, not on chains 2×2 drafted by greedy$"
            with pytest.raises(VerifierError, match=message):
                make_verifier(name, toy.draft, toy.target, shape=Shape.chains_of(2, 2), law="greedy")
            with pytest.raises(VerifierError, match=message):
                exact_analysis(name, toy.draft, toy.target, 2, 2, law="greedy")
            with pytest.raises(VerifierError, match=message):
                monte_carlo(name, toy.draft, toy.target, 2, 2, n=10, seed=0, law="greedy")


@pytest.mark.parametrize("make, message", [
    (lambda: Shape.tree((2, 0)), "b_2 must be an integer ≥ 1, got 0"),
    (lambda: Shape.tree(()), "at least one level"),
    (lambda: Shape.chains_of(0, 2), "K must be an integer ≥ 1, got 0"),
    (lambda: Shape.chains_of(2, 0), "L must be an integer ≥ 1, got 0"),
    (lambda: Shape.parse("2,x"), "comma-separated integers"),
    (lambda: get_law("beam"), "unknown draft law 'beam'; choose one of iid, wor, topk, greedy"),
    (lambda: exact_analysis("rrs", *TRI, 4, 2, law="wor"),
     "the wor law needs 4 distinct tokens at node ∅ but p gives only 3 tokens positive probability there"),
    (lambda: exact_analysis("rrs", *TRI, 3, 2, shape=Shape.tree((2, 2))), "disagree with the shape"),
])
def test_refusals_are_one_sentence(make, message):
    with pytest.raises(InvalidInput) as info:
        make()
    assert message in str(info.value) and "\n" not in str(info.value)


def test_the_time_estimate_refuses_too_large_spaces_in_one_line():
    from core.analysis.exact import TooLarge
    from core.bounds.sizes import BoundsTooLarge
    draft, target = tm.random_pair("iid", 8, seed=1)
    shape = Shape.tree((4, 4, 2))
    assert estimated_seconds(REGISTRY["traversal"], 8, shape=shape, law="iid") > 60
    with pytest.raises(TooLarge, match=r"^the exact law of traversal for b = \(4, 4, 2\) drafted by iid over "
                                       r"V=8 tokens would take about [\d,]+ s \(limit 60 s\); use a smaller V or tree$"):
        exact_analysis("traversal", draft, target, shape=shape)
    with pytest.raises(BoundsTooLarge, match=r"^the own-law LP for b = \(4, 4, 2\) drafted by wor .* must "
                                             r"enumerate [\d,]+ drafted trees"):
        make_verifier("lp_optimal", draft, target, shape=shape, law="wor")


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------

def cli(*args: str) -> tuple[int, str, str]:
    """``python -m core ARGS`` in this process: (exit status, stdout, stderr)."""
    from core.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


def test_todays_invocations_print_the_same_numbers():
    """What today's commands printed before token trees existed (tests/data/cli_before_trees.json,
    captured from main a69b182 by tests/data/capture_cli.py): ``montecarlo`` and the bounds other
    than the LP byte for byte; ``exact`` every number it printed, unchanged, beside the exact
    fractions and the share of the LP optimum that each row now carries (its JSON has every key and
    value it had; its table every value of every row, the TV as the fraction it is where it is one);
    the LP bound, which now prints its certificate too (its bounds, and the fraction where it is
    certified), its value and its first columns."""
    before = json.loads((ROOT / "tests" / "data" / "cli_before_trees.json").read_text())
    assert len(before) >= 15
    for command, printed in before.items():
        status, out, err = cli(*command.split())
        assert status == 0 and err == printed["stderr"], command
        if "--kind lp" in command and "--json" in command:
            old, new = json.loads(printed["stdout"]), json.loads(out)
            assert {k: new[k] for k in old} == pytest.approx(old, abs=1e-12), command
            assert new["lower"] <= new["value"] <= new["upper"] and "certified" in new, command
        elif "--kind lp" in command:
            old, new = printed["stdout"].splitlines(), out.splitlines()
            assert new[2].split()[:4] == old[2].split()[:4] and new[0].split()[:4] == old[0].split()[:4], command
        elif not command.startswith("exact"):
            assert out == printed["stdout"], command
        elif "--json" in command:
            old, new = json.loads(printed["stdout"]), json.loads(out)
            for a, b in zip(old.get("results", [old]), new.get("results", [new]), strict=True):
                assert {k: b[k] for k in a} == a, command
                assert b["percent_of_lp"] == pytest.approx(100 * b["expected_accepted"] / b["lp_optimum"])
        else:
            rows = {line.split()[0]: line.split() for line in out.splitlines()[3:]}
            for line in printed["stdout"].splitlines()[3:]:
                method, e, efficiency, tv, *pmf = line.split()
                shown = rows[method]
                assert {e, efficiency, *pmf} <= set(shown), command
                tv_shown = shown[shown.index(efficiency) + 1]
                assert float(Fraction(tv_shown)) == pytest.approx(float(tv), abs=1e-12), command


@pytest.mark.parametrize("args, fraction_, value", [
    ("--preset binary-toy --K 2 --L 2 --law greedy --method traversal", "16/9", 16 / 9),
    ("--preset binary-toy --K 2 --L 2 --law greedy --method lp_optimal", "17/9", 17 / 9),
    ("--preset binary-toy --tree 2,2 --law iid --method traversal", "1072/729", 1072 / 729),
    ("--preset three-token-toy --tree 2,2 --law iid --method rrs", "1841/1458", 1841 / 1458),
    ("--preset three-token-toy --tree 3,1 --law greedy --method traversal", "65/36", 65 / 36),
    ("--preset three-token-toy --K 2 --L 2 --law topk --method traversal", "35/36", 35 / 36),
    ("--preset binary-toy --tree 2,2 --law wor --method rrs", "2", 2.0),
])
def test_the_command_line_gives_the_vectors(args, fraction_, value):
    status, out, err = cli("exact", *args.split(), "--json")
    assert status == 0, err
    data = json.loads(out)
    assert data["expected_accepted_fraction"] == fraction_ and abs(data["expected_accepted"] - value) < 1e-12
    shape = Shape.parse(args.split("--tree ")[1].split()[0]) if "--tree" in args else Shape.chains_of(2, 2)
    assert (data["branching"], data["budget"]) == (list(shape.branching), shape.budget)
    assert data["law"] == args.split("--law ")[1].split()[0] and data["fidelity_tv"] <= 1e-9


def test_the_command_line_lists_the_rules_it_skips_and_bounds_the_tree():
    status, out, err = cli("exact", "--preset", "three-token-toy", "--tree", "2,1", "--law", "wor",
                           "--method", "all")
    assert status == 0
    lines = out.splitlines()
    # the rules of the registry, read from it: those defined on every tree computed, the others skipped
    on_trees = [display_name(n, Shape.tree((2, 1))) for n, c in REGISTRY.items() if c.supports(Shape.tree((2, 1)), "wor")]
    # a released port that runs on other drafts than these (its engine's) is skipped with its own reason
    elsewhere = {n: f"runs on {runs_on_words(c.runs_on)} only" for n, c in REGISTRY.items()
                 if c.runs_on and not c.supports(Shape.tree((2, 1)), "wor")}
    chains_only = [n for n, c in REGISTRY.items() if not c.token_trees and n not in elsewhere]
    assert on_trees[:5] == ["rrs", "traversal", "lp_optimal", "typical", "eagle"]
    assert {"sd", "bv", "spectr", "spectr_gbv", "rbv", "best_of_k_bv", "otv", "td_optimal", "hsd",
            "exact_match"} <= set(chains_only)
    assert lines[0] == "b = (2, 1)  law=wor  budget n=4  L=2  V=3  T=1" and len(lines) == 3 + len(on_trees)
    assert [line.split()[0] for line in lines[3:]] == on_trees
    assert "35/27" in lines[3] and "73/54" in lines[4] and "701/432" in lines[5]
    assert err == f"note: {', '.join(chains_only)} skipped: defined on K i.i.d. chains only\n" + "".join(
        f"note: {m} skipped: {why}\n" for m, why in elsewhere.items())
    status, out, _ = cli("exact", "--preset", "three-token-toy", "--tree", "2,1", "--law", "wor", "--method", "all", "--json")
    data = json.loads(out)
    assert [r["method"] for r in data["results"]] == on_trees
    assert data["skipped"] == [{"method": m, "reason": elsewhere.get(m, "defined on K i.i.d. chains only")}
                               for m in REGISTRY if m in chains_only or m in elsewhere]
    status, out, _ = cli("bound", "--preset", "three-token-toy", "--tree", "2,2", "--law", "iid", "--kind", "lp", "--json")
    data = json.loads(out)
    assert status == 0 and abs(data["value"] - 72331 / 46656) < 1e-9 and data["budget"] == 6
    status, out, _ = cli("montecarlo", "--preset", "binary-toy", "--tree", "2,2", "--method", "rrs", "--n", "500",
                         "--seed", "3", "--json")
    data = json.loads(out)
    lo, hi = data["expected_accepted_ci"]
    assert status == 0 and data["law"] == "iid" and lo <= 346 / 243 <= hi


@pytest.mark.parametrize("args, message", [
    ("exact --preset binary-toy --tree 3,1 --law wor --method rrs", "the wor law needs 3 distinct tokens at node ∅"),
    ("exact --preset binary-toy --tree 2,0 --method rrs", "b_2 must be an integer ≥ 1, got 0"),
    ("exact --preset binary-toy --tree 2,1 --K 2 --method rrs", "give either --tree or --K/--L, not both"),
    ("exact --preset binary-toy --method rrs --K 2", "give --K and --L (K drafts of length L), or --tree"),
    ("exact --preset binary-toy --K 2 --L 2 --law wor --method sd", "sd is defined on K i.i.d. chains only"),
    ("exact --preset binary-toy --K 2 --L 2 --law beam --method rrs", "invalid choice: 'beam'"),
    ("bound --preset binary-toy --tree 2,2 --kind acausal", "the acausal bound is defined for K i.i.d. chains only"),
    ("montecarlo --preset binary-toy --tree 2,2 --method otv --n 10", "otv is defined on K i.i.d. chains only"),
    ("exact --preset binary-toy --tree 2,99 --method rrs", "--tree must have at most 8 levels of at most 16 draws"),
])
def test_command_line_refusals_are_one_line_with_status_2(args, message):
    status, out, err = cli(*args.split())
    assert (status, out) == (2, "")
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err


def test_fractions_are_shown_only_where_they_are_exact():
    assert [fraction(v) for v in (72331 / 46656, 17930 / 9747, 1 / 3 + 1e-13, math.pi, 2.0)] == \
        ["72331/46656", "17930/9747", "1/3", None, None]
    rng = np.random.default_rng(0)
    spurious = sum(fraction(float(x)) is not None for x in rng.uniform(0, 3, 4000))
    assert spurious <= 8          # ≈ 0.03% of random numbers; a fixed 1e-12 at 10^6 would give ≈ 57%
    # the pages show the same fractions
    from pages.ui import text
    assert text.fraction(1072 / 729) == "1072/729" and text.fraction(2.0) is None
