"""SpecInfer-style recursive rejection sampling (RRS, multi-candidate SD), docs/maths.md, with the
tree walk; on any token tree, top-down multi-round rejection (``rrs``, docs/maths.md "Token trees").

T_1 = q; for i = 1..k accept X_i with probability min(1, T_i(X_i)/p(X_i)), else
T_(i+1) = normalize((T_i − p)₊); if all are rejected, y ~ T_(k+1).

On a token tree of any shape and law the rounds at a node u are the law's visits (c_i, S_i)
(``core.data.laws``): accept c_i with probability min(1, T(c_i)/S_i(c_i)) and descend into u·c_i
(never to come back), else T ← (T − S_i)₊ normalised; after the last round, y ~ T.  A round is one
rejection-sampling step of S_i against T, so u emits y ~ q(·|u) exactly when every S_i is the exact
law of the i-th visited child given the earlier rounds.  For ``iid`` every draw is a round with
S = p, repeats included (a repeat of a rejected token has T = 0 and is rejected at once): on K
chains this is the tree walk above, round for round.  It is SpecInfer for ``iid``, RRSw (Jeon et al.,
arXiv 2402.14160) for ``wor``, EAGLE-2/SGLang for ``topk`` and Hu et al./SpecHub for ``greedy``.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from core.data.coins import Coins
from core.data.distributions import acceptance_ratio, residual
from core.data.laws import DraftLaw, NodeState, Policy, depth_policies, tree_state_count, visit_order
from core.data.levels import OutputLevels, node_recursion_cost
from core.data.shapes import Shape
from core.data.token_tree import TokenTree
from core.data.outcome import Outcome, Trace
from core.data.nodes import Node
from core.rules.tree_walk import TreeWalkVerifier, tree_walk


def rrs_core(p: np.ndarray, q: np.ndarray, k: int, trace: Trace, s: Node):
    """Recursive rejection at node s for k alive drafts."""
    trace.note(s, alive=k)

    def run(tokens: Sequence[int], drafts: Sequence[int], coins: Coins, trace: Trace):
        target = q
        for token, draft in zip(tokens, drafts):
            prob = acceptance_ratio(target[token], p[token])
            if trace.test(s + (token,), draft, prob, coins.bernoulli(prob), "token"):
                return draft, None
            target = residual(target - p, target)
        return None, target

    return run


def rrs_walk(tree: TokenTree, coins: Coins, policies: Sequence[Policy]) -> Outcome:
    """Top-down multi-round rejection on a token tree, one policy (law state machine) per depth.

    The trace gets, per round, a 'visit' step (the child, its acceptance probability w, S(c), T(c),
    multiplicity; the vector is S) and the acceptance test, and after a rejected round a 'residual'
    step whose vector is the new T.  A node's draft index is the position of its first draw among
    its parent's draws (−1 at the root)."""
    trace = Trace()
    table = tree.table()

    def first(u: Node) -> int:
        return table[u[:-1]][u[-1]][0] if u else -1

    u: Node = ()
    while len(u) < tree.L and u in tree.draws:     # a node without draws is a leaf (the decoder's
        T = tree.q[u]                              # trees of any shape), whatever its depth
        draws = tree.draws[u]
        trace.note(u, draws=len(draws))
        state = policies[len(u)](tree.p[u], T, 1.0, len(draws))
        for c, S, index, j in visit_order(state, draws):
            prob = acceptance_ratio(T[c], S[c])
            trace.step(u + (c,), "visit", S, w=prob, S=S[c], T=T[c], multiplicity=j)
            if trace.test(u + (c,), index, prob, coins.bernoulli(prob), "token"):
                u = u + (c,)
                break
            T = residual(T - S, T)
            trace.step(u, "residual", T)
        else:
            return Outcome(u, first(u), T, trace)
    return Outcome(u, first(u), tree.q[u], trace)


