"""Drafting a token tree of any shape and law, written once (docs/maths.md, "Token trees").

``draft_tree(draft_cond, shape, law, coins)`` grows the tree top-down: a node u of depth d and
multiplicity m receives k = m·b_(d+1) draws from p(·|u) by the law at that depth (``core.data.laws.law_at``),
kept in the law's visit order; equal draws (``iid`` only) are one child of that multiplicity.  With
seeded coins it samples a tree; through ``core.data.coins.enumerate_outcomes`` it enumerates every
tree with its probability.  The own-law LP's node-set law (``node_set_law``) and the exact
laboratory's plain enumeration (``enumerate_trees``) both come from it.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from core.data.coins import Coins, enumerate_outcomes
from core.data.laws import DraftLaw, first_appearance_table, law_at
from core.data.shapes import Shape
from core.data.token_tree import TokenTree
from core.data.nodes import Node

Cond = Callable[[Node], np.ndarray]


def _cached(cond: Cond, cache: dict | None) -> Cond:
    if cache is None:
        return lambda u: np.asarray(cond(u), dtype=np.float64)

    def get(u: Node) -> np.ndarray:
        P = cache.get(u)
        if P is None:
            P = cache[u] = np.asarray(cond(u), dtype=np.float64)
        return P

    return get


def draft_tree(draft_cond: Cond, shape: Shape, law: DraftLaw, coins: Coins,
               cache: dict | None = None) -> dict[Node, tuple[int, ...]]:
    """The draws at every internal node of one drafted tree, {u: draws in visit order}.

    Depth first, children in order of first appearance, so a seed replays the same tree.  Refuses
    (``InvalidInput``, one sentence) a node where the law does not exist (``DraftLaw.check``).
    ``cache`` (a dict) memoises p(·|u) across calls, e.g. over every outcome of an enumeration."""
    cond = _cached(draft_cond, cache)
    draws: dict[Node, tuple[int, ...]] = {}

    def grow(u: Node, m: int) -> None:
        d = len(u)
        if d == shape.L:
            return
        lw = law_at(shape, d, law)
        P = cond(u)
        k = shape.draws(d, m)
        lw.check(P, k, u)
        xs = lw.draw(P, k, coins)
        draws[u] = xs
        for c, (_, j) in first_appearance_table(xs).items():
            grow(u + (c,), j)

    grow((), 1)
    return draws


def leaf_paths(draws: dict[Node, tuple[int, ...]], L: int) -> tuple[Node, ...]:
    """The tree's distinct root-to-leaf paths, sorted: its node set is their prefix closure (every
    b_d ≥ 1, so every leaf is at depth L)."""
    return tuple(sorted({u + (c,) for u, xs in draws.items() if len(u) == L - 1 for c in xs}))


def enumerate_trees(draft, target, shape: Shape, law: DraftLaw,
                    max_outcomes: int | None = None) -> list[tuple[float, TokenTree]]:
    """Every drafted tree of (shape, law) on toy models with its probability (ordered draws: see
    ``tree_outcome_count``), as ``TokenTree``s with p and q filled in."""
    cache: dict = {}
    runs = enumerate_outcomes(lambda coins: draft_tree(draft.cond, shape, law, coins, cache),
                              max_outcomes)
    return [(prob, TokenTree.from_models(draws, draft.cond, target.cond, shape, law))
            for prob, draws in runs]


def node_set_law(draft_cond: Cond, shape: Shape, law: DraftLaw,
                 max_outcomes: int | None = None, exact=None) -> dict[tuple[Node, ...], float]:
    """P(node set = t) for every drafted node set t, keyed by its sorted leaf paths: the draft side
    of the own-law LP (only this law matters there; docs/maths.md).  With ``exact`` (float ->
    ``Fraction``, see ``core.data.coins.enumerate_outcomes``) the probabilities are exact
    rationals."""
    cache: dict = {}
    out: dict[tuple[Node, ...], float] = {}
    runs = enumerate_outcomes(lambda coins: leaf_paths(draft_tree(draft_cond, shape, law, coins, cache),
                                                       shape.L), max_outcomes, exact)
    for prob, paths in runs:
        out[paths] = out[paths] + prob if paths in out else prob
    return out


def check_supports(draft_cond: Cond, shape: Shape, law: DraftLaw,
                   max_nodes: int | None = None) -> bool:
    """Refuse (``InvalidInput``) up front if the law cannot draw at some node the draft reaches
    with positive probability.  Only nodes drafted by a distinct-token law are checked (``iid``
    accepts any k), each with multiplicity 1.  Returns False, having checked nothing for certain,
    when more than ``max_nodes`` nodes would have to be visited."""
    if law_at(shape, 0, law).distinct is False:
        return True
    depths = 1 if shape.chains else shape.L
    cond = _cached(draft_cond, {})
    seen = 0
    stack: list[Node] = [()]
    while stack:
        u = stack.pop()
        seen += 1
        if max_nodes is not None and seen > max_nodes:
            return False
        lw = law_at(shape, len(u), law)
        P = cond(u)
        k = shape.draws(len(u))
        lw.check(P, k, u)
        if len(u) + 1 < depths:
            stack.extend(u + (int(c),) for c in lw.children_of(P, k))
    return True
