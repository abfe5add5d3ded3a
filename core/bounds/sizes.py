"""Sizes, limits and enumeration helpers shared by the bounds (numpy only).

Draft paths x ∈ Ω^L are indexed lexicographically (index i of depth d ↔ its base-V digits); a
multiset m of K paths has probability P(m) = K!/Π_x c_x(m)! · Π_k p(x^(k)) (c_x = multiplicity).
``lp_size`` and ``check_size`` price an LP before it is built, so that the laboratory can refuse a
configuration up front with one line instead of running for minutes.
"""
from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from core.data.laws import DraftLaw, law_at, node_set_count, tree_outcome_count
from core.data.shapes import Shape
from core.errors import ExplorerError, InvalidInput

if TYPE_CHECKING:  # toy models only provide ``.V`` and ``.cond``; no runtime import needed
    from toy_models import ToyModel

#: Largest LP size, multisets × tree nodes (``lp_size(...).size``, also ``lp_size(...)[0]``).
SIZE_LIMIT = 200_000

#: Largest LP work estimate, columns × rows (``lp_size(...).work``): the binding guard.  HiGHS's
#: time on these LPs grows roughly like columns × rows, and the multiset count enters both, so the
#: size alone predicts it badly (V=6,K=2,L=3 has size 1.6e5 and takes 70 s; V=2,K=1,L=12 has
#: 5.3e4 and takes 8 s).  Measured on the 2-core dev machine under load from other jobs (wall ≈
#: 1.6 × CPU), at 0.5-2.2e-8 CPU s per unit of actual columns × rows; by estimate (an upper bound):
#: V=3,K=3,L=3 (1.4e8) 1.4 s wall, V=4,K=1,L=6 (4.3e8) 3 s, V=5,K=2,L=3 (4.5e8) 7 s,
#: V=2,K=3,L=5 (5.8e8) 10 s, V=2,K=1,L=12 (1.1e9) 8 s, V=2,K=2,L=7 (1.1e9) 36 s,
#: V=2,K=5,L=4 (5.1e9) 23 s, V=6,K=2,L=3 (3.9e9) 68 s, V=3,K=4,L=3 (9.8e9) 109 s.  Under this
#: limit a solve stays under roughly 18 CPU s (≈ 30 s wall on the loaded machine).
WORK_LIMIT = 800_000_000

#: Largest number of paths V^L the closed-form functions enumerate.
PATH_LIMIT = 2_000_000

#: Largest number of ordered draw outcomes enumerated to find a token tree's node-set law (about
#: 30 µs each, so ≈ 6 s at the limit; ``core.data.laws.tree_outcome_count``).
OUTCOME_LIMIT = 200_000


class BoundsTooLarge(ExplorerError, ValueError):
    """The requested bound would be too large to compute in reasonable time."""


# ---------------------------------------------------------------------------------------------
# Sizes and validation
# ---------------------------------------------------------------------------------------------

def num_multisets(V: int, K: int, L: int) -> int:
    """Number of multisets of K paths in Ω^L: C(V^L + K − 1, K)."""
    return math.comb(V ** L + K - 1, K)


class LPSize(NamedTuple):
    """Size of an LP before it is built (upper bounds); ``size`` first, so ``lp_size(...)[0]`` is
    multisets × nodes.

    multisets: C(V^L + K − 1, K); per: nodes of one draft tree, min(1 + K·L, Σ_(d≤L) V^d)
    (kinds 'optimal' and 'tree', the tree form of the acausal LP) or target paths V^L (kind
    'acausal', the transportation form).  'tree', and 'optimal' at K ≥ 2: columns = multisets ×
    per + 2·Σ_(d=1..L) V^d (r, then a and W/E), rows = multisets + Σ_(d=0..L−1) V^d +
    Σ_(d=1..L) V^d.  'optimal' at K = 1 (node form, module docstring (iv)): columns = rows =
    Σ_(d=1..L) V^d.  'acausal': columns = multisets × V^L, rows = multisets + V^L.  work =
    columns × rows; size (the plan's entries, built in every form) = multisets × per."""

    size: int
    multisets: int
    per: int
    columns: int
    rows: int
    work: int


