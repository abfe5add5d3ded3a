"""Traversal verification (Weng et al., "Traversal Verification for Speculative Tree Decoding",
NeurIPS 2025, arXiv 2505.12398), docs/maths.md: the recursion of ``core.rules.traversal_walk`` with
children visited in order of first appearance among the drafts.

The j-th visited child of b is the token of the first draft through b that is not among the
children already visited.  Drafts are i.i.d., so its law given what has been seen is p(·|b) with
the visited tokens removed, renormalised: S = p·1[not visited] / p(not visited).  At K = 1 this is
block verification exactly.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Mapping

import numpy as np

from core.rules.traversal_walk import TraversalVerifier, first_drafted, iid_branches


@dataclass(frozen=True)
class FirstAppearance:
    """Node state: p(·|b), the tokens not yet visited, and the k drafts left among them."""

    p: np.ndarray
    unvisited: np.ndarray   # bool mask
    k: int

    def describe(self) -> dict[str, float]:
        return {}

    def law(self) -> np.ndarray:
        s = np.where(self.unvisited, self.p, 0.0)
        return s / s.sum()

    def pick(self, children: Mapping[int, tuple[int, int]]) -> int:
        return first_drafted(children)

    def branches(self) -> Iterator[tuple[int, int, float]]:
        return iid_branches(self.law(), self.k)

    def after(self, c: int, j: int) -> "FirstAppearance":
        unvisited = self.unvisited.copy()
        unvisited[c] = False
        return FirstAppearance(self.p, unvisited, self.k - j)


def first_appearance(p: np.ndarray, q: np.ndarray, w: float, k: int) -> FirstAppearance:
    """The traversal policy at a node entered with k drafts (q and w do not matter to it)."""
    return FirstAppearance(p, np.ones(p.size, dtype=bool), k)


class Traversal(TraversalVerifier):
    name = "traversal"
    short = "Traversal"
    label = "leaf-to-root traversal of the draft tree"
    color = "#44aa99"  # teal
    summary = ("Walk the draft tree from the leaves up, children in order of first appearance, "
               "accepting a subtree with a weight that carries over to its siblings and parent.")
    source = "Weng et al., NeurIPS 2025 (arXiv 2505.12398)"
    single_draft = False
    order_invariant = False
    lossless_by_theory = True
    needs_models = False
    closed_form_tau = False

    policy = staticmethod(first_appearance)
