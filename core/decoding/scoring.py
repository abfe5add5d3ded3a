"""Step 2, score: one target call over the whole draft tree gives q(·|c·s) at every node s, |s| ≤ L.

With tree attention (``CachedLM.score``) the pending context tokens and every node of the tree go
in one row, each node seeing the context and its ancestors; in the fallback each distinct draft
has its own row.  Either way q at the root and at every node (bonus positions included) comes to
the host in ONE transfer.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from core.data.nodes import Node
from core.decoding import transfer
from core.decoding.cached_lm import CachedLM
from core.decoding.proposal import Proposal
from core.decoding.sampling import SamplingConfig, node_probs


class TargetScorer:
    """Runs the target once over the draft tree: q(·|s) for every node s with |s| ≤ L."""

    def __init__(self, lm: CachedLM, vocab_size: int, sampling: SamplingConfig):
        self.lm, self.V, self.sampling = lm, vocab_size, sampling

    def score(self, context: Sequence[int], proposal: Proposal) -> dict[Node, np.ndarray]:
        """q at every node of the proposal's tree, keyed by the node's prefix."""
        q = node_probs(self.lm.score(context, proposal.tree), self.V, self.sampling)   # (N + 1, V)
        (q_host,) = transfer.to_host(q)
        return {s: q_host[i] for i, s in enumerate(proposal.host.prefixes)}
