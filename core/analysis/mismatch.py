"""A draft verified with a law other than the one it was sampled from (docs/maths.md, "Verifying
with the wrong draft law"): the drafts are drawn from ``sampled`` (e.g. p after top-k or a
temperature), while the verifier is handed ``stated`` (the raw softmax p) as the draft law.

Exact, by enumeration of the single drafted path x ∈ Ω^L with weight sampled(x): the rule's own
conditional law given the block (``Verifier.law``), the block carrying ``stated``'s conditionals, and
the output law completed with target samples (``core.analysis.exact.completed_law``): the fidelity
error TV(P̃, q).  When ``sampled`` is ``stated`` this is ``exact_analysis`` for one draft.
"""
from __future__ import annotations

import itertools
from collections import defaultdict

import numpy as np

from toy_models import IIDModel, ToyModel

from core.analysis.exact import completed_law
from core.data.token_tree import TokenTree
from core.errors import InvalidInput
from core.rules.registry import get_verifier


def top_k_model(model: ToyModel, k: int) -> IIDModel:
    """A context-independent model truncated to its k most probable tokens (ties to the smaller id)
    and renormalised: what top-k sampling draws from."""
    if not isinstance(model, IIDModel):
        raise InvalidInput("top-k truncation is defined here for context-independent (i.i.d.) models")
    p = model.cond(())
    keep = np.argsort(-p, kind="stable")[:k]
    out = np.zeros_like(p)
    out[keep] = p[keep]
    return IIDModel(out / out.sum())


def mismatched_law(method: str, sampled: ToyModel, stated: ToyModel, target: ToyModel, L: int
                   ) -> tuple[float, float]:
    """(E[τ], TV from q) of a single-draft ``method`` whose one draft of length L is drawn from
    ``sampled`` while the rule reads ``stated`` as its draft law."""
    verifier = get_verifier(method)
    if not verifier.single_draft:
        raise InvalidInput(f"{method} is not a single-draft rule")
    output: dict = defaultdict(float)
    for x in itertools.product(range(target.V), repeat=L):
        w = sampled.joint(x)
        if w <= 0:
            continue
        block = TokenTree.chains_from_models([x], stated.cond, target.cond)
        for (s, y), prob in verifier.law(block).items():
            output[s + (y,)] += w * prob
    completed, q = completed_law(dict(output), target, L)
    tau = sum((len(u) - 1) * m for u, m in output.items())
    return float(tau), 0.5 * float(np.abs(completed - q).sum())
