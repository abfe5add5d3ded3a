"""The optimal valid verifier as a runnable rule: sample the output of the LP of docs/maths.md.

``core.bounds.optimal_lp`` solves, for toy models, the LP whose variables π(m, s, y) are the joint
probabilities of the draft multiset m and the output O = (s, y).  Its solution is a verifier: given
the drafts' multiset m, output (s, y) with probability π(m, s, y)/P(m).  By construction the
output law satisfies (V) (lossless) and E[τ] equals the LP optimum, the largest E[τ] of any
lossless verifier with K i.i.d. drafts of length L.  It needs the models (the plan is a table over
every draft multiset), so it runs on toy models only.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from core.bounds.sizes import lp_size
from core.data.coins import Coins
from core.data.trace import Outcome, Trace
from core.data.tree import DraftBlock, Node
from core.rules.base import Verifier, VerifierError

if TYPE_CHECKING:
    from core.bounds.lp import OptimalPlan


class LPOptimal(Verifier):
    """Sample (s, y) from the optimal LP plan of the drafts' multiset."""

    name = "lp_optimal"
    short = "LP-optimal"
    label = "samples the optimal LP plan"
    color = "#000000"  # black
    summary = ("The best lossless verifier for K i.i.d. drafts, solved as a linear program "
               "(toy models only); its E[τ] is the LP optimum.")
    source = ("Optimal lossless verifier: linear program over draft multisets and outputs "
              "(docs/maths.md); reduces to block verification (Sun et al., ICLR 2025) at K = 1")
    single_draft = False
    order_invariant = True
    lossless_by_theory = True
    needs_models = True          # the plan is solved from the toy models themselves
    closed_form_tau = False

    def __init__(self, draft=None, target=None, K: int | None = None, L: int | None = None,
                 plan: OptimalPlan | None = None):
        if plan is None:
            if draft is None or target is None or K is None or L is None:
                raise VerifierError(
                    "the LP-optimal verifier needs either a solved plan or the toy draft and "
                    "target models with K and L, because it tabulates every draft multiset")
            # Imported here, not at the top: the LP solver brings scipy (about 2.5 s), which
            # listing or instantiating any other rule must not pay for.
            from core.bounds.lp import optimal_lp
            plan = optimal_lp(draft, target, int(K), int(L))
        for key, value in (("K", K), ("L", L)):
            if value is not None and int(value) != getattr(plan, key):
                raise VerifierError(f"{key}={value} does not match the plan's "
                                    f"{key}={getattr(plan, key)}")
        self.plan = plan

    def run(self, block: DraftBlock, coins: Coins) -> Outcome:
        plan = self.plan
        if (block.K, block.L, block.V) != (plan.K, plan.L, plan.V):
            raise VerifierError(
                f"the drafts have K={block.K}, L={block.L}, V={block.V} but the plan was solved "
                f"for K={plan.K}, L={plan.L}, V={plan.V}")
        drafts = [block.draft(k) for k in range(block.K)]
        entries = plan.plan_for(drafts)
        if entries is None:
            raise VerifierError("these drafts have probability 0 under the draft model, so the "
                                "LP plan has no row for them")
        keys = list(entries)
        probs = np.array([entries[key] for key in keys], dtype=np.float64)
        s, y = keys[coins.categorical(probs)]
        trace = Trace()
        trace.note(s, plan_prob=entries[(s, y)])
        first = next((k for k, x in enumerate(drafts) if s and x[: len(s)] == s), -1)
        residual = np.zeros(plan.V)
        residual[y] = 1.0
        return Outcome(s, first, residual, trace)

    def model_output_law(self, draft, target, K: int, L: int) -> tuple[dict[Node, float], int]:
        """P(O = u) = Σ_m P(m)·plan_m(u) read off the plan (``OptimalPlan.output_law``): ``run``
        draws (s, y) from plan_m with one categorical coin, so this is its law; the tests check it
        against the coin-by-coin law of every multiset.  Returns the law and the multisets."""
        plan = self.plan
        if (K, L, draft.V) != (plan.K, plan.L, plan.V):
            raise VerifierError(f"K={K}, L={L}, V={draft.V} do not match the plan's "
                                f"K={plan.K}, L={plan.L}, V={plan.V}")
        return plan.output_law(), len(plan.multisets)

    @staticmethod
    def model_law_cost(V: int, K: int, L: int) -> float:
        """Seconds, roughly: one dict update per plan entry (multisets × tree nodes × V)."""
        return 5e-7 * V * lp_size(V, K, L, "optimal").size + 1e-3
