"""Speculative decoding over real causal-LM pairs (torch + transformers).

The public API is importable from here::

    from core.decoding import SpeculativeDecoder, AutoregressiveDecoder, SamplingConfig, load_pair, toy_pair

One module per step of an iteration, as in ``transformers.generation`` and vLLM: ``sampling``
(the sampling transforms), ``cached_lm`` (one model's KV cache), ``proposal`` (1. propose),
``scoring`` (2. score), ``verification`` (3. verify, and the iteration's trace, ``traces``),
``commit`` (4. commit), ``metrics`` (5. the run summed up); ``speculative`` and ``autoregressive``
are the decoders, ``methods`` says which rules they run, ``inputs`` checks what they are asked.
Importing this package imports torch; the exact laboratory (``core.analysis``) never does.
"""
from core.decoding.autoregressive import AutoregressiveDecoder
from core.decoding.cached_lm import CachedLM
from core.decoding.errors import DecodingError
from core.decoding.methods import check_method, decoder_methods
from core.decoding.metrics import DecodeMetrics, Generation, synchronize
from core.decoding.pairs import ModelPair, PairError, load_pair
from core.decoding.presets import hub_presets, toy_pair
from core.decoding.proposal import DraftProposer
from core.decoding.sampling import SamplingConfig, next_token_probs
from core.decoding.scoring import TargetScorer
from core.decoding.speculative import SpeculativeDecoder
from core.decoding.traces import IterationTrace, TreeNodeTrace

__all__ = ["AutoregressiveDecoder", "DecodeMetrics", "DecodingError", "Generation", "IterationTrace",
           "SamplingConfig", "SpeculativeDecoder", "check_method", "decoder_methods", "next_token_probs",
           "synchronize", "ModelPair", "PairError", "load_pair", "hub_presets", "toy_pair",
           "CachedLM", "DraftProposer", "TargetScorer", "TreeNodeTrace"]
