"""SGLang's target-only tree sampling (``TreeSpeculativeSamplingTargetOnly``, sgl-kernel, and its caller
``eagle_sample``; the rule ``core.rules.sglang_tree``), with the server's accept thresholds
``--speculative-accept-threshold-single`` and ``-acc`` (default 1.0; SGLang's documentation: "Lower
values accept more aggressively").  Settled here: lossless at the defaults on the top-k trees SGLang
drafts, and as much acceptance as any lossless verifier there; with repeated (i.i.d.) children; with a
threshold below 1; the smallest counterexample; the repair for repeated children.
"""
from __future__ import annotations

from core.analysis.exact import LOSSLESS_TOL
from core.claims.base import BOUGHT, EVERY_PAIR, Claim, Family, Instance, Source, holds
from core.claims.engine_checks import analysed, against, counterexample, lossless, opens_tree, repair, tree_trial

SOURCE = Source("sglang", "SGLang, target-only tree speculative sampling and its accept thresholds (released kernel)",
                "github.com/sgl-project/sglang, sgl_kernel/speculative/sampling.cuh at 3d7eaa8 (PR 35798); "
                "srt/speculative/eagle_utils.py at 003ddbc", "https://github.com/sgl-project/sglang/pull/35798",
                group="engines")
RULE = "sglang_tree"
TREE = (2, 2)
TOY3 = dict(preset="three-token-toy", page="trees")
BIN = dict(preset="binary-toy", page="trees")
#: The thresholds below 1 the claims try (each carried by the claim's link).
ACC, SINGLE = {RULE: {"t_acc": 0.5}}, {RULE: {"t_single": 0.3}}
FAMILY_ACC = {"t_acc": 0.7}


def family() -> Family:
    return Family(("iid", "markov"), Vs=(2, 3), Ks=(TREE[0],), Ls=(len(TREE),), n=3, regime=EVERY_PAIR)


def _more_aggressive(inst: Instance):
    """E[τ] with t_acc = 1/2 against the default's on the same drafts, the TV beside."""
    draft, target = inst.models()
    low = analysed(RULE, inst, draft, target)
    default = analysed(RULE, inst, draft, target, {})
    gain = low.expected_accepted - default.expected_accepted
    numbers = {RULE: low.expected_accepted, f"{RULE}_tv": low.fidelity_tv, "default_expected_accepted":
               default.expected_accepted, "gain": gain}
    if gain > LOSSLESS_TOL and not low.is_lossless:
        numbers[BOUGHT] = True
    return holds(gain > LOSSLESS_TOL), numbers


CLAIMS = (
    Claim("defaults-topk-lossless", SOURCE,
          "At the default thresholds the tree sampling keeps the target's distribution on the top-k trees SGLang drafts.",
          "The TV from q on b = (2, 2) drafted by topk on the three-token toy; rrs's E[τ] beside.",
          instance=Instance(2, 2, b=TREE, law="topk", **TOY3), check=lossless(RULE, ("rrs",))),
    Claim("defaults-topk-family", SOURCE,
          "At the defaults it keeps the target's distribution on every top-k tree.",
          "Its TV from q on b = (2, 2) drafted by topk over seeded pairs; the worst (largest) TV.",
          family=family(), trial=tree_trial(RULE, TREE, "topk"), methods=(RULE,), opens=opens_tree(TREE, "topk")),
    Claim("defaults-attain-lp", SOURCE,
          "At the defaults it accepts as much as the best lossless verifier of the same top-k drafts.",
          "Its E[τ] against the own-law LP optimum of b = (2, 2) drafted by topk on the three-token toy, rrs and "
          "traversal beside.",
          instance=Instance(2, 2, b=TREE, law="topk", **TOY3), check=against(RULE)),
    Claim("iid-lossless", SOURCE,
          "At the defaults it keeps the target's distribution when siblings can repeat (i.i.d. children).",
          "The TV from q on b = (2) drafted by iid on the binary toy: a repeated child adds its q twice to the "
          "running sum; rrs's E[τ] beside.",
          instance=Instance(2, 1, b=(2,), law="iid", **BIN), check=lossless(RULE, ("rrs",))),
    Claim("iid-family", SOURCE,
          "At the defaults it keeps the target's distribution on every tree b = (2, 2) drafted by iid.",
          "Its TV from q on b = (2, 2) drafted by iid over seeded pairs; the worst (largest) TV, rrs's E[τ] beside.",
          family=family(), trial=tree_trial(RULE, TREE, "iid"), methods=(RULE,), opens=opens_tree(TREE, "iid")),
    Claim("t-acc-more-aggressive", SOURCE,
          "A lower --speculative-accept-threshold-acc accepts more aggressively.",
          "E[τ] at t_acc = 1/2 against the default's on b = (1, 1) drafted by topk on the binary toy, its TV beside.",
          instance=Instance(1, 2, b=(1, 1), law="topk", **BIN, params=ACC), check=_more_aggressive),
    Claim("t-acc-lossless", SOURCE,
          "With --speculative-accept-threshold-acc below 1 it keeps the target's distribution.",
          "The TV from q at t_acc = 1/2 on b = (1, 1) drafted by topk on the binary toy; rrs's E[τ] beside.",
          instance=Instance(1, 2, b=(1, 1), law="topk", **BIN, params=ACC), check=lossless(RULE, ("rrs",))),
    Claim("t-single-lossless", SOURCE,
          "With --speculative-accept-threshold-single below 1 it keeps the target's distribution.",
          "The TV from q at t_single = 0.3 on b = (2, 1) drafted by topk on the three-token toy: a child whose q "
          "reaches 0.3 is taken whenever the walk reaches it; rrs's E[τ] beside.",
          instance=Instance(2, 2, b=(2, 1), law="topk", **TOY3, params=SINGLE), check=lossless(RULE, ("rrs",))),
    Claim("t-acc-family", SOURCE,
          "With t_acc = 0.7 it keeps the target's distribution on every top-k tree.",
          "Its TV from q at t_acc = 0.7 on b = (2, 2) drafted by topk over seeded pairs; the worst (largest) TV.",
          family=family(), trial=tree_trial(RULE, TREE, "topk", FAMILY_ACC), methods=(RULE,),
          opens=opens_tree(TREE, "topk", {RULE: FAMILY_ACC})),
    Claim("smallest-counterexample", SOURCE,
          "At the defaults no small instance shows a loss.",
          "The first lossy instance from the smallest drafts up (b = (1) and (2) drafted by topk, then b = (2) by "
          "iid), V = 2 then 3, over i.i.d. pairs of simple fractions; the link opens it.",
          instance=Instance(1, 1, b=(1,), law="topk", **BIN),
          check=counterexample(RULE, [((1,), "topk"), ((2,), "topk"), ((2,), "iid")], methods=(RULE,))),
    Claim("repair-distinct", SOURCE,
          "Walking each distinct child once (EAGLE's rule: y ~ q, moving to y when it is drafted) keeps the target's "
          "distribution on trees with repeated children.",
          "EAGLE's TV from q and E[τ] on b = (2) drafted by iid on the binary toy, the released rule's beside.",
          instance=Instance(2, 1, b=(2,), law="iid", **BIN), check=repair(RULE, "eagle")),
)
