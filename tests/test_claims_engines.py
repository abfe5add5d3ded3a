"""The engines' claims (core/claims/trtllm_tree_rejection.py, sglang_tree_sampling.py,
sglang_rocm_verify.py, llamacpp_speculative.py, flashinfer_chain_sampling.py): every single-instance
verdict and its numbers against values derived by hand in the comments (tests/test_engine_ports.py
derives the rules' own), the family verdicts' counts where they follow from the drafts, the smallest
counterexamples as the fractions they are, and each source within the time the issue allows."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest

from core.analysis.exact import exact_analysis
from core.claims.base import FAILS, HOLDS, decide
from core.claims.registry import SOURCES, claims_of, get_claim
from core.data.shapes import Shape

ROOT = Path(__file__).resolve().parents[1]
ENGINES = ("trtllm", "sglang", "sglang-rocm", "llamacpp", "flashinfer")


def frac(x: float) -> Fraction:
    return Fraction(x).limit_denominator(100000)


def numbers(key: str) -> tuple[str, dict]:
    v = decide(get_claim(key))
    return v.status, {k: (frac(x) if isinstance(x, float) else x) for k, x in v.numbers.items()}


def test_the_engines_are_sources_of_their_own_group():
    assert {s.id for s in SOURCES.values() if s.group == "engines"} >= set(ENGINES)
    assert all(SOURCES[s].where and "github.com" in SOURCES[s].where for s in ENGINES)


def test_trtllm():
    # one sampled child per node is SD: α + α² = 2/3 + 4/9 on the binary toy
    assert numbers("trtllm/lossless-one-child") == (HOLDS, {"trtllm_tree": Fraction(10, 9), "trtllm_tree_tv": 0,
                                                            "rrs": Fraction(10, 9)})
    # b = (2, 2) iid on i.i.d. models: every copy's two fresh children accept with 1 − 4/9·1/4 = 8/9, so
    # E[τ] = 8/9 + 64/81; the two-token law (16, 20, 19, 26)/81 against (9, 18, 18, 36)/81: TV 10/81
    # (tests/test_engine_ports.py derives the one-level 4/9); rrs 346/243 (docs/maths.md's test vectors)
    assert numbers("trtllm/lossless-iid") == (FAILS, {"trtllm_tree": Fraction(136, 81), "trtllm_tree_tv": Fraction(10, 81),
                                                      "rrs": Fraction(346, 243)})
    assert numbers("trtllm/lossless-wor") == (FAILS, {"trtllm_tree": 1, "trtllm_tree_tv": Fraction(1, 12),
                                                      "rrs": Fraction(11, 12)})
    # b = (2, 1) topk: 0 (1/2) or else 1 (sure) at the root, then the top child 0 with 1/2: E[τ] = 3/2;
    # two-token law (1/4, 1/4, 1/4, 1/4) against (1/9, 2/9, 2/9, 4/9): TV 7/36; rrs Σ q(s) = 4/3
    assert numbers("trtllm/lossless-topk") == (FAILS, {"trtllm_tree": Fraction(3, 2), "trtllm_tree_tv": Fraction(7, 36),
                                                       "rrs": Fraction(4, 3)})
    # lossy and still below the own-law LP optimum (1271/729, tests/test_draft_trees.py): not even a gain
    status, n = numbers("trtllm/against-lossless")
    assert status == FAILS and n["lp_optimum"] == Fraction(1271, 729) and n["traversal"] == Fraction(1072, 729)
    assert n["trtllm_tree"] == Fraction(136, 81) < n["lp_optimum"]
    status, n = numbers("trtllm/repair-rrs")
    assert status == HOLDS and n["rrs"] == Fraction(346, 243) and n["rrs_tv"] == 0


def test_trtllm_wor_family_fails_exactly_where_the_children_are_not_the_whole_vocabulary():
    # b = (2, 2) drafted without replacement over V = 2 drafts every token at every node: the tree is
    # complete and any rule that accepts a drafted child is lossless there; over V = 3 it is not.
    v = decide(get_claim("trtllm/lossless-wor-family"))
    assert v.held == (6, 12) and v.numbers["worst"]["V"] == 3
    worst = v.numbers["worst"]
    again = exact_analysis("trtllm_tree", *v.instance.models(), shape=Shape.tree((2, 2)), law="wor")
    assert again.fidelity_tv == pytest.approx(worst["trtllm_tree_tv"], abs=1e-12)


def test_smallest_counterexamples_are_fractions_and_open_where_found():
    # b = (1) topk, V = 2, the first rational pair p = (1/3, 2/3), q = (1/4, 3/4): the top token 1 has
    # q/p ≥ 1, so it always passes and the output is 1 then q: TV = q(0) = 1/4 (TensorRT-LLM, llama.cpp);
    # ROCm's greedy path emits 1, 1: TV = 1 − q(1)² = 7/16
    for key, rule, tau, tv in [("trtllm/smallest-counterexample", "trtllm_tree", 1, Fraction(1, 4)),
                               ("llamacpp/smallest-counterexample", "llamacpp_tree", 1, Fraction(1, 4)),
                               ("sglang-rocm/smallest-counterexample", "sglang_rocm_greedy", 1, Fraction(7, 16))]:
        v = decide(get_claim(key))
        assert v.status == FAILS and (v.numbers["p"], v.numbers["q"]) == ("(1/3, 2/3)", "(1/4, 3/4)")
        assert v.numbers["tree"] == "b = (1) drafted by topk, V = 2" and v.numbers["searched"].startswith("1 ")
        assert (frac(v.numbers[rule]), frac(v.numbers[f"{rule}_tv"])) == (tau, tv) and v.numbers["tv_fraction"] == str(tv)
        assert v.instance.b == (1,) and v.instance.law == "topk" and v.instance.draft["probs"] == pytest.approx([1 / 3, 2 / 3])
    # SGLang at its defaults is lossless on every top-k tree tried: the first loss is a repeated child.
    # b = (2) iid, same pair: P(first token 0) = 1/9·(1/4 + 3/4·1/3) + 2/9·1/4 + 2/9·1/4 = 1/6 < 1/4: TV 1/12;
    # τ = 0 only on draws (0, 0) past both coins (1/9·3/4·2/3): E[τ] = 17/18
    v = decide(get_claim("sglang/smallest-counterexample"))
    assert v.numbers["tree"] == "b = (2) drafted by iid, V = 2" and v.numbers["tv_fraction"] == "1/12"
    assert frac(v.numbers["sglang_tree"]) == Fraction(17, 18)


def test_sglang():
    # b = (2, 2) topk on the three-token toy: top-2 {0, 1} everywhere, Σ q(s) = 1/2 + 1/4 = 3/4 = the LP
    assert numbers("sglang/defaults-topk-lossless") == (HOLDS, {"sglang_tree": Fraction(3, 4), "sglang_tree_tv": 0,
                                                                "rrs": Fraction(3, 4)})
    status, n = numbers("sglang/defaults-attain-lp")
    assert status == HOLDS and n["lp_optimum"] == n["sglang_tree"] == Fraction(3, 4)
    assert numbers("sglang/iid-lossless") == (FAILS, {"sglang_tree": Fraction(23, 27), "sglang_tree_tv": Fraction(1, 9),
                                                      "rrs": Fraction(7, 9)})
    # t_acc = 1/2 on b = (1, 1) topk (tests/test_engine_ports.py): 10/9, TV 1/3, against 4/9 at the defaults
    status, n = numbers("sglang/t-acc-more-aggressive")
    assert status == HOLDS and n["sglang_tree"] == Fraction(10, 9) and n["default_expected_accepted"] == Fraction(4, 9)
    assert decide(get_claim("sglang/t-acc-more-aggressive")).words == "holds here, the gain bought with loss"
    assert numbers("sglang/t-acc-lossless")[0] == FAILS
    # t_single = 0.3, b = (2, 1) topk, p = (1/2, 1/3, 1/6), q = (1/6, 1/3, 1/2): at the root 0 passes iff
    # c < 1/6, else 1 (q = 1/3 ≥ 0.3) passes for sure; under either the top child 0 passes with 1/6.
    # E[τ] = 7/6; first token (1/6, 5/6, 0): TV 1/2 (the second token then follows q exactly)
    assert numbers("sglang/t-single-lossless") == (FAILS, {"sglang_tree": Fraction(7, 6), "sglang_tree_tv": Fraction(1, 2),
                                                           "rrs": Fraction(7, 12)})
    # EAGLE's rule on the same drafts: Σ_y q(y)(1 − (1 − p(y))²) = 8/27 + 10/27
    assert numbers("sglang/repair-distinct") == (HOLDS, {"eagle": Fraction(2, 3), "eagle_tv": 0,
                                                         "sglang_tree": Fraction(23, 27), "sglang_tree_tv": Fraction(1, 9)})
    assert decide(get_claim("sglang/defaults-topk-family")).held == (12, 12)
    # the family's link carries the threshold it was decided at
    fam = decide(get_claim("sglang/t-acc-family"))
    assert fam.instance.params == {"sglang_tree": {"t_acc": 0.7}} and "params=sglang_tree.t_acc%3A0.7" in \
        "&".join(f"{k}={v}" for k, v in fam.instance.query().items()).replace(":", "%3A")


def test_sglang_rocm():
    # b = (2, 2) topk on the binary toy: the greedy path 1, 1 is drafted, the output is 1, 1, 1 for sure:
    # TV = 1 − 8/27; the CUDA path's rule accepts every token of the complete tree: 2
    assert numbers("sglang-rocm/lossless-at-T1") == (FAILS, {"sglang_rocm_greedy": 2, "sglang_rocm_greedy_tv": Fraction(19, 27),
                                                             "sglang_tree": 2})
    assert numbers("sglang-rocm/greedy-requests-lossless") == (HOLDS, {"sglang_rocm_greedy": 0, "sglang_rocm_greedy_tv": 0})
    # three-token toy: q's argmax 2 is never among p's top two: τ = 0 and y = 2 for sure, then q: TV =
    # 1 − q(2) = 1/2, and nothing accepted against the LP's 3/4
    status, n = numbers("sglang-rocm/against-lossless")
    assert status == FAILS and (n["sglang_rocm_greedy"], n["sglang_rocm_greedy_tv"]) == (0, Fraction(1, 2))
    assert n["lp_optimum"] == n["sglang_tree"] == Fraction(3, 4)
    status, n = numbers("sglang-rocm/repair-target-sample")
    assert status == HOLDS and n["sglang_tree"] == 2 and n["sglang_tree_tv"] == 0
    assert decide(get_claim("sglang-rocm/lossless-family")).held == (0, 12)


def test_llamacpp():
    assert numbers("llamacpp/lossless-one-sequence") == (FAILS, {"llamacpp_tree": Fraction(3, 4),
                                                                 "llamacpp_tree_tv": Fraction(1, 6), "rrs": Fraction(4, 9)})
    # tests/test_engine_ports.py derives 2/3 and 5/12; rrs: q(0)(1 + q(0) + q(1)) = 1/6·3/2 = 1/4
    assert numbers("llamacpp/lossless-shared-token") == (FAILS, {"llamacpp_tree": Fraction(2, 3),
                                                                 "llamacpp_tree_tv": Fraction(5, 12), "rrs": Fraction(1, 4)})
    status, n = numbers("llamacpp/against-lossless")
    walked = exact_analysis("llamacpp_tree", *get_claim("llamacpp/against-lossless").instance.models(),
                            shape=Shape.tree((2, 2)), law="topk", recursion=False)      # coin by coin
    assert n["llamacpp_tree"] == frac(walked.expected_accepted) > n["lp_optimum"] == Fraction(3, 4) == n["rrs"]
    assert decide(get_claim("llamacpp/against-lossless")).words == "holds here, the gain bought with loss"
    assert numbers("llamacpp/repair-rrs")[1]["rrs"] == Fraction(3, 4)


def test_flashinfer():
    assert numbers("flashinfer/lossless") == (HOLDS, {"rule": "flashinfer_chain", "fidelity_tv": 0,
                                                      "expected_accepted": Fraction(10, 9)})
    for key in ("flashinfer/lossless-family", "flashinfer/same-as-sd-family"):
        assert decide(get_claim(key)).held == (36, 36)


@pytest.mark.parametrize("source", ENGINES)
def test_each_engine_on_the_command_line_within_its_time(source):
    """``python -m core claims --source ENGINE --json`` within 30 s on 2 cores (here: well within, timed
    loosely since the machine is shared), every claim with a verdict; each single verdict within 1 s."""
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "core", "claims", "--source", source, "--json"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert [r["claim"] for r in rows] == [c.key for c in claims_of(source)]
    assert all(r["status"] in (HOLDS, FAILS) for r in rows)
    assert time.perf_counter() - start < 60
    for claim in claims_of(source):
        if claim.family is None:
            t = time.perf_counter()
            decide(claim)
            assert time.perf_counter() - t < 3.0, claim.key
