"""The checks the serving engines' claims share (the sources of group ``engines``: one module per
engine, ``core/claims/trtllm_tree_rejection.py`` and the others): an engine's released rule on one
instance's drafts, K i.i.d. chains or a static tree ``b`` drafted by a law, with the rule's parameters
the instance carries (``Instance.params``, which its link carries too), decided exactly:

* ``lossless``: the completed output law against q, the lossless rules' E[τ] on the same drafts beside;
* ``against``: its E[τ] against the best lossless verifier of the same drafts, the own-law LP optimum
  (``core.analysis.optimum.optimum_value``), with rrs and traversal beside; a higher E[τ] of a lossy
  rule is a gain bought with loss (``BOUGHT``), never a win;
* ``counterexample``: the smallest lossy instance a search finds, from the smallest drafts up, models
  whose probabilities are simple fractions (``core.claims.court.RATIONAL``), shown as fractions; the
  link opens the instance found;
* ``repair``: the lossless rule an engine's drafts call for, on the same drafts, and what it accepts;
* ``tree_trial``: a family's trial, the rule on a fixed static tree and law over seeded models.
"""
from __future__ import annotations

from typing import Callable, Mapping, Sequence

from toy_models import ToyModel

from core.analysis.exact import LOSSLESS_TOL, ExactResult, exact_analysis
from core.analysis.optimum import optimum_value
from core.claims.base import BOUGHT, FAILS, HOLDS, Instance, Trial, holds
from core.claims.court import rational_pairs, exact_model
from core.data.exact_fraction import fraction
from core.data.shapes import Shape
from core.rules.registry import make_verifier

#: The lossless rules an engine's rule is measured against on its own drafts (both run on every tree).
LOSSLESS = ("rrs", "traversal")


def drafts_of(inst: Instance) -> dict:
    """The instance's drafts as ``exact_analysis`` takes them: a static tree and its law, or K, L."""
    return {"shape": Shape.tree(inst.b), "law": inst.law} if inst.b else {"K": inst.K, "L": inst.L}


def shape_of(inst: Instance) -> Shape:
    return Shape.tree(inst.b) if inst.b else Shape.chains_of(inst.K, inst.L)


def analysed(rule: str, inst: Instance, draft: ToyModel | None = None, target: ToyModel | None = None,
             settings: Mapping | None = None) -> ExactResult:
    """``rule``'s exact analysis on the instance's drafts (or on ``draft``, ``target``), with the
    parameters the instance gives it (or ``settings``)."""
    if draft is None:
        draft, target = inst.models()
    params = dict(settings if settings is not None else (inst.params or {}).get(rule, {}))
    drafts = drafts_of(inst)
    verifier = make_verifier(rule, draft=draft, target=target, **drafts, **params)
    return exact_analysis(verifier, draft, target, **drafts)


def lossless(rule: str, beside: Sequence[str] = ()) -> Callable[[Instance], tuple[str, dict]]:
    """"``rule`` keeps q's law on these drafts": its TV from q and E[τ], the E[τ] of ``beside`` on the
    same drafts (their own defaults)."""
    def check(inst: Instance):
        draft, target = inst.models()
        r = analysed(rule, inst, draft, target)
        numbers = {rule: r.expected_accepted, f"{rule}_tv": r.fidelity_tv}
        numbers.update({b: analysed(b, inst, draft, target, {}).expected_accepted for b in beside})
        return holds(r.is_lossless), numbers
    return check


def against(rule: str, rivals: Sequence[str] = LOSSLESS) -> Callable[[Instance], tuple[str, dict]]:
    """"``rule`` accepts at least as much as the best lossless verifier of the same drafts": its E[τ]
    against the own-law LP optimum, ``rivals`` beside; holds with the gain bought with loss where the
    rule is lossy and above it."""
    def check(inst: Instance):
        draft, target = inst.models()
        r = analysed(rule, inst, draft, target)
        lp = optimum_value(draft, target, shape_of(inst), inst.law)
        numbers = {rule: r.expected_accepted, f"{rule}_tv": r.fidelity_tv, "lp_optimum": lp,
                   **{x: analysed(x, inst, draft, target, {}).expected_accepted for x in rivals},
                   "gain": r.expected_accepted - lp}
        if numbers["gain"] > LOSSLESS_TOL and not r.is_lossless:
            numbers[BOUGHT] = True
        return holds(numbers["gain"] >= -LOSSLESS_TOL), numbers
    return check


