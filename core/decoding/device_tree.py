"""The merged draft tree of one iteration: a list of (parent, token) nodes in breadth-first order.

Node 0 is the root, the context itself (no token of its own); nodes 1..N follow level by level, so
the nodes of depth d are one contiguous range and every parent comes before its children.  Drafts
that share a prefix share its nodes: the draws of a depth become nodes with ``DraftTree.add_draws``
(K i.i.d. chains become a trie), and a tree whose nodes are known (a rank-path tree, a dynamic tree)
is added a level at a time with ``add_level``.  Everything the models need is built from this list alone, on the models' device:

* ``ancestors[i, j]``: node j is node i or one of its ancestors (the root is everyone's), from
  which ``core.decoding.tree_attention`` builds the attention mask;
* ``depth[i]``: the position of node i is (context length − 1) + depth[i];
* the breadth-first index itself: the cache position of node i during the iteration is
  (context length) + i − 1, so keeping an accepted path is gathering those positions.

``HostTree`` is the same tree on the host after the one transfer of the iteration, with each node's
prefix (the tuple of tokens from the root), which is how ``core.rules`` names nodes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from core.data.nodes import Node


class DraftTree:
    """A draft tree being grown on ``device``, with room for ``capacity`` nodes (the root included).

    ``chains`` (K, L), filled by ``add_draws``, holds the node of chain k at depth d + 1 in
    ``chains[k, d]`` (the row fallback of ``core.decoding.cached_lm`` reads it).
    """

    def __init__(self, capacity: int, vocab_size: int, device: torch.device, chains: tuple[int, int] | None = None):
        long = dict(dtype=torch.long, device=device)
        self.vocab_size = int(vocab_size)
        self.parents = torch.full((capacity,), -1, **long)
        self.tokens = torch.full((capacity,), -1, **long)
        self.depth = torch.zeros(capacity, **long)
        self.ancestors = torch.zeros((capacity, capacity), dtype=torch.bool, device=device)
        self.ancestors[0, 0] = True
        self.size = 1
        self.levels: list[tuple[int, int]] = [(0, 1)]          # node range [lo, hi) of each depth
        self.chains = None if chains is None else torch.zeros(chains, **long)

    @property
    def max_depth(self) -> int:
        return len(self.levels) - 1

    def add_level(self, parents: torch.Tensor, tokens: torch.Tensor) -> tuple[int, int]:
        """Append the nodes of the next depth (their parents must be at the current deepest depth,
        so the order stays breadth-first); their range [lo, hi)."""
        m = int(parents.numel())
        lo, hi = self.size, self.size + m
        self.parents[lo:hi] = parents
        self.tokens[lo:hi] = tokens
        self.depth[lo:hi] = self.depth[parents] + 1
        self.ancestors[lo:hi] = self.ancestors[parents]
        self.ancestors[lo:hi, lo:hi] |= torch.eye(m, dtype=torch.bool, device=parents.device)
        self.size = hi
        self.levels.append((lo, hi))
        return lo, hi

    def add_draws(self, parents: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """The draws of the next depth: draw i took ``tokens[i]`` at node ``parents[i]``.  One new
        node per distinct (parent, token), in that sorted order (equal draws, possible under
        ``iid`` only, share their node); returns the node of each draw.  For chains (``chains``
        set, draw k = chain k) the chains' new nodes are recorded."""
        key = parents * self.vocab_size + tokens
        distinct, inverse = torch.unique(key, sorted=True, return_inverse=True)
        lo, _ = self.add_level(distinct // self.vocab_size, distinct % self.vocab_size)
        nodes = lo + inverse
        if self.chains is not None:
            self.chains[:, self.max_depth - 1] = nodes
        return nodes


@dataclass(frozen=True)
class HostTree:
    """The tree on the host: ``parents`` and ``tokens`` (N + 1,) as NumPy, each node's ``prefix``
    (the tokens from the root; the root's is ()), ``index`` (prefix -> node), the node range of
    each depth (``levels``) and, for chains, ``chains`` (K, L) as in ``DraftTree``."""

    parents: np.ndarray
    tokens: np.ndarray
    prefixes: tuple[Node, ...]
    index: dict
    levels: tuple[tuple[int, int], ...]
    chains: np.ndarray | None = None

    @classmethod
    def build(cls, tree: DraftTree, parents: np.ndarray, tokens: np.ndarray,
              chains: np.ndarray | None = None) -> "HostTree":
        """From the host copies of ``tree``'s parents and tokens (and chains)."""
        prefixes: list[Node] = [()]
        for i in range(1, len(parents)):
            prefixes.append(prefixes[int(parents[i])] + (int(tokens[i]),))
        return cls(parents, tokens, tuple(prefixes), {s: i for i, s in enumerate(prefixes)},
                   tuple(tree.levels), chains)

    @property
    def size(self) -> int:
        return len(self.prefixes)

    def path(self, prefix: Node) -> list[int]:
        """The nodes of ``prefix[:1]``, ``prefix[:2]``, ..., ``prefix`` (a path from the root)."""
        return [self.index[tuple(prefix[:d])] for d in range(1, len(prefix) + 1)]
