"""SGLang's target-only tree sampling, as released (sgl-project/sglang, ``TreeSpeculativeSamplingTargetOnly``
in ``python/sglang/kernels/jit/include/sgl_kernel/speculative/sampling.cuh`` at 3d7eaa8, with the
half-open coin and positive-mass guard of PR 35798; formerly ``sgl-kernel/csrc/speculative/
speculative_sampling.cuh``, 120affb; its caller ``eagle_sample`` in
``python/sglang/srt/speculative/eagle_utils.py`` at 003ddbc; docs/maths.md, "Released rules, ported").

The kernel writes q for the target (``target_probs``) as this project does; its ``draft_probs`` are
not the draft's law: the caller passes zeros (``torch.zeros_like(target_probs)``) unless
``--speculative-use-rejection-sampling`` routes to another kernel, and the kernel writes into them
the target probability of each rejected sibling.  At the accepted node u (the root first) one coin
c, uniform on [0, 1), is drawn; the children of u are walked in the sibling list's order with
``prob_acc``, the running sum of q(x|u) over the children walked so far, and child x is accepted iff

    q(x|u) > 0  and  ( c < prob_acc / t_acc  or  q(x|u) ≥ t_single ),

t_single and t_acc the server's ``--speculative-accept-threshold-single`` and ``-acc`` (default 1; the
kernel caps t_acc below at 1e-9).  The first accepted child becomes u, with a fresh coin.  When every
child fails, the extra token is drawn from q(·|u) with the rejected children removed, renormalised;
at a leaf, or at depth L, from q(·|u).

At the defaults and with distinct children this is y ~ q(·|u) by inverse transform over the listed
children, moving to y when it is one of them: lossless, whatever drew the children (EAGLE's rule,
``core.rules.eagle``).  A repeated child adds its q twice to ``prob_acc``, and a threshold below 1
accepts more than q: both are measured here, not assumed.

The coin is one uniform per node, so the walk tosses, for child x_i, a coin of probability
P(accept x_i | the earlier children rejected) = (min(1, S_i/t_acc) − m)/(1 − m), S_i = prob_acc after
x_i and m = min(1, S_j/t_acc) of the last rejected child of positive mass (c ≥ m is all the earlier
rejections say about c); 1 where q(x_i) ≥ t_single, 0 where q(x_i) = 0.  The exact law is that of
the kernel with a continuous coin: before PR 35798 the test was ``coin <= prob_acc / threshold_acc``
without the mass guard, which differs only where the coin equals a bucket's edge, an event of
probability 0 for a continuous coin (2^-24 per node for ``torch.rand``'s float32, not modelled).
Equal draws of an ``iid`` node are separate sibling nodes, as the kernel holds them
(``core.rules.sibling_lists``).
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from core.data.coins import Coins
from core.data.distributions import residual
from core.data.nodes import Node
from core.data.outcome import Outcome, Trace
from core.data.token_tree import TokenTree
from core.rules.base import Verifier
from core.rules.params import Param
from core.rules.sibling_lists import walk

#: The kernel's floor on t_acc (``capped_threshold_acc = fmaxf(threshold_acc, 1e-9f)``).
ACC_FLOOR = 1e-9
#: The values the loss-gain chart sweeps for each threshold (1 is the default, lossless on top-k trees).
THRESHOLDS = (1.0, 0.9, 0.7, 0.5, 0.3, 0.1)


class SglangTree(Verifier):
    """SGLang's target-only tree sampling: one coin per node against the running sum of q."""

    name = "sglang_tree"
    short = "SGLang tree"
    label = "SGLang's target-only tree sampling, as released"
    engine = "SGLang"
    color = "#ff7799"  # SGLang's colour
    summary = ("At each accepted node draw one coin and accept the first drafted child whose running sum of "
               "target probabilities, over t_acc, exceeds it (or whose own probability reaches t_single), "
               "then draw the extra token from the target without the rejected children, as released.")
    source = ("sgl-project/sglang, TreeSpeculativeSamplingTargetOnly (python/sglang/kernels/jit/include/sgl_kernel/"
              "speculative/sampling.cuh at 3d7eaa8, PR 35798; caller eagle_sample in "
              "python/sglang/srt/speculative/eagle_utils.py at 003ddbc)")
    single_draft = False
    order_invariant = False       # the running sum is over the children in list order
    lossless_by_theory = False    # lossless at t = 1 on distinct children only; measured elsewhere
    needs_models = False
    closed_form_tau = False
    token_trees = True
    runs_on = (("any", "iid"), ("tree", "topk"))
    released_port = True
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("t_single", float, 1.0, "accept a child whose own target probability reaches it "
              "(--speculative-accept-threshold-single)", within="(0, 1]", sweep=THRESHOLDS),
        Param("t_acc", float, 1.0, "divide the running sum of target probabilities by it before the coin "
              "(--speculative-accept-threshold-acc)", within="(0, 1]", sweep=THRESHOLDS),
    )

    def __init__(self, t_single: float = 1.0, t_acc: float = 1.0):
        SINGLE, ACC = self.parameters
        self.t_single, self.t_acc = SINGLE.check(t_single), ACC.check(t_acc)

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:
        """K i.i.d. chains as the kernel holds them: each chain its own sibling list below the root."""
        return self.run_tree(block, coins)

    def run_tree(self, tree: TokenTree, coins: Coins) -> Outcome:
        t_acc = max(self.t_acc, ACC_FLOOR)

        def step(u: Node, offers, trace: Trace, coins: Coins):
            q = tree.q[u]
            prob_acc, floor = 0.0, 0.0          # c ≥ floor is what the rejections so far say of the coin
            rejected = np.zeros_like(q)
            for k, (x, _, draft) in enumerate(offers):
                mass = float(q[x])
                prob_acc += mass
                if mass <= 0.0:
                    prob = 0.0
                elif mass >= self.t_single:
                    prob = 1.0
                elif floor >= 1.0:           # unreachable: the rejection that set it had probability 0
                    prob = 1.0
                else:
                    prob = max(min(1.0, prob_acc / t_acc) - floor, 0.0) / (1.0 - floor)
                if trace.test(u + (x,), draft, prob, coins.bernoulli(prob), "token", q=mass, prob_acc=prob_acc):
                    return k, None
                rejected[x] = mass
                if mass > 0.0:
                    floor = min(1.0, prob_acc / t_acc)
            # q with the rejected children removed; it keeps positive mass whenever every child can be
            # rejected (the children's q summing to 1 makes the last one certain to pass)
            return None, residual(q - rejected, q)
        return walk(tree, coins, step)

    def __repr__(self) -> str:
        return f"<verifier sglang_tree t_single={self.t_single:g} t_acc={self.t_acc:g}>"
