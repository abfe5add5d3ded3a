"""The levels of the prefix tree Ω^≤L in lexicographic order, as numpy arrays.

Node i of depth d is the base-V expansion of i with d digits (most significant first), so the V
children of node i of depth d are nodes V·i .. V·i + V − 1 of depth d + 1, and an array indexed by
the nodes of depth d reshapes in C order to shape (V,)*d.  Shared by the exact analysis and the
bounds; numpy only.
"""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Sequence

import numpy as np

from core.data.nodes import Node

if TYPE_CHECKING:  # toy models only provide ``.V`` and ``.cond``; no runtime import needed
    from toy_models import ToyModel


def node_tuple(depth: int, index: int, V: int) -> Node:
    """The node of depth ``depth`` with lexicographic index ``index`` (base-V digits)."""
    digits = []
    for _ in range(depth):
        index, r = divmod(index, V)
        digits.append(int(r))
    return tuple(reversed(digits))


def level_conditionals(model: ToyModel, depth: int) -> list[np.ndarray]:
    """C[d] (d = 0..depth), shape (V^d, V): row i is model.cond(node i of depth d)."""
    V = model.V
    out = []
    for d in range(depth + 1):
        out.append(np.stack([np.asarray(model.cond(u), dtype=np.float64)
                             for u in itertools.product(range(V), repeat=d)]))
    return out


def level_joints(conds: Sequence[np.ndarray]) -> list[np.ndarray]:
    """J[d] (d = 0..len(conds)), shape (V^d,): J[0] = [1], J[d+1] = (J[d] ⊗ C[d]) flattened."""
    out = [np.ones(1)]
    for c in conds:
        out.append((out[-1][:, None] * c).reshape(-1))
    return out


def law_from_levels(emitted: Sequence[np.ndarray], V: int) -> dict[Node, float]:
    """{u: mass} from arrays indexed by the nodes of each depth (``emitted[d]`` has shape (V^d,));
    entries with no mass are left out."""
    law: dict[Node, float] = {}
    for d, mass in enumerate(emitted):
        idx = np.flatnonzero(mass > 0)
        if idx.size:
            nodes = (idx[:, None] // V ** np.arange(d - 1, -1, -1, dtype=np.int64)) % V
            law.update(zip(map(tuple, nodes.tolist()), mass[idx].tolist()))
    return law


class OutputLevels:
    """P(O = u) accumulated by a top-down exact programme, one array per depth in this module's
    order: ``add(s, mass, dist)`` adds mass·dist(y) to every output s·y; ``law()`` is {u: mass}."""

    def __init__(self, V: int, L: int):
        self.V = V
        self.levels = [np.zeros(V ** d) for d in range(L + 2)]

    def add(self, s: Node, mass: float, dist: np.ndarray) -> None:
        i = 0
        for t in s:
            i = i * self.V + t
        self.levels[len(s) + 1][i * self.V:(i + 1) * self.V] += mass * dist

    def law(self) -> dict[Node, float]:
        return law_from_levels(self.levels, self.V)


def node_recursion_cost(V: int, K: int, L: int) -> float:
    """Seconds, roughly, of an exact analysis whose law comes from a recursion over the nodes of
    Ω^≤L: a few vector operations per depth, one dict entry per output (``law_from_levels``), and
    then the analysis's own pass over the V^(L+1) completed sequences (measured on 2 cores: SD and
    BV at V = 12, L = 4 take about 0.45 s idle; the first term alone said 0.27 s)."""
    return 1e-6 * V * sum(V ** d for d in range(L + 1)) + 1.5e-6 * V ** (L + 1) + 1e-3
