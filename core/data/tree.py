"""The draft tree: K drafts of length L and the model conditionals along it (docs/maths.md).

A verifier sees nothing but a ``DraftBlock``: the drafts, p(·|s) for every node s of the draft tree
with |s| < L (the distribution each draft token was sampled from), and q(·|s) for every node with
|s| ≤ L (the target evaluated along every draft path, including the bonus position).  Nodes are
prefixes, relative to the iteration's start, written as tuples of token ids; drafts that share a
prefix share its node, so every node carries one p and one q however many drafts pass through it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from core.errors import InvalidInput

Node = tuple[int, ...]


def path_probability(cond: Mapping[Node, np.ndarray], s: Node) -> float:
    """Π_i cond[s_<i](s_i): the probability of the path s under the conditionals ``cond`` (p or q
    along a draft tree, keyed by prefix)."""
    out = 1.0
    for i in range(len(s)):
        out *= float(cond[s[:i]][s[i]])
    return out


@dataclass(frozen=True)
class DraftBlock:
    """K drafts x^(1..K) ∈ Ω^L with the conditionals p(·|s) (|s| < L) and q(·|s) (|s| ≤ L)."""

    drafts: np.ndarray                  # (K, L) int64
    p: Mapping[Node, np.ndarray]        # draft conditionals, float64 vectors of length V
    q: Mapping[Node, np.ndarray]        # target conditionals, float64 vectors of length V
    # Per-block memo for derived quantities (joint probabilities, a rule's per-node values), so that
    # exact enumeration, which replays a rule many times on one block, computes them once.
    memo: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        drafts = np.asarray(self.drafts, dtype=np.int64)
        if drafts.ndim != 2 or drafts.shape[0] < 1:
            raise InvalidInput("drafts must be a (K, L) array with K ≥ 1")
        object.__setattr__(self, "drafts", drafts)

    @property
    def K(self) -> int:
        return int(self.drafts.shape[0])

    @property
    def L(self) -> int:
        return int(self.drafts.shape[1])

    @property
    def V(self) -> int:
        return int(next(iter(self.q.values())).size)

    def draft(self, k: int) -> Node:
        """Draft k (0-based) as a tuple of token ids."""
        return tuple(int(t) for t in self.drafts[k])

    def nodes(self) -> list[Node]:
        """Distinct nodes of the draft tree (∅ included), by depth then first appearance."""
        seen: dict[Node, None] = {}
        for depth in range(self.L + 1):
            for k in range(self.K):
                seen.setdefault(self.draft(k)[:depth], None)
        return list(seen)

    def table(self) -> dict[Node, dict[int, tuple[int, int]]]:
        """For every internal node s: {child token c: (first draft through s·c, multiplicity of s·c)}
        (``TokenTree.table`` for a token tree)."""
        out: dict[Node, dict[int, list[int]]] = {}
        for k in range(self.K):
            x = self.draft(k)
            for d in range(self.L):
                entry = out.setdefault(x[:d], {}).setdefault(x[d], [k, 0])
                entry[1] += 1
        return {s: {c: (v[0], v[1]) for c, v in kids.items()} for s, kids in out.items()}

    def program_of(self, rule):
        """``rule``'s coin program for K i.i.d. drafts (``Verifier.run_chains``)."""
        return rule.run_chains

    def multiplicity(self, s: Node) -> int:
        """How many drafts pass through node s."""
        return sum(self.draft(k)[: len(s)] == s for k in range(self.K))

    def p_joint(self, s: Node) -> float:
        """p(s) = Π_i p(s_i | s_<i) for a node s of the tree."""
        return self._joint("p", s)

    def q_joint(self, s: Node) -> float:
        """q(s) = Π_i q(s_i | s_<i) for s a node of the tree or a child of one."""
        return self._joint("q", s)

    def _joint(self, which: str, s: Node) -> float:
        key = (which, s)
        out = self.memo.get(key)
        if out is None:
            out = self.memo[key] = path_probability(self.p if which == "p" else self.q, s)
        return out

    def restrict(self, k: int) -> "DraftBlock":
        """The single-draft block made of draft k alone."""
        keep = self.draft(k)
        return DraftBlock(self.drafts[k : k + 1],
                          {s: v for s, v in self.p.items() if keep[: len(s)] == s},
                          {s: v for s, v in self.q.items() if keep[: len(s)] == s})

    @classmethod
    def from_models(cls, drafts: Sequence[Sequence[int]], p_cond: Callable[[Node], np.ndarray],
                    q_cond: Callable[[Node], np.ndarray]) -> "DraftBlock":
        """Fill the conditionals from two callables prefix -> distribution (e.g. toy models'
        ``cond``).  Nodes shared by several drafts are evaluated once."""
        drafts = np.asarray(drafts, dtype=np.int64)
        K, L = drafts.shape
        p: dict[Node, np.ndarray] = {}
        q: dict[Node, np.ndarray] = {}
        for k in range(K):
            x = tuple(int(t) for t in drafts[k])
            for depth in range(L + 1):
                s = x[:depth]
                if s not in q:
                    q[s] = np.asarray(q_cond(s), dtype=np.float64)
                    if depth < L:
                        p[s] = np.asarray(p_cond(s), dtype=np.float64)
        return cls(drafts, p, q)
