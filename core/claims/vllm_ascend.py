"""vllm-ascend's former "block verify" (MagicMTP), ``core.rules.vllm_ascend_block`` (docs/maths.md,
"vllm-ascend's block verify"): shipped to raise the acceptance rate "with Block Verify" and described
in PR 7808 as intended to be lossless block verification; PR 7808 (issue 7807) replaced it with Sun et
al.'s rule, this project's ``bv``.  The engine ran it at γ = L ≥ 3 with the drafter's probabilities, so
the single instances take L = 3; the smallest counterexample is the court's search's.

Every number is the lab's: the rule's exact law (the uniforms' products through their Poisson
process), block verification's, the LP optimum of the same chain and the loss-gain frontier at the
rule's own loss (``core.bounds.frontier``).
"""
from __future__ import annotations

from core.analysis.exact import LOSSLESS_TOL
from core.analysis.optimum import optimum_value
from core.bounds.frontier import frontier
from core.claims.base import BOUGHT, Claim, Family, Instance, Source, Trial, holds, trial_check
from core.claims.chain_trials import exact_on, lossless_trial, opener
from core.data.shapes import Shape

SOURCE = Source("vllm-ascend", "vllm-ascend's former block verify (MagicMTP), shipped until PR 7808",
                "github.com/vllm-project/vllm-ascend at 66d966b: vllm_ascend/ops/triton/reject_sample.py, "
                "vllm_ascend/sample/rejection_sampler.py; issue 7807, PR 7808",
                "https://github.com/vllm-project/vllm-ascend/issues/7807", group="engines")
RULE = "vllm_ascend_block"
PYTORCH = {RULE: {"variant": "pytorch"}}
#: The smallest counterexample the court's search finds (V = 2, K = 1, L = 2; the tests check that
#: the search finds exactly it).
COUNTEREXAMPLE = dict(draft={"kind": "iid", "probs": [1 / 3, 2 / 3]}, target={"kind": "iid", "probs": [1 / 4, 3 / 4]})


def _against_bv(inst: Instance):
    """The rule's E[τ] and TV against block verification's (the repair, lossless) and the LP optimum
    of the same chain: "the block verify accepts more" holds where its E[τ] exceeds BV's, bought with
    its loss."""
    draft, target = inst.models()
    mine = exact_on(RULE, (inst.params or {}).get(RULE), draft, target, inst.L)
    bv = exact_on("bv", None, draft, target, inst.L)
    lp = optimum_value(draft, target, Shape.chains_of(1, inst.L))
    numbers = {"vllm_ascend_block_expected_accepted": mine.expected_accepted, "vllm_ascend_block_tv": mine.fidelity_tv,
               "bv_expected_accepted": bv.expected_accepted, "bv_tv": bv.fidelity_tv, "lp_optimum": lp}
    gain = mine.expected_accepted - bv.expected_accepted
    if gain > LOSSLESS_TOL and not mine.is_lossless:
        numbers[BOUGHT] = True
    return holds(gain > LOSSLESS_TOL), numbers


def _repair(inst: Instance):
    """PR 7808's repair, Sun et al.'s block verification: lossless, at the LP optimum of one chain."""
    status, numbers = _against_bv(inst)
    ok = numbers["bv_tv"] <= LOSSLESS_TOL and abs(numbers["bv_expected_accepted"] - numbers["lp_optimum"]) <= 1e-7
    return holds(ok), {k: v for k, v in numbers.items() if k != BOUGHT}


def _frontier(inst: Instance):
    """The rule against the loss-gain frontier at its own TV: the best E[τ] of any verifier of the same
    drafts whose output is that far from q.  The claim "its trade is the best at its loss" holds where
    its E[τ] reaches the frontier's value."""
    draft, target = inst.models()
    mine = exact_on(RULE, None, draft, target, inst.L)
    best = frontier(draft, target, 1, inst.L, mine.fidelity_tv).value
    return holds(mine.expected_accepted >= best - 1e-7), {
        "vllm_ascend_block_expected_accepted": mine.expected_accepted, "vllm_ascend_block_tv": mine.fidelity_tv,
        "frontier": best}


