"""A run summed up: ``DecodeMetrics`` (acceptance, calls, wall-clock phases, cache size) and
``Generation``; and ``device_generator``, the device's random stream seeded from the run's seed.

Wall-clock phases: ``prefill`` (the prompt), then per iteration ``draft`` (proposing: the draft's
forward passes, sampling, its transfer), ``target`` (scoring: the target's forward pass, its
transfer), ``verify`` (the rule), ``cache`` (rolling both KV caches back to the accepted path) and
``other`` (the bookkeeping left).  ``synchronize`` makes a reading cover the GPU work queued before
it.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Sequence

import numpy as np
import torch

from core.decoding.iteration_trace import IterationTrace

#: Wall-clock phases of a run; all but ``prefill`` repeat every iteration.
PHASES = ("prefill", "draft", "target", "verify", "cache", "other")


def phase_times() -> dict[str, float]:
    """Seconds per phase, all zero."""
    return dict.fromkeys(PHASES, 0.0)


def synchronize(device: torch.device) -> None:
    """Wait for queued GPU work, so that a wall-clock reading covers it (nothing to wait for on a CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def device_generator(rng: np.random.Generator, device: torch.device) -> torch.Generator:
    """The ``torch.Generator`` that draws a run's tokens where the probabilities are
    (``transfer.float64_device``), seeded by one draw of the run's ``rng``: a seed replays a run
    exactly on the same kind of device (CPU and CUDA streams differ)."""
    from core.decoding.transfer import float64_device
    generator = torch.Generator(device=float64_device(device))
    generator.manual_seed(int(rng.integers(2 ** 63 - 1)))
    return generator


@dataclass(kw_only=True)
class DecodeMetrics:
    """A run summed up.  ``block_efficiency`` = Σ(τ_i + 1) / iterations (tokens per target call,
    counted before truncation at EOS or at the length limit); ``mean_accepted_length`` is vLLM's
    1 + accepted / drafts (drafts = proposal rounds), the same number; ``acceptance_per_position[i]``
    is the fraction of iterations whose accepted prefix reached position i + 1;
    ``mean_root_acceptance`` is the mean over iterations of 1 − TV(p, q) = Σ_x min(p(x|c), q(x|c)) at
    the root c of each draft tree (one draft, one token: the draft pair's quality along this very
    generation, kept even without traces; 0 for autoregressive decoding).  ``target_calls``
    counts the target's forward passes during decoding (one per iteration), not the prompt's
    prefill.  Times are wall-clock seconds.  ``attention`` is how the target scored the drafts
    ("tree attention", "rows" in the fallback, "one row" for autoregressive decoding);
    ``peak_cache_bytes``, the largest the two models' KV caches (keys and values) were together,
    each at its own peak; ``draft``, the plan's label, ``law`` the law that drew the trees and
    ``mean_tree_nodes`` the drafted nodes per iteration.  Built with keywords only (27 fields)."""

    method: str
    K: int
    L: int
    temperature: float
    tokens_generated: int
    iterations: int
    target_calls: int
    draft_calls: int
    accepted_tokens: int
    block_efficiency: float
    mean_accepted_length: float
    acceptance_per_position: list[float]
    mean_root_acceptance: float
    tokens_per_second: float
    time_total_s: float
    time_prefill_s: float
    time_draft_s: float
    time_target_s: float
    time_verify_s: float
    time_cache_s: float
    time_other_s: float
    verify_fraction: float              # verify time / (draft + target + verify + cache + other) time
    attention: str
    peak_cache_bytes: int
    draft: str                          # the draft plan's label (core.decoding.plans)
    law: str                            # the name of the law that drew the trees
    mean_tree_nodes: float              # drafted nodes per iteration (the target scores them and the root)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Generation:
    """One generation: the new token ids, their text, the metrics and (optionally) the traces."""

    prompt_ids: list[int]
    tokens: list[int]
    text: str
    stop_reason: str                    # "eos" or "length"
    metrics: DecodeMetrics
    iterations: list[IterationTrace] = field(default_factory=list)


def summarize(*, method: str, K: int, L: int, temperature: float, tokens: Sequence[int],
              taus: Sequence[int], draft_calls: int, times: dict[str, float], total_s: float,
              root_acceptance: Sequence[float] = (), attention: str = "one row",
              peak_cache_bytes: int = 0, draft: str = "none", law: str = "none",
              tree_nodes: Sequence[int] = ()) -> DecodeMetrics:
    """The metrics of a run whose iteration i accepted ``taus[i]`` draft tokens (one target call
    each), from its phase times and total wall-clock seconds."""
    n_it = len(taus)
    accepted = int(sum(taus))
    efficiency = (accepted + n_it) / n_it if n_it else 0.0
    loop = times["draft"] + times["target"] + times["verify"] + times["cache"] + times["other"]
    return DecodeMetrics(
        method=method, K=K, L=L, temperature=temperature,
        tokens_generated=len(tokens), iterations=n_it, target_calls=n_it, draft_calls=draft_calls,
        accepted_tokens=accepted, block_efficiency=efficiency, mean_accepted_length=efficiency,
        acceptance_per_position=[float(np.mean([t >= i for t in taus])) if n_it else 0.0
                                 for i in range(1, L + 1)],
        mean_root_acceptance=float(np.mean(root_acceptance)) if len(root_acceptance) else 0.0,
        tokens_per_second=len(tokens) / total_s if total_s > 0 else 0.0,
        time_total_s=total_s, time_prefill_s=times["prefill"], time_draft_s=times["draft"],
        time_target_s=times["target"], time_verify_s=times["verify"], time_cache_s=times["cache"],
        time_other_s=times["other"], verify_fraction=times["verify"] / loop if loop > 0 else 0.0,
        attention=attention, peak_cache_bytes=int(peak_cache_bytes), draft=draft, law=law,
        mean_tree_nodes=float(np.mean(tree_nodes)) if len(tree_nodes) else 0.0)
