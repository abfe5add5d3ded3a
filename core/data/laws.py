"""Draft laws: how the k draws at a node are taken from P = p(·|u), and what a verifier may assume
about them (docs/maths.md, "Token trees").

*Rank* = decreasing P, ties to the smaller token id.

| law | the k draws | visit order | S_i, the law of the i-th visited child given the earlier ones |
|---|---|---|---|
| ``iid`` | X_1..X_k i.i.d. P | draw order | P (per draw); P without the visited tokens (per distinct child) |
| ``wor`` | X_i ~ P without X_1..X_(i−1), renormalised | draw order | P without the earlier children, renormalised |
| ``topk`` | the first k tokens in rank order | rank order | δ_(c_i) |
| ``greedy`` | the first k−1 in rank order (Top) + X ~ P′ = P on Ω∖Top, renormalised | X, then Top | P′ for X, then δ_(c_i) |

Each law is written once and used three ways:

(a) ``draw(P, k, coins)``: the draws, in visit order, through ``core.data.coins`` (seeded sampling,
    or every outcome with its probability through ``enumerate_outcomes``);
(b) ``visit_order(state, draws)``: at a concrete node, the visited children in order with their S_i;
(c) ``state(P, k)``: the model-level state machine (``NodeState``) the exact recursions follow: the
    joint law of the next visited child and its multiplicity given what was visited
    (``branches``), and the state after it (``after``).

``iid`` has two exact views.  *Per draw* (``per_draw=True``): every draw is a round with S = P,
repeats included; the multiplicity of the draw at round i, counted over the draws from i on, is
1 + Binomial(k − i, P(x)).  *Per distinct child*: the next *new* token has law P without the
visited tokens, renormalised, and its multiplicity is 1 + Binomial(k' − 1, S(c)) over the k' draws
not yet in a visited child.  The other laws draw distinct tokens: both views coincide and every
multiplicity is 1.

Refused (``InvalidInput``, one sentence): ``wor``, ``greedy`` and ``topk`` with k > |supp P| at a
node that receives draws (the first two do not exist there; for ``topk`` refusing p = 0 tokens is a
choice).  ``Shape`` refuses K, L or some b_d < 1.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, ClassVar, Iterator, Mapping, Protocol, Sequence

import numpy as np

from core.data.coins import Coins
from core.data.shapes import Shape
from core.data.nodes import Node
from core.errors import InvalidInput


class NodeState(Protocol):
    """What a verifier knows at a node: ``k`` draws through it are not yet in a visited child.

    ``shared_after`` (optional, default False): ``after`` does not depend on which child was
    visited and rejected, so an exact recursion continues once, with the rejected mass summed over
    the branches.  For ``PerDraw`` this is required, not an economy: its ``after`` is the law of
    the remaining rounds averaged over the rejected draw and its multiplicity (the remaining draws
    are fresh i.i.d. draws), not the law given them."""

    k: int

    def describe(self) -> dict[str, float]:
        """What the policy decided on entering the node, for the trace (e.g. OTV's order)."""

    def law(self) -> np.ndarray:
        """S: the law of the next visited child given what has been seen (needs k ≥ 1)."""

    def pick(self, children: Mapping[int, tuple[int, int]]) -> int:
        """The next child among the actual children left, {token: (first draw, multiplicity)}."""

    def branches(self) -> Iterator[tuple[int, int, float]]:
        """(c, j, P(next child = c with multiplicity j)) over every outcome of positive probability."""

    def after(self, c: int, j: int) -> "NodeState":
        """The state once child c, drafted j times, has been visited and rejected."""


#: policy(p(·|b), q(·|b), w, k_b) -> NodeState, called when a verifier enters a node.
Policy = Callable[[np.ndarray, np.ndarray, float, int], NodeState]


def iid_branches(s: np.ndarray, k: int) -> Iterator[tuple[int, int, float]]:
    """Next child = the first of k i.i.d. draws from s; its multiplicity is 1 + Binomial(k − 1, s(c)):
    P(c, j) = s(c)·C(k−1, j−1)·s(c)^(j−1)·(1 − s(c))^(k−j)."""
    for c in np.flatnonzero(s > 0):
        sc = float(s[c])
        for j in range(1, k + 1):
            prob = sc * math.comb(k - 1, j - 1) * sc ** (j - 1) * (1.0 - sc) ** (k - j)
            if prob > 0.0:
                yield int(c), j, prob


def first_drafted(children: Mapping[int, tuple[int, int]]) -> int:
    """The child whose first draw (or draft) has the smallest index (order of first appearance)."""
    return min(children, key=lambda c: children[c][0])


def first_appearance_table(draws: Sequence[int]) -> dict[int, tuple[int, int]]:
    """{token: (index of its first draw, multiplicity)} for the draws at one node."""
    out: dict[int, list[int]] = {}
    for i, x in enumerate(draws):
        out.setdefault(int(x), [i, 0])[1] += 1
    return {c: (v[0], v[1]) for c, v in out.items()}


def rank(P: np.ndarray) -> np.ndarray:
    """Token ids by decreasing P, ties to the smaller id."""
    return np.argsort(-np.asarray(P, dtype=np.float64), kind="stable")


def top_ranked(P: np.ndarray, k: int) -> tuple[int, ...]:
    """``rank(P)[:k]`` without sorting the vocabulary: the k-th largest value v by a partition,
    every token above v, then the tokens equal to v by id, and only those k sorted.  O(V + k log k)
    instead of O(V log V): a real decoder's nodes have V = 49152 and k ≤ a few dozen."""
    P = np.asarray(P, dtype=np.float64)
    k = min(int(k), P.size)
    if k <= 0:
        return ()
    v = P[np.argpartition(-P, k - 1)[:k]].min()
    above = np.flatnonzero(P > v)
    ties = np.flatnonzero(P == v)[: k - above.size]
    chosen = np.concatenate([above, ties])
    return tuple(int(x) for x in chosen[np.lexsort((chosen, -P[chosen]))])


# ---------------------------------------------------------------------------------------------
# Node states (model-level and concrete: one state machine per law)
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FirstAppearance:
    """``iid`` per distinct child: p(·|b), the tokens not yet visited, the k draws left among them.
    S = p without the visited tokens, renormalised (the next *new* one of i.i.d. draws)."""

    p: np.ndarray
    unvisited: np.ndarray   # bool mask
    k: int

    def describe(self) -> dict[str, float]:
        return {}

    def law(self) -> np.ndarray:
        s = np.where(self.unvisited, self.p, 0.0)
        return s / s.sum()

    def pick(self, children: Mapping[int, tuple[int, int]]) -> int:
        return first_drafted(children)

    def branches(self) -> Iterator[tuple[int, int, float]]:
        return iid_branches(self.law(), self.k)

    def after(self, c: int, j: int) -> "FirstAppearance":
        unvisited = self.unvisited.copy()
        unvisited[c] = False
        return type(self)(self.p, unvisited, self.k - j)


class WithoutReplacement(FirstAppearance):
    """``wor``: the same S as ``iid`` per distinct child, but every child is drawn once."""

    def branches(self) -> Iterator[tuple[int, int, float]]:
        s = self.law()
        for c in np.flatnonzero(s > 0):
            yield int(c), 1, float(s[c])


@dataclass(frozen=True)
class PerDraw:
    """``iid`` per draw: the next draw x ~ p (S = p, repeats included) with its multiplicity over
    the k draws left, 1 + Binomial(k − 1, p(x)).  An accepted x is a first occurrence (an earlier
    rejected x would have T(x) = 0), so that is its multiplicity in the tree.  After a rejected
    round the next draw is a fresh i.i.d. draw whatever x was: ``after`` holds averaged over x and
    its multiplicity (``shared_after``).  Concrete rounds are the draws themselves
    (``visit_order``)."""

    p: np.ndarray
    k: int
    per_draw: ClassVar[bool] = True
    shared_after: ClassVar[bool] = True

    def describe(self) -> dict[str, float]:
        return {}

    def law(self) -> np.ndarray:
        return self.p

    def pick(self, children: Mapping[int, tuple[int, int]]) -> int:
        raise TypeError("per-draw rounds visit the draws themselves; use visit_order")

    def branches(self) -> Iterator[tuple[int, int, float]]:
        return iid_branches(self.p, self.k)

    def after(self, c: int, j: int) -> "PerDraw":
        return PerDraw(self.p, self.k - 1)


@dataclass(frozen=True)
class Ranked:
    """Deterministic children visited in a fixed order (``topk``, and ``greedy`` after X):
    S = δ of the next one."""

    order: tuple[int, ...]
    V: int
    shared_after: ClassVar[bool] = True

    @property
    def k(self) -> int:
        return len(self.order)

    def describe(self) -> dict[str, float]:
        return {}

    def law(self) -> np.ndarray:
        s = np.zeros(self.V)
        s[self.order[0]] = 1.0
        return s

    def pick(self, children: Mapping[int, tuple[int, int]]) -> int:
        return self.order[0]

    def branches(self) -> Iterator[tuple[int, int, float]]:
        yield self.order[0], 1, 1.0

    def after(self, c: int, j: int) -> "Ranked":
        return Ranked(self.order[1:], self.V)


@dataclass(frozen=True)
class GreedyHead:
    """``greedy`` before its sampled child: X ~ P′ = p on Ω∖Top, renormalised, visited first; after
    it (whatever X was) the Top tokens in rank order (``Ranked``)."""

    p: np.ndarray
    top: tuple[int, ...]
    shared_after: ClassVar[bool] = True

    @property
    def k(self) -> int:
        return len(self.top) + 1

    def describe(self) -> dict[str, float]:
        return {}

    def law(self) -> np.ndarray:
        s = self.p.copy()
        s[list(self.top)] = 0.0
        return s / s.sum()

    def pick(self, children: Mapping[int, tuple[int, int]]) -> int:
        return next(c for c in children if c not in self.top)

    def branches(self) -> Iterator[tuple[int, int, float]]:
        s = self.law()
        for c in np.flatnonzero(s > 0):
            yield int(c), 1, float(s[c])

    def after(self, c: int, j: int) -> Ranked:
        return Ranked(self.top, self.p.size)


def visit_order(state: NodeState, draws: Sequence[int]) -> list[tuple[int, np.ndarray, int, int]]:
    """At a concrete node: (child c, S_i, index of c's first draw, multiplicity) for each round, in
    the law's visit order, from the state machine itself (per-draw states: one round per draw)."""
    if getattr(state, "per_draw", False):
        table = first_appearance_table(draws)
        return [(int(x), state.law(), i, table[int(x)][1]) for i, x in enumerate(draws)]
    left = first_appearance_table(draws)
    out = []
    while left:
        c = state.pick(left)
        first, j = left.pop(c)
        out.append((c, state.law(), first, j))
        state = state.after(c, j)
    return out


# ---------------------------------------------------------------------------------------------
# The laws
# ---------------------------------------------------------------------------------------------

class DraftLaw:
    """A draft law (module docstring).  Subclasses set the metadata and the four methods below.

    One instance per law (``LAWS``), passed as itself from the argument parsers to the rules; its
    ``name`` is for what is written (JSON, traces, labels, links), and ``get_law`` reads a name back
    where one comes in.  Identity is equality: a law and a plan holding it hash and compare as such."""

    name: ClassVar[str]
    label: ClassVar[str]
    summary: ClassVar[str]
    source: ClassVar[str]
    #: True when the k draws at a node are distinct tokens (every multiplicity is 1).
    distinct: ClassVar[bool] = True
    #: How the decoder draws the law on the models' device: the name of its drawer in
    #: ``core.decoding.draft_laws.DEVICE_DRAWERS`` (torch stays out of this layer).
    device_drawer: ClassVar[str]
    #: How every chart draws the law: its colour ("#rrggbb") and marker symbol.
    color: ClassVar[str]
    marker: ClassVar[str]
    #: True when one draw by the law is one sample from p (at k = 1 the law is ``iid``).
    one_sample: ClassVar[bool] = True

    def draw(self, P: np.ndarray, k: int, coins: Coins) -> tuple[int, ...]:  # pragma: no cover
        """The k draws from P, in the law's visit order."""
        raise NotImplementedError

    def state(self, P: np.ndarray, k: int, per_draw: bool = False) -> NodeState:  # pragma: no cover
        """The state machine at a node with k draws (``per_draw`` matters for ``iid`` only)."""
        raise NotImplementedError

    def outcomes(self, V: int, k: int) -> int:  # pragma: no cover
        """Ordered draw outcomes at a node with k draws over V tokens (all of positive p)."""
        raise NotImplementedError

    def round_states(self, V: int, k: int, per_draw: bool, child: Callable[[int], int]) -> int:
        """States of an exact recursion at a node entered with k draws, ``child(j)`` those of a
        child drafted j times (the cost model of ``tree_state_count``)."""
        raise NotImplementedError  # pragma: no cover

    def child_sets(self, V: int, k: int) -> int:  # pragma: no cover
        """How many children sets a node with k draws over V tokens (all of positive p) can have,
        for a law of distinct draws (``node_set_count``)."""
        raise NotImplementedError

    def children_of(self, P: np.ndarray, k: int) -> np.ndarray:
        """Every token that can be a child of a node with k draws."""
        return np.flatnonzero(P > 0)

    def deterministic_draws(self, k: int) -> tuple[bool, ...]:
        """For each of the k draws in visit order, whether it is fixed by P (a rank) rather than
        sampled: none for ``iid`` and ``wor``, all for ``topk``, all but the first for ``greedy``."""
        return (False,) * k

    def check(self, P: np.ndarray, k: int, node: Node | str = ()) -> None:
        """Refuse k draws at ``node`` where the law does not exist (module docstring)."""
        if self.distinct:
            support = int(np.count_nonzero(P > 0))
            if k > support:
                # a node as the pages write a path: its tokens, ∅ for the root (never a Python tuple)
                where = f"node {' '.join(map(str, node)) or '∅'}" if isinstance(node, tuple) else node
                raise InvalidInput(
                    f"the {self.name} law needs {k} distinct tokens at {where} but p gives only "
                    f"{support} tokens positive probability there; draw fewer tokens at that depth or "
                    f"use the iid law")

    def policy(self, per_draw: bool = False) -> Policy:
        """The verifier's policy at a node drafted by this law: ``state(p, k)`` (q, w unused),
        refused where the law does not exist (entry points check every node first, with its name:
        ``core.data.drafting.check_supports``)."""
        def at(p: np.ndarray, q: np.ndarray, w: float, k: int) -> NodeState:
            self.check(p, k, "a node the draft reaches")
            return self.state(p, k, per_draw)
        return at

    def __repr__(self) -> str:
        return f"<draft law {self.name}>"

    def __reduce__(self):
        # Unpickled (Dask workers, copies) as the registry's own instance, so that identity and the
        # default equality and hash of laws and of the plans holding them survive the trip.
        return get_law, (self.name,)


class IID(DraftLaw):
    name = "iid"
    label = "i.i.d. draws (with replacement)"
    summary = "k independent draws from p(·|u); equal draws merge into one child of that multiplicity."
    source = "Miao et al. 2024 (SpecInfer); Sun et al. 2023 (SpecTr); K i.i.d. drafts"
    distinct = False
    device_drawer = "inverse_cdf"
    color, marker = "#332288", "circle"

    def draw(self, P, k, coins):
        return tuple(coins.categorical(P) for _ in range(k))

    def state(self, P, k, per_draw=False):
        return PerDraw(P, k) if per_draw else FirstAppearance(P, np.ones(P.size, dtype=bool), k)

    def outcomes(self, V, k):
        return V ** k

    def round_states(self, V, k, per_draw, child):
        if per_draw:
            return sum(1 + V * sum(child(j) for j in range(1, r + 1)) for r in range(1, k + 1)) + 1

        @lru_cache(maxsize=None)
        def rounds(k: int, r: int) -> int:
            if k == 0 or r == 0:
                return 1
            js = [k] if r == 1 else range(1, k + 1)
            return 1 + sum(r * (child(j) + rounds(k - j, r - 1)) for j in js)

        return rounds(k, V)


class WOR(DraftLaw):
    name = "wor"
    label = "sampling without replacement"
    summary = "k distinct tokens, each drawn from p(·|u) without the earlier ones, renormalised."
    source = ("Sequoia (arXiv 2402.12374); EAGLE-1 (arXiv 2401.15077); Jeon et al., RSD "
              "(arXiv 2402.14160); Gumbel-top-k (Kool et al., arXiv 1903.06059)")
    device_drawer = "gumbel_top"
    color, marker = "#117733", "square"

    def draw(self, P, k, coins):
        free = np.asarray(P, dtype=np.float64).copy()
        out = []
        for _ in range(k):
            x = coins.categorical(free)
            free[x] = 0.0
            out.append(int(x))
        return tuple(out)

    def state(self, P, k, per_draw=False):
        return WithoutReplacement(P, np.ones(P.size, dtype=bool), k)

    def outcomes(self, V, k):
        return math.perm(V, k)

    def child_sets(self, V, k):
        return math.comb(V, k)

    def round_states(self, V, k, per_draw, child):
        one = child(1)
        # rounds(0, ·) = 1; rounds(i, r) = 1 + r·(one + rounds(i − 1, r − 1)), r tokens left
        rounds = 1
        for i in range(1, k + 1):
            rounds = 1 + (V - k + i) * (one + rounds)
        return rounds


class TopK(DraftLaw):
    name = "topk"
    label = "the k most probable tokens"
    summary = "The k most probable tokens of p(·|u), deterministically, visited in rank order."
    source = "EAGLE-2 (arXiv 2406.16858); SGLang (arXiv 2312.07104)"
    device_drawer = "ranked_top"
    color, marker = "#cc6677", "diamond"
    one_sample = False

    def draw(self, P, k, coins):
        return top_ranked(P, k)

    def state(self, P, k, per_draw=False):
        return Ranked(top_ranked(P, k), P.size)

    def outcomes(self, V, k):
        return 1

    def round_states(self, V, k, per_draw, child):
        return 1 + k * (1 + child(1))

    def child_sets(self, V, k):
        return 1

    def children_of(self, P, k):
        return np.array(top_ranked(P, k), dtype=np.int64)

    def deterministic_draws(self, k):
        return (True,) * k


class Greedy(DraftLaw):
    name = "greedy"
    label = "the k − 1 most probable tokens plus one sampled token"
    summary = ("The k − 1 most probable tokens of p(·|u) and one token sampled from the rest, "
               "visited sampled first.")
    source = "Hu et al., ICLR 2025 (arXiv 2502.18779); SpecHub (arXiv 2411.05289) at k = 2"
    device_drawer = "sampled_then_top"
    color, marker = "#ddcc77", "triangle-up"

    def draw(self, P, k, coins):
        top = top_ranked(P, k - 1)
        rest = np.asarray(P, dtype=np.float64).copy()
        rest[list(top)] = 0.0
        return (int(coins.categorical(rest)),) + top

    def state(self, P, k, per_draw=False):
        return GreedyHead(P, top_ranked(P, k - 1))

    def outcomes(self, V, k):
        return V - k + 1

    def round_states(self, V, k, per_draw, child):
        one = child(1)
        return 1 + (V - k + 1) * one + 1 + (k - 1) * (1 + one)

    def child_sets(self, V, k):
        return max(V - k + 1, 0)

    def deterministic_draws(self, k):
        return (False,) + (True,) * (k - 1)     # X first, then Top


#: Every draft law, by name, in display order: the one list of the laws and their names, which the
#: command line, the benchmarks, the sweeps, the pages and the figures read.
IID_LAW, WOR_LAW, TOPK_LAW, GREEDY_LAW = IID(), WOR(), TopK(), Greedy()
LAWS: dict[str, DraftLaw] = {law.name: law for law in (IID_LAW, WOR_LAW, TOPK_LAW, GREEDY_LAW)}


def get_law(law: str | DraftLaw) -> DraftLaw:
    """A law by name (``iid``, ``wor``, ``topk``, ``greedy``), or the law itself: the one look-up of
    a name, where one comes in (a parser, a public function that accepts a name, a written
    configuration read back)."""
    if isinstance(law, DraftLaw):
        return law
    try:
        return LAWS[law]
    except KeyError:
        raise InvalidInput(f"unknown draft law {law!r}; choose one of {', '.join(LAWS)}") from None


def law_at(shape: Shape, depth: int, law: str | DraftLaw) -> DraftLaw:
    """The law that draws at depth ``depth`` of ``shape``: ``law`` everywhere for a tree, at the root
    only for chains (``iid`` below).  This module's functions below also take a law by name (the
    tests and the pages give names), through this one look-up."""
    return get_law(law) if depth == 0 or not shape.chains else IID_LAW


def is_iid_chains(shape: Shape, law: str | DraftLaw) -> bool:
    """True when (shape, law) are K i.i.d. drafts of length L: ``iid`` on b = (K, 1, …, 1), whether
    written as chains or as a tree, and a single chain drafted by a law whose one draw is one sample
    from p (``one_sample``: ``wor``, ``greedy``).  The rules defined on i.i.d. chains only accept
    exactly these, and the laboratory computes them as K i.i.d. drafts.  An unknown name is not."""
    lw = law if isinstance(law, DraftLaw) else LAWS.get(law)
    if lw is IID_LAW:
        return all(x == 1 for x in shape.branching[1:])
    return lw is not None and lw.one_sample and all(x == 1 for x in shape.branching)


def depth_policies(shape: Shape, law: str | DraftLaw, per_draw: bool = False) -> list[Policy]:
    """The policy at each depth 0..L−1 of (shape, law): the law's, or ``iid``'s below a chain's root."""
    return [law_at(shape, d, law).policy(per_draw) for d in range(shape.L)]


def tree_state_count(V: int, shape: Shape, law: str | DraftLaw, per_draw: bool = False) -> int:
    """How many node and round states the exact recursions (``rrs``, ``traversal``) visit on (shape,
    law) over V tokens of positive probability: the cost model of their time estimates."""
    L = shape.L

    @lru_cache(maxsize=None)
    def visits(d: int, m: int) -> int:
        if d == L:
            return 1
        return law_at(shape, d, law).round_states(
            V, shape.draws(d, m), per_draw, lambda j: visits(d + 1, j))

    return visits(0, 1)


def tree_outcome_count(V: int, shape: Shape, law: str | DraftLaw) -> int:
    """Ordered draw outcomes of (shape, law) over V tokens of positive probability: what plain
    enumeration of every drafted tree visits.  ``iid`` draws n = budget tokens in all (merged nodes
    get the union of their copies' draws), so V^n; the distinct laws multiply their per-node counts
    over the Π_(d'≤d) b_d' nodes of each depth."""
    total = 1
    nodes = 1
    for d in range(shape.L):
        lw = law_at(shape, d, law)
        k = shape.branching[d]
        if lw.distinct:
            total *= lw.outcomes(V, k) ** nodes
        else:
            total *= V ** (k * nodes)
        nodes *= k
    return total


def node_set_count(V: int, shape: Shape, law: str | DraftLaw) -> int:
    """An upper bound on the number of distinct drafted node sets (the own-law LP's blocks), before
    enumerating them.  ``iid``: U(d, k) = [x^k] (1 + Σ_(m≥1) U(d+1, m·b_(d+2))·x^m)^V counts the
    multisets of draws (equal to the i.i.d.-chains count C(V^L + K − 1, K) for chains); distinct
    laws: (children sets) × U(child)^k."""
    L = shape.L

    @lru_cache(maxsize=None)
    def count(d: int, m: int) -> int:
        if d == L:
            return 1
        lw = law_at(shape, d, law)
        k = shape.draws(d, m)
        if lw.distinct:
            return lw.child_sets(V, k) * count(d + 1, 1) ** k
        poly = [1] + [count(d + 1, j) for j in range(1, k + 1)]
        out = [1] + [0] * k
        for _ in range(V):             # out = poly^V, truncated at degree k
            out = [sum(out[i] * poly[n - i] for i in range(n + 1)) for n in range(k + 1)]
        return out[k]

    return count(0, 1)
