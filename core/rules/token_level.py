"""SD: token-level speculative sampling (Leviathan et al. 2023; Chen et al. 2023), docs/maths.md.

For i = 1..L accept x_i with probability min(1, q(x_i|x_<i) / p(x_i|x_<i)); stop at the first
rejection.  Residual at the stopping node u: ∝ (q(·|u) − p(·|u))₊; bonus from q(·|x) if all L pass.
E[τ | x] = Σ_i Π_(j≤i) min(1, q(x_j|x_<j)/p(x_j|x_<j)).  Uses draft 1 only, whatever K is.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from core.data.coins import Coins
from core.data.distributions import acceptance_ratio, residual
from core.data.levels import law_from_levels, level_conditionals, node_recursion_cost
from core.data.outcome import Outcome, Trace
from core.data.nodes import Node
from core.data.token_tree import TokenTree
from core.rules.base import Verifier
from toy_models import IIDModel, MarkovModel


def token_walk(block: TokenTree, passes: list[float], name: str,
               correction: Callable[[Node, int], np.ndarray], coins: Coins, x: Node | None = None) -> Outcome:
    """Walk draft 0 (or the path ``x`` of the tree) token by token: x_i passes with probability
    ``passes[i]`` (noted in the trace as ``name``); at the first failure the extra token's law is
    ``correction(x_<i, x_i)``, after L passes the bonus q(·|x)."""
    x = block.draft(0) if x is None else x
    trace = Trace()
    for i, prob in enumerate(passes):
        node = x[: i + 1]
        trace.note(node, **{name: prob})
        if not trace.test(node, 0, prob, coins.bernoulli(prob), "token"):
            return Outcome(x[:i], 0 if i else -1, correction(x[:i], x[i]), trace)
    return Outcome(x, 0, block.q[x], trace)


def token_chain_law(draft, target, L: int, accept: Callable[[np.ndarray, np.ndarray], np.ndarray],
                    correction: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> tuple[dict[Node, float], int]:
    """The exact output law of a walk along one chain drafted from p, token by token, on toy models:
    a recursion over the nodes of Ω^≤L in ``core.data.levels`` order.

    At depth d, with the rows p(·|u) and q(·|u) of every node u of that depth stacked (shape
    (V^d, V)), ``accept(p, q)`` is the probability a(u·x) that the drafted child x passes, and
    ``correction(p, q)`` the law of the extra token after a failure: one row per node (shape
    (V^d, V)), or one row per node and failed child (shape (V^d, V, V)) where it depends on the
    token that failed.  The walk reaches u·x with R(u·x) = R(u)·p(x|u)·a(u·x) (R(∅) = 1), fails at
    u·x with R(u)·p(x|u)·(1 − a(u·x)) and then emits u·y with that mass times the correction's
    y; at depth L it draws the bonus from q(·|u).  Returns the law and the number of nodes."""
    p_levels, q_levels = level_conditionals(draft, L - 1), level_conditionals(target, L)
    reach = np.ones(1)
    emitted = [np.zeros(1)]
    for d in range(L):
        p, q = p_levels[d], q_levels[d]
        a = accept(p, q)
        fail = p * (1.0 - a)
        law = correction(p, q)
        if law.ndim == 2:
            extra = (reach * fail.sum(axis=1))[:, None] * law
        else:
            extra = reach[:, None] * np.einsum("nx,nxy->ny", fail, law)
        emitted.append(extra.ravel())
        reach = (reach[:, None] * p * a).ravel()
    emitted.append((reach[:, None] * q_levels[L]).ravel())
    return law_from_levels(emitted, draft.V), sum(draft.V ** d for d in range(L + 1))


def _ratios(block: TokenTree) -> list[float]:
    x = block.draft(0)
    return [acceptance_ratio(block.q[x[:i]][x[i]], block.p[x[:i]][x[i]]) for i in range(block.L)]


class SD(Verifier):
    name = "sd"
    short = "SD"
    label = "token-level speculative sampling"
    color = "#999933"  # olive
    summary = ("One draft, checked token by token: accept x_i with probability min(1, q/p), stop at "
               "the first rejection, then draw a correction from (q − p)₊.")
    source = "Leviathan, Kalman, Matias 2023; Chen et al. 2023"
    single_draft = True
    order_invariant = False
    lossless_by_theory = True
    needs_models = False
    closed_form_tau = True
    how = ("**How SD tests.** Token by token along draft 1: x_i passes with probability min(1, q(x_i)/p(x_i)); "
           "the first rejection stops, and the correction is drawn from (q − p)₊ normalised.")

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:
        return token_walk(block, _ratios(block), "accept",
                          lambda u, _: residual(block.q[u] - block.p[u], block.q[u]), coins)

    def expected_tau(self, block: TokenTree) -> float:
        total, survive = 0.0, 1.0
        for ratio in _ratios(block):
            survive *= ratio
            total += survive
        return total

    def model_output_law(self, draft, target, K: int, L: int) -> tuple[dict[Node, float], int]:
        """Exact output law on toy models by a recursion over nodes (``token_chain_law``; the tests
        check it against the coin-by-coin law of every path), each token accepted with r(u·x) =
        min(1, q(x|u)/p(x|u)) as in ``run`` and the extra token drawn from (q − p)₊ normalized.
        Returns the law and the number of nodes."""
        return token_chain_law(draft, target, L, lambda p, q: acceptance_ratio(q, p),
                               lambda p, q: residual(q - p, q))

    model_law_cost = staticmethod(node_recursion_cost)

    @staticmethod
    def model_expected_tau(draft, target, K: int, L: int) -> float | None:
        """E[τ] on toy models in closed form, without the output law (which needs V^(L+1) entries):
        the walk reaches u·x with R(u)·p(x|u)·min(1, q(x|u)/p(x|u)) = R(u)·min(p, q)(x|u), so
        E[τ] = Σ_(i=1..L) P(τ ≥ i), P(τ ≥ i) = Σ_(|u|=i) R(u).  For two context-independent models
        that is α + α² + … + α^L with α = Σ_x min(p(x), q(x)); where each model is context-independent
        or first-order Markov, r_1 = min(p, q)(·|∅), r_(i+1)(y) = Σ_x r_i(x)·min(p, q)(y|x) and
        P(τ ≥ i) = Σ r_i: O(L·V²).  None for any other model (its conditionals depend on more than
        the last token)."""
        kinds = (IIDModel, MarkovModel)
        if not (isinstance(draft, kinds) and isinstance(target, kinds)):
            return None
        first = np.minimum(draft.cond(()), target.cond(()))
        if isinstance(draft, IIDModel) and isinstance(target, IIDModel):
            alpha = float(first.sum())
            return float(sum(alpha ** i for i in range(1, L + 1)))
        step = np.stack([np.minimum(draft.cond((x,)), target.cond((x,))) for x in range(draft.V)])
        reach, total = first, 0.0
        for _ in range(L):
            total += float(reach.sum())
            reach = reach @ step
        return total
