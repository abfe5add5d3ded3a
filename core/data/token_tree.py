"""The drafted token tree: the one type every verifier, the exact laboratory, the decoder's host side
and the pages read (docs/maths.md, "Token trees").

For every internal node u (|u| < L) the tree keeps its draws in the law's visit order (repeats kept:
``iid``'s per-draw rounds need them), p(·|u) (the law drew from it), and q(·|u) for every node,
leaves at depth L included (the bonus position).  The shape and the law say how the draws were
made, so a verifier can read the exact law S_i of each visited child (``core.data.laws``).

K i.i.d. drafts of length L are a tree of this type too: the chains K×L drafted by ``iid``
(``TokenTree.chains``), whose draws at u are the tokens of the drafts through u, in draft order.
Such a tree is also read as its K rows (``drafts``, ``draft(k)``, ``draft_table``): that is how
the rules defined on K i.i.d. drafts only, and each rule's programme for them, read it
(``program_of``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Mapping, Sequence

import numpy as np

from core.data.laws import IID_LAW, DraftLaw, first_appearance_table, get_law, is_iid_chains, law_at
from core.data.nodes import Node, path_probability
from core.data.shapes import Shape
from core.errors import InvalidInput


@lru_cache(maxsize=None)
def _chains(K: int, L: int) -> Shape:
    # One Shape per (K, L): the exact laboratory builds a tree for every draft outcome.
    return Shape.chains_of(K, L)


@dataclass(frozen=True)
class TokenTree:
    """Draws at every internal node (visit order), p(·|u) at internal nodes, q(·|u) at every node."""

    shape: Shape
    law: DraftLaw                               # the law named by the caller (``shape.law_at`` per depth)
    draws: Mapping[Node, tuple[int, ...]]       # internal nodes, |u| < L
    p: Mapping[Node, np.ndarray]                # internal nodes
    q: Mapping[Node, np.ndarray]                # every node, leaves included
    # Per-tree memo for derived quantities (joint probabilities, tables, a rule's per-node values),
    # so that exact enumeration, which replays a rule many times on one tree, computes them once.
    memo: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "law", get_law(self.law))
        L = self.shape.L
        for u in self.draws:
            if len(u) >= L:
                raise InvalidInput(f"node {u} is at depth {len(u)} ≥ L = {L} and cannot receive draws")

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

    @property
    def iid_chains(self) -> bool:
        """Whether the tree is K i.i.d. drafts of length L (``core.data.laws.is_iid_chains``): then
        it is also read as its K rows (``drafts``)."""
        out = self.memo.get("iid_chains")
        if out is None:
            out = self.memo["iid_chains"] = is_iid_chains(self.shape, self.law)
        return out

    def law_at(self, depth: int) -> DraftLaw:
        """The law that drew the children of the nodes at ``depth``."""
        return law_at(self.shape, depth, self.law)

    def program_of(self, rule):
        """``rule``'s coin programme for these drafts: ``run_chains`` for K i.i.d. drafts (every
        rule has one), ``run_tree`` for any other tree (the rules with ``token_trees``)."""
        return rule.run_chains if self.iid_chains else rule.run_tree

    # -- the tree, node by node --------------------------------------------------------------------

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
        """How many drafts pass through u: the draws at u's parent equal to u's last token; at the
        root, which is not drawn, K on K i.i.d. drafts (every draft starts there), 1 on any other
        tree."""
        if not u:
            return self.K if self.iid_chains else 1
        return self.table()[u[:-1]][u[-1]][1]

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
        """q(u) = Π_i q(u_i | u_<i) for u a node of the tree or a child of one (the q(s) of the top-k
        closed form)."""
        return self._joint("q", u)

    def _joint(self, which: str, u: Node) -> float:
        key = ("joint", which, u)
        out = self.memo.get(key)
        if out is None:
            out = self.memo[key] = path_probability(self.p if which == "p" else self.q, u)
        return out

    def nodes(self) -> list[Node]:
        """Every node (∅ included), by depth, then in order of first appearance: along the drafts
        (``drafts``) on K i.i.d. drafts, along the parents and their draws on any other tree."""
        if self.iid_chains:
            return self._draft_nodes()
        out, level = [()], [()]
        for _ in range(self.L):
            level = [u + (c,) for u in level for c in self.children(u)]
            out += level
        return out

    def leaves(self) -> list[Node]:
        """The nodes at depth L (every path of a static tree reaches it)."""
        return [u for u in self.nodes() if len(u) == self.L]

    # -- K i.i.d. drafts, read as rows -------------------------------------------------------------

    @property
    def drafts(self) -> np.ndarray:
        """The K drafts x^(1..K) ∈ Ω^L as a (K, L) int64 array, on K i.i.d. drafts (``rows``)."""
        out = self.memo.get("drafts")
        if out is None:
            out = self.memo["drafts"] = np.asarray(self._rows(), dtype=np.int64)
        return out

    def draft(self, k: int) -> Node:
        """Draft k (0-based) as a tuple of token ids."""
        return self._rows()[k]

    def _rows(self) -> tuple[Node, ...]:
        """The K drafts as tuples, on K i.i.d. drafts: draft k takes the k-th draw at the root, then,
        at every node it reaches, the draw whose rank among the draws there is its rank among the
        drafts through that node."""
        out = self.memo.get("rows")
        if out is None:
            if not self.iid_chains:
                raise InvalidInput(f"{self.shape.label} drafted by {self.law.name} is not K i.i.d. drafts, "
                                   f"so it has no rows")
            rows = [[x] for x in self.draws[()]]
            for _ in range(1, self.L):
                through: dict[Node, list[int]] = {}
                for k, row in enumerate(rows):
                    through.setdefault(tuple(row), []).append(k)
                for u, ks in through.items():
                    for k, x in zip(ks, self.draws[u]):
                        rows[k].append(x)
            out = self.memo["rows"] = tuple(tuple(int(x) for x in row) for row in rows)
        return out

    def draft_table(self) -> dict[Node, dict[int, tuple[int, int]]]:
        """``table`` with drafts for draws, on K i.i.d. drafts: for every internal node s,
        {child token c: (first draft through s·c, how many drafts pass through s·c)}."""
        out = self.memo.get("draft_table")
        if out is None:
            acc: dict[Node, dict[int, list[int]]] = {}
            for k, x in enumerate(self._rows()):
                for d in range(self.L):
                    acc.setdefault(x[:d], {}).setdefault(x[d], [k, 0])[1] += 1
            out = self.memo["draft_table"] = {s: {c: (v[0], v[1]) for c, v in kids.items()}
                                              for s, kids in acc.items()}
        return out

    def drafts_through(self, u: Node) -> tuple[int, ...]:
        """On K i.i.d. drafts, the drafts (0-based, in order) whose first |u| tokens are u; () where
        none is."""
        out = self.memo.get("through")
        if out is None:
            acc: dict[Node, list[int]] = {}
            for k, x in enumerate(self._rows()):
                for d in range(self.L + 1):
                    acc.setdefault(x[:d], []).append(k)
            out = self.memo["through"] = {u: tuple(ks) for u, ks in acc.items()}
        return out.get(u, ())

    def _draft_nodes(self) -> list[Node]:
        rows = self._rows()
        return list(dict.fromkeys(x[:depth] for depth in range(self.L + 1) for x in rows))

    # -- construction ------------------------------------------------------------------------------

    @classmethod
    def chains(cls, drafts, p: Mapping[Node, np.ndarray], q: Mapping[Node, np.ndarray]) -> "TokenTree":
        """K i.i.d. drafts (a (K, L) array) with p(·|s) at the nodes of depth < L and q(·|s) at every
        node: the chains K×L drafted by ``iid``, whose draws at u are the tokens of the drafts
        through u, in draft order."""
        drafts = np.asarray(drafts, dtype=np.int64)
        if drafts.ndim != 2 or drafts.shape[0] < 1:
            raise InvalidInput("drafts must be a (K, L) array with K ≥ 1")
        K, L = drafts.shape
        rows = tuple(map(tuple, drafts.tolist()))
        draws: dict[Node, list[int]] = {}
        for row in rows:
            for d in range(L):
                draws.setdefault(row[:d], []).append(row[d])
        tree = cls(_chains(K, L), IID_LAW, {u: tuple(xs) for u, xs in draws.items()}, p, q)
        tree.memo.update(drafts=drafts, rows=rows)
        return tree

    @classmethod
    def chains_from_models(cls, drafts: Sequence[Sequence[int]], p_cond: Callable[[Node], np.ndarray],
                           q_cond: Callable[[Node], np.ndarray]) -> "TokenTree":
        """``chains`` with p and q filled from two callables prefix -> distribution (toy models'
        ``cond``); nodes shared by several drafts are evaluated once."""
        drafts = np.asarray(drafts, dtype=np.int64)
        L = drafts.shape[-1]
        p: dict[Node, np.ndarray] = {}
        q: dict[Node, np.ndarray] = {}
        for row in drafts.tolist():
            for depth in range(L + 1):
                s = tuple(row[:depth])
                if s not in q:
                    q[s] = np.asarray(q_cond(s), dtype=np.float64)
                    if depth < L:
                        p[s] = np.asarray(p_cond(s), dtype=np.float64)
        return cls.chains(drafts, p, q)

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
