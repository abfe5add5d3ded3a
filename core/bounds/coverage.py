"""The drafted tree seen from its nodes: which nodes it can hold, and its coverage
g(A) = P(the drafted tree meets A) for an antichain A, by a miss recursion (docs/maths.md, "The
optimal verifier without draft sets").

The prefix tree holds every node u with |u| ≤ L in level order (node 0 is the root; the V children
of a node are consecutive), with p(u_last | parent), q(u_last | parent) and the joints p(u), q(u).
Each internal node carries its *miss map*: the probability x_u that a copy of u drafts no node of A
below it, from its children's x (x_a = 0 for a ∈ A, x = 1 where no node of A lies below):

- ``iid`` with b draws per copy: every draw grows its own subtree independently (the unmerged tree:
  merging equal draws changes the multiplicities, not the set of paths), so
  x_u = (Σ_y p(y|u)·x_(u·y))^b.  Chains K×L have b = K at the root and b = 1 below.
- a law of distinct draws (``wor``, ``topk``, ``greedy``) with k draws: the children form a random
  set C with a known law, each child a single copy, so x_u = Σ_C P(C)·Π_(c∈C) x_c.

Then g(A) = 1 − x_∅.  For K i.i.d. chains this is 1 − (1 − p(A))^K.  The probability that node u
itself is drafted, g({u}), is the same recursion along u's path.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from core.bounds.sizes import one_minus_pow
from core.data.laws import IID_LAW, DraftLaw, get_law, law_at, top_ranked
from core.data.levels import level_conditionals, node_tuple
from core.data.shapes import Shape
from core.errors import InvalidInput

if TYPE_CHECKING:  # toy models only provide ``.V`` and ``.cond``
    from toy_models import ToyModel


@dataclass(frozen=True)
class MissMap:
    """How an internal node's miss probability follows from its children's.

    ``draws`` > 0: ``iid``, x_u = (Σ_y p(y|u)·x_(u·y))^draws.  ``draws`` = 0: a law of distinct
    draws, x_u = Σ_i probs[i]·Π_(c ∈ sets[i]) x_c, with ``sets`` of child *positions* (0..V−1)."""

    draws: int = 0
    sets: tuple[tuple[int, ...], ...] = ()
    probs: tuple = ()

    @property
    def linear(self) -> bool:
        """x_u is Σ_y p(y|u)·x_(u·y) itself (one i.i.d. draw per copy)."""
        return self.draws == 1

    def inclusion(self, V: int, p_children: Sequence) -> list:
        """P(child y is drafted below one copy of u), for y = 0..V−1 (distinct laws; for ``iid``
        use ``one_minus_pow``)."""
        out = [0 * p for p in p_children]
        for s, pr in zip(self.sets, self.probs):
            for c in s:
                out[c] = out[c] + pr
        return out


def child_sets(law: DraftLaw, P: np.ndarray, k: int, exact: Callable | None = None
               ) -> tuple[tuple[tuple[int, ...], ...], tuple]:
    """The law of the children set C of a node with k distinct draws from P: (sets, probabilities),
    in floats or, with ``exact`` (float -> Fraction), exact rationals of the same P."""
    value = float if exact is None else exact
    if law.name == "topk":
        return (tuple(sorted(top_ranked(P, k))),), (value(1.0),)
    if law.name == "greedy":
        top = top_ranked(P, k - 1)
        rest = [y for y in range(P.size) if y not in top and P[y] > 0]
        mass = 1 - sum(value(P[t]) for t in top)
        return (tuple(tuple(sorted(top + (y,))) for y in rest),
                tuple(value(P[y]) / mass for y in rest))
    if law.name == "wor":
        law_of: dict[tuple[int, ...], object] = {}
        support = [y for y in range(P.size) if P[y] > 0]
        for seq in itertools.permutations(support, k):
            pr, left = value(1.0), value(1.0)
            for y in seq:
                pr = pr * value(P[y]) / left
                left = left - value(P[y])
            key = tuple(sorted(seq))
            law_of[key] = law_of[key] + pr if key in law_of else pr
        return tuple(law_of), tuple(law_of.values())
    raise InvalidInput(f"no children-set law for the draft law {law.name}")  # pragma: no cover


@dataclass(frozen=True)
class PrefixTree:
    """Every node u with |u| ≤ L, level by level, with the models' conditionals along its edge and
    the miss map of every internal node (module docstring)."""

    V: int
    L: int
    shape: Shape
    law: DraftLaw
    depth: np.ndarray          # (N,)
    parent: np.ndarray         # (N,), −1 at the root
    p_edge: np.ndarray         # p(u_last | parent), 1 at the root
    q_edge: np.ndarray
    p_joint: np.ndarray        # p(u)
    q_joint: np.ndarray        # q(u)
    maps: tuple                # MissMap per node, None at depth L
    first_child: np.ndarray    # (N,): the first of the V consecutive children, −1 at depth L

    @property
    def N(self) -> int:
        return int(self.depth.size)

    def children(self, u: int) -> range:
        """The V children of a node (empty at depth L)."""
        first = int(self.first_child[u])
        return range(first, first + self.V) if first >= 0 else range(0)

    @cached_property
    def kids(self) -> tuple[tuple[int, ...], ...]:
        """``children(u)`` of every node, as tuples (the separation reads them every round)."""
        return tuple(tuple(self.children(u)) for u in range(self.N))

    @cached_property
    def iid_chains(self) -> bool:
        """K i.i.d. chains: ``iid`` at the root, one draw per copy below, so g(A) = 1 − (1 − p(A))^K."""
        return all(m is None or m.draws == 1 for m in self.maps[1:]) and bool(self.maps[0].draws)

    def hit(self, antichain: Sequence[int]) -> float:
        """g(A) = P(the drafted tree meets A), in floats, accurate where it is small."""
        if self.iid_chains:
            return float(one_minus_pow(self.p_joint[list(antichain)].sum(), self.maps[0].draws))
        return _hit(self, antichain, self.p_edge, self.maps, exact=False)

    def drafted(self) -> np.ndarray:
        """g({u}) = P(u is drafted) for every node (1 at the root)."""
        if self.iid_chains:
            return one_minus_pow(self.p_joint, self.maps[0].draws)
        out = np.ones(self.N)
        for u in range(1, self.N):
            out[u] = self.hit([u])
        return out


def _hit(tree: PrefixTree, antichain: Sequence[int], p_edge, maps, exact: bool):
    """1 − x_∅ for the antichain, touching only the nodes above it.  Kept as hit probabilities
    y = 1 − x so that small coverages keep their digits in floats."""
    hit = {int(a): (1 if exact else 1.0) for a in antichain}
    if 0 in hit or not hit:
        return hit.get(0, 0 if exact else 0.0)
    for d in range(tree.L, 0, -1):                    # deepest first: a parent after all its children
        parents: dict[int, list[int]] = {}
        for c in [c for c in hit if tree.depth[c] == d]:
            parents.setdefault(int(tree.parent[c]), []).append(c)
        for u, kids in parents.items():
            m = maps[u]
            first = tree.children(u).start
            if m.draws:
                X = sum(p_edge[c] * hit[c] for c in kids)        # 1 − Σ_y p(y|u)·x_(u·y)
                hit[u] = (1 - (1 - X) ** m.draws) if exact else float(one_minus_pow(X, m.draws))
            else:
                miss = 0
                for s, pr in zip(m.sets, m.probs):
                    term = pr
                    for c in s:
                        if first + c in hit:
                            term = term * (1 - hit[first + c])
                    miss = miss + term
                hit[u] = 1 - miss
    return hit[0]


def prefix_tree(draft: ToyModel, target: ToyModel, shape: Shape, law: str | DraftLaw) -> PrefixTree:
    """The prefix tree of depth ``shape.L`` with the miss maps of (shape, law): K i.i.d. chains for
    ``iid`` on chains, any static tree of any law."""
    law = get_law(law)
    V, L = int(draft.V), shape.L
    pc = level_conditionals(draft, L - 1)
    qc = level_conditionals(target, L - 1)
    sizes = [V ** d for d in range(L + 1)]
    N = sum(sizes)
    depth = np.concatenate([np.full(s, d, np.int64) for d, s in enumerate(sizes)])
    off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    parent = np.full(N, -1, np.int64)
    p_edge, q_edge = np.ones(N), np.ones(N)
    for d in range(1, L + 1):
        parent[off[d]:off[d + 1]] = off[d - 1] + np.arange(sizes[d]) // V
        p_edge[off[d]:off[d + 1]] = pc[d - 1].ravel()
        q_edge[off[d]:off[d + 1]] = qc[d - 1].ravel()
    p_joint, q_joint = p_edge.copy(), q_edge.copy()
    for d in range(1, L + 1):
        p_joint[off[d]:off[d + 1]] *= p_joint[parent[off[d]:off[d + 1]]]
        q_joint[off[d]:off[d + 1]] *= q_joint[parent[off[d]:off[d + 1]]]
    first_child = np.full(N, -1, np.int64)
    first_child[:off[L]] = off[1:L + 1].repeat(sizes[:L]) + (np.arange(off[L]) - off[:L].repeat(sizes[:L])) * V
    maps = node_maps(pc, shape, law, p_joint, off)
    return PrefixTree(V, L, shape, law, depth, parent, p_edge, q_edge, p_joint, q_joint, tuple(maps),
                      first_child)


def node_maps(pc: Sequence, shape: Shape, law: DraftLaw, p_joint: np.ndarray, off: np.ndarray,
              exact: Callable | None = None) -> list:
    """The miss map of every node (None at depth L), from p's conditionals ``pc`` by level; exact
    rationals of the same probabilities with ``exact``.  A node the draft never reaches keeps the
    linear map: its x is weighted by 0 wherever it enters."""
    V, L = int(pc[0].shape[1]), shape.L
    maps: list = [None] * int(off[L + 1])
    for d in range(L):
        lw = law_at(shape, d, law)
        k = shape.branching[d]
        for i in range(V ** d):
            u = int(off[d]) + i
            if lw is IID_LAW:
                maps[u] = MissMap(draws=k)
            elif p_joint[u] <= 0:
                maps[u] = MissMap(draws=1)
            else:
                P = pc[d][i]
                lw.check(P, k, node_tuple(d, i, V))
                sets, probs = child_sets(lw, P, k, exact)
                maps[u] = MissMap(sets=sets, probs=probs)
    return maps
