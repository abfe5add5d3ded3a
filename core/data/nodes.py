"""A node of a draft tree: a prefix, relative to the iteration's start, written as a tuple of token
ids (() is the root, the context before the block).  Drafts that share a prefix share its node, so
every node carries one p(·|s) and one q(·|s) however many drafts pass through it (docs/maths.md).
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

Node = tuple[int, ...]


def path_probability(cond: Mapping[Node, np.ndarray], s: Node) -> float:
    """Π_i cond[s_<i](s_i): the probability of the path s under the conditionals ``cond`` (p or q
    along a draft tree, keyed by prefix)."""
    out = 1.0
    for i in range(len(s)):
        out *= float(cond[s[:i]][s[i]])
    return out
