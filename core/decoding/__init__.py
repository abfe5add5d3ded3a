"""Speculative decoding over real causal-LM pairs (torch + transformers).

The public API is importable from here::

    from core.decoding import SpeculativeDecoder, AutoregressiveDecoder, SamplingConfig, load_pair, bundled_pair

One module per step of an iteration, as in ``transformers.generation`` and vLLM: ``sampling``
(the sampling transforms and draws), ``device_tree`` (the merged draft tree), ``tree_attention``
(its mask and positions, and which models take them), ``cached_lm`` (one model's KV cache, in one
row or in rows), ``transfer`` (the one device-to-host copy), ``proposal`` (1. propose),
``scoring`` (2. score), ``verification`` (3. verify, and the iteration's trace, ``iteration_trace``),
``commit`` (4. commit), ``metrics`` (5. the run summed up); ``speculative`` and ``autoregressive``
are the decoders, ``methods`` says which rules they run, ``inputs`` checks what they are asked;
``pairs`` loads a pair, ``presets`` and ``sources`` name and locate one; the layer's errors,
``DecodingError`` and ``PairError``, are in the library's one error family (``core.errors``).

The names below are resolved on first use (PEP 562 ``__getattr__``): ``methods``, ``presets``,
``sources`` and ``core.errors`` need no torch, so the command line can check its arguments before
loading it; everything else imports torch.  The exact laboratory (``core.analysis``) never does.
"""
from __future__ import annotations

import importlib

#: Public name -> the module that defines it.
_EXPORTS = {
    "AutoregressiveDecoder": "autoregressive", "CachedLM": "cached_lm", "cached_lm": "cached_lm",
    "DecodingError": "core.errors", "tree_attention_support": "tree_attention", "node_probs": "sampling",
    "PairError": "core.errors", "check_method": "methods", "decoder_methods": "methods",
    "DecodeMetrics": "metrics", "Generation": "metrics", "synchronize": "metrics",
    "ModelPair": "pairs", "load_pair": "pairs", "hub_presets": "presets", "bundled_pair": "presets",
    "DraftProposer": "proposal", "SamplingConfig": "sampling", "next_token_probs": "sampling",
    "TargetScorer": "scoring", "SpeculativeDecoder": "speculative", "IterationTrace": "iteration_trace",
    "TreeNodeTrace": "iteration_trace",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        module = _EXPORTS[name]
        return getattr(importlib.import_module(module if "." in module else f"core.decoding.{module}"), name)
    raise AttributeError(f"module 'core.decoding' has no attribute {name!r}")
