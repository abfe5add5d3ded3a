"""SpecTr-GBV's Algorithm 2, reconstructed as exact compensation (docs/maths.md), for any rule on toy models.

Let N(u) = P(O extends u) for one iteration's output law and F(u) = q(u) − N(u): the target mass of u
that the completion after O must still supply.  Since completing the output with a next-token law c
gives P(sequence extends u·x) = N(u·x) + [F(u) + P(O = u)]·c(x|u) − … , the law q is reproduced iff
    c(x|u) = F(u·x) / (F(u) + P(O = u))      for |u| ≤ L,   c = q beyond,
a probability vector because Σ_x F(u·x) = F(u) + P(O = u).  This exists iff F ≥ 0 everywhere: a rule
with some F(u) < 0 over-emits u and no later iteration can take the excess back.  For a lossless rule
N(u) = q(u) − (mass still to come) makes c = q exactly.

``iterate_exact`` runs n iterations exactly, branching over every output and carrying the modified
target into the next iteration (each iteration's target is the previous one's compensation, seen
from the new context), and returns the law of the first n tokens (every iteration emits at least one)
and the expected tokens per iteration.
"""
from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable

import numpy as np

from toy_models import ToyModel

from core.analysis.exact import exact_analysis
from core.data.nodes import Node
from core.errors import InvalidInput
from core.rules.registry import Verifier, get_verifier

#: F(u) below −this counts as over-emission (the rest is rounding).
OVER_EMISSION_TOLERANCE = 1e-12
#: A node whose completion mass F(u) + P(O = u) is below this is never continued (up to rounding),
#: so its conditional does not affect the law; c = q there.
NEGLIGIBLE_MASS = 1e-13


class ShiftedModel(ToyModel):
    """The model seen from a later context: cond(v) = base.cond(context + v)."""

    def __init__(self, base: ToyModel, context: Node):
        self.base, self.context, self.V = base, tuple(context), base.V

    def cond(self, prefix) -> np.ndarray:
        return self.base.cond(self.context + tuple(prefix))


class CompensatedTarget(ToyModel):
    """c(x|u) = F(u·x)/(F(u) + P(O = u)) for |u| ≤ L, the base target beyond (docs/maths.md)."""

    def __init__(self, target: ToyModel, conditionals: dict[Node, np.ndarray]):
        self.target, self.conditionals, self.V = target, conditionals, target.V

    def cond(self, prefix) -> np.ndarray:
        prefix = tuple(prefix)
        row = self.conditionals.get(prefix)
        return row if row is not None else self.target.cond(prefix)


@dataclass(frozen=True)
class Compensation:
    method: str
    over_emission: bool
    min_F: float                     # min over u of F(u) = q(u) − N(u)
    worst_node: Node                 # where that minimum is reached
    modified_target: ToyModel | None  # c, or None when over-emission makes it impossible
    identity_error: float            # max |c(x|u) − q(x|u)| over |u| ≤ L (0 for a lossless rule)


def extension_mass(output_law: dict[Node, float], L: int) -> dict[Node, float]:
    """N(u) = P(O extends u) for every u with |u| ≤ L+1 reached by some output."""
    N: dict[Node, float] = defaultdict(float)
    for u, prob in output_law.items():
        for j in range(len(u) + 1):
            N[u[:j]] += prob
    return N


def compensate(output_law: dict[Node, float], target: ToyModel, L: int, method: str = "") -> Compensation:
    """The over-emission check and the modified target c for one iteration's output law."""
    V = target.V
    N = extension_mass(output_law, L)
    conditionals: dict[Node, np.ndarray] = {}
    min_F, worst = np.inf, ()
    identity = 0.0
    for depth in range(L + 1):
        for u in itertools.product(range(V), repeat=depth):
            q_u = target.joint(u)
            F_u = q_u - N.get(u, 0.0)
            children = np.array([q_u * target.cond(u)[x] - N.get(u + (x,), 0.0) for x in range(V)])
            lowest = int(np.argmin(children))
            if children[lowest] < min_F:
                min_F, worst = float(children[lowest]), u + (lowest,)
            denom = F_u + output_law.get(u, 0.0)
            if denom > NEGLIGIBLE_MASS:
                row = np.maximum(children, 0.0)
                conditionals[u] = row / row.sum()
                identity = max(identity, float(np.abs(conditionals[u] - target.cond(u)).max()))
            else:  # u is never continued by the completion; any law will do
                conditionals[u] = target.cond(u)
    over = min_F < -OVER_EMISSION_TOLERANCE
    return Compensation(method, over, float(min_F), worst,
                        None if over else CompensatedTarget(target, conditionals), identity)


