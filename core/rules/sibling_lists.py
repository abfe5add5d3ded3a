"""The drafted tree as a serving engine's verification kernel holds it: every draw its own node, with
its own subtree, its siblings in a list (TensorRT-LLM's and SGLang's ``retrieve_next_token`` /
``retrieve_next_sibling``; docs/maths.md, "Released rules, ported").

The project's ``TokenTree`` merges equal draws at a node into one child of multiplicity m, whose
m·b draws are the union of its copies' (``core.data.drafting``).  An engine keeps the m copies apart:
copy j of child c is its own node, whose b children are drawn for it alone.  Read back: the j-th
occurrence of c among the draws at u is copy j of u·c, and it owns the j-th block of b draws at u·c
(the draws at a merged node are i.i.d., so this is exactly the law of an engine's tree).  On a tree
whose draws are distinct (``wor``, ``topk``) every copy index is 0 and a node's list is its draws.

A copy is named by (node, j); the root is (∅, 0).  On K i.i.d. chains copy j of a node is the j-th
draft through it, so the draft a node came from is known too.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from core.data.coins import Coins
from core.data.nodes import Node
from core.data.outcome import Outcome, Trace
from core.data.token_tree import TokenTree

#: A child as a kernel offers it: (token, index of its draw at the parent, the draft it follows).
Offer = tuple[int, int, int]
#: What a kernel does at a node: ``(u, its children's offers, trace, coins)`` → (the index of the
#: accepted offer, or None with the extra token's law).
NodeStep = Callable[[Node, list[Offer], Trace, Coins], tuple[int | None, np.ndarray | None]]


def copies(tree: TokenTree, u: Node) -> int:
    """How many copies of node u an engine holds: 1 at the root, else u's multiplicity."""
    return tree.multiplicity(u) if u else 1


def siblings(tree: TokenTree, u: Node, copy: int) -> list[tuple[int, int, int]]:
    """The children of copy ``copy`` of node u, in the list's order, as (token, index g of the draw at
    u, which copy of u·token it is: the occurrences of the token among the draws before g): the copy's
    own block of the draws at u (none at depth L or at a leaf)."""
    draws = tree.draws.get(u, ()) if len(u) < tree.L else ()
    if not draws:
        return []
    width = len(draws) // copies(tree, u)
    seen: dict[int, int] = {}
    out = []
    for g, x in enumerate(draws[:(copy + 1) * width]):
        x = int(x)
        j = seen[x] = seen.get(x, -1) + 1
        if g >= copy * width:
            out.append((x, g, j))
    return out


def draft_of(tree: TokenTree, u: Node, copy: int, g: int) -> int:
    """The draft a node came from, for a trace: on K i.i.d. chains the index of the draft copy
    ``copy`` of u follows; on any other tree the index g of its draw at its parent (−1 at the root)."""
    if not u:
        return -1
    if tree.iid_chains:
        return tree.drafts_through(u)[copy]
    return g


def walk(tree: TokenTree, coins: Coins, step: NodeStep,
         bonus: Callable[[np.ndarray], np.ndarray] = lambda q: q) -> Outcome:
    """The walk every engine's kernel makes from the root: at the accepted copy of node u, ``step``
    decides among u's children (in the list's order) and either names the accepted one, which the walk
    enters, or gives the extra token's law; at a leaf or at depth L the extra token's law is
    ``bonus(q(·|u))`` (the target itself by default)."""
    trace = Trace()
    u: Node = ()
    copy, g = 0, -1
    while True:
        listed = siblings(tree, u, copy)
        if not listed:
            return Outcome(u, draft_of(tree, u, copy, g), bonus(tree.q[u]), trace)
        offers = [(x, i, draft_of(tree, u + (x,), j, i)) for x, i, j in listed]
        chosen, law = step(u, offers, trace, coins)
        if chosen is None:
            return Outcome(u, draft_of(tree, u, copy, g), law, trace)
        x, g, copy = listed[chosen]
        u = u + (x,)
