"""Trials for the serving engines' rules on one drafted chain (``core.rules.one_chain``): the rule with
its own parameters on a chain sampled from p, or on the drafter's argmax chain (the ``topk`` tree
b = (1, …, 1)), lossless or not, and one rule's acceptance against another's on the same drafts.
The engines' claims modules (``vllm_verification``, ``vllm_ascend``, ``hf_static_ensemble``) build
their claims from these.
"""
from __future__ import annotations

from functools import partial
from typing import Mapping

from toy_models import ToyModel

from core.analysis.exact import LOSSLESS_TOL, ExactResult, exact_analysis
from core.claims.base import Trial
from core.claims.engine_checks import opens_tree
from core.data.laws import IID_LAW, TOPK_LAW
from core.data.shapes import Shape
from core.rules.registry import make_verifier

#: The drafts an engine's chain comes from: sampled from p (K = 1 i.i.d. chain), or the drafter's
#: argmax at every step (EAGLE's and n-gram drafters' proposals).
SAMPLED, ARGMAX = "sampled", "argmax"


def drafts_of(kind: str, L: int) -> dict:
    """``exact_analysis``'s keywords for one chain of length L of this kind."""
    if kind == ARGMAX:
        return {"shape": Shape.tree((1,) * L), "law": TOPK_LAW}
    return {"K": 1, "L": L}


def exact_on(rule: str, params: Mapping | None, draft: ToyModel, target: ToyModel, L: int,
             kind: str = SAMPLED) -> ExactResult:
    """The exact analysis of ``rule`` with its ``params`` on one chain of length L of this kind."""
    return exact_analysis(make_verifier(rule, **dict(params or {})), draft, target, **drafts_of(kind, L))


def opens(kind: str, params: Mapping | None, K: int, L: int) -> dict:
    """Where a family's worst instance opens: the laboratory for sampled chains, the Draft trees page
    for the argmax chain (``engine_checks.opens_tree``); with the rules' parameters ``params``
    ({rule: {name: value}}) in its link."""
    if kind == ARGMAX:
        return opens_tree((1,) * L, TOPK_LAW.name, params)(K, L)
    return {"params": dict(params)} if params else {}


def opener(kind: str = SAMPLED, params: Mapping | None = None):
    """``opens`` for a claim's family (``Claim.opens``)."""
    return partial(opens, kind, params)


def lossless(rule: str, params: Mapping | None, kind: str, draft: ToyModel, target: ToyModel, K: int, L: int) -> Trial:
    """"``rule`` is lossless": its completed output law against q on the instance's chain."""
    r = exact_on(rule, params, draft, target, L, kind)
    return Trial(r.is_lossless, LOSSLESS_TOL - r.fidelity_tv,
                 {f"{rule}_tv": r.fidelity_tv, f"{rule}_expected_accepted": r.expected_accepted})


def lossless_trial(rule: str, params: Mapping | None = None, kind: str = SAMPLED):
    return partial(lossless, rule, dict(params or {}), kind)


def law_distance(a: ExactResult, b: ExactResult) -> float:
    """TV between two rules' output laws on the same drafts: the laws of O = s·y, the accepted prefix
    and the extra token (not the completed laws, which two lossless rules share)."""
    keys = set(a.output_law) | set(b.output_law)
    return 0.5 * sum(abs(a.output_law.get(u, 0.0) - b.output_law.get(u, 0.0)) for u in keys)


def fewer(rule: str, params: Mapping | None, other: str, other_params: Mapping | None, kind: str,
          draft: ToyModel, target: ToyModel, K: int, L: int) -> Trial:
    """""``rule`` accepts fewer tokens than ``other`` on the same chain": both exact E[τ] (the margin is
    other's minus rule's), and the distance between their output laws beside."""
    a = exact_on(rule, params, draft, target, L, kind)
    b = exact_on(other, other_params, draft, target, L, kind)
    gap = b.expected_accepted - a.expected_accepted
    return Trial(gap > LOSSLESS_TOL, gap, {f"{rule}_expected_accepted": a.expected_accepted,
                                           f"{other}_expected_accepted": b.expected_accepted,
                                           "law_tv": law_distance(a, b)})


def fewer_trial(rule: str, params: Mapping | None, other: str, other_params: Mapping | None = None,
                kind: str = SAMPLED):
    return partial(fewer, rule, dict(params or {}), other, dict(other_params or {}), kind)
