"""One model with its KV cache over a growing context: feeding the context, a draft tree, and
keeping only the accepted path afterwards.

Between iterations the cache holds one row: the context, less the tokens not fed yet (the
"pending" ones: the last token; after an accepted block also the extra token, and for the draft
the last draft token).  An iteration makes three kinds of calls:

* ``root(context)``: feed the pending tokens; the logits after the last one (the tree's root);
* ``level(context, tree, lo, hi)``: the logits at tree nodes lo..hi-1 (the draft, level by level);
* ``score(context, tree)``: the pending tokens and every tree node in one call; the logits at the
  root and at every node (the target);

and ``keep(context_len, path)`` then keeps the context and the accepted path only.

Two layouts:

* ``TreeLM`` (tree attention, ``core.decoding.tree_attention``): everything in ONE row.  The cache
  grows by the nodes fed, in breadth-first order (node i at position context_len + i − 1), and
  ``keep`` gathers the accepted nodes' keys and values to the positions right after the context,
  layer by layer (``index_select`` on each layer's tensors: transformers' ``DynamicCache`` has no
  gather along positions), then crops the rest with ``DynamicCache.crop``.  No row is ever copied,
  so the cache's size does not depend on K.
* ``RowsLM``, the fallback for a model that cannot take a tree mask: one row per draft (the draft's
  K chains; the target's distinct drafts), the cache repeated into each row
  (``DynamicCache.batch_repeat_interleave``) and ``keep`` selecting the accepted row
  (``batch_select_indices``) and cropping it.  It serves K i.i.d. chains only.

``cached_lm`` picks the layout.  With ``use_cache=False`` every call recomputes the whole sequence
(the reference the tests compare the caches against).
"""
from __future__ import annotations

from typing import Sequence

import torch

from core.decoding.device_tree import DraftTree, HostTree
from core.decoding.tree_attention import attention_dtype, tree_attention_support, tree_mask, tree_positions


class CachedLM:
    """A causal LM reading a growing context with its KV cache (one row between iterations).

    ``cached`` is how many context tokens the cache holds; ``calls`` counts forward passes;
    ``peak_cache_bytes`` is the largest the cache's keys and values have been since ``reset``."""

    layout = "one row"

    def __init__(self, model, device: torch.device, use_cache: bool = True):
        self.model = model
        self.device = device
        self.use_cache = use_cache
        self.calls = 0
        self.reset()

    def reset(self) -> None:
        self.cache = None
        self.cached = 0
        self.peak_cache_bytes = 0

    def cache_bytes(self) -> int:
        """Bytes held by the cache's keys and values, every layer and row."""
        layers = getattr(self.cache, "layers", None) or ()
        return sum(t.numel() * t.element_size() for layer in layers
                   for t in (getattr(layer, "keys", None), getattr(layer, "values", None))
                   if isinstance(t, torch.Tensor))

    def _forward(self, ids: torch.Tensor, **kwargs) -> torch.Tensor:
        self.calls += 1
        if not self.use_cache:
            return self.model(input_ids=ids, use_cache=False, **kwargs).logits
        out = self.model(input_ids=ids, past_key_values=self.cache, use_cache=True, **kwargs)
        self.cache = out.past_key_values
        self.peak_cache_bytes = max(self.peak_cache_bytes, self.cache_bytes())
        return out.logits

    def _ids(self, tokens: Sequence[int]) -> torch.Tensor:
        return torch.tensor([list(tokens)], dtype=torch.long, device=self.device)

    def prefill(self, context: Sequence[int]) -> None:
        """Cache every context token but the last (nothing to do without a cache)."""
        if self.use_cache and len(context) - 1 > self.cached:
            self._forward(self._ids(context[self.cached:-1]))
            self.cached = len(context) - 1

    def root(self, context: Sequence[int]) -> torch.Tensor:
        """Logits (1, V') after the last context token: the pending tokens fed (the whole
        context without a cache)."""
        if not self.use_cache:
            return self._forward(self._ids(context))[:, -1]
        if len(context) <= self.cached:
            raise RuntimeError("nothing to feed: the cache already covers the whole context")
        logits = self._forward(self._ids(context[self.cached:]))[:, -1]
        self.cached = len(context)
        return logits


