"""vLLM's released verification rules (``core.rules.vllm_onehot``, ``vllm_block``,
``vllm_shared_gumbel``; docs/maths.md, "Released rules, ported") and the claims made about them in
vLLM's tracker: V1's rejection sampler with drafts passed without their probabilities, Model Runner
V2's block verification (PR 46781) and PR 40819's two claims about it, and MRV2's probabilistic drafts
before PR 54282, whose replacement token reused the draft's Gumbel noise.

Every verdict is the lab's: exact laws on the binary toy, on the smallest counterexample the court's
search finds (``core.claims.court.search``), and over seeded families of one chain, sampled from p or
the drafter's argmax (b = (1, …, 1) drafted by ``topk``).
"""
from __future__ import annotations

from core.analysis.exact import LOSSLESS_TOL
from core.analysis.optimum import optimum_value
from core.claims.base import Claim, Family, Instance, Source, Trial, holds, trial_check
from core.claims.chain_trials import (ARGMAX, SAMPLED, exact_on, fewer_trial, law_distance, lossless_trial,
                                      opener)
from core.data.laws import TOPK_LAW
from core.data.shapes import Shape

SOURCE = Source("vllm", "vLLM's rejection samplers: V1 with drafts passed without probabilities, Model Runner V2's "
                "block verification, and its probabilistic drafts before PR 54282",
                "github.com/vllm-project/vllm: vllm/v1/sample/rejection_sampler.py at 7f6fc1c; "
                "vllm/v1/worker/gpu/spec_decode/rejection_sampler_utils.py at 02e318b; PRs 46781, 40819, 54282",
                "https://github.com/vllm-project/vllm/pull/40819", group="engines")
ONEHOT, BLOCK, GUMBEL = "vllm_onehot", "vllm_block", "vllm_shared_gumbel"
#: vLLM's block verification on drafts passed without their probabilities.
ONEHOT_BLOCK = {BLOCK: {"drafts": "onehot"}}
#: The smallest counterexample the court's search finds for the shared noise (``core.claims.court.
#: search``, V = 3, K = 1, L = 1; the tests check that the search finds exactly it): p = (1/2, 1/4,
#: 1/4), q = (1/6, 1/3, 1/2).  With V = 2 the residual has one token and nothing can be coupled.
COUNTEREXAMPLE = dict(draft={"kind": "iid", "probs": [1 / 2, 1 / 4, 1 / 4]},
                      target={"kind": "iid", "probs": [1 / 6, 1 / 3, 1 / 2]})
#: The binary toy's drafter at T = 0, its argmax at every step (token 0): a deterministic chain.
ARGMAX_DRAFTER = {"kind": "iid", "probs": [1.0, 0.0]}
BINARY_TARGET = {"kind": "iid", "probs": [1 / 3, 2 / 3]}


def _onehot_cost(inst: Instance):
    """One-hot's E[τ] against the lossless rules on the same chain, which read the drafter's law:
    speculative sampling, rrs and traversal (on one chain, SD and BV), and the LP optimum."""
    draft, target = inst.models()
    one = exact_on(ONEHOT, None, draft, target, inst.L)
    others = {rule: exact_on(rule, None, draft, target, inst.L).expected_accepted for rule in ("sd", "rrs", "traversal")}
    lp = optimum_value(draft, target, Shape.chains_of(1, inst.L))
    return holds(one.expected_accepted < others["sd"] - LOSSLESS_TOL), {
        "vllm_onehot_expected_accepted": one.expected_accepted, "vllm_onehot_tv": one.fidelity_tv,
        **{f"{rule}_expected_accepted": e for rule, e in others.items()}, "lp_optimum": lp}


