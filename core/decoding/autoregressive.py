"""The reference decoder: the target alone, one token per forward pass, with the sampling code and
the seed policy of the speculative decoder (``core.decoding.inputs``): the token is drawn on the
models' device and comes to the host in one transfer."""
from __future__ import annotations

import time
from typing import Sequence

import numpy as np
import torch

from core.decoding import transfer
from core.decoding.cached_lm import CachedLM
from core.decoding.commit import finish
from core.decoding.inputs import check_request
from core.decoding.metrics import Generation, device_generator, phase_times, summarize, synchronize
from core.decoding.pairs import ModelPair
from core.decoding.sampling import SamplingConfig, node_probs, sample


class AutoregressiveDecoder:
    """The target alone, one token per forward pass (the reference), with the same sampling."""

    method = "autoregressive"

    def __init__(self, pair: ModelPair, sampling: SamplingConfig | None = None, *, use_cache: bool = True):
        self.pair = pair
        self.sampling = sampling or SamplingConfig()
        self.lm = CachedLM(pair.target, pair.device, use_cache)

    @torch.inference_mode()
    def generate(self, prompt: str | Sequence[int], max_new_tokens: int, seed) -> Generation:
        """Up to ``max_new_tokens`` tokens sampled from the target, stopping after an EOS token;
        ``seed`` as in ``SpeculativeDecoder.generate`` (required, ``np.random.default_rng(seed)``)."""
        pair = self.pair
        ids = check_request(pair, prompt, max_new_tokens, seed, lookahead=0)
        generator = device_generator(np.random.default_rng(seed), pair.device)
        eos = pair.eos_ids
        times = phase_times()
        self.lm.reset()
        t_start = time.perf_counter()
        self.lm.prefill(ids)
        synchronize(pair.device)
        times["prefill"] = time.perf_counter() - t_start
        context, new, stop, steps = list(ids), [], None, 0
        while stop is None:
            t0 = time.perf_counter()
            probs = node_probs(self.lm.root(context), pair.vocab_size, self.sampling)
            (y,) = transfer.to_host(sample(probs, generator))
            times["target"] += time.perf_counter() - t0
            context.append(int(y[0]))
            steps += 1
            stop = finish(new, (int(y[0]),), eos, max_new_tokens)
        metrics = summarize(method=self.method, K=0, L=0, temperature=self.sampling.temperature,
                            tokens=new, taus=[0] * steps, draft_calls=0, times=times,
                            total_s=time.perf_counter() - t_start,
                            peak_cache_bytes=self.lm.peak_cache_bytes)
        return Generation(prompt_ids=ids, tokens=new, text=pair.decode(new), stop_reason=stop,
                          metrics=metrics)
