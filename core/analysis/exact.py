"""Exact analysis by enumeration (docs/maths.md): the law of τ and of the output O = (s, y), hence the
fidelity error, for any verifier on toy models.

Every draft outcome is enumerated with its probability (ordered K-tuples of paths in Ω^L; only the
first path for single-draft rules; multisets with multinomial weights for rules whose law depends on
the drafts only as a multiset), and the rule's exact conditional law given the drafts comes from
``Verifier.law`` (every internal coin enumerated).  All float64.

Every rule also has a model-level programme (``model_output_law``: a recursion over nodes, alive
drafts or loop states, see each rule) that gives the same law without visiting Ω^(K·L); it is used
by default and ``recursion=False`` forces the plain enumeration the tests compare it with.

The same holds for token trees of any shape and law (``shape=``, ``law=``; docs/maths.md, "Token
trees"): plain enumeration visits every drafted tree (``core.data.drafting.enumerate_trees``) and
the rules defined there (``Verifier.token_trees``) have a model-level programme
(``tree_output_law``).  K i.i.d. chains, however they are asked for, take the path above.

Losslessness (docs/maths.md, (V)): the completed law
    P̃(z) = Σ_(j=1..L+1) P(O = z_1..z_j)·q(z_(j+1)..z_(L+1) | z_1..z_j),  z ∈ Ω^(L+1),
must equal q(z); the fidelity error is TV(P̃, q) = ½ Σ_z |P̃(z) − q(z)|.
"""
from __future__ import annotations

import itertools
import math
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Callable, Iterator

import numpy as np

from toy_models import ToyModel

from core.data.drafting import check_supports, enumerate_trees
from core.data.exact_fraction import fraction
from core.data.laws import IID_LAW, DraftLaw, get_law, is_iid_chains, tree_outcome_count
from core.data.levels import level_conditionals
from core.data.shapes import Shape
from core.data.nodes import Node
from core.data.token_tree import TokenTree
from core.errors import ExplorerError, InvalidInput
from core.rules.containment import deadline, is_contained
from core.rules.registry import Verifier, get_verifier, require

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
    #: The drafts' shape and law when the analysis was asked for them (``shape=`` or ``law=``); then
    #: ``K`` is the draws at the root (b_1) and the summary also carries the shape, the law, the
    #: budget and E[τ] as a fraction.  None for K i.i.d. drafts given as --K/--L.
    shape: Shape | None = None
    law: DraftLaw = IID_LAW

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
        trees = {} if self.shape is None else {**self.shape.describe(), "law": self.law.name}
        exact = {} if self.shape is None else {"expected_accepted_fraction": fraction(self.expected_accepted,
                                                                                  integers=True)}
        return {
            "method": self.method, "K": self.K, "L": self.L, "V": self.V, **trees,
            "expected_accepted": self.expected_accepted, **exact,
            "block_efficiency": self.block_efficiency,
            "accepted_pmf": self.tau_pmf.tolist(),
            "acceptance_per_position": self.acceptance_per_position.tolist(),
            "fidelity_tv": self.fidelity_tv,
            "outcomes_enumerated": self.outcomes,
            # Only where a rule reached the fallback, so that every other row stays as it was.
            **({"residual_fallback_mass": self.fallback_mass} if self.fallback_mass > 0 else {}),
            **self.extras,
        }


def resolve_drafts(K: int | None, L: int | None, shape: Shape | None,
                   law: str | DraftLaw = IID_LAW) -> tuple[Shape, DraftLaw]:
    """The (shape, law) of an analysis asked for with K and L, or with a shape (the two must agree
    when both are given); the law may be given by name (the public functions below take either)."""
    law = get_law(law)
    if shape is None:
        if K is None or L is None:
            raise InvalidInput("give K and L (K i.i.d. drafts of length L) or a shape")
        return Shape.chains_of(K, L), law
    if (K is not None and K != shape.K) or (L is not None and L != shape.L):
        raise InvalidInput(f"K={K}, L={L} disagree with the shape {shape.label}; give one or the other")
    return shape, law


