"""Step 1, propose: K i.i.d. drafts of length L from the draft model, merged into one draft tree.

The tree (``core.decoding.token_tree``) grows a level at a time on the models' device: every chain
draws its next token from p(·|c·s) at its node s (``sampling.sample``: drafts sharing s draw
independently from the same vector, so they are i.i.d. draws from p whatever K), chains that drew
the same token share the new node, and the draft model computes p at all the new nodes in one call
(``CachedLM.level``: one row with tree attention, or K rows in the fallback).  L calls in all: the
root, then depths 1..L-1.  The draft's node vectors, the tree and the chains come to the host at
the end in ONE transfer.  Candidate generation is kept apart from verification, as in
``transformers.generation``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from core.data.tree import Node
from core.decoding import transfer
from core.decoding.cached_lm import CachedLM
from core.decoding.sampling import SamplingConfig, node_probs, sample
from core.decoding.token_tree import DraftTree, HostTree


@dataclass
class Proposal:
    """One iteration's drafts: the tree on the device (``tree``) and on the host (``host``), the
    drafts (K, L) and p(·|s) at every node s with |s| < L (one vector per node)."""

    tree: DraftTree
    host: HostTree
    drafts: np.ndarray
    p: dict[Node, np.ndarray]


class DraftProposer:
    """Samples K i.i.d. drafts of length L from the draft model (its ``CachedLM``) as one tree."""

    def __init__(self, lm: CachedLM, vocab_size: int, sampling: SamplingConfig):
        self.lm, self.V, self.sampling = lm, vocab_size, sampling

    def propose(self, context: Sequence[int], K: int, L: int, generator: torch.Generator) -> Proposal:
        """K drafts of length L, each token drawn with ``generator`` on the models' device."""
        root = node_probs(self.lm.root(context), self.V, self.sampling)          # (1, V)
        device = root.device
        tree = DraftTree(1 + K * L, self.V, device, chains=(K, L))
        p = torch.empty((1 + K * (L - 1), self.V), dtype=torch.float64, device=device)
        p[:1] = root
        chain = torch.zeros(K, dtype=torch.long, device=device)
        for depth in range(1, L + 1):
            chain = tree.add_chain_tokens(chain, sample(p[chain], generator))
            if depth < L:
                lo, hi = tree.levels[depth]
                p[lo:hi] = node_probs(self.lm.level(context, tree, lo, hi), self.V, self.sampling)
        inner = tree.levels[L - 1][1]                          # the nodes of depth < L: 0..inner-1
        p_host, parents, tokens, chains = transfer.to_host(p[:inner], tree.parents[:tree.size],
                                                           tree.tokens[:tree.size], tree.chains)
        host = HostTree.build(tree, parents, tokens, chains)
        return Proposal(tree, host, tokens[chains], {host.prefixes[i]: p_host[i] for i in range(inner)})