def _onehot_argmax_optimum(inst: Instance):
    """One-hot on the drafter's argmax chain against the LP optimum of those very drafts (the own-law LP
    of the ``topk`` tree b = (1, …, 1))."""
    draft, target = inst.models()
    one = exact_on(ONEHOT, None, draft, target, inst.L, ARGMAX)
    lp = optimum_value(draft, target, Shape.tree(inst.b), inst.law)
    return holds(one.expected_accepted >= lp - 1e-7), {"vllm_onehot_expected_accepted": one.expected_accepted,
                                                      "vllm_onehot_tv": one.fidelity_tv, "lp_optimum": lp}


def _block_is_bv(inst: Instance):
    """MRV2's block verification against Sun et al.'s on the same chain: E[τ], TV, and their laws."""
    draft, target = inst.models()
    mine = exact_on(BLOCK, None, draft, target, inst.L)
    bv = exact_on("bv", None, draft, target, inst.L)
    gap = law_distance(mine, bv)
    return holds(gap <= LOSSLESS_TOL and mine.is_lossless), {
        "vllm_block_expected_accepted": mine.expected_accepted, "vllm_block_tv": mine.fidelity_tv,
        "bv_expected_accepted": bv.expected_accepted, "law_tv": gap,
        "lp_optimum": optimum_value(draft, target, Shape.chains_of(1, inst.L))}


def _same_below_three(inst: Instance):
    """PR 40819's gate: block verification and the per-token rule decide alike at γ ≤ 2, on the same
    chain of γ = L tokens: the two output laws' distance and E[τ]."""
    draft, target = inst.models()
    block = exact_on(BLOCK, None, draft, target, inst.L)
    sd = exact_on("sd", None, draft, target, inst.L)
    gap = law_distance(block, sd)
    return holds(gap <= LOSSLESS_TOL), {"vllm_block_expected_accepted": block.expected_accepted,
                                        "sd_expected_accepted": sd.expected_accepted, "law_tv": gap}


def _shared_repair(inst: Instance):
    """PR 54282's repair, independent noise: the per-token rule itself (``sd``), lossless, at the very
    acceptance of the shared-noise rule (the noise draws only the replacement, never τ)."""
    draft, target = inst.models()
    shared = exact_on(GUMBEL, None, draft, target, inst.L)
    sd = exact_on("sd", None, draft, target, inst.L)
    ok = sd.is_lossless and abs(sd.expected_accepted - shared.expected_accepted) <= LOSSLESS_TOL
    return holds(ok), {"vllm_shared_gumbel_expected_accepted": shared.expected_accepted,
                       "vllm_shared_gumbel_tv": shared.fidelity_tv, "sd_expected_accepted": sd.expected_accepted,
                       "sd_tv": sd.fidelity_tv}


def _argmax_trial(draft, target, K: int, L: int) -> Trial:
    """"One-hot is the LP optimum of the argmax chain": its E[τ] against the own-law LP there."""
    one = exact_on(ONEHOT, None, draft, target, L, ARGMAX)
    lp = optimum_value(draft, target, Shape.tree((1,) * L), TOPK_LAW)
    return Trial(one.expected_accepted >= lp - 1e-7, one.expected_accepted - lp,
                 {"vllm_onehot_expected_accepted": one.expected_accepted, "lp_optimum": lp})