def estimated_seconds(verifier: Verifier, V: int, K: int | None = None, L: int | None = None, *,
                      shape: Shape | None = None, law: str | DraftLaw = IID_LAW) -> float:
    """Rough wall-clock estimate of ``exact_analysis`` on a 2-core machine (for warnings and
    refusals; the constants were calibrated on this project's benchmark grid), for K i.i.d. drafts
    of length L or for a shape and a law."""
    shape, law = resolve_drafts(K, L, shape, law)
    if is_iid_chains(shape, law):
        K, L = shape.K, shape.L
        if hasattr(verifier, "model_law_cost"):
            return verifier.model_law_cost(V, K, L)
        return 2e-4 * outcome_count(V, K, L, verifier)
    if hasattr(verifier, "tree_law_cost"):
        return verifier.tree_law_cost(V, shape, law)
    return 2e-4 * outcome_count(V, shape=shape, law=law, verifier=verifier)


def outcome_count(V: int, K: int | None = None, L: int | None = None, verifier: Verifier | None = None,
                  *, shape: Shape | None = None, law: str | DraftLaw = IID_LAW) -> int:
    """How many draft outcomes plain enumeration visits for this rule: for K i.i.d. drafts, paths,
    multisets or ordered tuples as the rule tells them apart; for a token tree, every ordered draw
    outcome (``core.data.laws.tree_outcome_count``)."""
    shape, law = resolve_drafts(K, L, shape, law)
    if not is_iid_chains(shape, law):
        return tree_outcome_count(V, shape, law)
    K, L = shape.K, shape.L
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


def exact_analysis(method: str | Verifier, draft: ToyModel, target: ToyModel, K: int | None = None,
                   L: int | None = None, max_seconds: float = MAX_SECONDS,
                   progress: Callable[[float], None] | None = None,
                   recursion: bool = True, *, shape: Shape | None = None,
                   law: str | DraftLaw = IID_LAW) -> ExactResult:
    """Exact law of τ and of the output O = (s, y) for ``method`` with K i.i.d. drafts of length L,
    or with drafts of any ``shape`` and ``law``.

    P(τ = i) = Σ_(x^(1..K)) Π_k p(x^(k)) · P(|s| = i | drafts), summed over every draft outcome and
    every internal coin of the rule (``Verifier.law``); rules with a model-level programme
    (``model_output_law``, ``tree_output_law`` for token trees) compute the same law without
    enumerating every draft.  The output law is completed to Ω^(L+1) with target samples, so that
    ``fidelity_tv`` = TV(completed law, q) measures losslessness instead of assuming it.

    Parameters
    ----------
    method : str or Verifier
        A registered rule's name (``core.method_names()``, or the alias ``rrs``) or an instance.
    draft, target : ToyModel
        p and q, on one vocabulary of V tokens.
    K, L : int, optional
        Number of drafts and their length (K i.i.d. chains); not needed with ``shape``.
    max_seconds : float
        Refuse configurations whose estimated cost exceeds this many seconds.
    progress : callable, optional
        Called with the fraction done (draft-outcome enumeration only).
    recursion : bool
        Use the rule's model-level programme when it has one; False enumerates every draft
        outcome (the two agree; the tests check it).
    shape : Shape, optional
        Chains (``Shape.chains_of(K, L)``) or a static tree (``Shape.tree(b)``).
    law : DraftLaw or str
        The draft law or its name: ``iid`` (default), ``wor``, ``topk`` or ``greedy`` (``core.data.laws``).
        With a shape or a law other than ``iid`` the result records both (``ExactResult.shape``).

    Returns
    -------
    ExactResult
        The law of τ (``tau_pmf``), E[τ], block efficiency, the output law and its distance from q.

    Raises
    ------
    TooLarge
        The estimated cost exceeds ``max_seconds``.
    RuleFailure
        A rule from outside the project (``core.rules.containment``) raised, returned a bad outcome
        or ran past ``max_seconds``.
    VerifierError
        The rule is defined on K i.i.d. chains only and the drafts are not those.
    ValueError
        The draft and target vocabularies differ, or the law does not exist at some node (k draws
        of distinct tokens where p has fewer).

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

    Two chains whose first tokens are the greedy law's (the most probable token and one sampled
    from the rest), verified by traversal, accept 16/9:

    >>> result = exact_analysis("traversal", toy.draft, toy.target, 2, 2, law="greedy")
    >>> result.summary()["expected_accepted_fraction"]
    '16/9'
    """
    verifier = get_verifier(method) if isinstance(method, str) else method
    name = method if isinstance(method, str) else verifier.name
    if draft.V != target.V:
        raise InvalidInput(f"draft has V={draft.V} tokens but target has V={target.V}")
    if is_contained(verifier):
        # a rule from outside the project: its estimate is a guess, so the limit is a deadline too
        where = f"V={draft.V}, " + (f"K={K}, L={L}" if shape is None else f"{shape.label} drafted by {get_law(law).name}")
        with deadline(max_seconds, verifier.name, where):
            return _analysis(verifier, name, draft, target, K, L, max_seconds, progress, recursion, shape, law)
    return _analysis(verifier, name, draft, target, K, L, max_seconds, progress, recursion, shape, law)


