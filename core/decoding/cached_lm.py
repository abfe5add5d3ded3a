"""One model's KV cache over a growing context, with batch expansion to K rows and rollback.

Between iterations the cache holds one row: the context minus its last token.  A pass feeds the
uncached tokens (after expanding the cache to one row per draft when drafts are scored together),
and ``commit`` keeps the row of the accepted draft and crops it back to the new context, so no
token is ever recomputed.  Without a cache every call recomputes the whole sequence: the reference
the tests compare the cache against.
"""
from __future__ import annotations

from typing import Sequence

import torch


class CachedLM:
    """A causal LM reading a growing context.  Its cache covers ``context[:cached]`` with one row
    between iterations; ``start`` feeds the uncached context tokens (plus optional per-row
    extensions, after expanding the cache to several rows), ``extend`` feeds one more token per row,
    and ``commit(row, keep)`` keeps one row and crops the cache to the first ``keep`` tokens.
    With ``use_cache=False`` every call recomputes the whole sequence (the reference for tests)."""

    def __init__(self, model, device: torch.device, use_cache: bool = True):
        self.model = model
        self.device = device
        self.use_cache = use_cache
        self.calls = 0
        self.reset()

    def reset(self) -> None:
        self.cache = None
        self.cached = 0          # context tokens held by the cache (row-independent)
        self.rows = 1
        self._context: list[int] = []
        self._ext: torch.Tensor | None = None

    def _run(self, ids: torch.Tensor, use_cache: bool) -> torch.Tensor:
        self.calls += 1
        if use_cache:
            out = self.model(input_ids=ids, past_key_values=self.cache, use_cache=True)
            self.cache = out.past_key_values
        else:
            out = self.model(input_ids=ids, use_cache=False)
        return out.logits

    def prefill(self, context: Sequence[int]) -> None:
        """Cache every context token but the last (nothing to do without a cache)."""
        if self.use_cache and len(context) - 1 > self.cached:
            ids = torch.tensor([list(context[self.cached:-1])], device=self.device)
            self._run(ids, True)
            self.cached = len(context) - 1

    def start(self, context: Sequence[int], rows: int = 1,
              extension: torch.Tensor | None = None) -> torch.Tensor:
        """Logits (rows, 1 + m, V') at the last context token and at each of the m extension
        tokens (``extension``: (rows, m) token ids, or None for m = 0)."""
        m = 0 if extension is None else int(extension.shape[1])
        if self.use_cache:
            pending = torch.tensor([list(context[self.cached:])], device=self.device)
            if pending.shape[1] < 1:
                raise RuntimeError("nothing to feed: the cache already covers the whole context")
            if rows > 1 and self.cache is not None and self.cached > 0:
                if self.rows != 1:
                    raise RuntimeError("commit a single row before starting a new pass")
                self.cache.batch_repeat_interleave(rows)
            ids = pending.expand(rows, -1)
            if extension is not None:
                ids = torch.cat([ids, extension.to(self.device)], dim=1)
            self.rows = rows
            logits = self._run(ids, True)
            self._fed = len(context) + m
        else:
            self._context = list(context)
            self._ext = extension.to(self.device) if extension is not None else \
                torch.zeros((rows, 0), dtype=torch.long, device=self.device)
            ids = torch.cat([torch.tensor([self._context], device=self.device).expand(rows, -1),
                             self._ext], dim=1)
            self.rows = rows
            logits = self._run(ids, False)
        return logits[:, -(1 + m):, :]

    def expand(self, rows: int) -> None:
        """Repeat the single row (cache, or pending extension without a cache) ``rows`` times."""
        if rows == self.rows:
            return
        if self.rows != 1:
            raise RuntimeError("only a single-row state can be expanded")
        if self.use_cache:
            self.cache.batch_repeat_interleave(rows)
        else:
            self._ext = self._ext.repeat(rows, 1)
        self.rows = rows

    def extend(self, tokens: torch.Tensor) -> torch.Tensor:
        """Feed one more token per row (``tokens``: (rows, 1)); logits (rows, V') after it."""
        tokens = tokens.to(self.device)
        if self.use_cache:
            logits = self._run(tokens, True)
            self._fed += 1
        else:
            self._ext = torch.cat([self._ext, tokens], dim=1)
            ids = torch.cat([torch.tensor([self._context], device=self.device)
                             .expand(self._ext.shape[0], -1), self._ext], dim=1)
            logits = self._run(ids, False)
        return logits[:, -1, :]

    def commit(self, row: int, keep: int) -> None:
        """Keep cache row ``row`` and its first ``keep`` positions (the new context minus its
        last token, or less when the cache holds fewer)."""
        if not self.use_cache:
            return
        keep = min(keep, self._fed)
        if self.rows > 1:
            self.cache.batch_select_indices(torch.tensor([row], device=self.device))
            self.rows = 1
        if self._fed > keep:
            self.cache.crop(keep - self._fed)
        self.cached = keep