def compensation(method: str | Verifier, draft: ToyModel, target: ToyModel, K: int, L: int) -> Compensation:
    """Over-emission check and modified target for ``method``'s first iteration."""
    result = exact_analysis(method, draft, target, K, L)
    return compensate(result.output_law, target, L, result.method)


@dataclass(frozen=True)
class IterationResult:
    method: str
    n: int
    compensated: bool
    over_emission: bool        # some iteration over-emitted (compensation impossible from there on)
    first_tokens: np.ndarray   # law of the first n tokens, shape (V,)*n
    target: np.ndarray         # q on Ω^n
    tokens_per_iteration: float

    @property
    def tv(self) -> float:
        return 0.5 * float(np.abs(self.first_tokens - self.target).sum())


def iterate_exact(method: str | Verifier, draft: ToyModel, target: ToyModel, K: int, L: int, n: int,
                  compensate_target: bool = True, max_branches: int = 20_000,
                  progress: Callable[[float], None] | None = None) -> IterationResult:
    """Run n iterations exactly, branching over every output (docs/maths.md, Algorithm 2 reconstructed).

    With ``compensate_target`` each iteration verifies against the compensation of the previous
    iteration's target; otherwise against q every time (the plain rule, for comparison).  Where an
    iteration over-emits, its successor falls back to its own plain target and the result says so.
    """
    verifier = get_verifier(method) if isinstance(method, str) else method
    if n < 1:
        raise InvalidInput(f"number of iterations must be ≥ 1, got {n}")
    V = target.V
    first = np.zeros((V,) * n)
    over = False
    tokens = 0.0
    # A branch: (probability, tokens emitted so far, target model for the next iteration, in the
    # coordinates of the original context).
    # A rule with state across iterations goes on as its ``advance`` says, branch by branch.
    branches: list[tuple[float, Node, ToyModel, Verifier]] = [(1.0, (), target, verifier)]
    for it in range(n):
        nxt: list[tuple[float, Node, ToyModel, Verifier]] = []
        for prob, emitted, tgt, rule in branches:
            d, t = ShiftedModel(draft, emitted), ShiftedModel(tgt, emitted)
            result = exact_analysis(rule, d, t, K, L)
            following: ToyModel = tgt
            if compensate_target:
                comp = compensate(result.output_law, t, L, verifier.name)
                if comp.over_emission:
                    over = True
                else:
                    following = _Unshift(comp.modified_target, emitted, tgt)
            for u, pr in result.output_law.items():
                mass = prob * pr
                if mass <= 0:
                    continue
                tokens += mass * len(u)
                nxt.append((mass, emitted + u, following, rule.advance(u)))
        branches = nxt
        if len(branches) > max_branches:
            raise InvalidInput(f"{len(branches):,} output branches after {it + 1} iterations "
                             f"(limit {max_branches:,}); lower n, V or L")
        if progress is not None:
            progress((it + 1) / n)
    for prob, emitted, _, _ in branches:
        first[emitted[:n]] += prob
    q = np.array([target.joint(z) for z in itertools.product(range(V), repeat=n)]).reshape((V,) * n)
    return IterationResult(verifier.name, n, compensate_target, over, first, q, tokens / n)


class _Unshift(ToyModel):
    """A model given relative to ``context``, read in the original coordinates: prefixes that
    extend the context use ``inner``, all others the ``outer`` model."""

    def __init__(self, inner: ToyModel, context: Node, outer: ToyModel):
        self.inner, self.context, self.outer, self.V = inner, tuple(context), outer, outer.V

    def cond(self, prefix) -> np.ndarray:
        prefix = tuple(prefix)
        c = len(self.context)
        if prefix[:c] == self.context:
            return self.inner.cond(prefix[c:])
        return self.outer.cond(prefix)
