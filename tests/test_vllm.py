"""vLLM's released rules (core/rules/vllm_onehot.py, vllm_block.py, vllm_shared_gumbel.py): values
derived by hand on the toys, the lossless ones against the rules they coincide with coin by coin (or
law by law where their coins differ), the model-level laws against plain enumeration, and the
refusals of drafts and parameters their engine does not take."""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from toy_models import PRESETS, IIDModel, random_pair

from core.analysis.exact import exact_analysis
from core.data.laws import TOPK_LAW
from core.data.shapes import Shape
from core.data.token_tree import TokenTree
from core.rules.base import VerifierError
from core.rules.one_chain import chain_of
from core.rules.params import ParamError
from core.rules.plugins import SENTENCE_BREAK
from core.rules.registry import make_verifier
from core.rules.vllm_block import VllmBlock
from core.rules.vllm_onehot import VllmOneHot
from core.rules.vllm_shared_gumbel import VllmSharedGumbel

TOY = PRESETS["binary-toy"]                       # p = (2/3, 1/3), q = (1/3, 2/3)
P, Q = TOY.draft, TOY.target
ARGMAX = dict(shape=Shape.tree((1, 1)), law=TOPK_LAW)


def frac(x: float) -> Fraction:
    return Fraction(x).limit_denominator(100000)


def first_token(law: dict) -> list[float]:
    """The law of the first emitted token from an output law {s·y: mass}."""
    V = 1 + max(u[0] for u in law)
    return [sum(v for u, v in law.items() if u[0] == t) for t in range(V)]


def block_of(x, draft=P, target=Q):
    return TokenTree.chains_from_models([x], draft.cond, target.cond)


def test_the_chain_of_k_chains_and_of_an_argmax_tree():
    block = TokenTree.chains_from_models([(1, 0), (0, 0)], P.cond, Q.cond)
    assert chain_of(block).tokens == (1, 0)                              # draft 1 of K
    from core.data.drafting import enumerate_trees
    [(weight, tree)] = enumerate_trees(P, Q, **ARGMAX)                   # the argmax chain: one tree
    chain = chain_of(tree)
    assert weight == 1.0 and chain.tokens == (0, 0) and len(chain.q) == 3


# -- vllm_onehot ---------------------------------------------------------------------------------

@pytest.mark.parametrize("K", [1, 2])
def test_onehot_on_the_binary_toy(K):
    # x passes with q(x): Σ_x p(x)q(x) = 2/9 + 2/9 = 4/9 per token, E[τ] = 4/9 + 16/81 = 52/81; lossless.
    r = exact_analysis("vllm_onehot", P, Q, K, 2)
    assert frac(r.expected_accepted) == Fraction(52, 81) and r.fidelity_tv < 1e-15


def test_onehot_on_the_argmax_chain():
    # The drafter's argmax is token 0 twice: P(τ ≥ 1) = q(0) = 1/3, P(τ ≥ 2) = 1/9: E[τ] = 4/9, still lossless.
    r = exact_analysis("vllm_onehot", P, Q, **ARGMAX)
    assert frac(r.expected_accepted) == Fraction(4, 9) and r.fidelity_tv < 1e-15


@pytest.mark.parametrize("seed", range(4))
def test_onehot_is_exact_match_coin_by_coin(seed):
    """Both accept x with q(x) and draw the correction from q without x, through the same coins."""
    draft, target = random_pair("markov", V=3, alpha=0.5, mix=0.6, seed=seed)
    for x in itertools.product(range(3), repeat=2):
        block = block_of(x, draft, target)
        for s in range(5):
            a, b = VllmOneHot().verify(block, s), make_verifier("exact_match").verify(block, s)
            assert (a.accepted, a.extra) == (b.accepted, b.extra)
        assert VllmOneHot().law(block) == pytest.approx(make_verifier("exact_match").law(block), abs=1e-15)


@pytest.mark.parametrize("family, V, L", [("iid", 3, 3), ("markov", 3, 2), ("table", 2, 3)])
def test_onehot_model_law_is_the_enumeration(family, V, L):
    draft, target = random_pair(family, V=V, alpha=0.5, mix=0.6, seed=7)
    fast, slow = (exact_analysis("vllm_onehot", draft, target, 1, L, recursion=r) for r in (True, False))
    assert fast.tau_pmf == pytest.approx(slow.tau_pmf, abs=1e-13)
    assert fast.fidelity_tv < 1e-13 and slow.fidelity_tv < 1e-13