class TreeLM(CachedLM):
    """Tree attention: the context and a draft tree in one row (module docstring)."""

    layout = "tree attention"

    def __init__(self, model, device: torch.device, use_cache: bool = True):
        super().__init__(model, device, use_cache)
        self.mask_dtype = attention_dtype(model)

    def reset(self) -> None:
        super().reset()
        self.fed = 0            # tree nodes in the cache after the context (1..fed)

    def _tree_call(self, context: Sequence[int], tree: DraftTree, lo: int, hi: int) -> torch.Tensor:
        """Feed the pending tokens and nodes lo..hi-1; logits (1, pending + hi − lo, V')."""
        n = len(context)
        if self.use_cache:
            past, pending = self.cached, n - self.cached
            if pending and lo != 1:
                raise RuntimeError("pending context tokens go with the tree's first level")
            if lo != self.fed + 1:
                raise RuntimeError("tree nodes are fed in breadth-first order")
        else:
            past, pending, lo = 0, n, 1             # everything again, every node so far included
        ids = torch.cat([torch.tensor(list(context[n - pending:]), dtype=torch.long, device=self.device),
                         tree.tokens[lo:hi].to(self.device)])[None]
        if all(b - a == 1 for a, b in tree.levels[1:] if a < hi):
            # nodes 1..hi-1 form one chain: the tree mask is the causal mask and the positions are
            # the cache's, so the model's own path computes it (and SD runs exactly as before)
            logits = self._forward(ids)
        else:
            mask = tree_mask(tree, past=past, pending=pending, lo=lo, hi=hi, dtype=self.mask_dtype)
            positions = tree_positions(tree, context=n, pending=pending, lo=lo, hi=hi)
            logits = self._forward(ids, attention_mask=mask.to(self.device), position_ids=positions.to(self.device))
        if self.use_cache:
            self.cached, self.fed = n, hi - 1
        return logits

    def level(self, context: Sequence[int], tree: DraftTree, lo: int, hi: int) -> torch.Tensor:
        """Logits (hi − lo, V') at nodes lo..hi-1, after the root and every earlier level."""
        logits = self._tree_call(context, tree, lo, hi)[0]
        return logits[-(hi - lo):]

    def score(self, context: Sequence[int], tree: DraftTree) -> torch.Tensor:
        """Logits (N + 1, V') at the root and at every node 1..N, the pending tokens and the whole
        tree in one call."""
        n_nodes = tree.size - 1
        return self._tree_call(context, tree, 1, tree.size)[0, -(n_nodes + 1):]

    def keep(self, context_len: int, path: Sequence[int], host: HostTree) -> None:
        """Keep the context (``context_len`` tokens, all cached) and the accepted ``path``'s nodes
        that were fed: their keys and values move, layer by layer, to the positions right after
        the context, and the rest is cropped."""
        if not self.use_cache:
            return
        kept = [i for i in path if i <= self.fed]
        if kept != list(range(1, len(kept) + 1)):           # not already in place (a chain's prefix)
            source = torch.tensor([context_len + i - 1 for i in kept], dtype=torch.long, device=self.device)
            end = context_len + len(kept)
            for layer in self.cache.layers:
                layer.keys[..., context_len:end, :] = layer.keys.index_select(-2, source)
                layer.values[..., context_len:end, :] = layer.values.index_select(-2, source)
        if self.fed > len(kept):
            self.cache.crop(len(kept) - self.fed)
        self.cached, self.fed = context_len + len(kept), 0


