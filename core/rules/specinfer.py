"""SpecInfer-style recursive rejection sampling (RRS, multi-candidate SD), docs/maths.md, with the tree walk.

T_1 = q; for i = 1..k accept X_i with probability min(1, T_i(X_i)/p(X_i)), else
T_(i+1) = normalize((T_i − p)₊); if all are rejected, y ~ T_(k+1).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from core.data.coins import Coins
from core.data.distributions import acceptance_ratio, residual
from core.data.trace import Trace
from core.data.tree import Node
from core.rules.tree_walk import TreeWalkVerifier


def rrs_core(p: np.ndarray, q: np.ndarray, k: int, trace: Trace, s: Node):
    """Recursive rejection at node s for k alive drafts."""
    trace.note(s, alive=k)

    def run(tokens: Sequence[int], drafts: Sequence[int], coins: Coins, trace: Trace):
        target = q
        for token, draft in zip(tokens, drafts):
            prob = acceptance_ratio(target[token], p[token])
            if trace.test(s + (token,), draft, prob, coins.bernoulli(prob), "token"):
                return draft, None
            target = residual(target - p, target)
        return None, target

    return run


class SpecInfer(TreeWalkVerifier):
    name = "specinfer"
    short = "SpecInfer"
    label = "recursive rejection sampling"
    color = "#999933"  # olive
    summary = ("K drafts, walked down the draft tree; at each node recursive rejection sampling tries "
               "the drafted tokens one after another.")
    source = "Miao et al. 2024 (SpecInfer); Yang et al. 2024 (multi-candidate SD)"
    single_draft = False
    order_invariant = False
    lossless_by_theory = True
    needs_models = False
    closed_form_tau = False
    core = staticmethod(rrs_core)
