"""EAGLE's released sampling verification (SafeAILab/EAGLE, ``eagle/model/utils.py``,
``evaluate_posterior``): is it lossless at T ≠ 1, at the current release (cb7e084) and at the EAGLE-2
release (bfeb532, up to c892473)?  And is drafting by top-k lossless (EAGLE's tracker, issues 110 and
93)?  The rule is ``core.rules.eagle`` (docs/maths.md, "EAGLE's sampling verification"); the two
releases differ in the bonus line alone: the current one draws it from the target at T, the EAGLE-2
one from the target at T = 1.

An EAGLE-2 claim's link carries the release (the rule's ``release`` parameter), so the laboratory
opens that release; ``python -m core exact --method eagle --release eagle2 --temperature T`` prints
the same numbers.  The other release's TV beside a claim is the command line's.
"""
from __future__ import annotations

from functools import partial

from toy_models import ToyModel

from core.analysis.exact import LOSSLESS_TOL, exact_analysis
from core.analysis.released_ports import eagle_numbers
from core.claims.base import Claim, Family, Instance, Source, Trial, holds, lossless_trial, trial_check
from core.data.laws import TOPK_LAW
from core.data.shapes import Shape
from core.rules.eagle import Eagle

SOURCE = Source("eagle", "Li et al., EAGLE's released sampling verification (current and EAGLE-2 releases)",
                "github.com/SafeAILab/EAGLE, eagle/model/utils.py at cb7e084 and bfeb532; issues 110 and 93",
                "https://github.com/SafeAILab/EAGLE/issues/110")
RULE = "eagle"
METHODS = (RULE, "sd", "bv")
#: The temperature of the single instances and families: any T ≠ 1 separates the releases.
T = 0.5
#: The top-k tree of the tracker's question: two children per node, two levels (6 drafted tokens).
TOPK_TREE = (2, 2)


def release_trial(release: str, temperature: float, draft: ToyModel, target: ToyModel, K: int, L: int) -> Trial:
    """One release's completed output law on K i.i.d. chains against q, both models tempered at T."""
    n = eagle_numbers(release, temperature, K, L, draft=draft, target=target)
    return Trial(n["lossless"], LOSSLESS_TOL - n["tv"], {"tv": n["tv"], "expected_accepted": n["expected_accepted"]})


def _other_release(release: str, inst: Instance) -> dict:
    """The other release's TV on the same instance, beside the claim's."""
    other = "eagle2" if release == "current" else "current"
    return {f"{other}_tv": eagle_numbers(other, inst.T, inst.K, inst.L, *inst.models())["tv"]}


def _release_lossless(release: str):
    def check(inst: Instance):
        status, numbers = trial_check(partial(release_trial, release, inst.T))(inst)
        return status, {**numbers, **_other_release(release, inst)}
    return check


def _topk_lossless(inst: Instance):
    """Both releases on the instance's static top-k tree at its temperature; rrs beside (on a top-k tree
    EAGLE's rule is rrs, docs/maths.md)."""
    draft, target = inst.models()
    shape = Shape.tree(inst.b)
    now, old = (exact_analysis(Eagle(r, inst.T), draft, target, shape=shape, law=inst.law) for r in ("current", "eagle2"))
    rrs = exact_analysis("rrs", draft, target, shape=shape, law=inst.law)
    return holds(now.is_lossless), {"tv": now.fidelity_tv, "expected_accepted": now.expected_accepted,
                                    "rrs_expected_accepted": rrs.expected_accepted, "eagle2_tv": old.fidelity_tv}


def _topk_tree(K: int, L: int) -> dict:
    return {"page": "trees", "b": TOPK_TREE, "law": TOPK_LAW.name}


TOY = dict(preset="binary-toy", T=T, methods=METHODS)
#: The EAGLE-2 release, as a link carries it (the rule's ``release`` parameter).
EAGLE2 = {RULE: {"release": "eagle2"}}
FAMILY = Family(("iid", "markov", "table"), Vs=(2, 3), Ks=(1, 2), Ls=(2,), n=3, T=T)
CLAIMS = (
    Claim("current-lossless", SOURCE, "EAGLE's sampling verification, current release, is lossless at T ≠ 1.",
          "The TV of its completed output law from q at T = 1/2, K = 1, L = 2, on the binary toy.",
          instance=Instance(1, 2, **TOY), check=_release_lossless("current")),
    Claim("eagle2-lossless", SOURCE, "EAGLE's sampling verification as in the EAGLE-2 release is lossless at T ≠ 1.",
          "The same TV for the EAGLE-2 release (its bonus token drawn from the untempered target); the link "
          "opens that release, as `python -m core exact --preset binary-toy --K 1 --L 2 --method eagle "
          "--release eagle2 --temperature 0.5` prints it.",
          instance=Instance(1, 2, **TOY, params=EAGLE2), check=_release_lossless("eagle2")),
    Claim("current-lossless-family", SOURCE, "The current release is lossless at T ≠ 1 on every instance.",
          "Its TV from q at T = 1/2 on each seeded instance, K ∈ {1, 2}, L = 2; the worst (largest) TV.",
          family=FAMILY, trial=partial(release_trial, "current", T), methods=METHODS),
    Claim("eagle2-lossless-family", SOURCE, "The EAGLE-2 release is lossless at T ≠ 1 on every instance.",
          "Its TV from q at T = 1/2 on each seeded instance, K ∈ {1, 2}, L = 2; the worst (largest) TV (the "
          "link opens that release on it).",
          family=FAMILY, trial=partial(release_trial, "eagle2", T), methods=METHODS,
          opens=lambda K, L: {"params": EAGLE2}),
    Claim("topk-lossless", SOURCE, "Verifying a tree drafted by top-k with EAGLE's rule is lossless (issues 110, 93).",
          "The TV from q of the current release on the static tree b = (2, 2) drafted by top-k at T = 1/2, on the "
          "three-token toy; the EAGLE-2 release's TV and rrs's E[τ] beside.",
          instance=Instance(2, 2, preset="three-token-toy", T=T, page="trees", b=TOPK_TREE, law=TOPK_LAW.name),
          check=_topk_lossless),
    Claim("topk-lossless-family", SOURCE, "EAGLE's rule on top-k trees is lossless on every instance.",
          "The current release's TV from q on the tree b = (2, 2) drafted by top-k at T = 1/2, on each seeded "
          "instance (V ∈ {3, 4}); the worst (largest) TV.",
          family=Family(("iid", "markov", "table"), Vs=(3, 4), Ks=(2,), Ls=(2,), n=3, T=T),
          trial=lossless_trial(RULE, shape=Shape.tree(TOPK_TREE), law=TOPK_LAW), methods=(RULE,),
          opens=_topk_tree),
)
