"""TensorRT-LLM's EAGLE-3 dynamic-tree rejection sampling, as released (NVIDIA/TensorRT-LLM,
``cpp/tensorrt_llm/kernels/speculativeDecoding/dynamicTreeKernels.cu``,
``verifyDynamicTreeRejectionKernel``: PR 12588, its output-distribution fix PR 15098; ported at
84e55f9 and checked against 16f0267, whose rule is the same; docs/maths.md, "Released rules, ported").

The kernel writes p for the draft and q for the target, as this project does.  At the accepted node
u (the root first) it walks the sibling list of u's children in order (``retrieveNextSibling``: the
drafter's score order) and accepts child x with probability min(1, q(x|u)/p(x|u)), the same p(·|u)
and q(·|u) for every sibling (``u < fminf(1, pTarget / (pDraft + 1e-10))``, u uniform on [0, 1));
the first accepted child becomes u.  When every child fails, the extra token is drawn from
(q(·|u) − p(·|u))₊ normalised (from q(·|u) where that has mass ≤ 1e-10); at a leaf or at depth L
it is the bonus, drawn from q(·|u).

With one sampled child per node this is token-level speculative sampling, lossless.  With several
children the second is tested against the unchanged q although the first one's rejection has
already used part of it: the correct rule, multi-round rejection, tests the next child against the
residual (q − p)₊ left by the first (``rrs``).  A child drafted by top-k is not a sample from p at
all, yet it is tested as one.

Where the port chooses (docs/maths.md lists each): the ``1e-10`` guard in the ratio is dropped
(``acceptance_ratio``: a child with p = 0 is never drafted by a law that samples from p, and top-k
draws only tokens of positive p); equal draws of an ``iid`` node are separate sibling nodes with
their own subtrees, as the kernel holds them (``core.rules.sibling_lists``); ``iid`` and ``wor``
siblings are tried in draw order, ``topk`` siblings in rank order (the engine's score order).
"""
from __future__ import annotations

import numpy as np

from core.data.coins import Coins
from core.data.distributions import acceptance_ratio
from core.data.nodes import Node
from core.data.outcome import Outcome, Trace
from core.data.token_tree import TokenTree
from core.rules.base import Verifier
from core.rules.sibling_lists import walk

#: The kernel draws its correction from q(·|u) where (q − p)₊ has at most this mass (``diffSum``).
DIFF_FLOOR = 1e-10


def correction(q: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The kernel's extra token after every sibling failed: (q − p)₊ normalised, or q where
    (q − p)₊ has mass ≤ ``DIFF_FLOOR``."""
    diff = np.maximum(q - p, 0.0)
    total = float(diff.sum())
    return diff / total if total > DIFF_FLOOR else q


class TrtllmTree(Verifier):
    """TensorRT-LLM's dynamic-tree rejection sampling: every sibling against the same p and q."""

    name = "trtllm_tree"
    short = "TRT-LLM tree"
    label = "TensorRT-LLM's EAGLE-3 dynamic-tree rejection sampling, as released"
    engine = "TensorRT-LLM"
    color = "#995588"  # TensorRT-LLM's colour
    summary = ("At each accepted node test the drafted children in order, each with min(1, q/p) against the "
               "same p and q, and after every child fails draw the extra token from (q − p)₊, as released.")
    source = ("NVIDIA/TensorRT-LLM, cpp/tensorrt_llm/kernels/speculativeDecoding/dynamicTreeKernels.cu, "
              "verifyDynamicTreeRejectionKernel (PR 12588, fixed in PR 15098), at 84e55f9")
    single_draft = False
    order_invariant = False       # the first sibling to pass is kept: the order of the draws matters
    lossless_by_theory = False
    needs_models = False
    closed_form_tau = False
    token_trees = True
    runs_on = (("any", "iid"), ("any", "wor"), ("tree", "topk"))
    released_port = True

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:
        """K i.i.d. chains as the kernel holds them: each chain its own sibling list below the root."""
        return self.run_tree(block, coins)

    def run_tree(self, tree: TokenTree, coins: Coins) -> Outcome:
        def step(u: Node, offers, trace: Trace, coins: Coins):
            p, q = tree.p[u], tree.q[u]
            for k, (x, _, draft) in enumerate(offers):
                prob = acceptance_ratio(q[x], p[x])
                if trace.test(u + (x,), draft, prob, coins.bernoulli(prob), "token", p=p[x], q=q[x]):
                    return k, None
            return None, correction(q, p)
        return walk(tree, coins, step)

    def __repr__(self) -> str:
        return "<verifier trtllm_tree>"
