"""The claims about three released verifiers (``core.claims.hierarchical_speculative``,
``eagle_verification``, ``exact_match_acceptance``): each claim's verdict and numbers on its fixed
instance, every expected fraction derived by hand here or in the rule's own test (cited), the family
verdicts' worst instances recomputed apart, and two instances opened where the user sees them."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from core.analysis.exact import exact_analysis
from core.claims.base import FAILS, HOLDS
from core.rules.eagle import Eagle
from tests.test_claims_registry import P, Q, exact, verdict
from toy_models import from_json


# --- Hierarchical speculative decoding, binary toy p = (2/3, 1/3), q = (1/3, 2/3), L = 2 -------------

def test_hsd_is_not_lossless_at_k1_either_variant():
    # tests/test_hsd.py::test_binary_toy_K1_L2_is_lossy_and_beats_bv derives E[τ] = 4/3 and TV = 1/9
    # for both variants (they agree at L ≤ 2).  Nothing is over-emitted at K = 1 (F ≥ 0).
    v = verdict("hsd/lossless")
    assert v.status == FAILS
    assert v.numbers["hsd_tv"] == exact(Fraction(1, 9)) and v.numbers["algorithm_clean_tv"] == exact(Fraction(1, 9))
    assert v.numbers["hsd_expected_accepted"] == exact(Fraction(4, 3)) and v.numbers["repairable"]
    assert v.instance.query()["methods"] == "hsd,bv,sd" and v.instance.query()["K"] == "1"


def test_hsd_is_not_lossless_at_k2():
    # tests/test_hsd.py::test_binary_toy_K2_L2_multi_draft: E[τ] = 14/9, TV = 4/27; (1, 0) is emitted
    # with 10/27 against q's 6/27 in its first two tokens, so F(1, 0) = 6/27 − 8/27 = −2/27 after the
    # full blocks (test_hsd::test_claim_numbers_and_repair): no later iteration can repair it.
    # algorithm_clean verifies draft 0 alone: its K = 1 numbers, TV 1/9.
    v = verdict("hsd/lossless-k2")
    assert v.status == FAILS
    assert v.numbers["hsd_tv"] == exact(Fraction(4, 27)) and v.numbers["hsd_expected_accepted"] == exact(Fraction(14, 9))
    assert not v.numbers["repairable"] and v.numbers["min_F"] == exact(Fraction(-2, 27))
    assert v.numbers["algorithm_clean_tv"] == exact(Fraction(1, 9))


def test_hsd_gains_over_bv_only_with_a_lossy_law():
    # 4/3 against BV's 11/9 (test_hsd), a gain of 1/9 bought with a TV of 1/9; repaired by compensation
    # the stream emits 59/27 tokens per call against BV's 20/9 = 60/27 (hand derivation in
    # tests/test_hsd.py::test_the_stream_over_three_iterations_and_its_repair).
    v = verdict("hsd/beats-bv")
    assert v.status == HOLDS
    n = v.numbers
    assert n["hsd_expected_accepted"] == exact(Fraction(4, 3)) and n["bv_expected_accepted"] == exact(Fraction(11, 9))
    assert n["gain"] == exact(Fraction(1, 9)) and n["hsd_tv"] == exact(Fraction(1, 9))
    assert n["gain_bought_with"] == "a lossy law (TV 1/9 from q); made exact, 59/27 tokens per target call against BV's 20/9"
    assert n["repaired_tokens_per_call"] == exact(Fraction(59, 27)) and n["bv_tokens_per_call"] == exact(Fraction(20, 9))
    k2 = verdict("hsd/beats-bv-k2")
    # 14/9 − 11/9 = 1/3, with TV 4/27 and no repair (F(1, 0) = −2/27 above)
    assert k2.status == HOLDS and k2.numbers["gain"] == exact(Fraction(1, 3))
    assert k2.numbers["gain_bought_with"] == "a lossy law (TV 4/27 from q); no repair (over-emission)"
    assert not k2.numbers["repairable"]


def _stream_law(output_law: dict, n: int, V: int) -> np.ndarray:
    """The first n tokens of a stream of independent iterations with one output law (a context-free
    pair: the next iteration's law does not depend on what came before), composed by recursion: a
    second computation beside ``iterate_exact``'s branching."""
    law = np.zeros((V,) * n)
    for out, prob in output_law.items():
        out = tuple(out)
        if len(out) >= n:
            law[out[:n]] += prob
        else:
            law[out] += prob * _stream_law(output_law, n - len(out), V)
    return law


@pytest.mark.parametrize("K, tv", [(1, Fraction(1, 9)), (2, Fraction(4, 27))])
def test_hsd_stream_over_three_tokens(K, tv):
    # K = 1: TV 1/9 and 7/3 tokens per call (test_hsd's stream test).  K = 2, first three tokens: an
    # iteration emits a full block (x1, x2, y ~ q) with masses F = (0,0) 1/9, (0,1) 2/9, (1,0) 8/27,
    # (1,1) 4/27 (draft 1 as at K = 1 plus draft 2's 2/27 and 1/27, test_hsd), or the one token (1)
    # with 2/9, after which the next iteration's first two tokens H = (1/9, 2/9, 10/27, 8/27).
    # t1 = 0 is exact; P(1,t2,t3) = F(1,t2)·q(t3) + 2/9·H(t2,t3): (1,0,0) 10/81 vs 6/81, (1,0,1)
    # 20/81 vs 12/81, (1,1,0) 32/243 vs 36/243, (1,1,1) 40/243 vs 72/243: TV = 36/243 = 4/27.
    # Tokens per call: 1 + E[τ] = 1 + 14/9 = 23/9 (no state crosses iterations).
    v = verdict("hsd/stream-lossless" + ("-k2" if K == 2 else ""))
    assert v.status == FAILS and v.numbers["stream_tv"] == exact(tv)
    assert v.numbers["tokens_per_call"] == exact(Fraction(7, 3) if K == 1 else Fraction(23, 9))
    assert v.numbers["repairable"] == (K == 1)
    # the second computation: one iteration's law composed with itself
    law = _stream_law(exact_analysis("hsd", P, Q, K, 2).output_law, 3, 2)
    q = np.einsum("i,j,k->ijk", *[Q.cond(())] * 3)
    assert 0.5 * np.abs(law - q).sum() == exact(tv)


def test_hsd_families_lossy_everywhere_and_ahead_of_bv_everywhere():
    lossy = verdict("hsd/lossless-family")
    assert lossy.held == (0, 48) and lossy.status == FAILS
    worst = lossy.numbers["worst"]
    again = exact_analysis("hsd", *lossy.instance.models(), worst["K"], worst["L"]).fidelity_tv
    assert again == pytest.approx(worst["fidelity_tv"], abs=1e-14) and again > 0.1
    ahead = verdict("hsd/beats-bv-family")
    assert ahead.held == (48, 48) and ahead.status == HOLDS
    worst = ahead.numbers["worst"]
    draft, target = ahead.instance.models()
    gain = (exact_analysis("hsd", draft, target, worst["K"], worst["L"]).expected_accepted
            - exact_analysis("bv", draft, target, worst["K"], worst["L"]).expected_accepted)
    assert gain == pytest.approx(worst["gain"], abs=1e-14) and gain > 0 and worst["hsd_fidelity_tv"] > 1e-4


# --- EAGLE's sampling verification, binary toy at T = 1/2: p_T = (4/5, 1/5), q_T = (1/5, 4/5) ---------

def test_eagle_current_release_lossless_eagle2_not():
    # tests/test_eagle.py::test_T_half_eagle2_is_lossy_current_is_not: K = 1, L = 2: E[τ] = 8/25 +
    # (8/25)² = 264/625 in both releases; the EAGLE-2 bonus after a full block (64/625) is q_1 =
    # (1/3, 2/3) instead of (1/5, 4/5), TV 2/15: TV = 64/625·2/15 = 128/9375.
    now, old = verdict("eagle/current-lossless"), verdict("eagle/eagle2-lossless")
    assert now.status == HOLDS and old.status == FAILS
    assert now.numbers["expected_accepted"] == exact(Fraction(264, 625)) == old.numbers["expected_accepted"]
    assert now.numbers["tv"] < 1e-15 and old.numbers["current_tv"] < 1e-15
    assert old.numbers["tv"] == exact(Fraction(128, 9375)) and now.numbers["eagle2_tv"] == exact(Fraction(128, 9375))
    assert old.instance.query()["T"] == "0.5" and old.instance.query()["methods"] == "eagle,sd,bv"


def test_eagle_families_at_t_half():
    assert verdict("eagle/current-lossless-family").held == (36, 36)
    old = verdict("eagle/eagle2-lossless-family")
    assert old.held == (0, 36) and old.status == FAILS
    worst = old.numbers["worst"]
    # A second computation: only the bonus after a full block differs, so on a context-free pair the TV is
    # P(τ = L)·TV(q_1, q_T), with q_1 the untempered target read from the instance's JSON.
    assert worst["family"] == "iid"
    draft, target = old.instance.models()
    full = exact_analysis(Eagle("current", 0.5), draft, target, worst["K"], worst["L"]).tau_pmf[-1]
    q1, qT = from_json(old.instance.target).cond(()), target.cond(())
    assert worst["tv"] == pytest.approx(full * 0.5 * np.abs(q1 - qT).sum(), abs=1e-14)


def test_eagle_on_a_topk_tree_is_lossless():
    # Three-token toy at T = 1/2: p_T ∝ (1/4, 1/9, 1/36) = (9, 4, 1)/14, q_T = (1, 4, 9)/14.  Top-2 of p_T
    # is {0, 1} at every node, so E[τ] = Σ q(drafted paths) = 5/14 + (5/14)² = 95/196 (= rrs's: on a top-k
    # tree EAGLE's rule is rrs).  EAGLE-2's bonus after a depth-2 path (mass 25/196) is q_1 = (1/6, 1/3,
    # 1/2) instead of q_T: TV(q_1, q_T) = (8 + 4 + 12)/84/2 = 1/7, so TV = 25/196·1/7 = 25/1372.
    v = verdict("eagle/topk-lossless")
    assert v.status == HOLDS and v.numbers["tv"] < 1e-15
    assert v.numbers["expected_accepted"] == exact(Fraction(95, 196)) == v.numbers["rrs_expected_accepted"]
    assert v.numbers["eagle2_tv"] == exact(Fraction(25, 1372))
    q = v.instance.query()
    assert (q["shape"], q["b"], q["law"], q["T"]) == ("tree", "2,2", "topk", "0.5")
    fam = verdict("eagle/topk-lossless-family")
    assert fam.held == (18, 18) and fam.instance.page == "trees" and fam.instance.law == "topk"


# --- Exact-match acceptance, binary toy at T = 1, L = 2 -------------------------------------------------

def test_exact_match_is_lossless_and_accepts_less_than_sd():
    # tests/test_exact_match.py::test_binary_toy_L2: a match has probability Σ p·q = 4/9 per token, E[τ] =
    # 4/9 + 16/81 = 52/81 against SD's 2/3 + 4/9 = 10/9; TV 0 (every emitted token is a target sample).
    v = verdict("exact-match/lossless")
    assert v.status == HOLDS and v.numbers["exact_match_tv"] < 1e-15
    assert v.numbers["exact_match_expected_accepted"] == exact(Fraction(52, 81))
    more = verdict("exact-match/sd-accepts-more")
    assert more.status == HOLDS and more.numbers["sd_expected_accepted"] == exact(Fraction(10, 9))
    assert more.numbers["gain"] == exact(Fraction(38, 81))           # 90/81 − 52/81


def test_exact_match_families_at_t_07():
    assert verdict("exact-match/lossless-family").held == (48, 48)
    v = verdict("exact-match/sd-accepts-more-family")
    assert v.held == (48, 48) and v.instance.T == 0.7
    worst = v.numbers["worst"]
    draft, target = v.instance.models()
    gain = (exact_analysis("sd", draft, target, 1, worst["L"]).expected_accepted
            - exact_analysis("exact_match", draft, target, 1, worst["L"]).expected_accepted)
    assert gain == pytest.approx(worst["gain"], abs=1e-14) and gain > 0


# --- Where the user sees them ---------------------------------------------------------------------------

def test_hsd_claim_opens_in_the_laboratory_with_its_numbers():
    pytest.importorskip("streamlit")
    from tests.apptest import no_errors, open_page

    v = verdict("hsd/beats-bv")
    at = open_page("pages/toy_lab.py", query=v.instance.query())
    no_errors(at)
    table = next(d.value for d in at.dataframe if "E[τ] as a fraction" in d.value.columns).set_index("method")
    assert table.loc["HSD", "E[τ] as a fraction"] == "4/3" and table.loc["BV", "E[τ] as a fraction"] == "11/9"
    assert table.loc["HSD", "fidelity error (TV)"] == pytest.approx(1 / 9, abs=1e-9)


def test_topk_claim_opens_on_the_draft_trees_page_with_its_numbers():
    pytest.importorskip("streamlit")
    from tests.apptest import no_errors, open_page

    v = verdict("eagle/topk-lossless")
    at = open_page("pages/draft_trees.py", query=v.instance.query())
    no_errors(at)
    assert at.session_state["tree_law"] == "topk" and at.session_state["tree_b"] == "2,2"
    table = next(d.value for d in at.dataframe if "verifier" in d.value.columns)
    eagle = table[table["verifier"].str.startswith("eagle")]["E[τ]"].iloc[0]
    assert eagle == pytest.approx(95 / 196, abs=1e-12)