def _block_size(M: int, per: int, V: int, L: int) -> tuple[int, int]:
    """(columns, rows) of the per-block LP form (kind 'tree', 'optimal' at K ≥ 2, the own-law LP)
    with M blocks of at most ``per`` nodes each."""
    nodes = sum(V ** d for d in range(1, L + 1))                 # nodes of depth 1..L
    return M * per + 2 * nodes, M + (1 + nodes - V ** L) + nodes


def lp_size(V: int, K: int, L: int, kind: str = "optimal") -> LPSize:
    """The ``LPSize`` of the optimal LP (kind 'optimal') or the transportation LP ('acausal')."""
    M = num_multisets(V, K, L)
    if kind in ("optimal", "tree"):
        nodes = sum(V ** d for d in range(1, L + 1))             # nodes of depth 1..L
        per = min(1 + K * L, 1 + nodes)
        if kind == "optimal" and K == 1:
            columns, rows = nodes, nodes
        else:
            columns, rows = _block_size(M, per, V, L)
    elif kind == "acausal":
        per = V ** L
        columns, rows = M * per, M + per
    else:
        raise InvalidInput(f"unknown LP kind {kind!r}; expected 'optimal', 'tree' or 'acausal'")
    return LPSize(M * per, M, per, columns, rows, columns * rows)


def check_size(V: int, K: int, L: int, limit: int = SIZE_LIMIT, kind: str = "optimal", *,
               work_limit: int = WORK_LIMIT) -> LPSize:
    """Return the ``LPSize``, or raise ``BoundsTooLarge`` if its size (multisets × nodes) exceeds
    ``limit`` or its work (columns × rows) exceeds ``work_limit``."""
    sz = lp_size(V, K, L, kind)
    if sz.size > limit or sz.work > work_limit:
        what = "target paths" if kind == "acausal" else "tree nodes"
        raise BoundsTooLarge(
            f"the {kind} LP for V={V}, K={K}, L={L} is too large to solve quickly: size "
            f"{sz.size:,} ({sz.multisets:,} draft multisets × {sz.per:,} {what}, limit {limit:,}) "
            f"and about {sz.columns:,} columns × {sz.rows:,} rows (limit {work_limit:,} for the "
            f"product); use a smaller V, K or L.")
    return sz


def tree_lp_size(V: int, shape: Shape, law: DraftLaw) -> LPSize:
    """The ``LPSize`` of the own-law LP (``core.bounds.lp.optimal_tree_lp``), priced before its
    blocks are enumerated: M = ``node_set_count`` (an upper bound on the drafted node sets), per =
    nodes of one tree, min(1 + n, 1 + Σ_(d≤L) V^d) with n the budget; columns and rows as the
    per-block form of ``lp_size``."""
    M = node_set_count(V, shape, law)
    per = min(1 + shape.budget, sum(V ** d for d in range(shape.L + 1)))
    columns, rows = _block_size(M, per, V, shape.L)
    return LPSize(M * per, M, per, columns, rows, columns * rows)


def check_tree_size(V: int, shape: Shape, law: DraftLaw, limit: int = SIZE_LIMIT, *,
                    work_limit: int = WORK_LIMIT, outcome_limit: int = OUTCOME_LIMIT) -> LPSize:
    """Return the own-law LP's ``LPSize``, or raise ``BoundsTooLarge`` (one sentence) if it exceeds
    the limits of ``check_size``, or if enumerating the drafted trees to find the node sets' law
    would visit more than ``outcome_limit`` ordered draw outcomes (``tree_outcome_count``)."""
    outcomes = tree_outcome_count(V, shape, law)
    if outcomes > outcome_limit:
        raise BoundsTooLarge(
            f"the own-law LP for {shape.label} drafted by {law.name} over V={V} tokens must enumerate "
            f"{outcomes:,} drafted trees (limit {outcome_limit:,}); use a smaller V or tree.")
    sz = tree_lp_size(V, shape, law)
    if sz.size > limit or sz.work > work_limit:
        raise BoundsTooLarge(
            f"the own-law LP for {shape.label} drafted by {law.name} over V={V} tokens is too large to "
            f"solve quickly: size {sz.size:,} ({sz.multisets:,} node sets × {sz.per:,} tree nodes, "
            f"limit {limit:,}) and about {sz.columns:,} columns × {sz.rows:,} rows (limit "
            f"{work_limit:,} for the product); use a smaller V or tree.")
    return sz


