"""What a verification step returns: the accepted sub-block, the extra token, and a trace of why.

These small dataclasses are the one interface between verifiers and everything that shows or
measures them (exact analysis, the decoder, the app).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.data.nodes import Node


@dataclass(frozen=True)
class Test:
    """One acceptance test: node ``node`` (a path from the iteration's start) offered by ``draft``
    (0-based) passed with probability ``prob``.  ``kind`` is 'token' (a single-token core at
    node[:-1] trying token node[-1]), 'sub-block' (a proper prefix of a block) or 'full-block'."""

    node: Node
    draft: int
    prob: float
    passed: bool
    kind: str
    #: The quantities ``prob`` was computed from, for a rule that logs them (block verification: the
    #: token's p and q, the weights w_(i−1) and w_i, A_i and h_i), so a page can show the formula
    #: with the numbers the rule used.
    values: dict[str, float] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, eq=False)
class Step:
    """One event of a rule that works in several rounds at one node (the traversal rules), in the
    order it happened: ``event`` names it (e.g. 'visit' a child, 'residual' after a rejected one),
    ``values`` are its scalar quantities and ``vector`` a distribution it produced, if any (kept
    as the array itself: no copy, so a decoder with a large vocabulary pays nothing for it)."""

    node: Node
    event: str
    values: dict[str, float]
    vector: np.ndarray | None = None


@dataclass
class Trace:
    """Everything a picture of the step needs.

    ``quantities[s]`` holds the per-node acceptance quantities of the method (e.g. BV's w, A, h;
    SpecTr's ρ*, β; SpecTr-GBV's m, C, D, h).  ``tests`` lists every acceptance test in the order
    it was made.  ``rejected`` is the set of rejected sub-blocks (SpecTr-GBV's H, and the nodes any
    other method rejected), in order of rejection.  ``steps`` is an ordered log for rules whose
    quantities at one node change from round to round (``quantities`` keeps only the last value).
    """

    tests: list[Test] = field(default_factory=list)
    quantities: dict[Node, dict[str, float]] = field(default_factory=dict)
    rejected: list[Node] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)

    def note(self, node: Node, **values: float) -> None:
        self.quantities.setdefault(node, {}).update({k: float(v) for k, v in values.items()})

    def test(self, node: Node, draft: int, prob: float, passed: bool, kind: str, **values: float) -> bool:
        self.tests.append(Test(node, draft, float(prob), bool(passed), kind, {k: float(v) for k, v in values.items()}))
        if not passed:
            self.rejected.append(node)
        return passed

    def step(self, node: Node, event: str, vector: np.ndarray | None = None, **values: float) -> None:
        self.steps.append(Step(node, event, {k: float(v) for k, v in values.items()}, vector))


@dataclass(frozen=True)
class Outcome:
    """A verifier's decision before the extra token is drawn: the accepted prefix s (a node of the
    draft tree), the draft it came from, and the distribution the extra token y is drawn from
    (the residual if |s| < L, q(·|s) for the bonus if |s| = L)."""

    accepted: Node
    draft: int
    residual: np.ndarray
    trace: Trace

    @property
    def tau(self) -> int:
        return len(self.accepted)


@dataclass(frozen=True)
class Verdict:
    """One verification step: O = (s, y) plus the trace."""

    accepted: Node
    draft: int
    extra: int
    residual: np.ndarray
    is_bonus: bool
    trace: Trace

    @property
    def tau(self) -> int:
        return len(self.accepted)

    @property
    def tokens(self) -> Node:
        """The tokens this step appends: the accepted sub-block followed by the extra token."""
        return self.accepted + (self.extra,)
