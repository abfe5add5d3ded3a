"""Step 1, propose: K i.i.d. drafts of length L from the draft model, in one batch.

The draft model's cache is expanded from one row to K and the drafts are sampled autoregressively.
At each node s of the draft tree p(·|c·s) is computed once (drafts sharing s share it) and every
draft passing through s samples its next token from exactly that vector, so the drafts are i.i.d.
draws from p whatever K.  Candidate generation is kept apart from verification, as in
``transformers.generation``.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from core.data.coins import RandomCoins
from core.data.tree import Node
from core.decoding.cached_lm import CachedLM
from core.decoding.sampling import SamplingConfig, next_token_probs


class DraftProposer:
    """Samples K i.i.d. drafts of length L from the draft model (its ``CachedLM``) in one batch."""

    def __init__(self, lm: CachedLM, vocab_size: int, sampling: SamplingConfig):
        self.lm, self.V, self.sampling = lm, vocab_size, sampling

    def propose(self, context: Sequence[int], K: int, L: int, coins: RandomCoins
                ) -> tuple[np.ndarray, dict[Node, np.ndarray]]:
        """Drafts (K, L) and p(·|s) for every node s with |s| < L (one vector per node)."""
        probs = next_token_probs(self.lm.start(context)[:, -1], self.V, self.sampling)
        self.lm.expand(K)
        p: dict[Node, np.ndarray] = {(): probs[0]}
        drafts = np.zeros((K, L), dtype=np.int64)
        for k in range(K):
            drafts[k, 0] = coins.categorical(p[()])
        for i in range(1, L):
            logits = self.lm.extend(torch.as_tensor(drafts[:, i - 1:i]))
            rows = {}
            for k in range(K):
                rows.setdefault(tuple(int(t) for t in drafts[k, :i]), k)
            new_rows = [k for node, k in rows.items() if node not in p]
            probs = next_token_probs(logits[new_rows], self.V, self.sampling)
            for j, k in enumerate(new_rows):
                p[tuple(int(t) for t in drafts[k, :i])] = probs[j]
            for k in range(K):
                drafts[k, i] = coins.categorical(p[tuple(int(t) for t in drafts[k, :i])])
        return drafts, p