def counterexample(rule: str, cases: Sequence[tuple[tuple[int, ...], str]], Vs: Sequence[int] = (2, 3),
                   methods: Sequence[str] = ()) -> Callable[[Instance], tuple]:
    """"No instance shows a loss": the first lossy instance, trying each static tree and law of
    ``cases`` in order (the smallest first), at each V of ``Vs`` every ordered pair of the simple
    fractions' i.i.d. models, with the rule's parameters from the claim's instance; fails there, with
    the models as fractions, and the link opens it.  Holds when none of them is lossy."""
    def check(inst: Instance):
        settings = (inst.params or {}).get(rule, {})
        tried = 0
        for b, law in cases:
            for V in Vs:
                for draft, target in rational_pairs(V):
                    found = Instance.of(draft, target, b[0], len(b), page="trees", b=tuple(b), law=law,
                                        methods=tuple(methods), params=inst.params)
                    try:
                        r = analysed(rule, found, draft, target, settings)
                    except ValueError:            # a law that cannot draw this tree from these models
                        continue
                    tried += 1
                    if not r.is_lossless:
                        numbers = {"tree": f"{Shape.tree(b).label} drafted by {law}, V = {V}",
                                   "p": probs(draft), "q": probs(target),
                                   rule: r.expected_accepted, f"{rule}_tv": r.fidelity_tv,
                                   "tv_fraction": fraction(r.fidelity_tv, integers=True) or "",
                                   "searched": f"{tried} (the first lossy one)"}
                        return FAILS, numbers, found
        return HOLDS, {"searched": f"{tried}, none lossy"}
    return check


def probs(model: ToyModel) -> str:
    """An i.i.d. model's probabilities as the fractions they are: "(1/3, 2/3)"."""
    return "(" + ", ".join(map(str, exact_model(model)["probs"])) + ")"


def repair(rule: str, fixed: str = "rrs") -> Callable[[Instance], tuple[str, dict]]:
    """"The repair, ``fixed`` on the same drafts, is lossless": its TV and E[τ], the rule's beside."""
    def check(inst: Instance):
        draft, target = inst.models()
        r = analysed(rule, inst, draft, target)
        f = analysed(fixed, inst, draft, target, {})
        return holds(f.is_lossless), {fixed: f.expected_accepted, f"{fixed}_tv": f.fidelity_tv,
                                      rule: r.expected_accepted, f"{rule}_tv": r.fidelity_tv}
    return check


def tree_trial(rule: str, b: tuple[int, ...], law: str, settings: Mapping | None = None,
               beside: Sequence[str] = ("rrs",)) -> Callable[..., Trial]:
    """A family's trial: ``rule`` lossless on the static tree ``b`` drafted by ``law`` (the family's K
    and L are b's), ``beside``'s E[τ] on the same drafts."""
    def trial(draft: ToyModel, target: ToyModel, K: int, L: int) -> Trial:
        shape = Shape.tree(b)
        r = exact_analysis(make_verifier(rule, draft=draft, target=target, shape=shape, law=law, **(settings or {})),
                           draft, target, shape=shape, law=law)
        numbers = {rule: r.expected_accepted, f"{rule}_tv": r.fidelity_tv}
        numbers.update({x: exact_analysis(x, draft, target, shape=shape, law=law).expected_accepted for x in beside})
        return Trial(r.is_lossless, LOSSLESS_TOL - r.fidelity_tv, numbers)
    return trial


def opens_tree(b: tuple[int, ...], law: str, params: Mapping | None = None) -> Callable[[int, int], dict]:
    """A family's worst instance opens on the Draft trees page with its tree, law and the rule's parameters."""
    def opens(K: int, L: int) -> dict:
        return {"page": "trees", "b": tuple(b), "law": law, **({"params": params} if params else {})}
    return opens
