"""The serving engines' verification code, ported (core/rules/trtllm_tree.py, sglang_tree.py,
sglang_rocm_greedy.py, llamacpp_tree.py, flashinfer_chain.py): each on fixed instances against values
derived by hand in the comments, the lossless ones against rrs/SD coin by coin, the drafts each runs
on and its one-sentence refusals elsewhere."""
from fractions import Fraction

import numpy as np
import pytest

from toy_models import PRESETS, IIDModel, random_pair

from core.analysis.exact import exact_analysis
from core.data.coins import enumerate_outcomes
from core.data.drafting import enumerate_trees
from core.data.shapes import Shape
from core.data.token_tree import TokenTree
from core.decoding.plans import StaticPlan, check_plan
from core.errors import DecodingError
from core.rules.base import VerifierError
from core.rules.params import ParamError
from core.rules.registry import REGISTRY, chains_rules, make_verifier, require
from core.rules.flashinfer_chain import FlashinferChain
from core.rules.llamacpp_tree import LlamacppTree
from core.rules.sglang_rocm_greedy import SglangRocmGreedy
from core.rules.sglang_tree import SglangTree
from core.rules.trtllm_tree import TrtllmTree

TOY = PRESETS["binary-toy"]                 # p = (2/3, 1/3), q = (1/3, 2/3), i.i.d.
P, Q = TOY.draft, TOY.target
# docs/maths.md, "Why S_i must be exact": testing a wor draft against p is TV 1/12 here
P3, Q3 = IIDModel(np.array([1 / 2, 1 / 4, 1 / 4])), IIDModel(np.array([1 / 6, 1 / 3, 1 / 2]))
ENGINES = ("trtllm_tree", "sglang_tree", "sglang_rocm_greedy", "llamacpp_tree", "flashinfer_chain")


def frac(x: float, limit: int = 100000) -> Fraction:
    return Fraction(x).limit_denominator(limit)


def law(rule, draft, target, b, law_name, **kw):
    r = exact_analysis(rule, draft, target, shape=Shape.tree(b), law=law_name, **kw)
    return frac(r.expected_accepted), frac(r.fidelity_tv), r


def first_token(result, V):
    """The completed output law's first-token marginal."""
    return result.completed.reshape(V, -1).sum(axis=1)


# -- TensorRT-LLM -------------------------------------------------------------------------------------

def test_trtllm_two_iid_children_over_accept_the_token_both_can_be():
    # b = (2), L = 1: a = min(1, q/p) = (1/2, 1).  Draws (0, 0) (4/9): 0 passes with 1 − 1/4 = 3/4,
    # else y ~ (q − p)₊ = δ_1; every other pair passes.  E[τ] = 4/9·3/4 + 5/9 = 8/9.
    # P(first token 0) = 4/9·3/4 + 2/9·1/2 (draws (0, 1): 0 first) = 4/9 > q(0) = 1/3: TV 1/9.
    tau, tv, r = law("trtllm_tree", P, Q, (2,), "iid")
    assert (tau, tv) == (Fraction(8, 9), Fraction(1, 9))
    assert first_token(r, 2) == pytest.approx([4 / 9, 5 / 9], abs=1e-14)
    # rrs tests the second draw against the residual: lossless, 7/9
    assert law("rrs", P, Q, (2,), "iid")[:2] == (Fraction(7, 9), 0)


def test_trtllm_without_replacement_tests_the_second_child_against_p():
    # p = (1/2, 1/4, 1/4), q = (1/6, 1/3, 1/2), b = (2) wor: 0 first (1/2) passes 1/3, else the other
    # child passes for sure; 1 or 2 first passes.  E[τ] = 1; P(1) = 1/4 + 1/2·2/3·1/2 = 5/12,
    # P(2) = 5/12, P(0) = 1/6: TV = 1/12.  rrs: 11/12, lossless (docs/maths.md).
    assert law("trtllm_tree", P3, Q3, (2,), "wor")[:2] == (Fraction(1), Fraction(1, 12))
    assert law("rrs", P3, Q3, (2,), "wor")[:2] == (Fraction(11, 12), 0)


