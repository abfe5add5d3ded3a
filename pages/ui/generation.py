"""One seeded generation on a real pair, as the live pages run it, and how often a live page redraws it.

Everything about decoding comes from the ``core.decoding`` façade; importing this module imports
torch, so only the real-model pages import it.
"""
from __future__ import annotations

from typing import Callable

from core.decoding import AutoregressiveDecoder, SamplingConfig, SpeculativeDecoder, decoder_methods

__all__ = ["LIVE_TEXT_EVERY_S", "LIVE_CHART_EVERY_S", "decoder_methods", "generate"]

#: The live page redraws its text and metrics, and its chart, at most this often (seconds).  Each
#: redraw costs the browser work on the cores the decoder runs on (a chart redraw is a full Plotly
#: draw), so they are rare enough to keep the page within 1.5x of the library (docs/app.md).
LIVE_TEXT_EVERY_S = 0.3
LIVE_CHART_EVERY_S = 2.0


def generate(pair, method: str, plan, T: float, prompt: str, max_new_tokens: int, seed: int,
             on_iteration: Callable | None = None):
    """One seeded generation with ``core.decoding``: ``method`` verifying the drafts of ``plan`` (a
    ``core.decoding.plans`` plan; ignored by "autoregressive", the target alone);
    ``on_iteration(IterationTrace)`` streams each step."""
    sampling = SamplingConfig(float(T))
    if method == "autoregressive":
        return AutoregressiveDecoder(pair, sampling).generate(prompt, int(max_new_tokens), int(seed))
    dec = SpeculativeDecoder(pair, method, sampling=sampling, plan=plan)
    return dec.generate(prompt, int(max_new_tokens), int(seed), on_iteration=on_iteration)
