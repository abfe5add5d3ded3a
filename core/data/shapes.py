"""Draft shapes: K chains of length L, or a static token tree with branching vector b (docs/maths.md,
"Token trees").

A draft is built top-down.  A node u at depth d < L receives *draws* (tokens from p(·|u), by a draft
law of ``core.data.laws``); the distinct drawn tokens are u's children, of *multiplicity* m_c = the
number of draws equal to c (m_root = 1); nodes at depth L are leaves.

- **chains K×L**: the root receives K draws by the law; every node u at depth 1..L−1 receives m_u
  draws i.i.d. from p(·|u), one per chain through it.  With the law ``iid`` these are K i.i.d. drafts.
- **static tree b = (b_1, …, b_L)**, every b_d ≥ 1: a node u at depth d < L receives m_u·b_(d+1)
  draws, by the law, at every depth.

Chains K×L are the tree (K, 1, …, 1) with the law at the root and ``iid`` below, so one branching
vector and one "law only at the root" flag describe both.  The **budget** n = b_1 + b_1·b_2 + … +
b_1⋯b_L (= K·L for chains) is the number of drafted tokens: a tree drafted by ``iid`` merges equal
draws and may have fewer nodes, never more draws.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from core.errors import InvalidInput


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidInput(f"{name} must be an integer ≥ 1, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class Shape:
    """A draft shape: the branching vector b = (b_1, …, b_L) and whether the law applies at the root
    only (``chains``: K×L is b = (K, 1, …, 1) with ``iid`` below the root).

    Build one with ``Shape.chains_of(K, L)``, ``Shape.tree(b)`` or ``Shape.parse("2,2")``.

    >>> Shape.tree((2, 2)).budget, Shape.chains_of(3, 2).budget, Shape.chains_of(3, 2).branching
    (6, 6, (3, 1))
    """

    branching: tuple[int, ...]
    chains: bool = False

    def __post_init__(self):
        b = tuple(_positive_int(f"b_{d + 1}", x) for d, x in enumerate(self.branching))
        if not b:
            raise InvalidInput("a tree needs at least one level: give b = (b_1, …, b_L) with L ≥ 1")
        if self.chains and any(x != 1 for x in b[1:]):
            raise InvalidInput(f"chains have one draw per chain below the root, so b must be "
                               f"(K, 1, …, 1), got {b}")
        object.__setattr__(self, "branching", b)

    @classmethod
    def chains_of(cls, K: int, L: int) -> "Shape":
        """K chains of length L: the law draws the K first tokens, each chain continues i.i.d."""
        K, L = _positive_int("K", K), _positive_int("L", L)
        return cls((K,) + (1,) * (L - 1), chains=True)

    @classmethod
    def tree(cls, branching: Sequence[int]) -> "Shape":
        """The static tree b = (b_1, …, b_L): a node of depth d gets m·b_(d+1) draws by the law."""
        return cls(tuple(branching), chains=False)

    @classmethod
    def containing(cls, draws: Mapping[tuple[int, ...], Sequence[int]]) -> "Shape":
        """The smallest static tree containing a tree given by its draws (node → its draws, one entry
        per draw, for every node that has children; closed under prefixes): b_d = the most draws at a
        node of depth d − 1.  A rank-path or dynamic tree, read as the verifiers read it: its depth
        and the law per depth, each node's k being its own number of draws."""
        widest: dict[int, int] = {}
        for u, xs in draws.items():
            widest[len(u)] = max(widest.get(len(u), 0), len(xs))
        return cls.tree(tuple(widest[d] for d in range(len(widest))))

    @classmethod
    def parse(cls, text: str) -> "Shape":
        """``"2,2"`` → ``Shape.tree((2, 2))`` (the command line's ``--tree``)."""
        try:
            b = tuple(int(x) for x in str(text).replace(" ", "").split(","))
        except ValueError:
            raise InvalidInput(f"a tree's branching b must be comma-separated integers such as 2,2, got {text!r}") from None
        return cls.tree(b)

    @classmethod
    def of_budget(cls, n: int, L: int) -> tuple["Shape", ...]:
        """Every static tree b = (b_1, …, b_L), all b_d ≥ 1, of budget n = b_1 + b_1·b_2 + … + b_1⋯b_L,
        in lexicographic order of b (empty when n < L, the budget of the single chain (1, …, 1)).

        The budget of b is b_1·(1 + n'), with n' the budget of (b_2, …, b_L), so b_1 runs over the
        divisors of n and the rest is a tree of budget n/b_1 − 1 and depth L − 1.  Chains K×L
        (``chains_of``, budget K·L) are not listed: they are the tree (K, 1, …, 1) with the law at
        the root only.

        >>> [s.branching for s in Shape.of_budget(6, 2)]
        [(1, 5), (2, 2), (3, 1)]
        """
        n, L = _positive_int("n", n), _positive_int("L", L)

        def trees(budget: int, depth: int) -> list[tuple[int, ...]]:
            if budget < depth:
                return []
            if depth == 1:
                return [(budget,)]
            return [(b1,) + rest for b1 in range(1, budget + 1) if budget % b1 == 0
                    for rest in trees(budget // b1 - 1, depth - 1)]

        return tuple(cls.tree(b) for b in trees(n, L))

    @classmethod
    def chains_of_budget(cls, n: int, L: int) -> tuple["Shape", ...]:
        """The chains (n/L)×L of budget n, where there are such chains: L divides n and L ≥ 2 (at
        L = 1 the chains n×1 are the tree (n), which ``of_budget`` lists); empty otherwise.

        >>> [s.label for s in Shape.chains_of_budget(6, 2)], Shape.chains_of_budget(6, 4)
        (['chains 3×2'], ())
        """
        n, L = _positive_int("n", n), _positive_int("L", L)
        return (cls.chains_of(n // L, L),) if L > 1 and n % L == 0 else ()

    @property
    def L(self) -> int:
        """Depth: the length of every path from the root to a leaf."""
        return len(self.branching)

    @property
    def K(self) -> int:
        """Draws at the root, b_1 (the number of chains for chains)."""
        return self.branching[0]

    @property
    def budget(self) -> int:
        """n = b_1 + b_1·b_2 + … + b_1⋯b_L: the number of drafted tokens."""
        return sum(math.prod(self.branching[: d + 1]) for d in range(self.L))

    @property
    def leaves(self) -> int:
        """b_1⋯b_L: the most leaves (distinct paths) a drafted tree can have."""
        return math.prod(self.branching)

    def draws(self, depth: int, multiplicity: int = 1) -> int:
        """Draws received by a node of depth ``depth`` < L and multiplicity m: m·b_(depth+1)."""
        return multiplicity * self.branching[depth]

    @property
    def label(self) -> str:
        """``chains 2×2`` or ``b = (2, 2)``."""
        if self.chains:
            return f"chains {self.K}×{self.L}"
        return "b = (" + ", ".join(map(str, self.branching)) + ")"

    def describe(self) -> dict:
        """The shape as JSON-ready fields (``shape``, ``branching``, ``budget``)."""
        return {"shape": "chains" if self.chains else "tree", "branching": list(self.branching),
                "budget": self.budget}
