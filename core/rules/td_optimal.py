"""The best top-down rule (docs/maths.md, `td_optimal`; after Hu et al., ICLR 2025, arXiv
2502.18779; Khisti et al., ICLR 2025, arXiv 2410.18234; Thomas & Pal, arXiv 2511.15898): the tree
walk of ``core.rules.tree_walk`` whose core at node s, for the k alive drafts, is the coupling of
their next tokens' multiset m with y ~ q(·|s) that maximises the expected accepted length of the
whole subtree, a drafted y of multiplicity j continuing at s·y with j drafts.

The plans come from ``core.bounds.top_down`` (mode "best"): one flow LP per (node, k), solved
bottom-up, whose flow f(m, y) (y ∈ m) is the accepted part of an optimal coupling.  Given m, the
core emits y ~ π(m, ·)/P(m).  A solver's f is feasible only to its tolerance, so the core plays it
in a form that is lossless to rounding whatever f is:

1. *Propose*: g(m, y) = f(m, y)₊/P(m), rows scaled down to Σ_y g(m, y) ≤ 1 (rows within 1e-12 of
   1 are scaled to 1 exactly); propose y ∈ m with probability g(m, y), and nothing with the
   rest, 1 − Σ_y g(m, y).  The proposed token's sub-probability law is r(y) = Σ_m P(m)·g(m, y),
   computed from g itself.
2. *Fix the q-marginal*: accept a proposed y with probability min(1, q(y)/r(y)); after a
   rejection, or when nothing was proposed, draw y from the residual ∝ (q − r)₊.

*Lossless, exactly.*  The emitted token has mass min(r(y), q(y)) from step 1 and
(1 − Σ_x min(r(x), q(x)))·(q − r)₊(y)/Σ_x (q − r)₊(x) from the residual; as Σ q = 1,
Σ_x (q − r)₊(x) = 1 − Σ_x min(r(x), q(x)), so the total is min(r, q) + (q − r)₊ = q(y) for
whatever sub-stochastic g: y ~ q(·|s) given the arrival at s, hence (tree walk, docs/maths.md)
the rule is lossless.  *Optimal.*  For an exact optimal f, r(y) = Σ_m f(m, y) ≤ q(y): every
proposal is accepted, so the accepted part of the played coupling contains f, and it cannot earn
more than the optimum, so it earns exactly V(s, k) (a residual draw that lands on a drafted token
is a drafted child and is descended into, as the rule's definition says; for an optimal f it has
probability zero, up to the solver's tolerance).  E[τ] = V(∅, K) to the solver's tolerance, and
the losslessness does not depend on it.

At k = 1 the plan is f(x, x) = min(p(x), q(x)) and the core is token-level SD.  At L = 1 the
weights are all 1 and the rule is the optimal single-token coupling, which attains α*.  The plans
need the toy models (a node's plan depends on the whole subtree below it): the rule is built with
them, or bound to them by the exact analysis (``model_output_law``).  ``summary_extras`` reports
the range [min, max] of E[τ] over the rules whose every node plan is acceptance-optimal
(``core.bounds.top_down``, modes "min" and "max").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from core.bounds.closed_form import single_token_optimum
from core.bounds.sizes import BoundsTooLarge, check_size
from core.data.coins import Coins
from core.data.distributions import acceptance_ratio, residual
from core.data.outcome import Outcome, Trace
from core.data.nodes import Node
from core.data.token_tree import TokenTree
from core.rules.base import Verifier, VerifierError
from core.rules.tree_walk import TreeWalkVerifier, tree_walk, tree_walk_output_law

if TYPE_CHECKING:
    from core.bounds.lp import SingleTokenPlan

#: A proposal row this close to a full distribution is scaled to one exactly, so that rounding
#: does not add a "propose nothing" branch of probability ~1e-16 to every enumeration.
_FULL = 1e-12


@dataclass(frozen=True)
class Coupling:
    """One node's plan as played (module docstring): proposal rows g(m, ·) by multiset with the
    probability of proposing nothing, the proposal law r, the residual ∝ (q − r)₊, the node's
    α*(k) and its value V(s, k)."""

    p: np.ndarray
    q: np.ndarray
    rows: dict[tuple[int, ...], np.ndarray]     # (g(m, 0..V−1), P(propose nothing | m))
    r: np.ndarray
    leftover: np.ndarray
    alpha: float
    value: float


def played(plan: SingleTokenPlan, p: np.ndarray, q: np.ndarray) -> Coupling:
    """Turn a node flow f into the proposal + residual coupling of the module docstring."""
    P, f = plan.probabilities, plan.flow
    ok = P > 0
    g = np.where(ok[:, None], np.maximum(f, 0.0) / np.where(ok, P, 1.0)[:, None], 0.0)
    total = g.sum(axis=1)
    g /= np.where((total > 1.0) | ((total > 0) & (total >= 1.0 - _FULL)), total, 1.0)[:, None]
    none = np.where(g.sum(axis=1) >= 1.0 - _FULL, 0.0, 1.0 - g.sum(axis=1))
    r = P @ g
    rows = {tuple(int(t) for t in m): np.append(row, rest)
            for m, row, rest in zip(plan.multisets, g, none)}
    k = plan.multisets.shape[1]
    return Coupling(p, q, rows, r, residual(q - r, q), single_token_optimum(p, q, k), plan.value)


class TDOptimal(Verifier):
    name = "td_optimal"
    short = "TD-optimal"
    label = "best top-down coupling"
    color = "#332288"  # indigo
    summary = ("Walk down the draft tree; at each node emit the token by the coupling of the alive "
               "drafts with the target that maximises the expected accepted length below it, solved "
               "bottom-up as one small linear program per node and draft count (toy models only).")
    source = ("Best top-down rule (docs/maths.md), after Hu et al., ICLR 2025 (arXiv 2502.18779); "
              "Khisti et al., ICLR 2025 (arXiv 2410.18234); Thomas & Pal (arXiv 2511.15898)")
    single_draft = False
    order_invariant = True
    lossless_by_theory = True
    needs_models = True          # a node's plan depends on the models' whole subtree below it
    closed_form_tau = False
    how = ("**How TD-optimal tests.** At each node an optimal coupling (an LP solved for the node's subtree) "
           "proposes one of the drafted tokens, y, which passes with probability min(1, q(y)/r(y)), r being the "
           "law of the proposals; otherwise the token is drawn from (q − r)₊.")

    def __init__(self, draft=None, target=None, K: int | None = None, L: int | None = None):
        self._models: tuple | None = None        # (draft, target, K, L) the plans are solved for
        self._couplings: dict[tuple[Node, int], Coupling] = {}
        self._table = None
        self._range: list[float] | None = None
        if draft is not None and K is not None:
            self._check(draft.V, int(K))
        if draft is not None and target is not None and K is not None and L is not None:
            self._bind(draft, target, int(K), int(L))

    @staticmethod
    def _check(V: int, k: int) -> None:
        try:
            check_size(V, k, 1)
        except BoundsTooLarge:
            raise VerifierError(f"td_optimal solves a linear program over every multiset of {k} "
                                f"tokens out of V={V} at each node, too many to solve quickly; "
                                f"use a smaller V or K") from None

    def _bind(self, draft, target, K: int, L: int) -> None:
        """Solve for these models from now on (the plans themselves are solved on first use)."""
        m = self._models
        if m is not None and m[0] is draft and m[1] is target and m[2:] == (K, L):
            return
        self._check(draft.V, K)
        self._models = (draft, target, K, L)
        self._couplings, self._table, self._range = {}, None, None

    def coupling(self, s: Node, k: int) -> Coupling:
        """The played plan at node s for k alive drafts."""
        if self._models is None:
            raise VerifierError("td_optimal needs the toy draft and target models with K and L "
                                "(make_verifier('td_optimal', draft=..., target=..., K=..., L=...)), "
                                "because a node's plan depends on the whole subtree below it")
        if self._table is None:
            from core.bounds.top_down import top_down   # scipy, only once a plan is needed
            self._table = top_down(*self._models, "best")
        key = (s, k)
        if key not in self._couplings:
            plan = self._table.plans.get(key)
            if plan is None:
                raise VerifierError(f"td_optimal was solved for K={self._models[2]}, "
                                    f"L={self._models[3]}; node {s} with {k} drafts is not reachable")
            draft, target = self._models[:2]
            self._couplings[key] = played(plan, np.asarray(draft.cond(s), dtype=np.float64),
                                          np.asarray(target.cond(s), dtype=np.float64))
        return self._couplings[key]

    def core(self, p: np.ndarray, q: np.ndarray, k: int, trace: Trace, s: Node):
        """The tree walk's core at node s for k alive drafts (``core.rules.tree_walk``)."""
        cp = self.coupling(s, k)
        if not (np.allclose(p, cp.p, rtol=0, atol=1e-12) and np.allclose(q, cp.q, rtol=0, atol=1e-12)):
            raise VerifierError(f"the drafts' conditionals at node {s} are not those of the models "
                                f"td_optimal was solved for")
        trace.note(s, alpha=cp.alpha, accept=float(np.minimum(cp.r, q).sum()), value=cp.value, alive=k)
        V = p.size

        def run(tokens: Sequence[int], drafts: Sequence[int], coins: Coins, trace: Trace):
            tokens = list(tokens)
            y = coins.categorical(cp.rows[tuple(sorted(tokens))])
            if y < V:
                prob = acceptance_ratio(q[y], cp.r[y])
                if trace.test(s + (y,), drafts[tokens.index(y)], prob, coins.bernoulli(prob), "token"):
                    return drafts[tokens.index(y)], None
            drafted = np.zeros(V, dtype=bool)
            drafted[tokens] = True
            inside = float(cp.leftover[drafted].sum())
            trace.step(s, "residual", cp.leftover, drafted_mass=inside)
            if coins.bernoulli(inside):
                hit = coins.categorical(np.where(drafted, cp.leftover, 0.0))
                return drafts[tokens.index(hit)], None
            return None, residual(np.where(drafted, 0.0, cp.leftover), cp.leftover)

        return run

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:
        if self._models is not None and (block.K, block.L, block.V) != (
                self._models[2], self._models[3], self._models[0].V):
            raise VerifierError(f"the drafts have K={block.K}, L={block.L}, V={block.V} but "
                                f"td_optimal was solved for K={self._models[2]}, "
                                f"L={self._models[3]}, V={self._models[0].V}")
        return tree_walk(block, coins, self.core)

    def model_output_law(self, draft, target, K: int, L: int) -> tuple[dict[Node, float], int]:
        """Exact output law on toy models (``tree_walk_output_law``); returns it and the states."""
        self._bind(draft, target, int(K), int(L))
        return tree_walk_output_law(self.core, draft, target, K, L)

    def summary_extras(self, draft, target, K: int, L: int) -> dict:
        """The range [min, max] of E[τ] over the top-down rules whose node plans are all
        acceptance-optimal (``core.bounds.top_down``): this rule's E[τ] is at least the max."""
        self._bind(draft, target, int(K), int(L))
        if self._range is None:
            from core.bounds.top_down import top_down
            self._range = [top_down(*self._models, mode).value for mode in ("min", "max")]
        return {"acceptance_optimal_range": list(self._range)}

    @staticmethod
    def model_law_cost(V: int, K: int, L: int) -> float:
        """Seconds, roughly: the tree walk's recursion plus about 5 ms per node LP, three per node
        of depth < L and k = 2..K (the best plan and the range's two)."""
        return TreeWalkVerifier.model_law_cost(V, K, L) + 1.5e-2 * (K - 1) * sum(V ** d for d in range(L))
