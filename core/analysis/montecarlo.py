"""Monte Carlo runs of any rule on toy models: empirical laws with confidence intervals, to lay over
the exact laws of ``core.analysis.exact``.

Each of N iterations draws K i.i.d. drafts (or a token tree of the given shape and law) and runs the
rule with the same seeded generator, so a run is replayed exactly from its seed.  Intervals (level ``confidence``) are Wilson score intervals: per
category for the law of τ, and on τ/L ∈ [0, 1] for E[τ] (``MonteCarloResult.tau_mean_interval``).
``output_law_test`` tests the sampled outputs s·y against an exact output law (Pearson's χ²): an
E[τ] inside its interval says nothing about the rest of the law.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from statistics import NormalDist
from typing import Callable

import numpy as np

from toy_models import ToyModel

from core.analysis.exact import resolve_drafts
from core.analysis.toy_drafts import draw_block, draw_tree
from core.data.coins import generator
from core.data.drafting import check_supports
from core.data.laws import IID_LAW, DraftLaw, is_iid_chains
from core.data.shapes import Shape
from core.data.nodes import Node
from core.errors import InvalidInput
from core.rules.containment import deadline, is_contained
from core.rules.registry import Verifier, get_verifier, require

#: A Monte Carlo run of a rule from outside the project is stopped past this many seconds.
MAX_SECONDS = 600.0


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
    shape: Shape | None = None          # the drafts' shape and law, when asked for (as ExactResult)
    law: DraftLaw = IID_LAW

    @property
    def tau_pmf(self) -> np.ndarray:
        return self.tau_counts / self.n

    @property
    def tau_mean(self) -> float:
        """The sample mean of τ."""
        return float(np.arange(self.L + 1) @ self.tau_counts / self.n)

    def tau_interval(self) -> tuple[np.ndarray, np.ndarray]:
        """Wilson intervals for P(τ = 0), …, P(τ = L)."""
        return wilson_interval(self.tau_counts, self.n, self.confidence)

    def tau_mean_interval(self) -> tuple[float, float]:
        """Interval for E[τ]: L times the Wilson score interval of the mean of τ/L ∈ [0, 1].

        Bernoulli trick: a variable Y in [0, 1] with mean μ has Var(Y) ≤ E[Y] − μ² = μ(1 − μ), with
        equality when Y is Bernoulli.  The Wilson interval {μ : |Ȳ − μ| ≤ z·√(μ(1 − μ)/n)} therefore
        uses, at each candidate μ, the largest variance τ/L can have, so it covers at least as well
        as for Bernoulli data (at the nominal level as n grows, conservatively when τ takes
        intermediate values).  Unlike the normal interval Ȳ ± z·s/√n, it never has zero width: when
        every sample has τ = L (s = 0) it is [L·n/(n + z²), L], which contains an exact E[τ] just
        below L, where the normal interval would be [L, L].
        """
        total = float(np.arange(self.L + 1) @ self.tau_counts)  # Σ τ_i, so Σ τ_i/L "successes"
        lo, hi = wilson_interval(total / self.L, self.n, self.confidence)
        return float(self.L * lo), float(self.L * hi)

    @property
    def tau_mean_halfwidth(self) -> float:
        """Half width of tau_mean ± h, the smallest interval centred on the mean that contains
        ``tau_mean_interval`` (which is not centred: it leans towards L/2)."""
        lo, hi = self.tau_mean_interval()
        return max(self.tau_mean - lo, hi - self.tau_mean)

    def output_interval(self, outputs: list[Node]) -> tuple[np.ndarray, np.ndarray]:
        counts = np.array([self.output_counts.get(u, 0) for u in outputs])
        return wilson_interval(counts, self.n, self.confidence)


@dataclass(frozen=True)
class LawTest:
    """A Monte Carlo run's output law against an exact law (``output_law_test``)."""
    tv: float               # ½ Σ_u |count(u)/n − P(u)|, over every output u
    statistic: float        # Pearson's X² over the bins
    dof: int                # bins − 1
    p_value: float          # P(χ²_dof ≥ X²); 0 when an output the law calls impossible was sampled
    bins: int
    outside_support: int    # samples of outputs with exact probability 0

    def agrees(self, level: float = 0.05) -> bool:
        """Whether the test does not reject the exact law at ``level``."""
        return self.p_value >= level


