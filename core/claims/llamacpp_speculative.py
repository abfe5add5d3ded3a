"""llama.cpp's stochastic speculative sampling in ``examples/speculative/speculative.cpp`` (PR 5625,
"following Algorithm 2" of SpecInfer, arXiv 2305.09781; the rule ``core.rules.llamacpp_tree``): the
drafts are the draft's top candidates, tested with the real p in min(1, q/p), the sequences in random
order, the residual updated after every rejection.  Settled here: one sequence, a tree of sequences
(and the residual updated twice for a token two sequences share), seeded families, against the
lossless rules on the same drafts, the smallest counterexample, and the repair (rrs on the top-k tree:
y ~ q, moving to y when it is drafted).  The server's exact-match path is ``exact_match``
(``core.claims.exact_match_acceptance``).
"""
from __future__ import annotations

from core.claims.base import EVERY_PAIR, Claim, Family, Instance, Source
from core.claims.engine_checks import against, counterexample, lossless, opens_tree, repair, tree_trial
from toy_models import IIDModel

SOURCE = Source("llamacpp", "llama.cpp, stochastic speculative sampling of a tree of top candidates (released example)",
                "github.com/ggml-org/llama.cpp, examples/speculative/speculative.cpp at 007d713 (PR 5625)",
                "https://github.com/ggml-org/llama.cpp/pull/5625", group="engines")
RULE = "llamacpp_tree"
TREE = (2, 2)
BIN = dict(preset="binary-toy", page="trees")
#: docs/maths.md's pair (p = (1/2, 1/4, 1/4), q = (1/6, 1/3, 1/2)): the top token 0 fails often.
PAIR = (IIDModel([1 / 2, 1 / 4, 1 / 4]), IIDModel([1 / 6, 1 / 3, 1 / 2]))

CLAIMS = (
    Claim("lossless-one-sequence", SOURCE,
          "Stochastic speculative sampling keeps the target's distribution on one drafted sequence.",
          "The TV from q on one sequence of the draft's top tokens (b = (1, 1) drafted by topk) on the binary toy; "
          "rrs's E[τ] (Σ q(s) over the drafted tokens) beside.",
          instance=Instance(1, 2, b=(1, 1), law="topk", **BIN), check=lossless(RULE, ("rrs",))),
    Claim("lossless-shared-token", SOURCE,
          "It keeps the target's distribution on a tree of sequences that share their first token.",
          "The TV from q on b = (1, 2) drafted by topk, p = (1/2, 1/4, 1/4), q = (1/6, 1/3, 1/2): the second "
          "sequence, left among the active ones when the first fails, fails too and updates the residual again; "
          "rrs's E[τ] beside.",
          instance=Instance.of(*PAIR, 1, 2, page="trees", b=(1, 2), law="topk"), check=lossless(RULE, ("rrs",))),
    Claim("lossless-family", SOURCE,
          "It keeps the target's distribution on every tree b = (2, 2) of top candidates.",
          "Its TV from q on b = (2, 2) drafted by topk over seeded pairs; the worst (largest) TV, rrs's E[τ] beside.",
          family=Family(("iid", "markov"), Vs=(2, 3), Ks=(2,), Ls=(2,), n=3, regime=EVERY_PAIR),
          trial=tree_trial(RULE, TREE, "topk"), methods=(RULE,), opens=opens_tree(TREE, "topk")),
    Claim("against-lossless", SOURCE,
          "On the same drafts it accepts at least as much as the best lossless verifier.",
          "Its E[τ] against the own-law LP optimum of b = (2, 2) drafted by topk on the three-token toy (Σ q(s): rrs "
          "attains it), rrs and traversal beside.",
          instance=Instance(2, 2, b=TREE, law="topk", preset="three-token-toy", page="trees"), check=against(RULE)),
    Claim("smallest-counterexample", SOURCE,
          "No small instance shows a loss.",
          "The first lossy instance from the smallest drafts up (b = (1), then (2) drafted by topk), V = 2 then 3, "
          "over i.i.d. pairs of simple fractions; the link opens it.",
          instance=Instance(1, 1, b=(1,), law="topk", **BIN),
          check=counterexample(RULE, [((1,), "topk"), ((2,), "topk")], methods=(RULE,))),
    Claim("repair-rrs", SOURCE,
          "On top candidates the lossless rule is rrs (y ~ q, moving to y when it is drafted), which keeps the "
          "target's distribution on the same drafts.",
          "rrs's TV from q and E[τ] on b = (2, 2) drafted by topk on the three-token toy, the released rule's beside.",
          instance=Instance(2, 2, b=TREE, law="topk", preset="three-token-toy", page="trees"), check=repair(RULE)),
)
