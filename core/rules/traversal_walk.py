"""The generic traversal recursion shared by ``traversal`` and ``otv`` (docs/maths.md).

Merge the K drafts into a tree; node b has k_b drafts through it, p(·|b) and q(·|b).  A *policy*
hands out b's children one at a time: the next child c and S, the exact law of that child given
what the verifier has already seen at b.  Then, leaf to root, with w_root = 1:

    visit(b, w):
      if |b| = L: accept with probability w -> output (b, y ~ q(·|b)); else return rejected
      T <- q(·|b)
      for (c, S) in policy(b):
          visit(b·c, min(1, w·T(c)/S(c)))            # returns only if c's whole subtree rejected
          A <- Σ_x (w·T(x) − S(x))₊
          T <- (w·T − S)₊ / A ;  w <- A / (A + 1 − w)  (w <- 0 when A = 0; at the root w stays 1)
      accept b with probability w -> output (b, y ~ T)

Lossless when S is the exact conditional law: by induction on depth and on the children left,
visit(b, w) accepts inside b's subtree with probability exactly w, with law T ⊗ q.  The first child
contributes Σ_x min(w·T(x), S(x))·δ_x; its subtree's rejection depends on c alone, so it says
nothing about the draws not yet seen, and the rest must (and does) contribute (w·T − S)₊.  A child
c that was rejected had w·T(c) ≤ S(c) (else its weight is 1 and it accepts surely), so T(c) = 0
afterwards: the extra token is never a visited child.

A policy is a function ``policy(p, q, w, k) -> NodeState`` called when a node is entered; the state
is immutable, so the model-level programme can branch on it.  On a token tree of any shape and law
(``core.data.token_tree``) the policy at each depth is the law's state machine (``core.data.laws``):
the same recursion, with a child of multiplicity j receiving j·b_(d+2) draws.
"""
from __future__ import annotations

from functools import lru_cache
from typing import ClassVar, Mapping, Sequence

import numpy as np

from core.data.coins import Coins
from core.data.distributions import acceptance_ratio, positive_part, residual
from core.data.laws import NodeState, Policy, first_drafted, iid_branches  # noqa: F401 (the rules' names)
from core.data.levels import OutputLevels
from core.data.token_tree import TokenTree
from core.data.outcome import Outcome, Trace
from core.data.nodes import Node
from core.rules.base import Verifier


def residual_update(w: float, T: np.ndarray, S: np.ndarray, root: bool) -> tuple[float, np.ndarray, float]:
    """After a rejected child: A = Σ_x (w·T(x) − S(x))₊, T' = (w·T − S)₊/A, w' = A/(A + 1 − w)
    (0 when A = 0; 1 at the root).  Returns (w', T', A)."""
    A = float(positive_part(w * T - S).sum())
    T_next = residual(w * T - S, T)
    if root:
        return 1.0, T_next, A
    return (A / (A + (1.0 - w)) if A > 0.0 else 0.0), T_next, A


def _policies(policy: Policy | Sequence[Policy], L: int) -> list[Policy]:
    """One policy per depth 0..L−1 (a single policy serves every depth)."""
    return list(policy) if isinstance(policy, (list, tuple)) else [policy] * L


def traversal_walk(block: TokenTree, coins: Coins, policy: Policy | Sequence[Policy],
                   children: Mapping[Node, Mapping[int, tuple[int, int]]]) -> Outcome:
    """Run the recursion on a tree whose nodes have the ``children`` given, with one policy or one
    per depth: ``TokenTree.draft_table`` on K i.i.d. drafts (a node's draft index is then the first
    draft through it), ``TokenTree.table`` on any tree (the position of its first draw among its
    parent's draws).  The trace gets, in order, an 'enter' step per node entered (w, k and what the
    policy decided), one 'visit' step per child (its weight w, S(c), T(c), multiplicity; the vector
    is S, the law the child is tested against, as in ``rrs_walk``), one 'residual' step after each
    rejected child (w', A and T' as the vector), every acceptance test, and the last values per
    node in ``quantities``."""
    trace = Trace()
    L = block.L
    policies = _policies(policy, L)

    def first(b: Node) -> int:
        return children[b[:-1]][b[-1]][0]

    def visit(b: Node, w: float) -> Outcome | None:
        if len(b) == L or b not in children:        # a leaf: at depth L, or without draws (any shape)
            passed = trace.test(b, first(b), w, coins.bernoulli(w), "full-block")
            return Outcome(b, first(b), block.q[b], trace) if passed else None
        T = block.q[b]
        left = dict(children[b])
        state = policies[len(b)](block.p[b], T, w, sum(j for _, j in left.values()))
        trace.step(b, "enter", w=w, k=state.k, **state.describe())
        while left:
            c = state.pick(left)
            j = left.pop(c)[1]
            S = state.law()
            wc = acceptance_ratio(w * T[c], S[c])
            trace.step(b + (c,), "visit", S, w=wc, S=S[c], T=T[c], multiplicity=j)
            trace.note(b + (c,), w=wc, S=S[c], T=T[c])
            out = visit(b + (c,), wc)
            if out is not None:
                return out
            w, T, A = residual_update(w, T, S, not b)
            trace.step(b, "residual", T, w=w, A=A)
            trace.note(b, w=w, A=A)
            state = state.after(c, j)
        if not b:
            return Outcome((), -1, T, trace)
        passed = trace.test(b, first(b), w, coins.bernoulli(w), "sub-block")
        return Outcome(b, first(b), T, trace) if passed else None

    return visit((), 1.0)


