"""vllm-ascend's former block verify (core/rules/vllm_ascend_block.py) and its claims
(core/claims/vllm_ascend.py): the law of τ through the uniforms' Poisson process against closed forms
derived by hand and against the engine's products of uniforms sampled with seeded coins; E[τ] on the
binary toy by hand (logarithms enter: no fraction); the claims' verdicts."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from toy_models import PRESETS, IIDModel, random_pair

from core.analysis.exact import exact_analysis
from core.claims.base import FAILS, HOLDS, decide
from core.claims.court import search
from core.claims.registry import get_claim
from core.claims import vllm_ascend
from core.data.token_tree import TokenTree
from core.rules.one_chain import chain_of
from core.rules.params import ParamError
from core.rules.registry import make_verifier
from core.rules.vllm_ascend_block import VllmAscendBlock, tau_law, weights

TOY = PRESETS["binary-toy"]                       # p = (2/3, 1/3), q = (1/3, 2/3): q/p = 1/2 for 0, 2 for 1
P, Q = TOY.draft, TOY.target
LN2 = math.log(2.0)


def two_positions(w1: float, w2: float) -> list[float]:
    """P(τ = 0, 1, 2) for two positions by hand: legal_2 iff N(c_2) ≤ 1, so P(τ = 2) = w_2(1 − ln w_2);
    τ = 1 needs N(c_1) = 0 and N(c_2) ≥ 2, which for c_1 ≤ c_2 is w_1·P(Poisson(ln(w_1/w_2)) ≥ 2) =
    w_1 − w_2(1 + ln(w_1/w_2)), and 0 for c_1 > c_2 (N(c_1) ≥ N(c_2))."""
    two = w2 * (1 - math.log(w2))
    one = w1 - w2 * (1 + math.log(w1 / w2)) if w1 >= w2 else 0.0
    return [1 - one - two, one, two]


@pytest.mark.parametrize("w1, w2", [(0.5, 0.25), (1.0, 0.5), (0.5, 1.0), (0.3, 0.3), (1.0, 1.0), (0.7, 0.05)])
def test_tau_law_of_two_positions_by_hand(w1, w2):
    assert tau_law([w1, w2]) == pytest.approx(two_positions(w1, w2), abs=1e-15)


def test_one_position_is_speculative_sampling():
    # legal_1 iff u_1 ≤ w_1 = min(1, q/p): SD's test, and the residual is SD's: lossless at L = 1
    assert tau_law([0.4]) == pytest.approx([0.6, 0.4], abs=1e-15)
    for variant in ("triton", "pytorch"):
        r = exact_analysis(VllmAscendBlock(variant), P, Q, 1, 1)
        assert r.fidelity_tv < 1e-15 and r.expected_accepted == pytest.approx(2 / 3, abs=1e-15)


@pytest.mark.parametrize("seed", range(3))
def test_tau_law_against_the_engines_products_of_uniforms(seed):
    """The engine's test itself, legal_k iff w_k ≥ u_1⋯u_k, τ the last legal k, sampled with seeded
    uniforms: within 5 standard errors of the exact law, for weights that rise and fall (Triton's)."""
    rng = np.random.default_rng(seed)
    w = list(rng.uniform(0.05, 1.0, size=4))
    n = 200_000
    prods = np.cumprod(rng.random((n, 4)), axis=1)
    legal = prods <= np.array(w)
    tau = np.where(legal.any(axis=1), 4 - np.argmax(legal[:, ::-1], axis=1), 0)
    freq = np.bincount(tau, minlength=5) / n
    assert freq == pytest.approx(tau_law(w), abs=5 * math.sqrt(0.25 / n))


def test_the_two_variants_weights_by_hand():
    # Path (0, 1): Triton's w_2 = min(1, (1/2)·2) = 1, PyTorch's (1/2)·min(1, 2) = 1/2.
    chain = chain_of(TokenTree.chains_from_models([(0, 1)], P.cond, Q.cond))
    assert weights(chain, "triton") == pytest.approx([0.5, 1.0]) and weights(chain, "pytorch") == pytest.approx([0.5, 0.5])


def test_expected_tau_on_the_binary_toy_by_hand():
    """Triton: paths (0,0) w = (1/2, 1/4), (0,1) w = (1/2, 1), (1,0) w = (1, 1/2), (1,1) w = (1, 1), with
    p(x) = 4/9, 2/9, 2/9, 1/9; E[τ | x] = P1 + 2·P2 (``two_positions``): (3/4)(1 + ln 2), 2, 3/2 + (ln 2)/2,
    2, so E[τ] = 4/3 + (4/9) ln 2.  PyTorch: (0,1) has w = (1/2, 1/2), E[τ | x] = 1 + ln 2, so E[τ] =
    10/9 + (2/3) ln 2."""
    triton = exact_analysis("vllm_ascend_block", P, Q, 1, 2)
    pytorch = exact_analysis(VllmAscendBlock("pytorch"), P, Q, 1, 2)
    assert triton.expected_accepted == pytest.approx(4 / 3 + 4 / 9 * LN2, abs=1e-14)
    assert pytorch.expected_accepted == pytest.approx(10 / 9 + 2 / 3 * LN2, abs=1e-14)
    # its TV, from the same hand law: the residual at the root and after x_1 is token 1 (q − p at token 1)
    law = {}
    paths = {(0, 0): (4 / 9, (0.5, 0.25)), (0, 1): (2 / 9, (0.5, 1.0)), (1, 0): (2 / 9, (1.0, 0.5)), (1, 1): (1 / 9, (1.0, 1.0))}
    for x, (weight, w) in paths.items():
        t0, t1, t2 = two_positions(*w)
        law[(1,)] = law.get((1,), 0.0) + weight * t0
        law[(x[0], 1)] = law.get((x[0], 1), 0.0) + weight * t1
        for y, qy in enumerate((1 / 3, 2 / 3)):
            law[x + (y,)] = law.get(x + (y,), 0.0) + weight * t2 * qy
    completed = {z: 0.0 for z in itertools.product(range(2), repeat=3)}
    for u, m in law.items():
        for rest in itertools.product(range(2), repeat=3 - len(u)):
            completed[u + rest] += m * math.prod((1 / 3, 2 / 3)[t] for t in rest)
    tv = 0.5 * sum(abs(v - math.prod((1 / 3, 2 / 3)[t] for t in z)) for z, v in completed.items())
    assert triton.fidelity_tv == pytest.approx(tv, abs=1e-14) and tv > 0.2


@pytest.mark.parametrize("variant", ["triton", "pytorch"])
def test_the_coin_programme_and_the_model_law_agree(variant):
    draft, target = random_pair("markov", V=3, alpha=0.5, mix=0.6, seed=1)
    fast, slow = (exact_analysis(VllmAscendBlock(variant), draft, target, 1, 3, recursion=r) for r in (True, False))
    assert fast.tau_pmf == pytest.approx(slow.tau_pmf, abs=1e-13)
    assert fast.fidelity_tv == pytest.approx(slow.fidelity_tv, abs=1e-13)


def test_an_empty_residual_is_never_drawn():
    """(q − p)₊ has no mass only where p = q; there the drafted token's ratio is 1, w_(k+1) = w_k, and
    legal_k implies legal_(k+1): position k + 1 is never the first illegal one after τ = k."""
    from toy_models import TableModel
    draft = TableModel({(): [0.8, 0.2], (0,): [0.5, 0.5], (1,): [0.5, 0.5]})
    target = TableModel({(): [0.2, 0.8], (0,): [0.5, 0.5], (1,): [0.5, 0.5]})
    for variant in ("triton", "pytorch"):
        for x in itertools.product(range(2), repeat=2):
            law = VllmAscendBlock(variant).law(TokenTree.chains_from_models([x], draft.cond, target.cond))
            assert all(len(s) != 1 for s, _ in law), (variant, x)          # never τ = 1, below p = q


def test_parameters_and_drafts_are_refused_in_one_sentence():
    with pytest.raises(ParamError, match="variant must be one of triton, pytorch, got 'cuda'"):
        make_verifier("vllm_ascend_block", variant="cuda")
    from core.data.shapes import Shape
    with pytest.raises(Exception, match=r"^vllm_ascend_block runs on K i.i.d. chains only, not on b = \(1, 1\) drafted by topk$"):
        make_verifier("vllm_ascend_block", P, Q, shape=Shape.tree((1, 1)), law="topk")


# -- claims --------------------------------------------------------------------------------------

def test_the_smallest_counterexample_is_the_searchs():
    found = search("vllm_ascend_block", {}, 30)
    assert found["found"] and (found["V"], found["K"], found["L"]) == (2, 1, 2)
    assert found["draft"] == {"kind": "iid", "probs": ["1/3", "2/3"]} and found["target"] == {"kind": "iid", "probs": ["1/4", "3/4"]}
    inst = get_claim("vllm-ascend/lossless-smallest").instance
    assert (inst.draft, inst.target) == (vllm_ascend.COUNTEREXAMPLE["draft"], vllm_ascend.COUNTEREXAMPLE["target"])
    v = decide(get_claim("vllm-ascend/lossless-smallest"))
    assert v.status == FAILS and v.numbers["vllm_ascend_block_tv"] == pytest.approx(found["fidelity_tv"], abs=1e-14)


def test_the_claims_verdicts():
    lossless = decide(get_claim("vllm-ascend/lossless"))
    more = decide(get_claim("vllm-ascend/accepts-more"))
    repair = decide(get_claim("vllm-ascend/repair"))
    best = decide(get_claim("vllm-ascend/best-trade"))
    assert lossless.status == FAILS and lossless.numbers["vllm_ascend_block_tv"] > 0.3
    # BV at L = 3 on the binary toy: 5/3, the LP optimum of one chain; the block verify accepts more, lossy
    assert more.status == HOLDS and more.words == "holds here, the gain bought with loss"
    assert more.numbers["bv_expected_accepted"] == pytest.approx(5 / 3, abs=1e-12)
    assert more.numbers["vllm_ascend_block_expected_accepted"] > more.numbers["lp_optimum"] + 0.9
    assert repair.status == HOLDS and repair.numbers["bv_tv"] < 1e-15
    # The frontier at its own TV ε is higher still.  Mixing BV (E[τ] 5/3, TV 0) with accepting every drafted
    # token (E[τ] 3, TV 1 − Σ_z min(p(z), q(z)) = 1 − 14/27 = 13/27 over the 8 blocks) in the proportion
    # λ = ε/(13/27) keeps TV ≤ ε and accepts 5/3 + λ·4/3, above the block verify's E[τ].
    tv, mine = best.numbers["vllm_ascend_block_tv"], best.numbers["vllm_ascend_block_expected_accepted"]
    mixture = 5 / 3 + tv / (13 / 27) * 4 / 3
    assert best.status == FAILS and best.numbers["frontier"] >= mixture - 1e-9 and mixture > mine + 0.02
