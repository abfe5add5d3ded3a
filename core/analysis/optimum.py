"""The LP optimum a rule is measured against: the largest E[τ] of any lossless verifier of the same
drafts (docs/maths.md, "The optimal verifier").

One function for the command line's "% of LP optimum" and the court (``core.claims.court``): the LP
in node form (``core.bounds.node_lp``), whose size does not grow with K, for K i.i.d. chains and
every token tree alike.
"""
from __future__ import annotations

from toy_models import ToyModel

from core import bounds
from core.data.laws import IID_LAW, DraftLaw
from core.data.shapes import Shape


def optimum_value(draft: ToyModel, target: ToyModel, shape: Shape, law: str | DraftLaw = IID_LAW) -> float:
    """The optimal lossless verifier's E[τ] for drafts of ``shape`` and ``law`` (K i.i.d. chains
    for ``iid`` on chains): the node form, or the per-set form where the node form is past its limits
    (a node of distinct draws with too many combinations) and the per-set one is not.  Raises
    ``BoundsTooLarge`` where both are, ``NotConverged`` with its bounds when they do not meet."""
    try:
        return float(bounds.tree_lp_optimum(draft, target, shape, law).value)
    except bounds.BoundsTooLarge:
        return float(bounds.optimal_tree_lp(draft, target, shape, law, general=True).value)


def percent_of(value: float, optimum: float) -> float:
    """100·value/optimum; 100 when the optimum is 0 (no rule accepts anything, and every rule attains it)."""
    return 100.0 * value / optimum if optimum > 0 else 100.0
