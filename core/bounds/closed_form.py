"""Closed-form bounds and claimed values on E[τ] (numpy only; docs/maths.md).

**Single token** (L = 1, ``single_token_optimum``).  By max-flow/min-cut on the bipartite graph
draft multisets → tokens, α* = min_(A⊆Ω) [q(A) + 1 − p(A)^K].  For a fixed value P of p(A), the
smallest q(A) (fractionally) is the fractional knapsack taken in order of increasing q/p, a convex
piecewise-linear g(P); g(P) − P^K is concave on each piece, so its minimum is at a breakpoint,
i.e. a prefix of the q/p-sorted order.  The fractional minimum is thus attained by a set, and the
V+1 prefixes suffice.  Written with the complement B = Ω − A (q(A) = 1 − q(B), p(A) = 1 − p(B)),
the same cut reads α* = 1 − max_B [q(B) − (1 − (1 − p(B))^K)]: the target mass of B minus the
chance that some draft lands in B, maximised over the prefixes B of the tokens sorted by q/p
*decreasing*.  With P_j, Q_j the p- and q-mass of the first j tokens in that order,
α* = 1 − max_(j=0..V) [Q_j − (1 − (1 − P_j)^K)], which is how it is computed.

**Claimed value** (``claimed_cic``): E_CIC = Σ_(t=1..L) Σ_(s∈Ω^t) q(s)·[1 − (1 − m(s))^K],
m(s) = min(p(s)/q(s), 1) (m = 1 where q(s) = 0).

**Greedy relaxation** (``greedy_relaxation``): Σ_(s≠∅) W̄(s), W̄(∅) = 1,
W̄(s·y) = min(q(y|s)·W̄(s), 1 − (1 − p(s·y))^K).  Every valid verifier has W(s·y) ≤ q(y|s)·W(s)
(docs/maths.md) and W(s·y) ≤ P(some draft passes through s·y) = 1 − (1 − p(s·y))^K, so by induction
W ≤ W̄ and the relaxation upper-bounds the LP.

**Top-k trees** (``topk_tree_value``): a tree drafted by ``topk`` at every node is deterministic,
and no lossless verifier accepts more on it than E[τ] = Σ_(s∈𝒯, s≠∅) q(s): every lossless verifier
has W(s·y) ≤ q(y|s)·W(s), hence W(s) ≤ q(s) on the tree and W = 0 off it.  ``rrs`` and
``traversal`` attain it (docs/maths.md, "Token trees").

All arithmetic is float64.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from core.bounds.sizes import check_paths, one_minus_pow, validate_pair
from core.data.drafting import check_supports, draft_tree
from core.data.laws import TOPK_LAW
from core.data.levels import level_conditionals, level_joints
from core.data.shapes import Shape
from core.errors import InvalidInput

if TYPE_CHECKING:
    from toy_models import ToyModel


# ---------------------------------------------------------------------------------------------
# Acausal coupling: the gain of a coupling
# ---------------------------------------------------------------------------------------------

def lcp_matrix(V: int, L: int) -> np.ndarray:
    """LCP(x, z) for all x, z ∈ Ω^L (lexicographic indices): Σ_(d=1..L) [x_≤d = z_≤d]."""
    idx = np.arange(V ** L)
    out = np.zeros((idx.size, idx.size), dtype=np.int64)
    for d in range(1, L + 1):
        pref = idx // V ** (L - d)
        out += pref[:, None] == pref[None, :]
    return out


# ---------------------------------------------------------------------------------------------
# Single token (L = 1)
# ---------------------------------------------------------------------------------------------

def token_vectors(p_vec, q_vec, K: int) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(p_vec, dtype=np.float64)
    q = np.asarray(q_vec, dtype=np.float64)
    if p.ndim != 1 or p.shape != q.shape:
        raise InvalidInput(f"p and q must be vectors of one length, got shapes {p.shape} and "
                         f"{q.shape}")
    if not isinstance(K, (int, np.integer)) or K < 1:
        raise InvalidInput(f"K must be an integer ≥ 1, got {K!r}")
    return p, q


def single_token_optimum(p_vec, q_vec, K: int) -> float:
    """α* = min_(A⊆Ω) [q(A) + 1 − p(A)^K] = 1 − max_(j=0..V) [Q_j − (1 − (1 − P_j)^K)], with
    P_j, Q_j the p- and q-mass of the first j tokens sorted by q/p decreasing (p = 0 counts as
    ratio +inf, placed first; ties keep token order): the best acceptance of one token with K
    i.i.d. drafts (module docstring)."""
    p, q = token_vectors(p_vec, q_vec, K)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = np.where(p > 0, q / np.where(p > 0, p, 1.0), np.inf)
    order = np.argsort(-ratio, kind="stable")
    Q = np.concatenate([[0.0], np.cumsum(q[order])])
    P = np.concatenate([[0.0], np.cumsum(p[order])])
    return float(1.0 - np.max(Q - one_minus_pow(P, K)))


def single_token_bound(draft: ToyModel, target: ToyModel, K: int) -> float:
    """α* at the root: ``single_token_optimum(p(·|∅), q(·|∅), K)``."""
    validate_pair(draft, target, K, 1)
    return single_token_optimum(draft.cond(()), target.cond(()), K)


# ---------------------------------------------------------------------------------------------
# Closed forms
# ---------------------------------------------------------------------------------------------

def claimed_cic(draft: ToyModel, target: ToyModel, K: int, L: int) -> float:
    """E_CIC = Σ_(t=1..L) Σ_(s∈Ω^t) q(s)·[1 − (1 − m(s))^K], m(s) = min(p(s)/q(s), 1),
    m = 1 where q(s) = 0 (p, q joint)."""
    V = validate_pair(draft, target, K, L)
    check_paths(V, L)
    pj = level_joints(level_conditionals(draft, L - 1))
    qj = level_joints(level_conditionals(target, L - 1))
    total = 0.0
    for t in range(1, L + 1):
        p, q = pj[t], qj[t]
        with np.errstate(divide="ignore", invalid="ignore"):
            m = np.where(q > 0, np.minimum(p / np.where(q > 0, q, 1.0), 1.0), 1.0)
        total += float(np.sum(q * one_minus_pow(m, K)))
    return total


def greedy_relaxation(draft: ToyModel, target: ToyModel, K: int, L: int) -> float:
    """Σ_(s≠∅) W̄(s), W̄(∅) = 1, W̄(s·y) = min(q(y|s)·W̄(s), 1 − (1 − p(s·y))^K) (p joint)."""
    V = validate_pair(draft, target, K, L)
    check_paths(V, L)
    pj = level_joints(level_conditionals(draft, L - 1))
    qc = level_conditionals(target, L - 1)
    w = np.ones(1)
    total = 0.0
    for d in range(L):
        reach = one_minus_pow(pj[d + 1], K)
        w = np.minimum((w[:, None] * qc[d]).reshape(-1), reach)
        total += float(w.sum())
    return total


def topk_tree_value(draft: ToyModel, target: ToyModel, shape: Shape) -> float:
    """Σ_(s∈𝒯, s≠∅) q(s) over the tree 𝒯 drafted by ``topk`` at every node: the best E[τ] of any
    lossless verifier on it (module docstring).  Refused for chains with L ≥ 2, which are
    deterministic at the root only.

    >>> from toy_models import IIDModel
    >>> p, q = IIDModel([1 / 2, 1 / 3, 1 / 6]), IIDModel([1 / 6, 1 / 3, 1 / 2])
    >>> round(topk_tree_value(p, q, Shape.tree((2, 1))) * 12, 12)    # q(0) + q(1) + q(00) + q(10)
    7.0
    """
    validate_pair(draft, target, shape.K, shape.L)
    if shape.chains and shape.L > 1:
        raise InvalidInput("only a tree drafted by topk at every node is deterministic; topk chains "
                           "sample below the root, so give a static tree")
    check_supports(draft.cond, shape, TOPK_LAW)
    draws = draft_tree(draft.cond, shape, TOPK_LAW, coins=None)
    total = 0.0
    stack = [((), 1.0)]
    while stack:
        u, q_u = stack.pop()
        qc = np.asarray(target.cond(u), dtype=np.float64)
        for c in draws.get(u, ()):
            total += q_u * float(qc[c])
            stack.append((u + (c,), q_u * float(qc[c])))
    return total
