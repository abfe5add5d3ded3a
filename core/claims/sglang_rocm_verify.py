"""SGLang's EAGLE verification on ROCm before PR 37134 (``eagle_sample``: ``_is_hip`` among the
platforms that take ``torch.argmax`` and ``verify_tree_greedy_func``; issue 32922, PRs 31214, 39253;
the rule ``core.rules.sglang_rocm_greedy``): a request at T > 0 is verified greedily, "a behaviour
change with no error or warning" (PR 39253).  Settled here: the output law's distance from the
target's at T > 0, greedy requests (T = 0), against the lossless rules on the same drafts, the
smallest counterexample, and the repair PR 37134 and PR 39253 make (the target's own sample, the
CUDA path's rule).
"""
from __future__ import annotations

from core.claims.base import EVERY_PAIR, Claim, Family, Instance, Source
from core.claims.engine_checks import against, counterexample, lossless, opens_tree, repair, tree_trial

SOURCE = Source("sglang-rocm", "SGLang on ROCm before PR 37134: EAGLE verification greedy at any temperature",
                "github.com/sgl-project/sglang, srt/speculative/eagle_utils.py (eagle_sample) before PR 37134; "
                "issue/PRs 32922, 31214, 39253", "https://github.com/sgl-project/sglang/pull/37134", group="engines")
RULE = "sglang_rocm_greedy"
TREE = (2, 2)
BIN = dict(preset="binary-toy", page="trees")

CLAIMS = (
    Claim("lossless-at-T1", SOURCE,
          "EAGLE verification on ROCm keeps the target's distribution at the requested temperature (T = 1).",
          "The TV from q of its completed output law on b = (2, 2) drafted by topk on the binary toy at T = 1; the "
          "CUDA path's rule (sglang_tree) beside.",
          instance=Instance(2, 2, b=TREE, law="topk", **BIN), check=lossless(RULE, ("sglang_tree",))),
    Claim("lossless-family", SOURCE,
          "It keeps the target's distribution at T = 0.7 on every top-k tree.",
          "Its TV from q on b = (2, 2) drafted by topk at T = 0.7 over seeded pairs; the worst (largest) TV.",
          family=Family(("iid", "markov"), Vs=(2, 3), Ks=(2,), Ls=(2,), n=3, T=0.7, regime=EVERY_PAIR),
          trial=tree_trial(RULE, TREE, "topk", beside=("sglang_tree",)), methods=(RULE,),
          opens=opens_tree(TREE, "topk")),
    Claim("greedy-requests-lossless", SOURCE,
          "It keeps the target's distribution for greedy requests (T = 0).",
          "The TV from q on one chain of top-1 drafts (b = (1, 1) drafted by topk) on the binary toy at T = 0.",
          instance=Instance(1, 2, b=(1, 1), law="topk", T=0.0, **BIN), check=lossless(RULE)),
    Claim("against-lossless", SOURCE,
          "On the same drafts it accepts at least as much as the best lossless verifier.",
          "Its E[τ] against the own-law LP optimum of b = (2, 2) drafted by topk on the three-token toy at T = 1, "
          "rrs and the CUDA path's rule beside.",
          instance=Instance(2, 2, b=TREE, law="topk", preset="three-token-toy", page="trees"),
          check=against(RULE, ("rrs", "sglang_tree"))),
    Claim("smallest-counterexample", SOURCE,
          "No small instance at T = 1 shows a loss.",
          "The first lossy instance from the smallest drafts up (b = (1), then (2) drafted by topk), V = 2 then 3, "
          "over i.i.d. pairs of simple fractions; the link opens it.",
          instance=Instance(1, 1, b=(1,), law="topk", **BIN),
          check=counterexample(RULE, [((1,), "topk"), ((2,), "topk")], methods=(RULE,))),
    Claim("repair-target-sample", SOURCE,
          "Verifying against the target's own sample at T (PRs 37134, 39253: the CUDA path's rule, y ~ q, moving to y "
          "when it is drafted) keeps the target's distribution on the same drafts.",
          "The CUDA path's rule (sglang_tree at its defaults): TV from q and E[τ] on b = (2, 2) drafted by topk on the "
          "binary toy at T = 1, the greedy rule's beside.",
          instance=Instance(2, 2, b=TREE, law="topk", **BIN), check=repair(RULE, "sglang_tree")),
)
