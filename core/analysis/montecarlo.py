"""Monte Carlo runs of any rule on toy models: empirical laws with confidence intervals, to lay over
the exact laws of ``core.analysis.exact``.

Each of N iterations draws K i.i.d. drafts and runs the rule with the same seeded generator, so a run
is replayed exactly from its seed.  Intervals are Wilson score intervals per category (level
``confidence``), and a normal interval for E[τ].
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from statistics import NormalDist
from typing import Callable

import numpy as np

from toy_models import ToyModel

from core.analysis.sampling import draw_block
from core.data.tree import Node
from core.rules.registry import Verifier, get_verifier


def wilson_interval(successes: np.ndarray, n: int, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for binomial proportions successes/n (vectorised)."""
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    k = np.asarray(successes, dtype=np.float64)
    phat = k / n
    denom = 1.0 + z * z / n
    centre = (phat + z * z / (2 * n)) / denom
    half = z * np.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / denom
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


@dataclass(frozen=True)
class MonteCarloResult:
    method: str
    K: int
    L: int
    n: int
    seed: int
    confidence: float
    tau_counts: np.ndarray              # counts of τ = 0..L
    output_counts: dict[Node, int]      # counts of O = s·y
    tau_mean: float
    tau_mean_halfwidth: float           # normal-approximation half width of the E[τ] interval

    @property
    def tau_pmf(self) -> np.ndarray:
        return self.tau_counts / self.n

    def tau_interval(self) -> tuple[np.ndarray, np.ndarray]:
        return wilson_interval(self.tau_counts, self.n, self.confidence)

    def output_interval(self, outputs: list[Node]) -> tuple[np.ndarray, np.ndarray]:
        counts = np.array([self.output_counts.get(u, 0) for u in outputs])
        return wilson_interval(counts, self.n, self.confidence)


def monte_carlo(method: str | Verifier, draft: ToyModel, target: ToyModel, K: int, L: int, n: int,
                seed: int, confidence: float = 0.95,
                progress: Callable[[float], None] | None = None) -> MonteCarloResult:
    """Run ``method`` for ``n`` independent iterations from seed ``seed``."""
    if n < 1:
        raise ValueError(f"number of iterations must be ≥ 1, got {n}")
    verifier = get_verifier(method) if isinstance(method, str) else method
    rng = np.random.default_rng(seed)
    taus = np.zeros(L + 1, dtype=np.int64)
    outputs: Counter = Counter()
    tau_values = np.empty(n)
    step = max(1, n // 100)
    for i in range(n):
        verdict = verifier.verify(draw_block(draft, target, K, L, rng), rng)
        taus[verdict.tau] += 1
        outputs[verdict.tokens] += 1
        tau_values[i] = verdict.tau
        if progress is not None and i % step == 0:
            progress(i / n)
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    half = z * float(tau_values.std(ddof=1)) / np.sqrt(n) if n > 1 else float("inf")
    return MonteCarloResult(verifier.name, K, L, n, seed, confidence, taus, dict(outputs),
                            float(tau_values.mean()), half)