def test_onehot_is_refused_on_a_tree_in_one_sentence():
    with pytest.raises(VerifierError) as err:
        make_verifier("vllm_onehot", P, Q, shape=Shape.tree((1, 2)), law="iid")
    text = str(err.value)
    assert text.startswith("vllm_onehot runs on K i.i.d. chains, and one chain drafted by iid or wor or topk or "
                           "greedy only") and "\n" not in text
    assert not SENTENCE_BREAK.search(text)
    assert "not on b = (1, 2) drafted by iid" in text


# -- vllm_block ----------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(3))
def test_block_with_the_drafters_probabilities_is_bv_coin_by_coin(seed):
    draft, target = random_pair("markov", V=3, alpha=0.5, mix=0.6, seed=seed)
    bv = make_verifier("bv")
    for x in itertools.product(range(3), repeat=3):
        block = block_of(x, draft, target)
        for s in range(4):
            a, b = VllmBlock().verify(block, s), bv.verify(block, s)
            assert (a.accepted, a.extra) == (b.accepted, b.extra)
        assert VllmBlock().law(block) == pytest.approx(bv.law(block), abs=1e-15)
    assert frac(exact_analysis("vllm_block", P, Q, 1, 2).expected_accepted) == Fraction(11, 9)


def test_one_hot_block_verification_by_hand():
    # Path (0, 1) on the binary toy, p one-hot: w_1 = q(0) = 1/3, w_2 = 1/3·2/3 = 2/9.  A_1 = w_1·(1 − q(1)) =
    # 1/9, h_1 = (1/9)/(1/9 + 2/3) = 1/7, h_2 = w_2 = 2/9.  P(τ = 2) = 2/9, P(τ = 1) = (1/7)(7/9) = 1/9,
    # P(τ = 0) = 2/3: w_i − w_(i+1), the one-hot token rule's law.
    law = VllmBlock("onehot").law(block_of((0, 1)))
    tau = [sum(v for (s, _), v in law.items() if len(s) == i) for i in range(3)]
    assert tau == pytest.approx([2 / 3, 1 / 9, 2 / 9], abs=1e-15)
    # at τ = 1 the correction is q(·|x_1) without x_2 = 1: token 0 alone
    assert law[((0,), 0)] == pytest.approx(1 / 9, abs=1e-15)


@pytest.mark.parametrize("family, V, L", [("iid", 2, 3), ("markov", 3, 3), ("table", 3, 2)])
def test_one_hot_block_verification_is_the_one_hot_token_rule_law_by_law(family, V, L):
    """PR 40819's claim in the laws: given any chain, one-hot BV's law of (τ, y) is the one-hot rule's."""
    draft, target = random_pair(family, V=V, alpha=0.5, mix=0.6, seed=3)
    for x in itertools.product(range(V), repeat=L):
        block = block_of(x, draft, target)
        assert VllmBlock("onehot").law(block) == pytest.approx(VllmOneHot().law(block), abs=1e-14)
    a, b = (exact_analysis(v, draft, target, 1, L) for v in (VllmBlock("onehot"), VllmOneHot()))
    assert a.tau_pmf == pytest.approx(b.tau_pmf, abs=1e-14)


def test_block_model_laws_are_the_enumeration():
    draft, target = random_pair("markov", V=3, alpha=0.5, mix=0.6, seed=2)
    for drafts in ("probabilistic", "onehot"):
        fast, slow = (exact_analysis(VllmBlock(drafts), draft, target, 1, 3, recursion=r) for r in (True, False))
        assert fast.tau_pmf == pytest.approx(slow.tau_pmf, abs=1e-13) and fast.fidelity_tv < 1e-13


def test_block_runs_one_hot_on_the_argmax_chain_and_refuses_it_with_probabilities():
    assert frac(exact_analysis(VllmBlock("onehot"), P, Q, **ARGMAX).expected_accepted) == Fraction(4, 9)
    with pytest.raises(VerifierError, match=r"^vllm_block with drafts=probabilistic runs on one chain sampled from p "
                                            r"only, not on b = \(1, 1\) drafted by topk; use drafts=onehot$"):
        exact_analysis(VllmBlock(), P, Q, **ARGMAX)
    with pytest.raises(ParamError, match="drafts must be one of probabilistic, onehot, got 'x'"):
        make_verifier("vllm_block", drafts="x")


# -- vllm_shared_gumbel --------------------------------------------------------------------------

