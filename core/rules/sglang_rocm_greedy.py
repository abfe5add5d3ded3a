"""SGLang's EAGLE verification on ROCm before PR 37134: every request verified greedily, whatever its
temperature (sgl-project/sglang, ``eagle_sample`` in ``python/sglang/srt/speculative/eagle_utils.py``:
``if sampling_info.is_all_greedy or _is_cpu or _is_npu or _is_hip or _is_xpu`` took
``torch.argmax`` of the target's logits and ``verify_tree_greedy_func``; issue 32922 and PRs 31214,
39253 report it, PR 37134 routes HIP to the sampling path, and at 003ddbc the predicate is
``_verify_uses_greedy``, whose docstring records that HIP "used to be listed here unconditionally";
docs/maths.md, "Released rules, ported").

At the accepted node u (the root first) the target's token is t(u) = argmax q(·|u) (``torch.argmax``:
the first maximal index); the children of u are walked in the sibling list's order and the first
equal to t(u) becomes u.  When none is, and at a leaf or at depth L, the extra token is t(u).  The rule
never reads p and tosses no coin: given the drafts its output is one path, the target's greedy path
cut where the drafts stop matching it.  At T > 0 the output law is therefore a point mass (whatever
the drafts, every output is a prefix of the same greedy path), far from q.

The temperature only shapes q here: the models are tempered before verification, and argmax is the
same at every T > 0.
"""
from __future__ import annotations

import numpy as np

from core.data.coins import Coins
from core.data.nodes import Node
from core.data.outcome import Outcome, Trace
from core.data.token_tree import TokenTree
from core.rules.base import Verifier
from core.rules.sibling_lists import walk


def point_mass(V: int, token: int) -> np.ndarray:
    out = np.zeros(V)
    out[token] = 1.0
    return out


class SglangRocmGreedy(Verifier):
    """SGLang on ROCm before PR 37134: accept the drafted child equal to the target's argmax."""

    name = "sglang_rocm_greedy"
    short = "SGLang ROCm greedy"
    label = "SGLang's EAGLE verification on ROCm before PR 37134, greedy at any temperature"
    engine = "SGLang"
    color = "#ff7799"  # SGLang's colour
    summary = ("At each accepted node accept the drafted child equal to the target's most probable token and "
               "emit that token where none is, whatever the temperature, as SGLang did on ROCm.")
    source = ("sgl-project/sglang, eagle_sample in python/sglang/srt/speculative/eagle_utils.py before PR 37134 "
              "(issue 32922, PRs 31214, 39253; the predicate _verify_uses_greedy at 003ddbc)")
    single_draft = False
    order_invariant = False
    lossless_by_theory = False
    needs_models = False
    closed_form_tau = False
    token_trees = True
    runs_on = (("chains", "iid"), ("tree", "topk"))
    released_port = True

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:
        """Chains sampled by the draft (SGLang's rejection-sampling drafts) as their sibling lists."""
        return self.run_tree(block, coins)

    def run_tree(self, tree: TokenTree, coins: Coins) -> Outcome:
        def step(u: Node, offers, trace: Trace, coins: Coins):
            q = tree.q[u]
            target = int(np.argmax(q))
            for k, (x, _, draft) in enumerate(offers):
                if trace.test(u + (x,), draft, float(x == target), x == target, "token", q=q[x]):
                    return k, None
            return None, point_mass(q.size, target)
        return walk(tree, coins, step, bonus=lambda q: point_mass(q.size, int(np.argmax(q))))

    def __repr__(self) -> str:
        return "<verifier sglang_rocm_greedy>"
