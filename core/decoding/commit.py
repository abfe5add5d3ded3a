"""Step 4, commit: c ← c·s·y, both caches rolled back to the accepted draft, and the stop test.

Each cache keeps the row of a draft through the accepted prefix s (the draft's row k, the target's
row of that draft among the distinct ones) and is cropped to the new context minus its last token,
which is fed at the next iteration; nothing is ever recomputed.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from core.data.trace import Verdict
from core.decoding.cached_lm import CachedLM


def commit(context: list[int], verdict: Verdict, drafts: np.ndarray, distinct: list[tuple[int, ...]],
           draft_lm: CachedLM, target_lm: CachedLM) -> tuple[int, ...]:
    """Append s·y to ``context`` and roll both caches back to it; return s·y."""
    s = tuple(int(t) for t in verdict.accepted)
    tau = len(s)
    k = next(k for k in range(len(drafts)) if tuple(int(t) for t in drafts[k, :tau]) == s)
    n = len(context)
    target_lm.commit(distinct.index(tuple(int(t) for t in drafts[k])), n + tau)
    draft_lm.commit(k, n + tau)
    appended = s + (int(verdict.extra),)
    context.extend(appended)
    return appended


def finish(new: list[int], appended: Sequence[int], eos: frozenset[int], limit: int) -> str | None:
    """Append tokens to ``new`` up to the first EOS (included) and the length limit; the stop
    reason ("eos" or "length") or None to go on."""
    for t in appended:
        new.append(int(t))
        if int(t) in eos:
            return "eos"
        if len(new) >= limit:
            return "length"
    return None