class RowsLM(CachedLM):
    """The fallback without tree attention: one cache row per draft (module docstring).  The
    draft's rows are its K chains (``tree.chains``); the target's, its distinct drafts (the nodes
    of depth L, in breadth-first order)."""

    layout = "rows"

    def reset(self) -> None:
        super().reset()
        self.rows = 1
        self.fed_depth = 0
        self.row_kind = None

    def _repeat(self, rows: int) -> None:
        if self.rows != 1:
            raise RuntimeError("only a single-row cache can be repeated")
        if self.use_cache and self.cache is not None and self.cached > 0:
            self.cache.batch_repeat_interleave(rows)
        self.rows = rows

    def level(self, context: Sequence[int], tree: DraftTree, lo: int, hi: int) -> torch.Tensor:
        """Logits (hi − lo, V') at nodes lo..hi-1 (depth d): chain k's row fed its d-th token;
        a node's logits from the first chain through it."""
        chains = tree.chains
        K, d = chains.shape[0], tree.levels.index((lo, hi))
        if self.rows == 1:
            self._repeat(K)
        self.row_kind = "chains"
        if self.use_cache:
            logits = self._forward(tree.tokens[chains[:, d - 1]][:, None].to(self.device))[:, -1]
        else:
            ctx = self._ids(context).expand(K, -1)
            logits = self._forward(torch.cat([ctx, tree.tokens[chains[:, :d]].to(self.device)], 1))[:, -1]
        self.fed_depth = d
        first = torch.full((hi - lo,), K, dtype=torch.long, device=chains.device)
        first.scatter_reduce_(0, chains[:, d - 1] - lo, torch.arange(K, device=chains.device), "amin")
        return logits[first.to(logits.device)]

    def score(self, context: Sequence[int], tree: DraftTree) -> torch.Tensor:
        """Logits (N + 1, V') at the root and every node: one row per distinct draft (leaf), fed
        the pending tokens and its L tokens; a node's logits from the row of a chain through it."""
        chains, L = tree.chains, tree.max_depth
        K = chains.shape[0]
        lo, hi = tree.levels[L]
        k_index = torch.arange(K, device=chains.device)
        leaf_chain = torch.full((hi - lo,), K, dtype=torch.long, device=chains.device)
        leaf_chain.scatter_reduce_(0, chains[:, L - 1] - lo, k_index, "amin")
        paths = tree.tokens[chains[leaf_chain]].to(self.device)                    # (U, L)
        n = len(context)
        pending = n - self.cached if self.use_cache else n
        self._repeat(hi - lo)
        self.row_kind = "leaves"
        ids = torch.cat([self._ids(context[n - pending:]).expand(hi - lo, -1), paths], 1)
        logits = self._forward(ids)                                                # (U, pending + L, V')
        if self.use_cache:
            self.cached, self.fed_depth = n, L
        node_chain = torch.full((tree.size,), K, dtype=torch.long, device=chains.device)
        node_chain.scatter_reduce_(0, chains.reshape(-1), k_index.repeat_interleave(L), "amin")
        node_chain[0] = 0
        row = chains[node_chain, L - 1] - lo
        col = pending - 1 + tree.depth[:tree.size]
        return logits[row.to(logits.device), col.to(logits.device)]

    def keep(self, context_len: int, path: Sequence[int], host: HostTree) -> None:
        """Keep the row of a draft through the accepted ``path`` and its first
        context_len + min(τ, depth fed) positions."""
        if not self.use_cache:
            self.rows = 1
            return
        tau = len(path)
        keep = context_len + min(tau, self.fed_depth)
        if self.rows > 1:
            k = 0 if tau == 0 else next(k for k in range(len(host.chains)) if host.chains[k, tau - 1] == path[-1])
            row = k if self.row_kind == "chains" else int(host.chains[k, -1]) - host.levels[-1][0]
            self.cache.batch_select_indices(torch.tensor([row], device=self.device))
            self.rows = 1
        fed = context_len + self.fed_depth
        if fed > keep:
            self.cache.crop(keep - fed)
        self.cached, self.fed_depth = keep, 0


def cached_lm(model, device: torch.device, use_cache: bool = True, name: str = "model") -> CachedLM:
    """``TreeLM`` when ``model`` takes tree attention (``tree_attention_support``), else ``RowsLM``
    (and one logged line saying so)."""
    why = tree_attention_support(model, device, name, use_cache)
    return (TreeLM if why is None else RowsLM)(model, device, use_cache)