def test_shared_noise_smallest_counterexample_by_hand():
    # p = (1/2, 1/4, 1/4), q = (1/6, 1/3, 1/2), L = 1.  Only x = 0 is rejected (q/p = 1/3): mass 1/2·2/3 = 1/3,
    # residual (0, 1/12, 1/4) ∝ (0, 1/4, 3/4); with the draft's noise the replacement is (0, 1/6, 5/6)
    # (tests/test_gumbel.py).  Output: 1/6, 1/4 + 1/18 = 11/36, 1/4 + 5/18 = 19/36 against q = (6, 12, 18)/36:
    # TV 1/36; E[τ] = 1 − 1/3 = 2/3, SD's.
    draft, target = IIDModel([1 / 2, 1 / 4, 1 / 4]), IIDModel([1 / 6, 1 / 3, 1 / 2])
    for rejection in ("standard", "block"):                # at L = 1 block verification is SD
        r = exact_analysis(VllmSharedGumbel(rejection), draft, target, 1, 1)
        assert frac(r.fidelity_tv) == Fraction(1, 36) and frac(r.expected_accepted) == Fraction(2, 3)
        assert first_token(r.output_law) == pytest.approx([1 / 6, 11 / 36, 19 / 36], abs=1e-15)


def test_shared_noise_is_lossless_with_two_tokens():
    """With V = 2 the residual is one token: nothing is left for the shared noise to couple."""
    for rejection in ("standard", "block"):
        assert exact_analysis(VllmSharedGumbel(rejection), P, Q, 1, 3).fidelity_tv < 1e-15


def test_shared_noise_keeps_the_acceptance_of_its_rule():
    """The noise draws the replacement only: τ's law is SD's (standard) or BV's (block)."""
    draft, target = random_pair("table", V=3, alpha=0.5, mix=0.6, seed=5)
    for rejection, rule in (("standard", "sd"), ("block", "bv")):
        mine, theirs = exact_analysis(VllmSharedGumbel(rejection), draft, target, 1, 3), \
            exact_analysis(rule, draft, target, 1, 3)
        assert mine.tau_pmf == pytest.approx(theirs.tau_pmf, abs=1e-13)
        assert mine.fidelity_tv > 1e-4 and theirs.fidelity_tv < 1e-13


@pytest.mark.parametrize("rejection", ["standard", "block"])
def test_shared_noise_model_law_is_the_enumeration(rejection):
    draft, target = random_pair("markov", V=3, alpha=0.5, mix=0.6, seed=4)
    fast, slow = (exact_analysis(VllmSharedGumbel(rejection), draft, target, 1, 3, recursion=r) for r in (True, False))
    assert fast.fidelity_tv == pytest.approx(slow.fidelity_tv, abs=1e-13)
    assert all(fast.output_law[u] == pytest.approx(v, abs=1e-14) for u, v in slow.output_law.items())


def test_shared_noise_against_the_engine_sampled_with_seeded_noise():
    """The engine's mechanism itself, on the counterexample: x = argmax(log p + G), accepted when u < q/p,
    else y = argmax(log (q − p)₊ + G) with the same G.  Its output frequencies lie within 5 standard errors
    of the exact law, and away from q."""
    p, q = np.array([1 / 2, 1 / 4, 1 / 4]), np.array([1 / 6, 1 / 3, 1 / 2])
    rng = np.random.default_rng(2)
    n = 400_000
    G = rng.gumbel(size=(n, 3))
    u = rng.random(n)
    x = np.argmax(np.log(p) + G, axis=1)
    with np.errstate(divide="ignore"):
        y = np.argmax(np.log(np.maximum(q - p, 0.0)) + G, axis=1)
    out = np.where(u < np.minimum(1.0, q[x] / p[x]), x, y)
    freq = np.bincount(out, minlength=3) / n
    exact = exact_analysis("vllm_shared_gumbel", IIDModel(p), IIDModel(q), 1, 1).output_law
    assert freq == pytest.approx(first_token(exact), abs=5 * math.sqrt(0.25 / n))
    assert abs(freq[1] - q[1]) > 10 * math.sqrt(0.25 / n)


def test_shared_noise_runs_on_sampled_chains_only():
    with pytest.raises(VerifierError, match=r"^vllm_shared_gumbel runs on K i.i.d. chains only, not on b = \(1, 1\)"):
        make_verifier("vllm_shared_gumbel", P, Q, **ARGMAX)
    with pytest.raises(ParamError, match="rejection must be one of standard, block"):
        make_verifier("vllm_shared_gumbel", rejection="strict")