def output_law_test(result: MonteCarloResult, law: dict[Node, float], min_expected: float = 5.0) -> LawTest:
    """Pearson's chi-square test of the sampled outputs O = s·y against an exact law {u: P(O = u)}.

    The expected count of output u is n·P(u).  Outputs expected fewer than ``min_expected`` times are
    pooled into one bin (the textbook condition for the χ² approximation), and that bin, if still
    below ``min_expected``, joins the smallest other bin; X² = Σ_bins (observed − expected)²/expected
    has bins − 1 degrees of freedom under the law.  A sampled output of exact probability 0 rejects
    the law outright (p-value 0).  With fewer than two bins there is nothing to test (p-value 1).

    Examples
    --------
    >>> r = MonteCarloResult("bv", 1, 1, 100, 0, 0.95, np.array([40, 60]), {(0,): 40, (1,): 40, (0, 1): 20})
    >>> t = output_law_test(r, {(0,): 0.5, (1,): 0.3, (0, 1): 0.2})
    >>> round(t.statistic, 4), t.dof, round(t.tv, 4)    # 10²/50 + 10²/30 + 0, 3 bins
    (5.3333, 2, 0.1)
    """
    from scipy.stats import chi2   # here: a Monte Carlo run alone does not need scipy

    n = result.n
    outside = sum(c for u, c in result.output_counts.items() if law.get(u, 0.0) <= 0.0)
    outputs = set(law) | set(result.output_counts)
    tv = 0.5 * sum(abs(result.output_counts.get(u, 0) / n - law.get(u, 0.0)) for u in outputs)
    cells = sorted(((n * pr, result.output_counts.get(u, 0)) for u, pr in law.items() if pr > 0.0), reverse=True)
    bins = [[e, o] for e, o in cells if e >= min_expected]
    small = [sum(e for e, _ in cells if e < min_expected), sum(o for e, o in cells if e < min_expected)]
    if small[0] > 0.0:
        if small[0] < min_expected and bins:
            bins[-1] = [bins[-1][0] + small[0], bins[-1][1] + small[1]]
        else:
            bins.append(small)
    expected = np.array([b[0] for b in bins], dtype=np.float64)
    observed = np.array([b[1] for b in bins], dtype=np.float64)
    statistic = float(((observed - expected) ** 2 / expected).sum()) if len(bins) else 0.0
    dof = max(len(bins) - 1, 0)
    if outside:
        p_value = 0.0
    elif dof == 0:
        p_value = 1.0
    else:
        p_value = float(chi2.sf(statistic, dof))
    return LawTest(float(tv), statistic, dof, p_value, len(bins), int(outside))


def monte_carlo(method: str | Verifier, draft: ToyModel, target: ToyModel, K: int | None = None,
                L: int | None = None, n: int | None = None, seed: int | None = None,
                confidence: float = 0.95, progress: Callable[[float], None] | None = None, *,
                shape: Shape | None = None, law: str | DraftLaw = IID_LAW) -> MonteCarloResult:
    """Run ``method`` for ``n`` independent iterations from seed ``seed``: each draws K drafts from
    p (or a token tree of ``shape`` drafted by ``law``) and verifies them against q with the rule's
    own coins, all from one generator, so a seed replays a run exactly.

    Parameters
    ----------
    method : str or Verifier
        A registered rule's name (or the alias ``rrs``) or an instance.
    draft, target : ToyModel
        p and q.
    K, L : int, optional
        Number of drafts and their length; not needed with ``shape``.
    n : int
        Iterations (≥ 1).
    seed : int
        Seed of ``numpy.random.default_rng``.
    confidence : float
        Level of the intervals (Wilson, per value of τ and for E[τ]).
    progress : callable, optional
        Called with the fraction done.
    shape, law : Shape, DraftLaw or str
        Drafts of any shape and law (``exact_analysis``); the default is K i.i.d. chains.

    Returns
    -------
    MonteCarloResult
        The empirical law of τ and of the output, with confidence intervals.

    Raises
    ------
    ValueError
        ``n`` < 1, or the law does not exist at a node of the draft.
    VerifierError
        The rule is defined on K i.i.d. chains only and the drafts are not those.

    Examples
    --------
    BV on the binary toy: the exact E[τ] is 11/9 ≈ 1.2222, and the 95% interval of a seeded run
    covers it.

    >>> from toy_models import PRESETS
    >>> toy = PRESETS["binary-toy"]
    >>> result = monte_carlo("bv", toy.draft, toy.target, K=1, L=2, n=4000, seed=1)
    >>> lo, hi = result.tau_mean_interval()
    >>> bool(lo <= 11 / 9 <= hi)
    True
    """
    if n is None or n < 1:
        raise InvalidInput(f"number of iterations must be ≥ 1, got {n}")
    verifier = get_verifier(method) if isinstance(method, str) else method
    name = method if isinstance(method, str) else verifier.name
    asked = shape is not None
    shape, law = resolve_drafts(K, L, shape, law)
    asked = asked or law is not IID_LAW
    rng = generator(seed)
    K, L = shape.K, shape.L
    require(verifier, shape, law)
    if is_iid_chains(shape, law):
        def draw():
            return draw_block(draft, target, K, L, rng)
    else:
        # every node at once where that is cheap; otherwise each sampled node is checked as drawn
        check_supports(draft.cond, shape, law, max_nodes=100_000)

        def draw():
            return draw_tree(draft, target, shape, law, rng)
    taus = np.zeros(L + 1, dtype=np.int64)
    outputs: Counter = Counter()
    step = max(1, n // 100)
    # a rule from outside the project runs against a deadline (``core.rules.containment``)
    limit = MAX_SECONDS if is_contained(verifier) else None
    with deadline(limit, verifier.name, f"a Monte Carlo run of {n:,} iterations over V={draft.V}"):
        for i in range(n):
            verdict = verifier.verify(draw(), rng)
            taus[verdict.tau] += 1
            outputs[verdict.tokens] += 1
            if progress is not None and i % step == 0:
                progress(i / n)
    return MonteCarloResult(name, K, L, n, seed, confidence, taus, dict(outputs),
                            shape if asked else None, law)
