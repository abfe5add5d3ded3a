"""Top-down optimal single-token coupling (Hu et al., ICLR 2025, arXiv 2502.18779; Khisti et al.,
ICLR 2025, arXiv 2410.18234; Thomas & Pal, arXiv 2511.15898), docs/maths.md: the tree walk of
``core.rules.tree_walk`` whose core at every node is an optimal single-token multi-draft coupling.

At node s with k alive drafts, their next tokens form a multiset m of k i.i.d. draws from p(·|s).
The single-token LP (``core.bounds.lp.single_token_plan``) gives f(m, y) ≥ 0, the probability that
m is drafted and y ∈ m accepted, with Σ_m f(m, y) ≤ q(y), Σ_y f(m, y) ≤ P(m) and Σ f = α* =
min_A [q(A) + 1 − p(A)^k].  The core then works in Khisti's canonical two steps:

1. *Select* one drafted token: y ∈ m with probability g(m, y) = f(m, y)/P(m), the leftover
   1 − Σ_y g(m, y) spread over the k drafts uniformly (y in proportion to its multiplicity).  The
   selected token's law r(y) = Σ_m P(m)·g(m, y) is computed from g itself, so it is exact
   whatever tolerance the solver left in f.
2. *SD(r → q)*: accept y with probability min(1, q(y)/r(y)), else draw y' from ∝ (q − r)₊.

Step 2 emits y ~ q(·|s) exactly (token-level SD is lossless for any proposal law it is told), so
the rule is lossless to rounding, not to the solver's tolerance; it accepts Σ_y min(r, q) ≥
Σ_m,y f(m, y) = α* (r(y) ≥ Σ_m f(m, y)), the optimum, so at L = 1 it equals the LP.  A residual
draw that hits a drafted token is treated as an emitted drafted child and descended into (the
drafts' deeper tokens are independent of this node's decision, so descending stays lossless).
At k = 1 the selection is the one draft and the core is SD.  The plan is not unique; this is one.

One LP per (node, k) over C(V+k−1, k) multisets, so it runs on toy vocabularies only.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from core.bounds.sizes import BoundsTooLarge, check_size
from core.data.coins import Coins
from core.data.distributions import acceptance_ratio, residual
from core.data.trace import Outcome, Trace
from core.data.tree import DraftBlock, Node
from core.rules.base import Verifier, VerifierError
from core.rules.tree_walk import TreeWalkVerifier, tree_walk, tree_walk_output_law


@dataclass(frozen=True)
class Coupling:
    """An optimal single-token coupling for (p, q, k): selection rows g(m, ·) by multiset, the
    selected token's law r, the residual ∝ (q − r)₊ and the LP's α*."""

    rows: dict[tuple[int, ...], np.ndarray]
    r: np.ndarray
    leftover: np.ndarray
    alpha: float


def selection_rows(multisets: np.ndarray, probabilities: np.ndarray, flow: np.ndarray
                   ) -> np.ndarray:
    """g(m, ·) = f(m, ·)/P(m) (clipped to [0, 1] in total) plus the leftover spread over m's
    drafts uniformly; rows with P(m) = 0 (never drafted) select a uniform draft."""
    M, k = multisets.shape
    counts = np.zeros_like(flow)
    np.add.at(counts, (np.repeat(np.arange(M), k), multisets.ravel()), 1.0 / k)
    ok = probabilities > 0
    g = np.where(ok[:, None], np.maximum(flow, 0.0) / np.where(ok, probabilities, 1.0)[:, None], 0.0)
    g /= np.maximum(g.sum(axis=1), 1.0)[:, None]
    return g + (1.0 - g.sum(axis=1))[:, None] * counts


def optimal_coupling(p: np.ndarray, q: np.ndarray, k: int) -> Coupling:
    """Solve the single-token LP for k drafts and turn its plan into a selection + SD coupling."""
    if k == 1:
        eye = np.eye(p.size)
        rows = {(x,): eye[x] for x in range(p.size)}
        return Coupling(rows, p, residual(q - p, q), float(np.minimum(p, q).sum()))
    from core.bounds.lp import single_token_plan   # scipy, only once an LP is needed
    plan = single_token_plan(p, q, k)
    g = selection_rows(plan.multisets, plan.probabilities, plan.flow)
    r = plan.probabilities @ g
    rows = {tuple(int(t) for t in m): row for m, row in zip(plan.multisets, g)}
    return Coupling(rows, r, residual(q - r, q), plan.value)


class TDOptimal(Verifier):
    name = "td_optimal"
    short = "TD-optimal"
    label = "top-down optimal single-token coupling"
    color = "#88ccee"  # cyan
    summary = ("Walk down the draft tree emitting each token by the optimal single-token multi-draft "
               "coupling of the alive drafts (select a draft, then token-level SD), solved as a small "
               "linear program per node (toy models only).")
    source = ("Hu et al., ICLR 2025 (arXiv 2502.18779); Khisti et al., ICLR 2025 (arXiv 2410.18234); "
              "Thomas & Pal (arXiv 2511.15898)")
    single_draft = False
    order_invariant = True
    lossless_by_theory = True
    needs_models = True          # one LP per node over every multiset of alive tokens
    closed_form_tau = False

    def __init__(self, draft=None, target=None, K: int | None = None, L: int | None = None):
        self._couplings: dict[tuple[bytes, bytes, int], Coupling] = {}
        if draft is not None and K is not None:
            self._check(draft.V, int(K))

    @staticmethod
    def _check(V: int, k: int) -> None:
        try:
            check_size(V, k, 1)
        except BoundsTooLarge:
            raise VerifierError(f"td_optimal solves a linear program over every multiset of {k} "
                                f"tokens out of V={V} at each node, too many to solve quickly; "
                                f"use a smaller V or K") from None

    def coupling(self, p: np.ndarray, q: np.ndarray, k: int) -> Coupling:
        key = (p.tobytes(), q.tobytes(), k)
        if key not in self._couplings:
            self._check(p.size, k)
            self._couplings[key] = optimal_coupling(p, q, k)
        return self._couplings[key]

    def core(self, p: np.ndarray, q: np.ndarray, k: int, trace: Trace, s: Node):
        """The tree walk's core at node s for k alive drafts (``core.rules.tree_walk``)."""
        cp = self.coupling(p, q, k)
        trace.note(s, alpha=cp.alpha, accept=float(np.minimum(cp.r, q).sum()), alive=k)

        def run(tokens: Sequence[int], drafts: Sequence[int], coins: Coins, trace: Trace):
            tokens = list(tokens)
            y = coins.categorical(cp.rows[tuple(sorted(tokens))])
            prob = acceptance_ratio(q[y], cp.r[y])
            if trace.test(s + (y,), drafts[tokens.index(y)], prob, coins.bernoulli(prob), "token"):
                return drafts[tokens.index(y)], None
            drafted = np.zeros(p.size, dtype=bool)
            drafted[tokens] = True
            inside = float(cp.leftover[drafted].sum())
            trace.step(s, "residual", cp.leftover, drafted_mass=inside)
            if coins.bernoulli(inside):
                hit = coins.categorical(np.where(drafted, cp.leftover, 0.0))
                return drafts[tokens.index(hit)], None
            return None, residual(np.where(drafted, 0.0, cp.leftover), cp.leftover)

        return run

    def run(self, block: DraftBlock, coins: Coins) -> Outcome:
        return tree_walk(block, coins, self.core)

    def model_output_law(self, draft, target, K: int, L: int) -> tuple[dict[Node, float], int]:
        """Exact output law on toy models (``tree_walk_output_law``); returns it and the states."""
        return tree_walk_output_law(self.core, draft, target, K, L)

    @staticmethod
    def model_law_cost(V: int, K: int, L: int) -> float:
        """Seconds, roughly: the tree walk's recursion plus about 5 ms per single-token LP, one per
        node of depth < L and k = 2..K."""
        return TreeWalkVerifier.model_law_cost(V, K, L) + 5e-3 * (K - 1) * sum(V ** d for d in range(L))
