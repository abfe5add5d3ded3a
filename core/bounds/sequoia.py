"""Sequoia's dynamic programme: the best tree of a node budget under positional acceptance
(Chen et al., "Sequoia", arXiv 2402.12374, §3.1; docs/maths.md, "The budget question").

**Model.**  The k-th child (rank k = 1, 2, …) of an accepted node is accepted with probability
a_k, whatever the node.  A tree is a rooted tree whose nodes have children of ranks 1..k (a prefix
of the ranks: a draft of k tokens proposes the k best); its value is

    F(tree) = Σ_(v ∈ tree) Π_(edges e on the path to v) a_rank(e)      (the root counts 1),

the expected number of accepted nodes root included, so F = E[τ] + 1 when the root is the context.

**Recursion.**  T[m][d] is the best F of a tree with m nodes (root included) and depth ≤ d:
T[1][d] = 1, T[m][0] = −∞ for m ≥ 2, and for m ≥ 2, d ≥ 1

    T[m][d] = 1 + max over k ≥ 1 and m_1 + … + m_k = m − 1 (all m_i ≥ 1) of Σ_i a_i·T[m_i][d − 1],

since the subtree of the rank-i child is itself a tree of depth ≤ d − 1 whose value is multiplied
by a_i.  The inner maximum is a knapsack over ranks, G[i][r] = max_(1≤m_i≤r) G[i−1][r − m_i] +
a_i·T[m_i][d − 1]: O(n³·L) in all for a budget of n non-root nodes.  The best tree has
E[τ] = T[n+1][L] − 1.  Monotonicity of a_k is not needed: ranks are positions, and the children of
a node always take the first k of them.

**When it is exact.**  A `topk` tree (docs/maths.md, "Token trees") proposes at each node the k
tokens of highest p; on a context-independent pair the rank-k token is the same token x_k at every
node, and `rrs` accepts the child x_k of an accepted node with probability q(x_k) exactly (it
descends iff the target's y equals a child).  So a_k = q(k-th token in p's rank) makes F − 1 the
exact E[τ] of every `topk` tree, and the programme's optimum the best `topk` tree of *any* shape,
not only a branching vector.  On real pairs a_k is measured and the programme is Sequoia's model.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from core.errors import InvalidInput

#: A path of ranks (1-based) from the root; () is the root.
RankPath = tuple[int, ...]


@dataclass(frozen=True)
class SequoiaTree:
    """The best tree for a budget: ``value`` = T[n+1][L] (root counted), ``paths`` its non-root
    nodes as rank paths in breadth-first order (children by rank), ``table`` = T (shape
    (n + 2, L + 1); −inf where no tree exists)."""

    budget: int
    depth: int
    accept: np.ndarray
    value: float
    paths: tuple[RankPath, ...]
    table: np.ndarray

    @property
    def expected_accepted(self) -> float:
        """E[τ] = F − 1."""
        return self.value - 1.0

    @property
    def branching(self) -> dict[RankPath, int]:
        """Number of children of every internal node."""
        out: dict[RankPath, int] = {}
        for path in self.paths:
            out[path[:-1]] = out.get(path[:-1], 0) + 1
        return out


def positional_acceptance(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """a_k = q(x_k) with x_k the k-th token in decreasing p (ties to the smaller id): the exact
    positional acceptance of `topk` trees on a context-independent pair (module docstring)."""
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    order = np.lexsort((np.arange(p.size), -p))
    return q[order]


def tree_value(accept: Sequence[float], paths: Sequence[RankPath]) -> float:
    """F = 1 + Σ_v Π a_rank along v's path, for a tree given by its non-root rank paths."""
    a = np.asarray(accept, dtype=np.float64)
    return 1.0 + sum(float(np.prod([a[r - 1] for r in path])) for path in paths)