def test_trtllm_top1_chain_is_tested_as_a_sample():
    # b = (1, 1) topk: the draft's top token 0 both times, each passing with 1/2: E[τ] = 1/2 + 1/4.
    # Completed law of two tokens (1/4, 1/4, 1/6, 1/3) against q (1/9, 2/9, 2/9, 4/9): TV 1/6.
    assert law("trtllm_tree", P, Q, (1, 1), "topk")[:2] == (Fraction(3, 4), Fraction(1, 6))
    # on a top-k tree the lossless rule is rrs: Σ q(s) over the tree = 1/3 + 1/9 = 4/9
    assert law("rrs", P, Q, (1, 1), "topk")[:2] == (Fraction(4, 9), 0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_trtllm_with_one_sampled_child_per_node_is_sd_coin_by_coin(seed):
    """One chain (K = 1) drafted by iid: every test is SD's, coin for coin, and so is the law."""
    draft, target = random_pair("markov", 3, alpha=0.7, mix=0.5, seed=seed)
    for prob, tree in enumerate_trees(draft, target, Shape.chains_of(1, 3), "iid"):
        ours = enumerate_outcomes(lambda c: TrtllmTree().run_chains(tree, c))
        sd = enumerate_outcomes(lambda c: REGISTRY["sd"]().run_chains(tree, c))
        assert [(w, o.accepted) for w, o in ours] == [(w, o.accepted) for w, o in sd]
        assert [[(t.node, t.prob, t.passed) for t in o.trace.tests] for _, o in ours] == \
            [[(t.node, t.prob, t.passed) for t in o.trace.tests] for _, o in sd]
        for (_, a), (_, b) in zip(ours, sd):
            assert np.allclose(a.residual, b.residual, atol=1e-15)
    assert exact_analysis("trtllm_tree", draft, target, 1, 3).fidelity_tv < 1e-14


def test_trtllm_equal_draws_are_separate_siblings_with_their_own_subtrees():
    # Two chains 0·0 and 0·1 (binary toy): the kernel holds two root children "0", each with one
    # child.  Accepting the first copy of 0 (1/2) leads to child 0 only; failing it, the second copy
    # of 0 (1/2) leads to child 1 only.  A merged node would offer both children either way.
    tree = TokenTree.chains_from_models([[0, 0], [0, 1]], P.cond, Q.cond)
    outcomes = enumerate_outcomes(lambda c: TrtllmTree().run_chains(tree, c))
    paths: dict = {}
    for w, o in outcomes:
        key = tuple(t.node for t in o.trace.tests)
        paths[key] = paths.get(key, 0.0) + w
    assert paths[((0,), (0, 0))] == pytest.approx(1 / 2)                 # first copy, its child 0
    assert paths[((0,), (0,), (0, 1))] == pytest.approx(1 / 4)           # second copy, its child 1
    assert ((0,), (0, 1)) not in paths and ((0,), (0,), (0, 0)) not in paths
    firsts = {o.trace.tests[-1].node: o.trace.tests[-1].draft for _, o in outcomes if len(o.trace.tests) > 1}
    assert firsts[(0, 0)] == 0 and firsts[(0, 1)] == 1                   # the draft each copy follows


# -- SGLang ---------------------------------------------------------------------------------------------

def test_sglang_repeated_children_add_their_target_probability_twice():
    # b = (2), L = 1, defaults.  Draws (0, 0) (4/9): the coin c passes the first 0 iff c < 1/3 and the
    # second iff c < 2/3: τ = 1 with 2/3, else y ~ q without 0 = δ_1.  Every other pair passes (its
    # running sum reaches 1).  E[τ] = 4/9·2/3 + 5/9 = 23/27.  P(0) = 4/9·2/3 + 2/9·1/3 (0, 1) +
    # 2/9·1/3 (1, 0: the second child 0 takes c ≥ 2/3) = 4/9 against q(0) = 1/3: TV 1/9.
    tau, tv, r = law("sglang_tree", P, Q, (2,), "iid")
    assert (tau, tv) == (Fraction(23, 27), Fraction(1, 9))
    assert first_token(r, 2) == pytest.approx([4 / 9, 5 / 9], abs=1e-14)


@pytest.mark.parametrize("b", [(1, 1), (2, 1), (2, 2)])
def test_sglang_at_the_defaults_is_lossless_on_top_k_trees_and_is_eagles_rule(b):
    draft, target = random_pair("markov", 3, alpha=0.6, mix=0.5, seed=4)
    ours = exact_analysis("sglang_tree", draft, target, shape=Shape.tree(b), law="topk")
    eagle = exact_analysis("eagle", draft, target, shape=Shape.tree(b), law="topk")
    assert ours.is_lossless and ours.expected_accepted == pytest.approx(eagle.expected_accepted, abs=1e-14)
    keys = set(ours.output_law) | set(eagle.output_law)
    assert max(abs(ours.output_law.get(u, 0) - eagle.output_law.get(u, 0)) for u in keys) < 1e-14


def test_sglang_t_acc_below_one_accepts_more_than_q():
    # b = (1, 1) topk, t_acc = 1/2: each top-1 child (token 0, q = 1/3) passes iff c < 2/3:
    # E[τ] = 2/3 + 4/9 = 10/9.  Completed law (4/9, 2/9, 1/3 for 1·) against (1/9, 2/9, 2/3): TV 1/3.
    assert law(SglangTree(t_acc=0.5), P, Q, (1, 1), "topk")[:2] == (Fraction(10, 9), Fraction(1, 3))
    # t_single = 1/2 changes nothing there: q(0) = 1/3 stays below it
    assert law(SglangTree(t_single=0.5), P, Q, (1, 1), "topk")[:2] == (Fraction(4, 9), 0)
    # on b = (2, 1) the second child (token 1, q = 2/3 ≥ 1/2) passes whenever reached: still lossless
    assert law(SglangTree(t_single=0.5), P, Q, (2, 1), "topk")[:2] == (Fraction(4, 3), 0)


def test_sglang_one_coin_per_node_is_the_kernel_interval_by_interval():
    """One node, children listed (2, 0, 1, 0) with q = (1/6, 1/3, 1/2): with one uniform coin c the
    kernel accepts child i iff c falls in [min(1, S_(i−1)/t), min(1, S_i/t)), S the running sums of q
    (1/2, 2/3, 1, 7/6).  The walk's conditional coins must give exactly these interval lengths."""
    q = np.array([1 / 6, 1 / 3, 1 / 2])
    tree = TokenTree(Shape.tree((4,)), "iid", {(): (2, 0, 1, 0)}, {(): P3.cond(())}, {(): q, **{(x,): q for x in range(3)}})
    for t in (1.0, 0.8, 0.5):
        got = {}
        for w, o in enumerate_outcomes(lambda c: SglangTree(t_acc=t).run_tree(tree, c)):
            got[len(o.trace.tests)] = got.get(len(o.trace.tests), 0) + w * (o.tau == 1)
        edges = np.minimum(1.0, np.cumsum([0.5, 1 / 6, 1 / 3, 1 / 6]) / t)
        want = np.diff(np.concatenate([[0.0], edges]))
        assert [got.get(i + 1, 0.0) for i in range(4)] == pytest.approx(list(want), abs=1e-15)


@pytest.mark.parametrize("name, value", [("t_acc", 0), ("t_acc", 1.5), ("t_single", -0.1)])
def test_sglang_thresholds_outside_0_1_are_refused_in_one_sentence(name, value):
    with pytest.raises(ParamError, match=rf"^{name} must be in \(0, 1\], got {value:g}$"):
        make_verifier("sglang_tree", **{name: value})


# -- SGLang on ROCm ----------------------------------------------------------------------------------------

def test_rocm_greedy_emits_the_targets_greedy_path_whatever_the_drafts():
    # q's argmax is 1 at every node.  b = (2, 2) topk drafts 0 and 1 under every node: the walk
    # accepts 1, 1 and emits 1: the output is (1, 1, 1) for sure, TV = 1 − q(111) = 1 − 8/27.
    assert law("sglang_rocm_greedy", P, Q, (2, 2), "topk")[:2] == (Fraction(2), Fraction(19, 27))
    # b = (1, 1): the top-1 draft is 0 ≠ 1: nothing is accepted, y = 1, TV = 1 − q(1) = 1/3
    assert law("sglang_rocm_greedy", P, Q, (1, 1), "topk")[:2] == (Fraction(0), Fraction(1, 3))
    # sampled chains (the rejection-sampling drafts): every output is a prefix of 1, 1, 1
    r = exact_analysis("sglang_rocm_greedy", P, Q, 2, 2)
    assert set(r.output_law) <= {(1,), (1, 1), (1, 1, 1)}
    # at T = 0 the target is a point mass and the greedy rule is lossless
    cold = exact_analysis("sglang_rocm_greedy", P.with_temperature(0.0), Q.with_temperature(0.0),
                          shape=Shape.tree((1, 1)), law="topk")
    assert cold.is_lossless


# -- llama.cpp ------------------------------------------------------------------------------------------

def test_llamacpp_one_sequence_of_top_tokens_is_tested_as_a_sample():
    # b = (1, 1): one sequence, the top token 0 twice, each passing with 1/2: as TensorRT-LLM's (1/6).
    assert law("llamacpp_tree", P, Q, (1, 1), "topk")[:2] == (Fraction(3, 4), Fraction(1, 6))


def test_llamacpp_two_sequences_in_random_order():
    # b = (2, 1): sequences 0·0 and 1·0.  Depth 0, T = q: 1 passes for sure; 0 passes with 1/2 and
    # its rejection leaves T = δ_1, under which 1 passes: τ ≥ 1 always, the first token 0 with 1/2·1/2.
    # Depth 1 (both sequences still listed): whichever is picked offers 0 (1/2), and a rejection
    # leaves T = δ_1, under which the other 0 fails: τ = 2 with 1/2.  E[τ] = 3/2.  Two-token law
    # (1/8, 1/8, 3/8, 3/8) against (1/9, 2/9, 2/9, 4/9): TV 1/6.
    assert law("llamacpp_tree", P, Q, (2, 1), "topk")[:2] == (Fraction(3, 2), Fraction(1, 6))


def test_llamacpp_a_rejected_token_shared_by_two_sequences_updates_the_residual_twice():
    # p = (1/2, 1/4, 1/4), q = (1/6, 1/3, 1/2), b = (1, 2): both sequences start with the top token 0
    # (a = 1/3).  Its rejection leaves T = (q − p)₊ = (0, 1/4, 3/4); the other sequence, left in
    # active_seqs by erase(s), is picked, fails (T(0) = 0) and subtracts p again: T = δ_2.  So y = 2
    # whenever 0 fails (2/3), where a residual updated once would give (0, 1/4, 3/4).  After 0 passes
    # (1/3), T = q: picking 0·0 first passes 0 with 1/3, else 1 passes for sure; 0·1 first passes:
    # the second token is 0 with 1/6, 1 with 5/6.  E[τ] = 2/3.  TV: first token 2 has 2/3 (q: 1/2),
    # 1 has 0 (1/3), and under 0: (1/18, 5/18, 0) against (1/36, 1/18, 1/12): TV = (1/6 + 1/3 + 1/3)/2.
    tau, tv, r = law("llamacpp_tree", P3, Q3, (1, 2), "topk")
    assert (tau, tv) == (Fraction(2, 3), Fraction(5, 12))
    assert r.output_law[(2,)] == pytest.approx(2 / 3, abs=1e-15)


@pytest.mark.parametrize("kind, b", [("markov", (2, 2)), ("table", (2, 1, 2)), ("markov", (3, 1))])
def test_llamacpp_merged_states_give_the_coin_by_coin_law(kind, b):
    draft, target = random_pair(kind, 3, alpha=0.6, mix=0.5, seed=7, depth=3)
    a = exact_analysis("llamacpp_tree", draft, target, shape=Shape.tree(b), law="topk")
    e = exact_analysis("llamacpp_tree", draft, target, shape=Shape.tree(b), law="topk", recursion=False)
    keys = set(a.output_law) | set(e.output_law)
    assert max(abs(a.output_law.get(u, 0) - e.output_law.get(u, 0)) for u in keys) < 1e-13


def test_llamacpp_sequences_of_other_branches_stay_listed_after_an_acceptance():
    """Markov models, b = (2, 1): after 0 is accepted from sequence 0·x, sequence 1·y is still picked at
    depth 1 and tested with p(·|1): an output 0·y can come from it, with p and q of different prefixes."""
    draft, target = random_pair("markov", 2, alpha=0.6, mix=0.5, seed=3)
    tree = TokenTree.from_models(__import__("core.rules.llamacpp_tree", fromlist=["_topk_draws"])._topk_draws(
        draft.cond, Shape.tree((2, 1))), draft.cond, target.cond, Shape.tree((2, 1)), "topk")
    seqs = tree.leaves()
    crossed = [o for _, o in enumerate_outcomes(lambda c: LlamacppTree().run_tree(tree, c))
               if o.tau >= 1 and o.draft >= 0 and seqs[o.draft][0] != o.accepted[0]]
    assert crossed


# -- FlashInfer -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 5])
def test_flashinfer_is_sd_coin_by_coin_and_lossless(seed):
    draft, target = random_pair("table", 3, alpha=0.5, mix=0.5, seed=seed, depth=2)
    for _, tree in enumerate_trees(draft, target, Shape.chains_of(2, 2), "iid"):
        ours = enumerate_outcomes(lambda c: FlashinferChain().run_chains(tree, c))
        sd = enumerate_outcomes(lambda c: REGISTRY["sd"]().run_chains(tree, c))
        assert [(w, o.accepted, [(t.node, t.prob, t.passed) for t in o.trace.tests]) for w, o in ours] == \
            [(w, o.accepted, [(t.node, t.prob, t.passed) for t in o.trace.tests]) for w, o in sd]
        assert all(np.allclose(a.residual, b.residual, atol=1e-15) for (_, a), (_, b) in zip(ours, sd))
    r = exact_analysis("flashinfer_chain", draft, target, 2, 2)
    assert r.is_lossless
    assert r.expected_accepted == pytest.approx(exact_analysis("sd", draft, target, 1, 2).expected_accepted, abs=1e-14)
    # binary toy: α = Σ min(p, q) = 2/3, E[τ] = α + α² = 10/9
    assert frac(exact_analysis("flashinfer_chain", P, Q, 1, 2).expected_accepted) == Fraction(10, 9)


# -- the drafts each runs on ------------------------------------------------------------------------------

@pytest.mark.parametrize("name, shape, law_name, words", [
    ("trtllm_tree", Shape.tree((2, 2)), "greedy",
     "trtllm_tree runs on chains and static trees drafted by iid or wor, and static trees drafted by topk only, "
     "not on b = (2, 2) drafted by greedy"),
    ("sglang_tree", Shape.tree((2,)), "wor",
     "sglang_tree runs on chains and static trees drafted by iid, and static trees drafted by topk only, "
     "not on b = (2) drafted by wor"),
    ("llamacpp_tree", Shape.chains_of(2, 2), "iid",
     "llamacpp_tree runs on static trees drafted by topk only, not on chains 2×2 drafted by iid"),
    ("sglang_rocm_greedy", Shape.tree((2, 2)), "iid",
     "sglang_rocm_greedy runs on K i.i.d. chains, and static trees drafted by topk only, not on "
     "b = (2, 2) drafted by iid"),
])
def test_a_rule_on_drafts_its_engine_never_makes_is_refused_naming_those_it_runs_on(name, shape, law_name, words):
    with pytest.raises(VerifierError) as err:
        require(REGISTRY[name], shape, law_name)
    assert str(err.value) == words
    with pytest.raises(VerifierError, match="runs on"):
        exact_analysis(name, P, Q, shape=shape, law=law_name)
    with pytest.raises(DecodingError, match="^" + name + " runs on"):
        check_plan(name, StaticPlan(shape, law_name))


def test_the_engines_rules_are_offered_where_they_run():
    assert [m for m in ENGINES if m in chains_rules()] == ["trtllm_tree", "sglang_tree", "sglang_rocm_greedy",
                                                            "flashinfer_chain"]
    topk = Shape.tree((2, 2))
    assert [m for m in ENGINES if REGISTRY[m].supports(topk, "topk")] == list(ENGINES[:4])
    assert not REGISTRY["flashinfer_chain"].supports(topk, "topk")      # one chain: K i.i.d. chains only
    assert all(REGISTRY[m].released_port and REGISTRY[m].source for m in ENGINES)
    check_plan("llamacpp_tree", StaticPlan(topk, "topk"))               # no refusal
