"""Speculative decoding over real causal-LM pairs (torch + transformers).

The public API is importable from here::

    from core.decoding import SpeculativeDecoder, AutoregressiveDecoder, SamplingConfig, load_pair, toy_pair

Importing this package imports torch; the exact laboratory (``core.analysis``) never does.
"""
from core.decoding.decoder import (AutoregressiveDecoder, DecodeMetrics, DecodingError, Generation,
                                   IterationTrace, SamplingConfig, SpeculativeDecoder, check_method,
                                   decoder_methods, next_token_probs, synchronize)
from core.decoding.pairs import ModelPair, PairError, load_pair
from core.decoding.presets import hub_presets, toy_pair

__all__ = ["AutoregressiveDecoder", "DecodeMetrics", "DecodingError", "Generation", "IterationTrace",
           "SamplingConfig", "SpeculativeDecoder", "check_method", "decoder_methods", "next_token_probs",
           "synchronize", "ModelPair", "PairError", "load_pair", "hub_presets", "toy_pair"]
