"""A drafted token tree: what the verifiers of any shape and law read (docs/maths.md, "Token trees").

For every internal node u (|u| < L) the tree keeps its draws in the law's visit order (repeats kept:
``iid``'s per-draw rounds need them), p(·|u) (the law drew from it), and q(·|u) for every node,
leaves at depth L included (the bonus position).  The shape and the law say how the draws were
made, so a verifier can read the exact law S_i of each visited child (``core.data.laws``).

``TokenTree.from_block`` converts a ``DraftBlock`` (K i.i.d. drafts) exactly: the draws at u
are the tokens of the drafts through u, in draft order.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np

from core.data.laws import IID_LAW, DraftLaw, first_appearance_table, get_law, law_at
from core.data.shapes import Shape
from core.data.tree import DraftBlock, Node, path_probability
from core.errors import InvalidInput


@dataclass(frozen=True)
class TokenTree:
    """Draws at every internal node (visit order), p(·|u) at internal nodes, q(·|u) at every node."""

    shape: Shape
    law: DraftLaw                               # the law named by the caller (``shape.law_at`` per depth)
    draws: Mapping[Node, tuple[int, ...]]       # internal nodes, |u| < L
    p: Mapping[Node, np.ndarray]                # internal nodes
    q: Mapping[Node, np.ndarray]                # every node, leaves included
    memo: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "law", get_law(self.law))
        for u, xs in self.draws.items():
            if len(u) >= self.shape.L:
                raise InvalidInput(f"node {u} is at depth {len(u)} ≥ L = {self.shape.L} and cannot "
                                   f"receive draws")

    @property
    def L(self) -> int:
        return self.shape.L

    @property
    def K(self) -> int:
        """Draws at the root (b_1, or the number of chains)."""
        return self.shape.K

    @property
    def V(self) -> int:
        return int(next(iter(self.q.values())).size)

    def law_at(self, depth: int) -> DraftLaw:
        """The law that drew the children of the nodes at ``depth``."""
        return law_at(self.shape, depth, self.law)

    def program_of(self, rule):
        """``rule``'s coin program for a token tree (``Verifier.run_tree``)."""
        return rule.run_tree

    def table(self) -> dict[Node, dict[int, tuple[int, int]]]:
        """For every internal node u: {child token: (index of its first draw at u, multiplicity)}."""
        out = self.memo.get("table")
        if out is None:
            out = {u: first_appearance_table(xs) for u, xs in self.draws.items()}
            self.memo["table"] = out
        return out

    def children(self, u: Node) -> tuple[int, ...]:
        """The distinct children of u, in order of first appearance among its draws."""
        return tuple(self.table().get(u, {}))

    def multiplicity(self, u: Node) -> int:
        """Draws at u's parent equal to u's last token (1 at the root)."""
        return 1 if not u else self.table()[u[:-1]][u[-1]][1]

    def deterministic(self, u: Node) -> bool:
        """Whether the non-root node u was drafted deterministically given its parent (a rank of
        p: every child of ``topk``, the Top children of ``greedy``) rather than sampled
        (``DraftLaw.deterministic_draws``, read at the position of u's first draw)."""
        parent = u[:-1]
        first = self.table()[parent][u[-1]][0]
        return self.law_at(len(parent)).deterministic_draws(len(self.draws[parent]))[first]

    def p_joint(self, u: Node) -> float:
        """p(u) = Π_i p(u_i | u_<i) for a node u of the tree."""
        return self._joint("p", u)

    def q_joint(self, u: Node) -> float:
        """q(u) = Π_i q(u_i | u_<i) for a node u of the tree (the q(s) of the top-k closed form)."""
        return self._joint("q", u)

    def _joint(self, which: str, u: Node) -> float:
        key = ("joint", which, u)
        out = self.memo.get(key)
        if out is None:
            out = self.memo[key] = path_probability(self.p if which == "p" else self.q, u)
        return out

    def nodes(self) -> list[Node]:
        """Every node (∅ included), by depth, then in order of first appearance."""
        out, level = [()], [()]
        for _ in range(self.L):
            level = [u + (c,) for u in level for c in self.children(u)]
            out += level
        return out

    def leaves(self) -> list[Node]:
        """The nodes at depth L (every path of a static tree reaches it)."""
        return [u for u in self.nodes() if len(u) == self.L]

    @classmethod
    def from_models(cls, draws: Mapping[Node, tuple[int, ...]], p_cond: Callable[[Node], np.ndarray],
                    q_cond: Callable[[Node], np.ndarray], shape: Shape,
                    law: str | DraftLaw) -> "TokenTree":
        """Fill p and q from two callables prefix -> distribution (toy models' ``cond``)."""
        tree = cls(shape, law, dict(draws), {}, {})
        for u in tree.nodes():
            tree.q[u] = np.asarray(q_cond(u), dtype=np.float64)
            if len(u) < shape.L:
                tree.p[u] = np.asarray(p_cond(u), dtype=np.float64)
        return tree

    @classmethod
    def from_block(cls, block: DraftBlock) -> "TokenTree":
        """K i.i.d. drafts as the chains K×L drafted by ``iid``: the draws at u are the tokens of the
        drafts through u, in draft order."""
        draws: dict[Node, list[int]] = {}
        for k in range(block.K):
            x = block.draft(k)
            for d in range(block.L):
                draws.setdefault(x[:d], []).append(x[d])
        return cls(Shape.chains_of(block.K, block.L), IID_LAW,
                   {u: tuple(xs) for u, xs in draws.items()},
                   {u: block.p[u] for u in draws}, dict(block.q))
