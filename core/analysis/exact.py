"""Exact analysis by enumeration (docs/maths.md): the law of τ and of the output O = (s, y), hence the
fidelity error, for any verifier on toy models.

Every draft outcome is enumerated with its probability (ordered K-tuples of paths in Ω^L; only the
first path for single-draft rules; multisets with multinomial weights for rules whose law depends on
the drafts only as a multiset), and the rule's exact conditional law given the drafts comes from
``Verifier.law`` (every internal coin enumerated).  All float64.

Every rule also has a model-level programme (``model_output_law``: a recursion over nodes, alive
drafts or loop states, see each rule) that gives the same law without visiting Ω^(K·L); it is used
by default and ``recursion=False`` forces the plain enumeration the tests compare it with.

Losslessness (docs/maths.md, (V)): the completed law
    P̃(z) = Σ_(j=1..L+1) P(O = z_1..z_j)·q(z_(j+1)..z_(L+1) | z_1..z_j),  z ∈ Ω^(L+1),
must equal q(z); the fidelity error is TV(P̃, q) = ½ Σ_z |P̃(z) − q(z)|.
"""
from __future__ import annotations

import itertools
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np

from toy_models import ToyModel

from core.data.levels import level_conditionals
from core.data.tree import DraftBlock, Node
from core.errors import ExplorerError, InvalidInput
from core.rules.registry import Verifier, get_verifier

#: Exact analyses estimated to take longer than this (seconds, on a 2-core machine) are refused.
MAX_SECONDS = 60.0

#: A rule is lossless on an instance when the completed output law is within this total variation of
#: q.  Lossless rules measure ~1e-15; the LP rule's plan carries the solver's tolerance (≤ 1e-9);
#: every lossy rule studied here is off by more than 1e-3.  The one tolerance for every page.
LOSSLESS_TOL = 1e-9


class TooLarge(ExplorerError, ValueError):
    """The enumeration would be too large to finish in reasonable time."""


@dataclass(frozen=True)
class ExactResult:
    method: str
    K: int
    L: int
    V: int
    tau_pmf: np.ndarray                 # P(τ = i), i = 0..L
    output_law: dict[Node, float]       # P(O = u) for every output u = s·y with positive mass
    completed: np.ndarray               # P̃ on Ω^(L+1), shape (V,)*(L+1)
    target: np.ndarray                  # q on Ω^(L+1), same shape
    outcomes: int                       # draft outcomes enumerated, or nodes/states of a model-level programme
    #: P(y drawn from q(·|s) because the rule's residual had no positive mass): our choice, not the
    #: rule's (``Verifier.fallback_mass``); 0 for the lossless rules.
    fallback_mass: float = 0.0
    #: Fields only this rule reports (``Verifier.summary_extras``), merged into ``summary``.
    extras: dict = field(default_factory=dict)

    @property
    def expected_accepted(self) -> float:
        """E[τ]."""
        return float(np.dot(np.arange(self.L + 1), self.tau_pmf))

    @property
    def block_efficiency(self) -> float:
        """E[τ] + 1: tokens per target call."""
        return self.expected_accepted + 1.0

    @property
    def acceptance_per_position(self) -> np.ndarray:
        """P(τ ≥ i) for i = 1..L."""
        return np.cumsum(self.tau_pmf[::-1])[::-1][1:]

    @property
    def fidelity_tv(self) -> float:
        """TV distance between the completed output law and q on Ω^(L+1)."""
        return 0.5 * float(np.abs(self.completed - self.target).sum())

    @property
    def is_lossless(self) -> bool:
        """Whether the completed output law equals q, to ``LOSSLESS_TOL`` in total variation."""
        return self.fidelity_tv <= LOSSLESS_TOL

    def summary(self) -> dict:
        return {
            "method": self.method, "K": self.K, "L": self.L, "V": self.V,
            "expected_accepted": self.expected_accepted,
            "block_efficiency": self.block_efficiency,
            "accepted_pmf": self.tau_pmf.tolist(),
            "acceptance_per_position": self.acceptance_per_position.tolist(),
            "fidelity_tv": self.fidelity_tv,
            "outcomes_enumerated": self.outcomes,
            # Only where a rule reached the fallback, so that every other row stays as it was.
            **({"residual_fallback_mass": self.fallback_mass} if self.fallback_mass > 0 else {}),
            **self.extras,
        }