def one_minus_pow(x, K: int) -> np.ndarray:
    """1 − (1 − x)^K for x ∈ [0, 1], accurate for small x (−expm1(K·log1p(−x)))."""
    x = np.clip(np.asarray(x, dtype=np.float64), 0.0, 1.0)
    with np.errstate(divide="ignore"):
        return -np.expm1(K * np.log1p(-x))


def check_paths(V: int, L: int) -> None:
    if V ** L > PATH_LIMIT:
        raise BoundsTooLarge(f"enumerating Ω^L for V={V}, L={L} means {V ** L:,} paths, over the "
                             f"limit of {PATH_LIMIT:,}; use a smaller V or L.")


def validate_pair(draft: ToyModel, target: ToyModel, K: int, L: int) -> int:
    if draft.V != target.V:
        raise InvalidInput(f"draft and target vocabularies differ ({draft.V} vs {target.V})")
    for name, value in (("K", K), ("L", L)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise InvalidInput(f"{name} must be an integer ≥ 1, got {value!r}")
    return int(draft.V)


# ---------------------------------------------------------------------------------------------
# Enumeration helpers (levels are in lexicographic order: index i of depth d ↔ base-V digits)
# ---------------------------------------------------------------------------------------------

def enumerate_multisets(N: int, K: int) -> np.ndarray:
    """All multisets of K items from range(N), as sorted rows of an (M, K) int64 array."""
    flat = itertools.chain.from_iterable(itertools.combinations_with_replacement(range(N), K))
    return np.fromiter(flat, dtype=np.int64, count=math.comb(N + K - 1, K) * K).reshape(-1, K)


def multiset_probabilities(ms: np.ndarray, p_items: np.ndarray) -> np.ndarray:
    """P(m) = K!/Π_x c_x! · Π_k p(m_k) for sorted rows m of ``ms``.

    Π_x c_x! is accumulated as Π_k r_k, r_k = the run length of equal items ending at column k.
    """
    M, K = ms.shape
    run = np.ones(M)
    denom = np.ones(M)
    for k in range(1, K):
        run = np.where(ms[:, k] == ms[:, k - 1], run + 1.0, 1.0)
        denom *= run
    return math.factorial(K) / denom * p_items[ms].prod(axis=1)


def distinct_path_sets(ms: np.ndarray, N: int) -> tuple[np.ndarray, np.ndarray]:
    """Group multisets by their *set* of distinct paths.

    Returns (sets, inverse): ``sets`` has one sorted row per distinct set, padded with the
    sentinel N; multiset i belongs to set ``inverse[i]``.
    """
    dup = np.zeros_like(ms, dtype=bool)
    dup[:, 1:] = ms[:, 1:] == ms[:, :-1]
    sets, inverse = np.unique(np.sort(np.where(dup, N, ms), axis=1), axis=0, return_inverse=True)
    return sets, inverse.reshape(-1)


def tree_nodes(ms: np.ndarray, V: int, L: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct nodes of every row's draft tree: arrays (row, depth, level index).  Rows are
    sorted path indices; entries ≥ V^L are padding and ignored."""
    M, K = ms.shape
    valid = ms < V ** L
    rows, depths, idx = [np.arange(M)], [np.zeros(M, np.int64)], [np.zeros(M, np.int64)]
    for d in range(1, L + 1):
        pref = ms // V ** (L - d)              # rows stay sorted: prefixes are monotone
        new = valid.copy()
        new[:, 1:] &= pref[:, 1:] != pref[:, :-1]
        r, k = np.nonzero(new)
        rows.append(r)
        depths.append(np.full(r.size, d, np.int64))
        idx.append(pref[r, k])
    return np.concatenate(rows), np.concatenate(depths), np.concatenate(idx)


def level_offsets(V: int, depth: int) -> np.ndarray:
    """offset[d] = Σ_(d'<d) V^d': global ids of nodes of depth 0..depth."""
    return np.concatenate([[0], np.cumsum([V ** d for d in range(depth + 1)])]).astype(np.int64)


# ---------------------------------------------------------------------------------------------
# The node form of the optimal-verifier LP (``core.bounds.node_lp``)
# ---------------------------------------------------------------------------------------------

#: Largest prefix tree (nodes 1 + V + … + V^L) the node-form LP takes.
NODE_LIMIT = 1_200
#: Most combinations of children's hull vertices the separation enumerates at one node of distinct
#: draws (``core.bounds.antichains``; ``combinations`` prices it).
COMBINATION_LIMIT = 2_000_000

#: The node form's cost model: at most about ``NODE_SECONDS``·N³ seconds on the 2-core machine, the
#: slowest K of each size measured (K = 4; larger K binds fewer antichains and solves faster):
#: N = 121 (V = 3, L = 4) 0.13 s, 259 (V = 6, L = 3) 0.9 s, 400 (V = 7, L = 3) 3.2 s, 585 (V = 8,
#: L = 3) 33 s with other jobs running beside it (docs/exact_lab.md).
NODE_SECONDS = 1.6e-7


def prefix_nodes(V: int, L: int) -> int:
    """N = 1 + V + … + V^L: the node form's size, whatever K and the law are."""
    return sum(V ** d for d in range(L + 1))


def node_lp_seconds(V: int, L: int) -> float:
    """An upper estimate of the node-form LP's seconds (``NODE_SECONDS``·N³)."""
    return NODE_SECONDS * prefix_nodes(V, L) ** 3


def combinations(V: int, shape: Shape, law: DraftLaw) -> int:
    """The most combinations of children's hull vertices the separation enumerates at one node
    (``core.bounds.antichains``): a node of ``wor`` with k ≥ 2 draws combines every child's hull, of
    at most V^(L−d−1) + 1 vertices at depth d + 1; ``greedy`` its k − 1 top children's; 1 elsewhere
    (a Minkowski sum)."""
    worst = 1
    for d in range(shape.L):
        lw = law_at(shape, d, law)
        k, child = shape.branching[d], V ** (shape.L - d - 1) + 1
        if lw.name == "wor" and k >= 2:
            worst = max(worst, child ** V)
        elif lw.name == "greedy" and k >= 2:
            worst = max(worst, child ** (k - 1) * V * child)
        elif lw.name == "topk":
            worst = max(worst, child ** k)
    return worst


def check_node_size(V: int, shape: Shape, law: DraftLaw, limit: int = NODE_LIMIT) -> int:
    """The node count, or ``BoundsTooLarge`` (one sentence with it and the time estimate) past
    ``limit`` nodes or past the separation's combination limit."""
    N = prefix_nodes(V, shape.L)
    if N > limit:
        raise BoundsTooLarge(f"the optimal-verifier LP for V={V}, L={shape.L} has {N:,} nodes (limit "
                             f"{limit:,}; it would take up to about {node_lp_seconds(V, shape.L):,.0f} s); "
                             f"use a smaller V or L.")
    combos = combinations(V, shape, law)
    if combos > COMBINATION_LIMIT:
        raise BoundsTooLarge(f"the own-law LP for {shape.label} drafted by {law.name} over V={V} tokens "
                             f"must combine up to {combos:,} choices at one node (limit "
                             f"{COMBINATION_LIMIT:,}); use a smaller V or tree, or the iid law.")
    return N
