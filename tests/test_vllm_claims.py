"""vLLM's claims (core/claims/vllm_verification.py): each verdict with the numbers it rests on, derived
by hand on the binary toy or checked by a second computation; the shared noise's counterexample is the
court's search's; the claims of the three engines' sources belong to the group "engines"."""
from __future__ import annotations

import pytest

from core.claims import vllm_verification as vllm
from core.claims.base import FAILS, HOLDS, decide
from core.claims.court import search
from core.claims.registry import SOURCES, claims_of, get_claim


def verdict(key: str):
    return decide(get_claim(f"vllm/{key}"))


def test_the_engines_sources_are_in_their_group():
    for source in ("vllm", "vllm-ascend", "transformers-ensemble"):
        assert SOURCES[source].group == "engines" and claims_of(source)


def test_one_hot_is_lossless_whatever_the_drafter():
    # sampled: Σ p·q = 4/9 per token, 52/81; argmax (token 0 twice): q(0) + q(0)² = 1/3 + 1/9 = 4/9
    sampled, argmax = verdict("onehot-lossless"), verdict("onehot-lossless-argmax")
    assert sampled.status == argmax.status == HOLDS
    assert sampled.numbers["vllm_onehot_expected_accepted"] == pytest.approx(52 / 81, abs=1e-15)
    assert argmax.numbers["vllm_onehot_expected_accepted"] == pytest.approx(4 / 9, abs=1e-15)
    assert argmax.instance.draft == {"kind": "iid", "probs": [1.0, 0.0]}


def test_what_one_hot_costs():
    # SD: 2/3 + 4/9 = 10/9, and so rrs on one chain (one round per node); traversal on one chain is BV, whose
    # 11/9 (Sun et al.'s example) is the LP optimum of one chain
    v = verdict("onehot-costs-acceptance")
    assert v.status == HOLDS
    assert v.numbers["sd_expected_accepted"] == v.numbers["rrs_expected_accepted"] == pytest.approx(10 / 9, abs=1e-15)
    assert v.numbers["traversal_expected_accepted"] == pytest.approx(11 / 9, abs=1e-15)
    assert v.numbers["lp_optimum"] == pytest.approx(11 / 9, abs=1e-9)


def test_mrv2_block_verification_is_bv_and_pr_40819s_gate_is_wrong_at_gamma_2():
    bv = verdict("block-is-bv")
    assert bv.status == HOLDS and bv.numbers["law_tv"] < 1e-15
    gate = verdict("block-same-below-three")
    # γ = 2: BV 11/9 against SD 10/9.  Their laws of O = s·y differ in two places only.  SD keeps x_1 = 0 with
    # 1/2 and rejects x_2 = 0 with 1/2, emitting (0, 1) with (4/9)(1/2)(1/2) = 1/9; BV never stops at x_1 = 0
    # (w_1 = 1/2 leaves (q/2 − p)₊ = 0, so h_1 = 0).  BV accepts the block (0, 1) with w_2 = min(1, (1/2)·2) = 1,
    # mass 2/9, SD with (1/2)·1 = 1/2, mass 1/9.  Every other output has the same mass: TV = (1/9 + 1/9)/2 = 1/9.
    assert gate.status == FAILS
    assert (gate.numbers["vllm_block_expected_accepted"], gate.numbers["sd_expected_accepted"]) == \
        pytest.approx((11 / 9, 10 / 9), abs=1e-14)
    assert gate.numbers["law_tv"] == pytest.approx(1 / 9, abs=1e-14)


def test_pr_40819s_one_hot_claim_fails_everywhere():
    """One-hot block verification's law is the one-hot token rule's (core/rules/vllm_block.py), so it
    never accepts fewer tokens: the verdicts hold on 0 instances, their laws 0 apart."""
    one = verdict("onehot-block-accepts-less")
    assert one.status == FAILS and one.numbers["law_tv"] < 1e-14
    assert one.instance.params == vllm.ONEHOT_BLOCK
    for key in ("onehot-block-accepts-less-family", "onehot-block-accepts-less-argmax-family"):
        fam = verdict(key)
        assert fam.held == (0, 36) and fam.numbers["worst"]["law_tv"] < 1e-14


def test_the_shared_noise_counterexample_is_the_searchs_and_the_repair_keeps_acceptance():
    found = search("vllm_shared_gumbel", {}, 30)
    assert found["found"] and (found["V"], found["K"], found["L"]) == (3, 1, 1)
    assert found["draft"]["probs"] == ["1/2", "1/4", "1/4"] and found["target"]["probs"] == ["1/6", "1/3", "1/2"]
    assert found["fidelity_tv_fraction"] == "1/36"                # by hand: tests/test_vllm.py
    v = verdict("shared-noise-lossless")
    assert v.status == FAILS and v.numbers["vllm_shared_gumbel_tv"] == pytest.approx(1 / 36, abs=1e-15)
    repair = verdict("shared-noise-repair")
    assert repair.status == HOLDS and repair.numbers["sd_expected_accepted"] == pytest.approx(2 / 3, abs=1e-15)


def test_the_shared_noise_families_fail_but_never_with_two_tokens():
    for key in ("shared-noise-lossless-family", "shared-noise-block-lossless-family"):
        fam = verdict(key)
        n, m = fam.held
        assert fam.status == FAILS and 18 <= n < m == 54            # the 18 instances with V = 2 hold
        assert fam.numbers["worst"]["V"] == 3


def test_one_hot_is_rrs_on_the_argmax_chain():
    """On the top-k chain rrs's S is the point mass at the drafted child: it too passes it with q(c) and
    corrects from q without c, so the two laws agree given every drafted tree."""
    from toy_models import random_pair
    from core.data.drafting import enumerate_trees
    from core.data.laws import TOPK_LAW
    from core.data.shapes import Shape
    from core.rules.registry import get_verifier
    draft, target = random_pair("table", V=3, alpha=0.5, mix=0.6, seed=1)
    for _, tree in enumerate_trees(draft, target, Shape.tree((1, 1, 1)), TOPK_LAW):
        assert get_verifier("vllm_onehot").law(tree) == pytest.approx(get_verifier("rrs").law(tree), abs=1e-15)


def test_one_hot_costs_nothing_on_the_argmax_chain():
    # A deterministic draft c at each node is a point mass: no lossless rule passes it with more than
    # Σ_x min(δ_c(x), q(x)) = q(c), one-hot's own probability.  Binary toy: q(0) + q(0)² = 4/9 = the LP.
    v = verdict("onehot-free-on-argmax")
    assert v.status == HOLDS and v.instance.page == "trees" and v.instance.law == "topk"
    assert v.numbers["vllm_onehot_expected_accepted"] == pytest.approx(4 / 9, abs=1e-15)
    assert v.numbers["lp_optimum"] == pytest.approx(4 / 9, abs=1e-9)
    assert verdict("onehot-free-on-argmax-family").held == (36, 36)