def estimated_seconds(verifier: Verifier, V: int, K: int, L: int) -> float:
    """Rough wall-clock estimate of ``exact_analysis`` on a 2-core machine (for warnings and
    refusals; the constants were calibrated on this project's benchmark grid)."""
    if hasattr(verifier, "model_law_cost"):
        return verifier.model_law_cost(V, K, L)
    return 2e-4 * outcome_count(V, K, L, verifier)


def outcome_count(V: int, K: int, L: int, verifier: Verifier) -> int:
    """How many draft outcomes plain enumeration visits for this rule."""
    paths = V ** L
    if verifier.single_draft:
        return paths
    if verifier.order_invariant:
        return math.comb(paths + K - 1, K)
    return paths ** K


def draft_outcomes(draft: ToyModel, K: int, L: int, verifier: Verifier
                   ) -> Iterator[tuple[float, tuple[Node, ...]]]:
    """(probability, drafts) over every draft outcome the rule can tell apart."""
    paths = [(path, draft.joint(path)) for path in itertools.product(range(draft.V), repeat=L)]
    paths = [(x, w) for x, w in paths if w > 0]
    if verifier.single_draft:
        for x, w in paths:
            yield w, (x,)
    elif verifier.order_invariant:
        for combo in itertools.combinations_with_replacement(range(len(paths)), K):
            # combo is sorted, so equal paths are adjacent: multinomial K!/Π_x c_x!
            coeff = math.factorial(K) / math.prod(math.factorial(len(list(run)))
                                                  for _, run in itertools.groupby(combo))
            yield coeff * math.prod(paths[i][1] for i in combo), tuple(paths[i][0] for i in combo)
    else:
        for combo in itertools.product(paths, repeat=K):
            yield math.prod(w for _, w in combo), tuple(x for x, _ in combo)


def completed_law(output_law: dict[Node, float], target: ToyModel, L: int) -> tuple[np.ndarray, np.ndarray]:
    """(P̃, q) on Ω^(L+1) for an output law {u: P(O = u)}, both of shape (V,)*(L+1).

    Level by level (``core.data.levels`` order): the mass G_d at the depth-d prefixes obeys
    G_1 = P(O = u), |u| = 1, and G_(d+1)(u·x) = G_d(u)·q(x|u) + P(O = u·x), so G_(L+1) = P̃; with no
    output mass the same recursion from G_0 = 1 gives q."""
    V = target.V
    conds = level_conditionals(target, L)                        # depths 0..L, shape (V^d, V)
    emitted = [np.zeros(V ** d) for d in range(L + 2)]
    nodes: list[list[Node]] = [[] for _ in range(L + 2)]
    masses: list[list[float]] = [[] for _ in range(L + 2)]
    for u, prob in output_law.items():
        nodes[len(u)].append(u)
        masses[len(u)].append(prob)
    for d in range(1, L + 2):
        if nodes[d]:
            index = np.asarray(nodes[d], dtype=np.int64) @ V ** np.arange(d - 1, -1, -1)
            np.add.at(emitted[d], index, masses[d])
    completed, q = emitted[0], np.ones(1)
    for d in range(L + 1):
        completed = (completed[:, None] * conds[d]).ravel() + emitted[d + 1]
        q = (q[:, None] * conds[d]).ravel()
    shape = (V,) * (L + 1)
    return completed.reshape(shape), q.reshape(shape)


