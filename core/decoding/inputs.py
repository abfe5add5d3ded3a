"""Checking what a generation is asked for: the prompt, the length budget and the seed.

Seed policy: the library's one policy (``core.data.coins.generator``): anything
``np.random.default_rng`` takes is accepted, a ``np.random.Generator`` is used as is (its state
advances), and ``None`` is refused (here with a ``DecodingError``, before any model runs) instead of
drawing fresh entropy from the operating system.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from core.errors import DecodingError
from core.decoding.pairs import ModelPair


def prompt_ids(pair: ModelPair, prompt: str | Sequence[int]) -> list[int]:
    """Text through the tokenizer, or token ids checked against the vocabulary (none: the
    tokenizer's start token, as for an empty text)."""
    if isinstance(prompt, str):
        return pair.encode(prompt)
    ids = [int(t) for t in prompt]
    if not ids:
        return pair.encode("")
    bad = [t for t in ids if not 0 <= t < pair.vocab_size]
    if bad:
        raise DecodingError(f"prompt token id {bad[0]} is outside the vocabulary of {pair.vocab_size}")
    return ids


def check_request(pair: ModelPair, prompt: str | Sequence[int], max_new_tokens: int, seed,
                  lookahead: int) -> list[int]:
    """The prompt's token ids, after checking that prompt + ``max_new_tokens`` + ``lookahead``
    (the positions a last iteration may feed beyond the limit) fit the models' positions and that
    there is a seed."""
    ids = prompt_ids(pair, prompt)
    if not isinstance(max_new_tokens, (int, np.integer)) or max_new_tokens < 1:
        raise DecodingError(f"max_new_tokens must be a positive integer, got {max_new_tokens}")
    limit = pair.max_positions
    if limit is not None and len(ids) + max_new_tokens + lookahead > limit:
        raise DecodingError(f"prompt ({len(ids)} tokens) + max_new_tokens ({max_new_tokens}) + "
                            f"draft lookahead ({lookahead}) exceeds the models' {limit} positions")
    if seed is None:
        raise DecodingError("a seed is required: every run must replay exactly")
    return ids