def beats(draft, target, K: int, L: int) -> Trial:
    """"The block verify accepts at least as much as block verification", its loss beside."""
    mine = exact_on(RULE, None, draft, target, L)
    bv = exact_on("bv", None, draft, target, L)
    gain = mine.expected_accepted - bv.expected_accepted
    numbers = {"vllm_ascend_block_expected_accepted": mine.expected_accepted, "bv_expected_accepted": bv.expected_accepted,
               "gain": gain, "vllm_ascend_block_tv": mine.fidelity_tv}
    if gain > LOSSLESS_TOL and not mine.is_lossless:
        numbers[BOUGHT] = True
    return Trial(gain >= -LOSSLESS_TOL, gain, numbers)


TOY = dict(preset="binary-toy", methods=(RULE, "bv", "sd"))
FAMILY = Family(("iid", "markov", "table"), Vs=(2, 3), Ks=(1,), Ls=(3,), n=4)
CLAIMS = (
    Claim("lossless", SOURCE, "vllm-ascend's block verify keeps the target's law (PR 7808: \"intended to perform "
          "lossless block verification\").",
          "The TV from q of its completed output law on one chain of γ = 3 tokens sampled from p (the engine's "
          "Triton kernel), on the binary toy.", instance=Instance(1, 3, **TOY), check=trial_check(lossless_trial(RULE))),
    Claim("lossless-smallest", SOURCE, "It keeps the target's law on the smallest instances.",
          "The TV from q on the smallest counterexample the court's search finds (V = 2, K = 1, L = 2; exact by the "
          "uniforms' Poisson process: not a fraction, logarithms enter).",
          instance=Instance(1, 2, **COUNTEREXAMPLE, methods=(RULE, "bv")), check=trial_check(lossless_trial(RULE))),
    Claim("lossless-family", SOURCE, "It keeps the target's law on every instance (the Triton kernel).",
          "Its TV from q on one chain of 3 tokens sampled from p on each seeded instance; the worst (largest) TV.",
          family=FAMILY, trial=lossless_trial(RULE), methods=(RULE, "bv")),
    Claim("lossless-pytorch-family", SOURCE, "Its PyTorch implementation keeps the target's law on every instance.",
          "The same TV with the product of capped ratios of rejection_random_sample_block_verify_pytorch; the worst TV.",
          family=FAMILY, trial=lossless_trial(RULE, PYTORCH[RULE]), methods=(RULE, "bv"),
          opens=opener(params=PYTORCH)),
    Claim("accepts-more", SOURCE, "Block verify improves the acceptance rate over block verification (MagicMTP).",
          "Its exact E[τ] against BV's and the LP optimum of the same chain of 3 tokens, on the binary toy, with its TV "
          "beside: above the LP optimum, a gain no lossless verifier has.",
          instance=Instance(1, 3, **TOY), check=_against_bv),
    Claim("accepts-more-family", SOURCE, "Block verify accepts at least as much as block verification on every instance.",
          "Both exact E[τ] on one chain of 3 tokens on each seeded instance, its TV beside; the smallest gain.",
          family=FAMILY, trial=beats, methods=(RULE, "bv")),
    Claim("repair", SOURCE, "PR 7808's repair, Sun et al.'s block verification, keeps the target's law at the best "
          "acceptance of one chain.",
          "BV's TV and E[τ] against the LP optimum of the same chain of 3 tokens, on the binary toy, beside the block "
          "verify's.", instance=Instance(1, 3, **TOY), check=_repair),
    Claim("best-trade", SOURCE, "Block verify's extra acceptance is the best any verifier can buy at its loss.",
          "Its exact E[τ] against the loss-gain frontier (the LP of every verifier of one chain of 3 tokens whose "
          "output is within its own TV of q), on the binary toy.", instance=Instance(1, 3, **TOY), check=_frontier),
)
