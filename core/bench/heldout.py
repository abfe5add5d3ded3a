"""Prompts from held-out code: windows of the Python standard library's files that no bundled model
was trained on (``toy_models.corpus``: the split by crc32 of the path)."""
from __future__ import annotations

import numpy as np


def heldout_windows(tokenizer, n: int, length: int, seed: int) -> list[list[int]]:
    """``n`` windows of ``length`` token ids from held-out files (a file drawn with probability
    ∝ its number of window starts, then a uniform start), seeded."""
    from toy_models.corpus import corpus_files, read_texts

    _, held = corpus_files()
    ids = [x for x in tokenizer(read_texts(held), add_special_tokens=False)["input_ids"] if len(x) > length]
    starts = np.array([len(x) - length for x in ids], dtype=np.float64)
    rng = np.random.default_rng([seed, 2024])
    out = []
    for _ in range(n):
        f = int(rng.choice(len(ids), p=starts / starts.sum()))
        a = int(rng.integers(0, starts[f] + 1))
        out.append([int(t) for t in ids[f][a:a + length]])
    return out
