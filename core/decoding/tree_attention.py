"""Tree attention: a whole draft tree in one sequence, each node seeing the context and its ancestors.

A call feeds, in one row, some context tokens not yet in the KV cache ("pending": the last token
of the context, and the extra token and the last draft token after an accepted block) and tree
nodes ``lo..hi-1`` (breadth-first indices, ``core.decoding.device_tree``).  Its attention mask is a
4D additive float mask, as transformers takes it for Llama-family models (returned as is by
``masking_utils.create_causal_mask`` and added to the attention scores by the SDPA and eager
kernels), of shape (1, 1, rows, columns):

* rows: the pending tokens, then nodes lo..hi-1;
* columns: the ``past`` tokens already cached, the pending tokens, then nodes 1..hi-1 (every node
  fed so far this iteration, in breadth-first order, as they lie in the cache);
* entry 0 where the row may look, the dtype's lowest value elsewhere: pending token r sees the past
  and the pending tokens up to itself; a node sees the past, every pending token and its own
  ancestors (itself included), never a sibling's branch.

Position ids are explicit: a pending token keeps its place in the context, and a node of depth d
sits at (context length − 1) + d, the place it would have in its own draft; so every node is
computed exactly as if its draft were scored alone (Miao et al. 2024, SpecInfer §4; EAGLE's
``tree_decoding`` does the same with its own attention code).

``tree_attention_support`` says whether a model can take this: its attention implementation must
read a 4D float mask (SDPA, eager), and one probe checks the numbers: two sibling nodes scored in
one row must give what the second alone gives, with and without a cache, and the cache's layers
must be plain key/value tensors that ``CachedLM`` can gather.
"""
from __future__ import annotations

import logging
import weakref

import torch

from core.decoding.device_tree import DraftTree

log = logging.getLogger("core.decoding")

#: Attention implementations whose kernels take a 4D additive float mask as is.
MASKED_ATTENTION = ("sdpa", "eager")


def tree_mask(tree: DraftTree, *, past: int, pending: int, lo: int, hi: int,
              dtype: torch.dtype) -> torch.Tensor:
    """The additive mask (1, 1, pending + hi − lo, past + pending + hi − 1) of a call feeding
    ``pending`` context tokens and then tree nodes lo..hi-1, after ``past`` cached tokens."""
    device = tree.ancestors.device
    rows, cols = pending + hi - lo, past + pending + hi - 1
    visible = torch.zeros((rows, cols), dtype=torch.bool, device=device)
    visible[:, :past] = True
    visible[:pending, past:past + pending] = torch.ones((pending, pending), dtype=torch.bool,
                                                       device=device).tril()
    visible[pending:, past:past + pending] = True
    visible[pending:, past + pending:] = tree.ancestors[lo:hi, 1:hi]
    mask = torch.zeros((rows, cols), dtype=dtype, device=device)
    mask.masked_fill_(~visible, torch.finfo(dtype).min)
    return mask[None, None]


def tree_positions(tree: DraftTree, *, context: int, pending: int, lo: int, hi: int) -> torch.Tensor:
    """Position ids (1, pending + hi − lo): the pending tokens at context − pending .. context − 1,
    then node i at context − 1 + depth(i)."""
    device = tree.depth.device
    first = torch.arange(context - pending, context, device=device)
    return torch.cat([first, context - 1 + tree.depth[lo:hi]])[None]


def attention_dtype(model) -> torch.dtype:
    """The dtype the attention scores are computed in (an additive mask must match it): the first
    attention module's parameters' (the SmolLM2 draft runs float16 layers under a float32
    embedding), else the model's."""
    for module in model.modules():
        if type(module).__name__.endswith("Attention"):
            for param in module.parameters():
                return param.dtype
    return next(model.parameters()).dtype


def _gatherable(cache) -> bool:
    layers = getattr(cache, "layers", None)
    return bool(layers) and all(getattr(layer, "is_sliding", True) is False
                                and isinstance(getattr(layer, "keys", None), torch.Tensor)
                                and isinstance(getattr(layer, "values", None), torch.Tensor)
                                for layer in layers)


@torch.inference_mode()
def _probe(model, device: torch.device, use_cache: bool) -> str | None:
    """Score the siblings b and c after a in one row, without and (``use_cache``) with a KV cache;
    c must come out as in the chain (a, c)."""
    V = int(model.config.vocab_size)
    a, b, c = (1 % V, 2 % V, 3 % V)
    dtype = attention_dtype(model)
    tree = DraftTree(3, V, device)
    tree.add_level(torch.tensor([0, 0], device=device), torch.tensor([b, c], device=device))
    chain = model(input_ids=torch.tensor([[a, c]], device=device), use_cache=False).logits[0, 1]
    finite = torch.isfinite(chain)              # the SmolLM2 draft gives -inf outside its kept ids
    tol = (1e-2 if torch.finfo(dtype).bits <= 16 else 1e-5) * (1 + float(chain[finite].abs().max()))

    def same(logits: torch.Tensor) -> bool:
        return bool(torch.equal(torch.isfinite(logits), finite)) and \
            float((logits[finite] - chain[finite]).abs().max()) <= tol

    one_row = model(input_ids=torch.tensor([[a, b, c]], device=device), use_cache=False,
                    attention_mask=tree_mask(tree, past=0, pending=1, lo=1, hi=3, dtype=dtype),
                    position_ids=tree_positions(tree, context=1, pending=1, lo=1, hi=3)).logits[0, 2]
    if not same(one_row):
        return "a node scored beside its sibling differs from the node scored alone"
    if not use_cache:
        return None
    cache = model(input_ids=torch.tensor([[a]], device=device), use_cache=True).past_key_values
    if not _gatherable(cache):
        return f"its cache ({type(cache).__name__}) does not hold plain key/value tensors per layer"
    cached = model(input_ids=torch.tensor([[b, c]], device=device), past_key_values=cache, use_cache=True,
                   attention_mask=tree_mask(tree, past=1, pending=0, lo=1, hi=3, dtype=dtype),
                   position_ids=tree_positions(tree, context=1, pending=0, lo=1, hi=3)).logits[0, 1]
    if not same(cached):
        return "with a KV cache, a node scored beside its sibling differs from the node scored alone"
    return None


_SUPPORT: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def tree_attention_support(model, device: torch.device, name: str = "model", use_cache: bool = True) -> str | None:
    """None when ``model`` scores a draft tree in one row (with a KV cache it can gather, when
    ``use_cache``), else why not, in a few words.  Decided once per model and ``use_cache`` (the
    attention implementation, then one probe of up to four tiny forward passes); each refusal is
    logged once, as one line on the ``core.decoding`` logger."""
    known = _SUPPORT.setdefault(model, {})
    if use_cache in known:
        return known[use_cache]
    impl = getattr(getattr(model, "config", None), "_attn_implementation", None)
    if impl not in MASKED_ATTENTION:
        why = f"its attention implementation {impl!r} takes no 4D additive mask"
    else:
        try:
            why = _probe(model, device, use_cache)
        except Exception as exc:            # any model may refuse a mask or position ids its own way
            why = f"the probe failed ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
    known[use_cache] = why
    if why is not None:
        log.warning("tree attention is off for the %s (%s, %s): it scores the drafts in separate rows, "
                    "its KV cache copied to each", name, type(model).__name__, why)
    return why
