"""Sequoia's dynamic programme (core/bounds/sequoia.py) against brute force over every tree, and
the `topk` vectors of the token-tree contract (docs/maths.md, "The budget question")."""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from core.bounds.sequoia import best_tree, positional_acceptance, tree_value
from core.errors import InvalidInput

BINARY = ([2 / 3, 1 / 3], [1 / 3, 2 / 3])
THREE = ([1 / 2, 1 / 3, 1 / 6], [1 / 6, 1 / 3, 1 / 2])


def all_trees(n: int, L: int, R: int):
    """Every tree with n non-root nodes, depth ≤ L, and children of ranks 1..k (k ≤ R) at every
    node, as sets of rank paths: grown breadth-first by giving each node of the current level a
    number of children, independently of the programme."""
    def grow(level: list[tuple[int, ...]], left: int, depth: int):
        if left == 0:
            yield []
            return
        if depth == L or not level:
            return
        for counts in itertools.product(range(R + 1), repeat=len(level)):
            total = sum(counts)
            if total == 0 or total > left:
                continue
            children = [v + (r,) for v, c in zip(level, counts) for r in range(1, c + 1)]
            for rest in grow(children, left - total, depth + 1):
                yield children + rest
    yield from grow([()], n, 0)


def token_sum_q(q: list[float], paths, order) -> Fraction:
    """Σ over the tree's nodes of q(path), with ranks mapped to tokens by ``order``, in exact
    rationals (the `topk` closed form; the toys are context-independent)."""
    qf = [Fraction(x).limit_denominator(100) for x in q]
    total = Fraction(0)
    for path in paths:
        term = Fraction(1)
        for r in path:
            term *= qf[order[r - 1]]
        total += term
    return total


@pytest.mark.parametrize("toy, n, value, tokens", [
    (BINARY, 4, Fraction(5, 3), {"0", "1", "10", "11"}),
    (BINARY, 6, Fraction(2), None),
    (THREE, 4, Fraction(13, 12), {"0", "1", "2", "20"}),
    (THREE, 6, Fraction(3, 2), {"0", "1", "2", "20", "21", "22"}),
])
def test_spec_topk_vectors(toy, n, value, tokens):
    """trees.md §5, `topk` DP at L = 2: both toys rank tokens in id order (rank k = token k − 1).
    The binary tree {0, 1, 10, 11}: q(0) + q(1) + q(1)·(q(0) + q(1)) = 1 + 2/3 = 5/3."""
    p, q = toy
    tree = best_tree(positional_acceptance(p, q), n, 2)
    assert Fraction(tree.expected_accepted).limit_denominator(1000) == value
    assert abs(tree.expected_accepted - float(value)) < 1e-12
    order = np.lexsort((np.arange(len(p)), -np.asarray(p)))
    assert token_sum_q(q, tree.paths, order) == value
    if tokens is not None:
        assert len(tree.paths) == n
        got = {"".join(str(order[r - 1]) for r in path) for path in tree.paths}
        assert got == tokens


@pytest.mark.parametrize("seed", range(6))
def test_programme_equals_brute_force(seed):
    """For random acceptances, not monotone, the programme's value is the maximum of F over every
    tree with n nodes and depth ≤ L, and the tree it returns has that value and n nodes."""
    rng = np.random.default_rng(seed)
    R = int(rng.integers(2, 4))
    a = rng.random(R)
    for L in (1, 2, 3):
        for n in range(1, 7):
            trees = list(all_trees(n, L, R))
            if not trees:
                with pytest.raises(InvalidInput):
                    best_tree(a, n, L)
                continue
            brute = max(tree_value(a, t) for t in trees)
            tree = best_tree(a, n, L)
            assert abs(tree.value - brute) < 1e-12, (seed, L, n)
            assert len(tree.paths) == n and max(map(len, tree.paths)) <= L
            assert abs(tree_value(a, tree.paths) - tree.value) < 1e-12
            # children are rank prefixes
            kids = tree.branching
            for parent, k in kids.items():
                assert {p for p in tree.paths if p[:-1] == parent} == {parent + (r,) for r in range(1, k + 1)}


def test_topk_dp_beats_branching_vectors():
    """trees.md §5: each DP tree beats the branching-vector `topk` trees of equal n (L = 2), except
    the binary n = 6, where (2, 2) is already complete."""
    for (p, q), n in ((BINARY, 4), (THREE, 4), (THREE, 6)):
        a = positional_acceptance(p, q)
        dp = best_tree(a, n, 2).value
        for b1 in range(1, len(p) + 1):
            for b2 in range(1, len(p) + 1):
                if b1 + b1 * b2 != n:
                    continue
                paths = [(i,) for i in range(1, b1 + 1)] + [(i, j) for i in range(1, b1 + 1) for j in range(1, b2 + 1)]
                assert tree_value(a, paths) < dp - 1e-12


def test_refusals():
    with pytest.raises(InvalidInput, match="budget"):
        best_tree([0.5], 0, 2)
    with pytest.raises(InvalidInput, match="depth"):
        best_tree([0.5], 2, 0)
    with pytest.raises(InvalidInput, match=r"\[0, 1\]"):
        best_tree([1.5], 2, 2)
    with pytest.raises(InvalidInput, match="no tree"):
        best_tree([0.5, 0.5], 7, 2)          # at most 2 + 4 nodes
