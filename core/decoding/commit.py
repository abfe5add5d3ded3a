"""Step 4, commit: c ← c·s·y, both caches rolled back to the context plus the accepted path, and
the stop test.

Each cache keeps the context and the accepted prefix s's nodes (``CachedLM.keep``: gathered in
place with tree attention, the accepted row selected in the fallback), and nothing else; the extra
token y, and for the draft a last draft token it never fed, are fed at the next iteration.
Nothing is ever recomputed.
"""
from __future__ import annotations

from typing import Sequence

from core.data.outcome import Verdict
from core.decoding.cached_lm import CachedLM
from core.decoding.proposal import Proposal


def keep_accepted(context_len: int, verdict: Verdict, proposal: Proposal, draft: CachedLM,
                  target: CachedLM) -> None:
    """Roll both caches back to the context (``context_len`` tokens) and the accepted path: the
    target's along the tree it scored, the draft's along its own tree (the nodes it fed:
    ``Proposal.draft_path``)."""
    path = proposal.host.path(tuple(int(t) for t in verdict.accepted))
    draft.keep(context_len, proposal.draft_path(path), proposal.host)
    target.keep(context_len, path, proposal.host)


def extend(context: list[int], verdict: Verdict) -> tuple[int, ...]:
    """Append s·y to ``context``; return s·y."""
    appended = tuple(int(t) for t in verdict.accepted) + (int(verdict.extra),)
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