def traversal_output_law(policy: Policy | Sequence[Policy], draft, target, K: int, L: int,
                         branching: Sequence[int] | None = None) -> tuple[dict[Node, float], int]:
    """Exact P(O = u) of the recursion on toy models, without enumerating Ω^(K·L).

    Given that a node b is entered with weight w and k drafts, its children's tokens and
    multiplicities are revealed one child at a time, each with the policy's joint law
    (``NodeState.branches``), and deeper tokens are independent of them; so the rule is followed
    top-down over (child, multiplicity) histories, carrying the probability of reaching each state.
    The continuation after a child is weighted by the rejection probability the recursion itself
    computed for that child's subtree (not by 1 − w from the theory), so this law is the rule's law
    whether or not the rule is lossless.  Returns the law and the number of node states visited.

    ``policy`` is one policy or one per depth; ``branching`` (default (K, 1, …, 1): K drafts) gives
    the draws of a node of depth d and multiplicity j, j·b_(d+1) (a token tree of ``Shape``
    ``branching``).  A state whose ``shared_after`` is true continues once after a rejected round,
    with the summed mass, since what follows does not depend on which child was rejected.
    """
    policies = _policies(policy, L)
    b_vec = tuple(branching) if branching is not None else (K,) + (1,) * (L - 1)
    out = OutputLevels(target.V, L)
    emit = out.add
    states = 0

    def draws(child: Node, j: int) -> int:
        return j * b_vec[len(child)] if len(child) < L else j

    def visit(b: Node, w: float, k: int, mass: float) -> float:
        """P(the subtree of b accepts | b entered with w, k); adds its outputs × mass."""
        if len(b) == L:
            emit(b, mass * w, target.cond(b))
            return w
        T = target.cond(b)
        return rounds(b, w, T, policies[len(b)](draft.cond(b), T, w, k), mass)

    def rounds(b: Node, w: float, T: np.ndarray, state: NodeState, mass: float) -> float:
        nonlocal states
        states += 1
        if state.k == 0:
            emit(b, mass * w, T)
            return w
        S = state.law()
        w_next, T_next, _ = residual_update(w, T, S, not b)
        accepted = 0.0
        if getattr(state, "shared_after", False):
            rejected, after = 0.0, None
            for c, j, prob in state.branches():
                a = visit(b + (c,), acceptance_ratio(w * T[c], S[c]), draws(b + (c,), j), mass * prob)
                accepted += prob * a
                rejected += prob * max(1.0 - a, 0.0)
                after = after if after is not None else state.after(c, j)
            if rejected > 0.0:
                accepted += rejected * rounds(b, w_next, T_next, after, mass * rejected)
            return accepted
        for c, j, prob in state.branches():
            a = visit(b + (c,), acceptance_ratio(w * T[c], S[c]), draws(b + (c,), j), mass * prob)
            reject = prob * max(1.0 - a, 0.0)
            accepted += prob * a
            if reject > 0.0:
                accepted += reject * rounds(b, w_next, T_next, state.after(c, j), mass * reject)
        return accepted

    visit((), 1.0, b_vec[0], 1.0)
    return out.law(), states


def traversal_law_cost(V: int, K: int, L: int) -> float:
    """Seconds, roughly: 5e-5 per node state of ``traversal_output_law``, counted for a policy that
    may hand out any token not yet visited (an upper bound for ratio order, which skips more)."""

    @lru_cache(maxsize=None)
    def visits(d: int, k: int) -> int:
        return 1 if d == L else rounds(d, k, V)

    @lru_cache(maxsize=None)
    def rounds(d: int, k: int, r: int) -> int:
        if k == 0 or r == 0:
            return 1
        js = [k] if r == 1 else range(1, k + 1)
        return 1 + sum(r * (visits(d + 1, j) + rounds(d, k - j, r - 1)) for j in js)

    return 5e-5 * visits(0, K) + 1e-3


class TraversalVerifier(Verifier):
    """A rule made of a policy and the traversal recursion: ``run`` is ``traversal_walk`` and the
    model-level programme ``traversal_output_law``, both with the class's ``policy``."""

    policy: ClassVar[Policy]
    walk = "leaf-to-root"

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:
        return traversal_walk(block, coins, type(self).policy, block.draft_table())

    def model_output_law(self, draft, target, K: int, L: int) -> tuple[dict[Node, float], int]:
        """Exact output law on toy models (``traversal_output_law``); returns it and the states."""
        return traversal_output_law(type(self).policy, draft, target, K, L)

    model_law_cost = staticmethod(traversal_law_cost)