def rrs_output_law(policies: Sequence[Policy], draft, target,
                   branching: Sequence[int]) -> tuple[dict[Node, float], int]:
    """Exact P(O = u) of ``rrs_walk`` on toy models, top-down over the law's (child, multiplicity)
    rounds without enumerating trees.

    A node u entered with k draws runs the rounds of its state machine: the next visited child c
    has multiplicity j with probability ``branches``; it is accepted with min(1, T(c)/S(c)) and the
    walk descends into u·c with j·b_(|u|+2) draws, which are drawn after and independently of
    everything at u; otherwise T ← (T − S)₊ normalised and the next round follows (once, with the
    summed mass, when the state after a rejection does not depend on c: ``shared_after``, e.g.
    ``iid``'s per-draw rounds, whose accepted draw at round i is a first occurrence of multiplicity
    1 + Binomial(k − i, p(c))).  Returns the law and the number of round states visited."""
    L = len(branching)
    out = OutputLevels(target.V, L)
    emit = out.add
    states = 0

    def enter(u: Node, k: int, mass: float) -> None:
        if len(u) == L:
            emit(u, mass, target.cond(u))
            return
        T = target.cond(u)
        rounds(u, T, policies[len(u)](draft.cond(u), T, 1.0, k), mass)

    def rounds(u: Node, T: np.ndarray, state: NodeState, mass: float) -> None:
        nonlocal states
        states += 1
        if state.k == 0:
            emit(u, mass, T)
            return
        S = state.law()
        later: list[tuple[NodeState, float]] = []
        shared = getattr(state, "shared_after", False)
        for c, j, prob in state.branches():
            a = acceptance_ratio(T[c], S[c])
            if a > 0.0:
                child = u + (c,)
                enter(child, j * branching[len(child)] if len(child) < L else j, mass * prob * a)
            if a < 1.0:
                if shared and later:
                    later[0] = (later[0][0], later[0][1] + mass * prob * (1.0 - a))
                else:
                    later.append((state.after(c, j), mass * prob * (1.0 - a)))
        T_next = residual(T - S, T)
        for after, m in later:
            rounds(u, T_next, after, m)

    enter((), branching[0], 1.0)
    return out.law(), states


class SpecInfer(TreeWalkVerifier):
    name = "specinfer"
    short = "SpecInfer"
    label = "recursive rejection sampling"
    color = "#ddcc77"  # sand
    summary = ("K drafts, walked down the draft tree; at each node recursive rejection sampling tries "
               "the drafted tokens one after another.")
    source = "Miao et al. 2024 (SpecInfer); Yang et al. 2024 (multi-candidate SD)"
    single_draft = False
    order_invariant = False
    lossless_by_theory = True
    needs_models = False
    closed_form_tau = False
    how = ("**How SpecInfer tests.** At each node the drafts' tokens are tried in order, each x with probability "
           "min(1, T(x)/p(x)), T starting at q and replaced after each rejection by (T − p)₊ normalised; the "
           "extra token comes from the last T.")
    token_trees = True
    walk = "rounds"
    how_on_trees = ("**How rrs verifies a token tree.** From the root down: at a node u it starts with T = "
                    "q(·|u) and tests its children in the law's visit order, each against S_i, the exact law of "
                    "the i-th visited child given the ones before (p for iid draws, p without the earlier "
                    "children for wor, a point mass on a deterministic child). Child c is accepted with "
                    "probability min(1, T(c)/S_i(c)), and the walk descends into it and never comes back; a "
                    "rejection leaves T ← (T − S_i)₊ normalised for the next child. When every child is "
                    "rejected, the extra token is drawn from T.")
    core = staticmethod(rrs_core)

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:
        return tree_walk(block, coins, rrs_core)

    def run_tree(self, tree: TokenTree, coins: Coins) -> Outcome:
        return rrs_walk(tree, coins, depth_policies(tree.shape, tree.law, per_draw=True))

    def tree_output_law(self, draft, target, shape: Shape, law: DraftLaw) -> tuple[dict[Node, float], int]:
        """Exact output law on (shape, law) (``rrs_output_law``, per-draw rounds for ``iid``)."""
        return rrs_output_law(depth_policies(shape, law, per_draw=True), draft, target, shape.branching)

    @staticmethod
    def tree_law_cost(V: int, shape: Shape, law: DraftLaw) -> float:
        """Seconds, roughly: 5e-5 per round state (``tree_state_count``, per-draw for ``iid``), and
        the pass over Ω^(L+1) that completes the law (``node_recursion_cost``)."""
        return (5e-5 * tree_state_count(V, shape, law, per_draw=True)
                + node_recursion_cost(V, 1, shape.L))
