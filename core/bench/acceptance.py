"""Positional acceptance of a real pair, and Sequoia's best tree for it (Chen et al., arXiv
2402.12374, §3.1; ``core.bounds.sequoia``).

**What a_k is on a real pair.**  A ``topk`` tree verified by ``rrs`` (the same law as ``traversal``
and the own-law optimum on such trees: docs/maths.md, "Top-k trees") emits y ~ q(·|u) at an
accepted node u and descends iff y is a child.  So the child of rank k, x_k(u) = the k-th token of
p(·|u) in rank order (decreasing p, ties to the smaller id), is accepted with probability exactly
q(x_k(u) | u), given that u was.  Sequoia's model replaces this context-dependent number by a
constant a_k.  We estimate it by its mean over contexts, the positions t of held-out windows w:

    â_k = (1/N) Σ_(w, t) q(x_k(w_≤t) | w_≤t),

p and q at the decoder's temperature (at T = 0, q is one-hot and the ranking is the draft's T = 1
softmax, as the decoder drafts: â_1 is then the greedy agreement), over every position with at
least ``min_context`` tokens before it.  Positions inside one window are correlated, so the noise
is taken over windows: ``se`` is the standard error of the window means, and ``predicted`` a
bootstrap over windows.

**Which contexts.**  The decoder's contexts are a prompt followed by text with the target's law:
an iteration starts after the tokens accepted so far, and an accepted node extends it by the
target's own sample y.  So the windows that match the decoder are held-out prompts followed by the
target's own continuation at the decoder's temperature (``target_continuations``, the positions of
the continuation only); held-out text itself (``core.bench.heldout``) is another distribution, on
which both models are less sure at T < 1.  On the bundled pair at T = 0.7 (12 prompts × 96
tokens) the continuations gave â_1 = 0.517 and held-out text 0.439; the best tree of 16 nodes was
predicted to accept 1.49 and 1.22 tokens, and accepted 1.74 (95%: 1.29-2.36) in the decoder.

**Its prediction.**  A tree's expected accepted length under the model is
F − 1 = Σ_(v ≠ root) Π_(edges on v's path) a_rank (``core.bounds.sequoia.tree_value``), and
``best_tree`` maximises it for a budget.  On a real pair this is a model, not an identity: the
decoder's contexts are a prompt followed by the target's own samples (an accepted path follows q),
not held-out text; and a_k is averaged over contexts independently at each depth, whereas a context
where the draft does well is often followed by another (acceptance is positively correlated along a
path, which makes the averaged model underestimate deep trees).  ``benchmarks/tree_shape.py``
measures how far the prediction lands from the decoder.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from core.bounds.sequoia import SequoiaTree, best_tree, tree_value
from core.decoding.draft_laws import ranked_top
from core.decoding.pairs import ModelPair
from core.decoding.sampling import SamplingConfig, node_probs


@dataclass(frozen=True)
class PositionalAcceptance:
    """â_k for k = 1..len(accept) (``accept``), the window means they average (``per_window``,
    shape (windows, ranks), weighted by ``weights``, each window's positions), their standard
    error over windows (``se``), and the temperature."""

    accept: np.ndarray
    se: np.ndarray
    per_window: np.ndarray
    weights: np.ndarray
    temperature: float

    @property
    def positions(self) -> int:
        return int(self.weights.sum())

    def best_tree(self, budget: int, depth: int) -> SequoiaTree:
        """``core.bounds.sequoia.best_tree`` on â (a node of n nodes has at most n children, so
        the first n ranks suffice)."""
        return best_tree(self.accept[:budget], budget, depth)

    def predicted(self, paths: Sequence[tuple[int, ...]], resamples: int = 2000,
                  seed: int = 0) -> tuple[float, float, float]:
        """The model's E[τ] for the tree of rank ``paths`` (F − 1), with a 95% bootstrap interval
        over windows (the windows resampled, â recomputed, the same tree re-valued)."""
        value = tree_value(self.accept, paths) - 1.0
        rng = np.random.default_rng([seed, 27])
        W = len(self.weights)
        draws = []
        for _ in range(resamples):
            pick = rng.integers(0, W, W)
            w = self.weights[pick]
            a = (self.per_window[pick] * w[:, None]).sum(0) / w.sum()
            draws.append(tree_value(a, paths) - 1.0)
        lo, hi = np.percentile(draws, [2.5, 97.5])
        return float(value), float(lo), float(hi)

    def to_dict(self) -> dict:
        return {"accept": self.accept.tolist(), "se": self.se.tolist(), "windows": len(self.weights),
                "positions": self.positions, "temperature": self.temperature}


def target_continuations(pair: ModelPair, prompts: Sequence[Sequence[int]], new_tokens: int,
                         sampling: SamplingConfig, seed: int) -> list[list[int]]:
    """Each prompt followed by the target's own continuation of ``new_tokens`` tokens at
    ``sampling`` (``AutoregressiveDecoder``, prompt j seeded (seed, j)): the decoder's contexts."""
    from core.decoding import AutoregressiveDecoder
    ar = AutoregressiveDecoder(pair, sampling)
    return [list(p) + ar.generate(list(p), new_tokens, np.random.default_rng([seed, 31, j])).tokens
            for j, p in enumerate(prompts)]


@torch.inference_mode()
def positional_acceptance(pair: ModelPair, windows: Sequence[Sequence[int]], sampling: SamplingConfig,
                          ranks: int = 32, min_context: int = 16) -> PositionalAcceptance:
    """â_k for k = 1..``ranks`` over the positions of ``windows`` (module docstring): both models
    score each window once; at each position with ≥ ``min_context`` tokens before it, q of the
    draft's k-th ranked token."""
    V = pair.vocab_size
    ranking = sampling if sampling.temperature > 0 else SamplingConfig(1.0, sampling.top_k, sampling.top_p)
    means, weights = [], []
    for w in windows:
        ids = torch.tensor([list(w)], device=pair.device)
        p = node_probs(pair.draft(input_ids=ids, use_cache=False).logits[0, min_context - 1:], V, ranking)
        q = node_probs(pair.target(input_ids=ids, use_cache=False).logits[0, min_context - 1:], V, sampling)
        if not len(p):
            continue
        a = q.gather(-1, ranked_top(p, min(ranks, V)))            # (positions, ranks)
        means.append(a.mean(0).cpu().numpy())
        weights.append(len(p))
    if not means:
        raise ValueError(f"no window is longer than min_context = {min_context} tokens")
    per_window, weights = np.array(means), np.array(weights, dtype=np.float64)
    accept = (per_window * weights[:, None]).sum(0) / weights.sum()
    if len(weights) > 1:
        se = per_window.std(0, ddof=1) / np.sqrt(len(weights))
    else:
        se = np.full(accept.shape, np.nan)
    return PositionalAcceptance(accept, se, per_window, weights, float(sampling.temperature))