def exact_analysis(method: str | Verifier, draft: ToyModel, target: ToyModel, K: int, L: int,
                   max_seconds: float = MAX_SECONDS,
                   progress: Callable[[float], None] | None = None,
                   recursion: bool = True) -> ExactResult:
    """Exact law of τ and of the output O = (s, y) for ``method`` with K i.i.d. drafts of length L.

    P(τ = i) = Σ_(x^(1..K)) Π_k p(x^(k)) · P(|s| = i | drafts), summed over every draft outcome and
    every internal coin of the rule (``Verifier.law``); rules with a model-level programme
    (``model_output_law``) compute the same law without enumerating Ω^(K·L).  The output law is
    completed to Ω^(L+1) with target samples, so that ``fidelity_tv`` = TV(completed law, q) measures
    losslessness instead of assuming it.

    Parameters
    ----------
    method : str or Verifier
        A registered rule's name (``core.method_names()``) or an instance.
    draft, target : ToyModel
        p and q, on one vocabulary of V tokens.
    K, L : int
        Number of drafts and their length.
    max_seconds : float
        Refuse configurations whose estimated cost exceeds this many seconds.
    progress : callable, optional
        Called with the fraction done (draft-outcome enumeration only).
    recursion : bool
        Use the rule's model-level programme when it has one; False enumerates every draft
        outcome (the two agree; the tests check it).

    Returns
    -------
    ExactResult
        The law of τ (``tau_pmf``), E[τ], block efficiency, the output law and its distance from q.

    Raises
    ------
    TooLarge
        The estimated cost exceeds ``max_seconds``.
    ValueError
        The draft and target vocabularies differ.

    Examples
    --------
    Block verification on the binary toy of the BV paper (p = (2/3, 1/3), q = (1/3, 2/3), L = 2)
    accepts 11/9 tokens on average, losslessly:

    >>> from fractions import Fraction
    >>> from toy_models import PRESETS
    >>> toy = PRESETS["binary-toy"]
    >>> result = exact_analysis("bv", toy.draft, toy.target, K=1, L=2)
    >>> Fraction(result.expected_accepted).limit_denominator(100)
    Fraction(11, 9)
    >>> result.is_lossless
    True
    """
    verifier = get_verifier(method) if isinstance(method, str) else method
    if draft.V != target.V:
        raise InvalidInput(f"draft has V={draft.V} tokens but target has V={target.V}")
    use_model_law = recursion and hasattr(verifier, "model_output_law")
    cost = estimated_seconds(verifier, draft.V, K, L) if use_model_law else \
        2e-4 * outcome_count(draft.V, K, L, verifier)
    if cost > max_seconds:
        raise TooLarge(f"the exact law of {verifier.name} for V={draft.V}, K={K}, L={L} would take "
                       f"about {cost:,.0f} s (limit {max_seconds:g} s); lower V, K or L")
    if use_model_law:
        output, states = verifier.model_output_law(draft, target, K, L)
        tau_pmf = np.zeros(L + 1)
        for u, prob in output.items():
            tau_pmf[len(u) - 1] += prob
        completed, q = completed_law(output, target, L)
        return ExactResult(verifier.name, K, L, target.V, tau_pmf, output, completed, q, states,
                           verifier.fallback_mass(draft, target, K, L),
                           verifier.summary_extras(draft, target, K, L))
    count = outcome_count(draft.V, K, L, verifier)
    tau_pmf = np.zeros(L + 1)
    output: dict[Node, float] = defaultdict(float)
    n = 0
    for n, (weight, drafts) in enumerate(draft_outcomes(draft, K, L, verifier), start=1):
        block = DraftBlock.from_models(drafts, draft.cond, target.cond)
        for (s, y), prob in verifier.law(block).items():
            mass = weight * prob
            tau_pmf[len(s)] += mass
            output[s + (y,)] += mass
        if progress is not None and n % 256 == 0:
            progress(n / count)
    completed, q = completed_law(output, target, L)
    return ExactResult(verifier.name, K, L, target.V, tau_pmf, dict(output), completed, q, n,
                       verifier.fallback_mass(draft, target, K, L),
                       verifier.summary_extras(draft, target, K, L))
