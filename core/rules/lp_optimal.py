"""The optimal valid verifier as a runnable rule: sample the output of the LP of docs/maths.md.

``core.bounds.optimal_lp`` solves, for toy models, the LP whose variables π(m, s, y) are the joint
probabilities of the draft multiset m and the output O = (s, y).  Its solution is a verifier: given
the drafts' multiset m, output (s, y) with probability π(m, s, y)/P(m).  By construction the
output law satisfies (V) (lossless) and E[τ] equals the LP optimum, the largest E[τ] of any
lossless verifier with K i.i.d. drafts of length L.  It needs the models (the plan is a table over
every draft multiset), so it runs on toy models only.

On a token tree of any shape and law it samples the own-law LP (``core.bounds.lp.optimal_tree_lp``)
instead: the plan of the realised tree's node set, whose E[τ] is the best of any lossless verifier
for that shape and law.

The plan has a row per drafted set, so the rule stops where the per-set form does
(``core.bounds.sizes.check_size``): past that the optimum's *value* is still computed, in node form
(``core.bounds.node_lp``, the ``lp`` bound), but no verifier that attains it is sampled.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from core.bounds.sizes import lp_size, tree_lp_size
from core.data.coins import Coins
from core.data.laws import IID_LAW, DraftLaw, is_iid_chains, law_at
from core.data.levels import node_recursion_cost
from core.data.shapes import Shape
from core.data.token_tree import TokenTree
from core.data.outcome import Outcome, Trace
from core.data.nodes import Node
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
    optimal_lp = True
    closed_form_tau = False
    how = ("**How the LP-optimal verifier decides.** It makes no test token by token: given the drafts, it draws "
           "the accepted prefix and the extra token at once from the optimal LP's plan.")
    token_trees = True

    def __init__(self, draft=None, target=None, K: int | None = None, L: int | None = None,
                 plan: OptimalPlan | None = None, *, shape: Shape | None = None, law: DraftLaw = IID_LAW):
        if plan is None:
            if draft is None or target is None or (shape is None and (K is None or L is None)):
                raise VerifierError(
                    "the LP-optimal verifier needs either a solved plan or the toy draft and "
                    "target models with K and L (or a shape and a law), because it tabulates every "
                    "draft multiset")
            # Imported here, not at the top: the LP solver brings scipy (about 2.5 s), which
            # listing or instantiating any other rule must not pay for.
            from core.bounds.lp import optimal_lp, optimal_tree_lp
            from core.bounds.sizes import BoundsTooLarge
            try:
                plan = (optimal_lp(draft, target, int(K), int(L)) if shape is None
                        else optimal_tree_lp(draft, target, shape, law))
            except BoundsTooLarge as exc:
                why = str(exc).rsplit("; use a smaller", 1)[0]
                raise BoundsTooLarge(f"{why}: the LP-optimal verifier samples this per-set plan, so it stops "
                                     f"here, but the LP optimum's value is still computed (the lp "
                                     f"bound)") from None
        for key, value in (("K", K), ("L", L)):
            if value is not None and int(value) != getattr(plan, key):
                raise VerifierError(f"{key}={value} does not match the plan's "
                                    f"{key}={getattr(plan, key)}")
        self.plan = plan

    def _check_drafts(self, shape: Shape, law: DraftLaw, V: int) -> None:
        """Refuse drafts of another shape, law or vocabulary than the plan's."""
        plan = self.plan
        if plan.shape is None:
            ok = is_iid_chains(shape, law) and (shape.K, shape.L) == (plan.K, plan.L)
            solved = f"{plan.K} i.i.d. chains of length {plan.L}"
        else:
            ok = shape.branching == plan.shape.branching and all(
                law_at(shape, d, law) is law_at(plan.shape, d, plan.law) for d in range(shape.L))
            solved = f"{plan.shape.label} drafted by {plan.law.name}"
        if not ok or V != plan.V:
            raise VerifierError(f"these drafts ({shape.label} drafted by {law.name}, V={V}) are not "
                                f"those the plan was solved for ({solved}, V={plan.V})")

    def run_tree(self, tree: TokenTree, coins: Coins) -> Outcome:
        self._check_drafts(tree.shape, tree.law, tree.V)
        leaves = tree.leaves()
        if self.plan.shape is None:      # i.i.d. chains: the plan is keyed by the draft multiset
            leaves = [x for x in leaves for _ in range(tree.multiplicity(x))]
        entries = self.plan.plan_for(leaves)
        if entries is None:
            raise VerifierError("this tree has probability 0 under the draft model and its law, so "
                                "the LP plan has no row for it")
        keys = list(entries)
        s, y = keys[coins.categorical(np.array([entries[key] for key in keys], dtype=np.float64))]
        trace = Trace()
        trace.note(s, plan_prob=entries[(s, y)])
        residual = np.zeros(self.plan.V)
        residual[y] = 1.0
        first = tree.table()[s[:-1]][s[-1]][0] if s else -1
        return Outcome(s, first, residual, trace)

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:
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

    def tree_output_law(self, draft, target, shape: Shape, law: DraftLaw) -> tuple[dict[Node, float], int]:
        """P(O = u) = Σ_t P(t)·plan_t(u) read off the own-law plan (``run`` on a token tree draws
        from plan_t); returns it and the number of node sets."""
        self._check_drafts(shape, law, draft.V)
        return self.plan.output_law(), len(self.plan.multisets)

    @staticmethod
    def tree_law_cost(V: int, shape: Shape, law: DraftLaw) -> float:
        """Seconds, roughly: one dict update per plan entry (node sets × tree nodes × V), and the
        pass over Ω^(L+1) that completes the law (``node_recursion_cost``)."""
        return (5e-7 * V * tree_lp_size(V, shape, law).size
                + node_recursion_cost(V, 1, shape.L))