def _analysis(verifier: Verifier, name: str, draft: ToyModel, target: ToyModel, K: int | None, L: int | None,
              max_seconds: float, progress, recursion: bool, shape: Shape | None,
              law: str | DraftLaw) -> ExactResult:
    """``exact_analysis`` of a rule instance."""
    asked = shape is not None
    shape, law = resolve_drafts(K, L, shape, law)
    asked = asked or law is not IID_LAW
    require(verifier, shape, law)
    if is_iid_chains(shape, law):
        result = _chains_analysis(verifier, name, draft, target, shape.K, shape.L, max_seconds,
                                  progress, recursion)
        return replace(result, shape=shape, law=law) if asked else result
    check_supports(draft.cond, shape, law)
    use_model_law = recursion and hasattr(verifier, "tree_output_law")
    cost = estimated_seconds(verifier, draft.V, shape=shape, law=law) if use_model_law else \
        2e-4 * outcome_count(draft.V, shape=shape, law=law)
    if cost > max_seconds:
        raise TooLarge(f"the exact law of {name} for {shape.label} drafted by {law.name} over V={draft.V} "
                       f"tokens would take about {cost:,.0f} s (limit {max_seconds:g} s); use a "
                       f"smaller V or tree")
    L = shape.L
    if use_model_law:
        output, count = verifier.tree_output_law(draft, target, shape, law)
    else:
        trees = enumerate_trees(draft, target, shape, law)
        output = defaultdict(float)
        for n, (weight, tree) in enumerate(trees, start=1):
            for (s, y), prob in verifier.law(tree).items():
                output[s + (y,)] += weight * prob
            if progress is not None and n % 256 == 0:
                progress(n / len(trees))
        output, count = dict(output), len(trees)
    tau_pmf = np.zeros(L + 1)
    for u, prob in output.items():
        tau_pmf[len(u) - 1] += prob
    completed, q = completed_law(output, target, L)
    return ExactResult(name, shape.K, L, target.V, tau_pmf, output, completed, q, count,
                       shape=shape, law=law)


def _chains_analysis(verifier: Verifier, name: str, draft: ToyModel, target: ToyModel, K: int, L: int,
                     max_seconds: float, progress, recursion: bool) -> ExactResult:
    """``exact_analysis`` for K i.i.d. drafts of length L (every rule)."""
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
        return ExactResult(name, K, L, target.V, tau_pmf, output, completed, q, states,
                           verifier.fallback_mass(draft, target, K, L),
                           verifier.summary_extras(draft, target, K, L))
    count = outcome_count(draft.V, K, L, verifier)
    tau_pmf = np.zeros(L + 1)
    output: dict[Node, float] = defaultdict(float)
    n = 0
    for n, (weight, drafts_) in enumerate(draft_outcomes(draft, K, L, verifier), start=1):
        block = TokenTree.chains_from_models(drafts_, draft.cond, target.cond)
        for (s, y), prob in verifier.law(block).items():
            mass = weight * prob
            tau_pmf[len(s)] += mass
            output[s + (y,)] += mass
        if progress is not None and n % 256 == 0:
            progress(n / count)
    completed, q = completed_law(output, target, L)
    return ExactResult(name, K, L, target.V, tau_pmf, dict(output), completed, q, n,
                       verifier.fallback_mass(draft, target, K, L),
                       verifier.summary_extras(draft, target, K, L))
