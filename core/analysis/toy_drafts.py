"""Drawing K i.i.d. drafts of length L, or a token tree of any shape and law, from a toy draft model,
seeded."""
from __future__ import annotations

import numpy as np

from toy_models import ToyModel

from core.data.coins import RandomCoins, generator
from core.data.drafting import draft_tree
from core.data.laws import DraftLaw
from core.data.shapes import Shape
from core.data.token_tree import TokenTree


def sample_drafts(draft: ToyModel, K: int, L: int, rng: np.random.Generator | int) -> np.ndarray:
    """K i.i.d. paths x^(k) ~ p, each drawn autoregressively: a (K, L) int64 array."""
    coins = RandomCoins(rng)
    out = np.zeros((K, L), dtype=np.int64)
    for k in range(K):
        prefix: tuple[int, ...] = ()
        for i in range(L):
            prefix += (coins.categorical(draft.cond(prefix)),)
        out[k] = prefix
    return out


def draw_block(draft: ToyModel, target: ToyModel, K: int, L: int,
               rng: np.random.Generator | int) -> TokenTree:
    """A draft block on toy models: K sampled drafts with p and q along the draft tree."""
    rng = generator(rng)
    return TokenTree.chains_from_models(sample_drafts(draft, K, L, rng), draft.cond, target.cond)


def draw_tree(draft: ToyModel, target: ToyModel, shape: Shape, law: DraftLaw,
              rng: np.random.Generator | int) -> TokenTree:
    """A token tree on toy models: drafted by ``law`` on ``shape`` (``core.data.drafting``), with p
    and q at its nodes."""
    draws = draft_tree(draft.cond, shape, law, RandomCoins(generator(rng)))
    return TokenTree.from_models(draws, draft.cond, target.cond, shape, law)
