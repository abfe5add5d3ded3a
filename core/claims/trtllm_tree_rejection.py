"""TensorRT-LLM's EAGLE-3 dynamic-tree rejection sampling (``verifyDynamicTreeRejectionKernel`` in
``cpp/tensorrt_llm/kernels/speculativeDecoding/dynamicTreeKernels.cu``, PR 12588, fixed in PR 15098;
the rule ``core.rules.trtllm_tree``): its comment states the goal, "keeping the final output
distribution strictly equal to the target distribution q", and extends the one-draft argument to
trees "depth-by-depth" with every sibling tested against the same p and q.  Settled here by the
children a node can have: one sampled child, i.i.d. children (siblings can repeat), children without
replacement, the drafter's top-k (what the engine drafts); against the lossless rules on the same
drafts; the smallest counterexample; and the repair.
"""
from __future__ import annotations

from core.claims.base import EVERY_PAIR, Claim, Family, Instance, Source
from core.claims.engine_checks import against, counterexample, lossless, opens_tree, repair, tree_trial
from toy_models import IIDModel

SOURCE = Source("trtllm", "TensorRT-LLM, EAGLE-3 dynamic-tree rejection sampling (released kernel)",
                "github.com/NVIDIA/TensorRT-LLM, cpp/tensorrt_llm/kernels/speculativeDecoding/dynamicTreeKernels.cu "
                "at 84e55f9 (PRs 12588, 15098)", "https://github.com/NVIDIA/TensorRT-LLM/pull/15098", group="engines")
RULE = "trtllm_tree"
#: The drafts of the single instances: the binary toy's trees, and docs/maths.md's pair for without
#: replacement (p = (1/2, 1/4, 1/4), q = (1/6, 1/3, 1/2)).
TOY = dict(preset="binary-toy", page="trees")
WOR_PAIR = (IIDModel([1 / 2, 1 / 4, 1 / 4]), IIDModel([1 / 6, 1 / 3, 1 / 2]))
#: The families: seeded i.i.d. and Markov pairs on the tree b = (2, 2), one family per draft law.
TREE = (2, 2)


def family(law: str) -> Family:
    return Family(("iid", "markov"), Vs=(2, 3), Ks=(TREE[0],), Ls=(len(TREE),), n=3, regime=EVERY_PAIR)


CLAIMS = (
    Claim("lossless-one-child", SOURCE,
          "The dynamic-tree rejection sampling keeps the output distribution equal to the target's when each node "
          "has one sampled child.",
          "The TV from q of its completed output law on one chain of two tokens sampled from p (b = (1, 1) drafted "
          "by iid) on the binary toy; rrs's E[τ] beside (SD's here).",
          instance=Instance(1, 2, b=(1, 1), law="iid", **TOY), check=lossless(RULE, ("rrs",))),
    Claim("lossless-iid", SOURCE,
          "It keeps the target's distribution when a node has several i.i.d. children (siblings can repeat).",
          "The TV from q on the tree b = (2, 2) drafted by iid, on the binary toy; rrs's E[τ] on the same drafts beside.",
          instance=Instance(2, 2, b=TREE, law="iid", **TOY), check=lossless(RULE, ("rrs",))),
    Claim("lossless-wor", SOURCE,
          "It keeps the target's distribution when a node's children are drawn without replacement.",
          "The TV from q on b = (2) drafted by wor, p = (1/2, 1/4, 1/4), q = (1/6, 1/3, 1/2): the second child is "
          "tested against p although it cannot repeat the first; rrs's E[τ] beside.",
          instance=Instance.of(*WOR_PAIR, 2, 1, page="trees", b=(2,), law="wor"), check=lossless(RULE, ("rrs",))),
    Claim("lossless-topk", SOURCE,
          "It keeps the target's distribution on the drafter's top-k children (what the engine drafts).",
          "The TV from q on b = (2, 1) drafted by topk on the binary toy: deterministic children tested as if "
          "sampled from p; rrs's E[τ] (Σ q(s) over the tree) beside.",
          instance=Instance(2, 2, b=(2, 1), law="topk", **TOY), check=lossless(RULE, ("rrs",))),
    *(Claim(f"lossless-{law}-family", SOURCE,
            f"It keeps the target's distribution on every tree b = (2, 2) drafted by {law}.",
            f"Its TV from q on b = (2, 2) drafted by {law} over seeded pairs; the worst (largest) TV, rrs's E[τ] beside.",
            family=family(law), trial=tree_trial(RULE, TREE, law), methods=(RULE,), opens=opens_tree(TREE, law))
      for law in ("iid", "wor", "topk")),
    Claim("against-lossless", SOURCE,
          "On the same drafts it accepts at least as much as the best lossless verifier.",
          "Its E[τ] against the own-law LP optimum of b = (2, 2) drafted by iid on the binary toy, with rrs and "
          "traversal beside; a higher E[τ] bought with loss is said so.",
          instance=Instance(2, 2, b=TREE, law="iid", **TOY), check=against(RULE)),
    Claim("smallest-counterexample", SOURCE,
          "No small instance shows a loss.",
          "The first lossy instance from the smallest drafts up (b = (1) drafted by topk, then b = (2) by iid, wor, "
          "topk), V = 2 then 3, over i.i.d. pairs of simple fractions; the link opens it.",
          instance=Instance(1, 1, b=(1,), law="topk", **TOY),
          check=counterexample(RULE, [((1,), "topk"), ((2,), "iid"), ((2,), "wor"), ((2,), "topk")], methods=(RULE,))),
    Claim("repair-rrs", SOURCE,
          "Testing each later sibling against the residual the earlier ones leave (multi-round rejection, rrs) keeps "
          "the target's distribution on the same drafts.",
          "rrs's TV from q and E[τ] on b = (2, 2) drafted by iid on the binary toy, the released rule's beside.",
          instance=Instance(2, 2, b=TREE, law="iid", **TOY), check=repair(RULE)),
)
