"""Step 2, score: one target pass over the distinct drafts gives q(·|c·s) at every node s, |s| ≤ L.

The target's cache is expanded to one row per distinct draft and each row is fed the last context
token and its draft, so position i of row u holds q after the first i tokens of draft u (i = L is
the bonus position).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from core.data.tree import Node
from core.decoding.cached_lm import CachedLM
from core.decoding.sampling import SamplingConfig, next_token_probs


class TargetScorer:
    """Runs the target once over the distinct drafts: q(·|s) for every node s with |s| ≤ L."""

    def __init__(self, lm: CachedLM, vocab_size: int, sampling: SamplingConfig):
        self.lm, self.V, self.sampling = lm, vocab_size, sampling

    def score(self, context: Sequence[int], drafts: np.ndarray
              ) -> tuple[dict[Node, np.ndarray], list[tuple[int, ...]]]:
        """q along every draft path, and the distinct drafts in the order of the target's rows."""
        distinct = list(dict.fromkeys(tuple(int(t) for t in row) for row in drafts))
        ext = torch.tensor(distinct, dtype=torch.long)
        logits = self.lm.start(context, rows=len(distinct), extension=ext)   # (U, L+1, V')
        probs = next_token_probs(logits, self.V, self.sampling)
        q: dict[Node, np.ndarray] = {}
        for u, x in enumerate(distinct):
            for i in range(len(x) + 1):
                q.setdefault(x[:i], probs[u, i])
        return q, distinct
