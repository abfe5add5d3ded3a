"""The best top-down rule, computed bottom-up, and the range of acceptance-optimal ones (toy models;
docs/maths.md, `td_optimal`).

**Top-down rules.**  A top-down rule walks the draft tree from the root (``core.rules.tree_walk``).
At a node s with k drafts through it, their next tokens form a multiset m of k i.i.d. draws from
p(·|s), with law P_k(m) = k!/Π_x c_m(x)! · Π_i p(m_i|s) (c_m(x) = x's multiplicity in m), and the
node emits y ~ q(·|s) through a coupling π_(s,k)(m, y) of P_k and q(·|s).  A drafted y
(c_m(y) ≥ 1) continues at s·y with the c_m(y) drafts that proposed it; an undrafted y stops the
walk with the output (s, y); at |s·y| = L the block is complete.  Given that the walk reaches s
with k drafts, their tokens below s are i.i.d. from p and independent of all the walk has seen, so
the rest of the walk depends on (s, k) and on the plans below, and its expected accepted length is

    U(s, k) = Σ_(m, y) π_(s,k)(m, y) · 1[y ∈ m] · (1 + U(s·y, c_m(y))),   U = 0 at depth L,

with E[τ] = U(∅, K).

**The node LP.**  The coupling enters U(s, k) only through its accepted part
f(m, y) = π(m, y)·1[y ∈ m], which satisfies Σ_y f(m, y) ≤ P_k(m), Σ_m f(m, y) ≤ q(y|s), f ≥ 0,
and earns Σ f(m, y)·w(m, y), w(m, y) = 1 + U(s·y, c_m(y)).  Conversely every such f is the
accepted part of a coupling *or is improved by one*: the leftover row masses P_k(m) − Σ_y f(m, y)
and column masses q(y) − Σ_m f(m, y) have equal totals, any coupling of them (the product, say)
completes f to a coupling of P_k and q, and whatever it puts on pairs with y ∈ m only adds reward
(w ≥ 1).  So max over couplings = max over flows: the single-token flow LP with weights w
(``core.bounds.lp.single_token_plan`` with ``continuation``).  The acceptance of a coupling is
Σ f; a flow with Σ f = α*(k), the largest acceptance (``core.bounds.closed_form``), cannot be
completed with mass on y ∈ m (that would accept more than α*), so acceptance-optimal couplings and
flows with the row Σ f = α*(k) are the same objects with the same reward.

At k = 1 no LP is needed: each f(x, x) is capped by min(p(x), q(x)) independently and earns
w > 0, so the best flow is f(x, x) = min(p(x), q(x)), token-level SD; its acceptance
Σ min(p, q) = α*(1) forces the same flow in the range's two modes.

**Modes** (``top_down``), all solved bottom-up, node by node, from the values of the children:

- ``"best"``: V(s, k) = max over node flows of Σ f·(1 + V(s·y, c_m(y))).  This is the best
  top-down rule.  By induction from depth L: whatever the rule does at and below s (its plans may
  depend on the history, or be randomised), given (s, k) the reward at s is
  Σ π·1[y ∈ m]·(1 + E[subtree of s·y | c_m(y) drafts]) ≤ Σ f·(1 + V(s·y, c_m(y))) ≤ V(s, k);
  the rule that plays the maximising flow at every (s, k) attains it.
- ``"max"`` / ``"min"``: the same programme over flows with Σ f = α*(k) at every node (the row
  reads α* from the closed form, so a wrong closed form would make the LP infeasible), maximising
  with the children's maxima, or minimising with their minima.  These are the largest and smallest
  E[τ] over all top-down rules whose every node plan is acceptance-optimal.  Why composing
  bottom-up gives the global extremes: U(s, k) is a non-negative combination of the children's
  U(s·y, j) (coefficients f ≥ 0), hence increasing in each; a rule's choices at distinct states
  (s·y, j) are independent of each other, and one choice per state serves every parent branch
  that reaches it, so the children's maxima are attained together, and then the best flow at s
  against them is the maximum at s.  A rule whose plan at (s, k) depends on the history is, given
  the history, one of these rules below s, so by induction its value lies in
  [U_min(s, k), U_max(s, k)] too.  Likewise for the minimum.

Since the acceptance-optimal rules are among all top-down rules, V(∅, K) ≥ U_max(∅, K), with
equality exactly when some best node flow is acceptance-optimal along the way (docs/maths.md
reports how often that holds).

One LP per (node, k ≥ 2) and mode, over C(V + k − 1, k) multisets: toy vocabularies only.  Nodes a
draft cannot reach (p(y|s) = 0) are not solved; identical LPs (same p, q, k and child values, as at
every node of one depth of a context-independent model) are solved once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from core.bounds.closed_form import single_token_optimum
from core.bounds.lp import SingleTokenPlan, single_token_plan
from core.bounds.sizes import SIZE_LIMIT, WORK_LIMIT, check_size, validate_pair
from core.data.nodes import Node
from core.errors import InvalidInput

if TYPE_CHECKING:
    from toy_models import ToyModel

#: "best": the best top-down rule; "max"/"min": the extremes over acceptance-optimal node plans.
MODES = ("best", "max", "min")


@dataclass(frozen=True)
class TopDown:
    """U(s, k) and the node flow attaining it, for every reachable node s (|s| < L) and draft count
    k, in one mode; ``value`` = U(∅, K) = E[τ]."""

    mode: str
    K: int
    L: int
    values: dict[tuple[Node, int], float]
    plans: dict[tuple[Node, int], SingleTokenPlan]

    @property
    def value(self) -> float:
        return self.values[((), self.K)]


def node_flow(p: np.ndarray, q: np.ndarray, k: int, continuation: np.ndarray, mode: str = "best", *,
              limit: int = SIZE_LIMIT, work_limit: int = WORK_LIMIT) -> SingleTokenPlan:
    """The node LP for k drafts: the flow f(m, y) maximising (or, mode "min", minimising)
    Σ f(m, y)·(1 + continuation[y, c_m(y) − 1]), with Σ f = α*(k) in modes "max" and "min".
    ``value`` is that objective."""
    if mode not in MODES:
        raise InvalidInput(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    if k == 1:
        f = np.minimum(p, q)
        return SingleTokenPlan(float(np.dot(f, 1.0 + continuation[:, 0])),
                               np.arange(p.size)[:, None], p.copy(), np.diag(f))
    alpha = None if mode == "best" else single_token_optimum(p, q, k)
    return single_token_plan(p, q, k, continuation=continuation, acceptance=alpha,
                             minimize=mode == "min", limit=limit, work_limit=work_limit)


def top_down(draft: ToyModel, target: ToyModel, K: int, L: int, mode: str = "best", *,
             limit: int = SIZE_LIMIT, work_limit: int = WORK_LIMIT) -> TopDown:
    """Solve the node LPs bottom-up (module docstring) from (∅, K): U(s, k) for every reachable
    state, and each state's flow.

    Raises ``BoundsTooLarge`` if a node LP for K drafts over V tokens exceeds the limits
    (``core.bounds.sizes.check_size``), ``LPFailed`` if HiGHS fails.

    Examples
    --------
    On the binary toy with K = 2, L = 2 the best top-down rule accepts 128/81 tokens on average:

    >>> from fractions import Fraction
    >>> from toy_models import PRESETS
    >>> toy = PRESETS["binary-toy"]
    >>> Fraction(top_down(toy.draft, toy.target, 2, 2).value).limit_denominator(1000)
    Fraction(128, 81)
    """
    V = validate_pair(draft, target, K, L)
    check_size(V, K, 1, limit, "optimal", work_limit=work_limit)
    values: dict[tuple[Node, int], float] = {}
    plans: dict[tuple[Node, int], SingleTokenPlan] = {}
    solved: dict[tuple[bytes, bytes, int, bytes], SingleTokenPlan] = {}

    def solve(s: Node, k: int) -> float:
        if (s, k) in values:
            return values[(s, k)]
        p = np.asarray(draft.cond(s), dtype=np.float64)
        q = np.asarray(target.cond(s), dtype=np.float64)
        below = np.zeros((V, k))
        if len(s) + 1 < L:
            for y in np.flatnonzero(p > 0):
                below[y] = [solve(s + (int(y),), j) for j in range(1, k + 1)]
        key = (p.tobytes(), q.tobytes(), k, below.tobytes())
        if key not in solved:
            solved[key] = node_flow(p, q, k, below, mode, limit=limit, work_limit=work_limit)
        plans[(s, k)] = solved[key]
        values[(s, k)] = solved[key].value
        return values[(s, k)]

    solve((), int(K))
    return TopDown(mode, int(K), int(L), values, plans)