TOY = dict(preset="binary-toy")
SAMPLED_FAMILY = Family(("iid", "markov", "table"), Vs=(2, 3), Ks=(1,), Ls=(2, 3), n=3)
NOISE_FAMILY = Family(("iid", "markov", "table"), Vs=(2, 3), Ks=(1,), Ls=(1, 2, 3), n=3)
CLAIMS = (
    Claim("onehot-lossless", SOURCE,
          "vLLM's rejection sampler with drafts passed without their probabilities keeps the target's law.",
          "The TV from q of the rule's completed output law on one chain sampled from p, L = 2, on the binary toy.",
          instance=Instance(1, 2, **TOY, methods=(ONEHOT, "sd", "bv")),
          check=trial_check(lossless_trial(ONEHOT))),
    Claim("onehot-lossless-argmax", SOURCE,
          "It keeps the target's law whatever the drafter, its argmax included.",
          "The same TV with the binary toy's drafter at T = 0 (its argmax, token 0, at every step), L = 2.",
          instance=Instance(1, 2, draft=ARGMAX_DRAFTER, target=BINARY_TARGET, methods=(ONEHOT, "sd")),
          check=trial_check(lossless_trial(ONEHOT))),
    Claim("onehot-lossless-family", SOURCE, "It keeps the target's law on every instance, with sampled drafts.",
          "Its TV from q on one chain sampled from p on each seeded instance, L ∈ {2, 3}; the worst (largest) TV.",
          family=SAMPLED_FAMILY, trial=lossless_trial(ONEHOT), methods=(ONEHOT, "sd")),
    Claim("onehot-lossless-argmax-family", SOURCE, "It keeps the target's law on every instance, with argmax drafts.",
          "Its TV from q on the drafter's argmax chain (b = (1, …, 1) drafted by top-k) on each seeded instance, "
          "L ∈ {2, 3}; the worst (largest) TV.",
          family=SAMPLED_FAMILY, trial=lossless_trial(ONEHOT, kind=ARGMAX), methods=(ONEHOT,), opens=opener(ARGMAX)),
    Claim("onehot-costs-acceptance", SOURCE,
          "Passing drafts without their probabilities costs acceptance: one-hot accepts less than speculative sampling.",
          "Its exact E[τ] (Σ p·q per token on context-independent models) against SD's (Σ min(p, q)), rrs's and "
          "traversal's on the same chain and the LP optimum of the chain, L = 2, on the binary toy.",
          instance=Instance(1, 2, **TOY, methods=(ONEHOT, "sd", "specinfer", "traversal")), check=_onehot_cost),
    Claim("onehot-costs-acceptance-family", SOURCE, "One-hot never accepts more than speculative sampling.",
          "Both exact E[τ] on one chain sampled from p on each seeded instance, L ∈ {2, 3}; the smallest gap.",
          family=SAMPLED_FAMILY, trial=fewer_trial(ONEHOT, None, "sd"), methods=(ONEHOT, "sd")),
    Claim("onehot-free-on-argmax", SOURCE,
          "Passing drafts without their probabilities costs nothing when the drafter proposes its argmax (Model Runner "
          "V2's default greedy drafts).",
          "Its exact E[τ] on the binary toy drafter's argmax chain of 2 tokens against the LP optimum of those very "
          "drafts (the own-law LP of the top-k tree b = (1, 1)).",
          instance=Instance(1, 2, **TOY, page="trees", b=(1, 1), law="topk"), check=_onehot_argmax_optimum),
    Claim("onehot-free-on-argmax-family", SOURCE,
          "One-hot verification is the best lossless verifier of the drafter's argmax chain on every instance.",
          "Its exact E[τ] against the own-law LP of the argmax chain on each seeded instance, L ∈ {2, 3}; the largest "
          "shortfall.", family=SAMPLED_FAMILY, trial=_argmax_trial, methods=(ONEHOT,), opens=opener(ARGMAX)),
    Claim("block-is-bv", SOURCE,
          "Model Runner V2's block verification (PR 46781) is Sun et al.'s block verification.",
          "Its exact output law against BV's on the same chain, L = 2, on the binary toy, with its E[τ], TV and the "
          "LP optimum.", instance=Instance(1, 2, **TOY, methods=(BLOCK, "bv", "sd")), check=_block_is_bv),
    Claim("block-lossless-family", SOURCE, "Model Runner V2's block verification keeps the target's law.",
          "Its TV from q on one chain sampled from p on each seeded instance, L ∈ {2, 3}; the worst (largest) TV.",
          family=SAMPLED_FAMILY, trial=lossless_trial(BLOCK), methods=(BLOCK, "bv")),
    Claim("block-same-below-three", SOURCE,
          "For γ ≤ 2 drafted tokens block verification and the per-token rule make the same decisions (PR 40819's "
          "gate, max_spec_len ≥ 3).",
          "The distance between their output laws and both E[τ] on one chain of γ = 2 tokens, on the binary toy.",
          instance=Instance(1, 2, **TOY, methods=(BLOCK, "sd")), check=_same_below_three),
    Claim("onehot-block-accepts-less", SOURCE,
          "Block verification with drafts passed without probabilities (draft probability 1) accepts fewer tokens "
          "than the per-token rule (PR 40819: 9 to 14 points less).",
          "Both exact E[τ] on the same chain of 3 tokens sampled from p, on the three-token toy, and the distance "
          "between their output laws.",
          instance=Instance(1, 3, preset="three-token-toy", methods=(BLOCK, ONEHOT), params=ONEHOT_BLOCK),
          check=trial_check(fewer_trial(BLOCK, ONEHOT_BLOCK[BLOCK], ONEHOT))),
    Claim("onehot-block-accepts-less-family", SOURCE,
          "One-hot block verification accepts fewer tokens than the one-hot per-token rule, with sampled drafts.",
          "Both exact E[τ] on one chain sampled from p on each seeded instance, L ∈ {2, 3}; the smallest gap, and the "
          "distance between the two output laws.",
          family=SAMPLED_FAMILY, trial=fewer_trial(BLOCK, ONEHOT_BLOCK[BLOCK], ONEHOT), methods=(BLOCK, ONEHOT),
          opens=opener(params=ONEHOT_BLOCK)),
    Claim("onehot-block-accepts-less-argmax-family", SOURCE,
          "One-hot block verification accepts fewer tokens than the one-hot per-token rule, with argmax drafts.",
          "Both exact E[τ] on the drafter's argmax chain on each seeded instance, L ∈ {2, 3}; the smallest gap.",
          family=SAMPLED_FAMILY, trial=fewer_trial(BLOCK, ONEHOT_BLOCK[BLOCK], ONEHOT, kind=ARGMAX),
          methods=(BLOCK, ONEHOT), opens=opener(ARGMAX)),
    Claim("shared-noise-lossless", SOURCE,
          "Model Runner V2 keeps the target's law with probabilistic drafts, as shipped before PR 54282 (the "
          "replacement drawn with the rejected draft's Gumbel noise).",
          "The TV from q of the per-token rule with the shared noise on the smallest counterexample the court's search "
          "finds (V = 3, L = 1), exactly: the replacement's law integrated over the noise in closed form.",
          instance=Instance(1, 1, **COUNTEREXAMPLE, methods=(GUMBEL, "sd")), check=trial_check(lossless_trial(GUMBEL))),
    Claim("shared-noise-lossless-family", SOURCE, "The shared noise keeps the target's law on every instance.",
          "Its TV from q on one chain sampled from p on each seeded instance, L ∈ {1, 2, 3}; the worst (largest) TV.",
          family=NOISE_FAMILY, trial=lossless_trial(GUMBEL), methods=(GUMBEL, "sd")),
    Claim("shared-noise-block-lossless-family", SOURCE,
          "With block verification (rejection_sample_method=block) the shared noise keeps the target's law.",
          "Its TV from q with block verification on each seeded instance, L ∈ {1, 2, 3}; the worst (largest) TV.",
          family=NOISE_FAMILY, trial=lossless_trial(GUMBEL, {"rejection": "block"}), methods=(GUMBEL, "bv"),
          opens=opener(params={GUMBEL: {"rejection": "block"}})),
    Claim("shared-noise-repair", SOURCE,
          "PR 54282's repair (the drafter's noise salted apart) restores the target's law without costing acceptance.",
          "The repaired rule is speculative sampling with independent noise: its TV and E[τ] against the shared-noise "
          "rule's on the counterexample.",
          instance=Instance(1, 1, **COUNTEREXAMPLE, methods=(GUMBEL, "sd")), check=_shared_repair),
)