def best_tree(accept: Sequence[float], budget: int, depth: int) -> SequoiaTree:
    """The tree of ``budget`` non-root nodes and depth ≤ ``depth`` that maximises F (module
    docstring), with its value.

    Parameters
    ----------
    accept : sequence of float
        a_1, a_2, …: the acceptance of the rank-k child, each in [0, 1].  A node has at most
        len(accept) children (for a `topk` tree, the vocabulary size).
    budget : int
        n ≥ 1, the number of drafted (non-root) nodes.
    depth : int
        L ≥ 1.

    Examples
    --------
    The three-token toy (p = (1/2, 1/3, 1/6), q = (1/6, 1/3, 1/2)) with four drafted tokens and
    L = 2: the best `topk` tree is {0, 1, 2, 20}, E[τ] = 1 + q(2)·q(0) = 13/12:

    >>> from fractions import Fraction
    >>> a = positional_acceptance([1/2, 1/3, 1/6], [1/6, 1/3, 1/2])
    >>> tree = best_tree(a, budget=4, depth=2)
    >>> Fraction(tree.expected_accepted).limit_denominator(100), tree.paths
    (Fraction(13, 12), ((1,), (2,), (3,), (3, 1)))
    """
    a = np.asarray(accept, dtype=np.float64)
    if a.ndim != 1 or a.size == 0 or not np.all((a >= 0) & (a <= 1)):
        raise InvalidInput("the positional acceptances a_k must be a non-empty list of numbers in [0, 1]")
    if int(budget) != budget or budget < 1:
        raise InvalidInput(f"the budget must be a positive integer, got {budget}")
    if int(depth) != depth or depth < 1:
        raise InvalidInput(f"the depth L must be a positive integer, got {depth}")
    n, L, R = int(budget), int(depth), a.size
    if n > R * sum(R ** d for d in range(L)):
        raise InvalidInput(f"no tree of depth ≤ {L} with at most {R} children per node has {n} nodes")
    size = n + 2
    T = np.full((size, L + 1), -np.inf)
    T[1, :] = 1.0
    # choice[m, d] = (m_1, …, m_k): the subtree sizes of the best tree with m nodes, depth ≤ d
    choice: dict[tuple[int, int], tuple[int, ...]] = {}
    for d in range(1, L + 1):
        below = T[:, d - 1]
        # G[i][r]: best Σ_(j≤i) a_j·T[m_j][d−1] over m_1..m_i ≥ 1 summing to r; arg for the tree
        G = np.full((R + 1, size), -np.inf)
        G[0, 0] = 0.0
        arg = np.zeros((R + 1, size), dtype=np.int64)
        for i in range(1, R + 1):
            for r in range(i, size - 1):
                best, pick = -np.inf, 0
                for m_i in range(1, r - i + 2):
                    prev = G[i - 1, r - m_i]
                    if prev == -np.inf or below[m_i] == -np.inf:
                        continue
                    value = prev + a[i - 1] * below[m_i]
                    if value > best:
                        best, pick = value, m_i
                G[i, r], arg[i, r] = best, pick
        for m in range(2, size):
            k = int(np.argmax(G[1:, m - 1])) + 1     # the fewest children among the best
            if G[k, m - 1] == -np.inf:
                continue
            T[m, d] = 1.0 + G[k, m - 1]
            sizes, r = [], m - 1
            for i in range(k, 0, -1):
                sizes.append(int(arg[i, r]))
                r -= sizes[-1]
            choice[(m, d)] = tuple(reversed(sizes))
    if T[n + 1, L] == -np.inf:
        raise InvalidInput(f"no tree of depth ≤ {L} has {n} drafted nodes with these acceptances")

    def build(m: int, d: int, prefix: RankPath) -> list[RankPath]:
        if m == 1:
            return []
        nodes: list[RankPath] = []
        for rank, m_i in enumerate(choice[(m, d)], start=1):
            nodes.append(prefix + (rank,))
            nodes += build(m_i, d - 1, prefix + (rank,))
        return nodes

    paths = tuple(sorted(build(n + 1, L, ()), key=lambda v: (len(v), v)))
    return SequoiaTree(n, L, a, float(T[n + 1, L]), paths, T)
