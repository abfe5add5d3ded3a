"""Traversal verification (Weng et al., "Traversal Verification for Speculative Tree Decoding",
NeurIPS 2025, arXiv 2505.12398), docs/maths.md: the recursion of ``core.rules.traversal_walk`` with
children visited in order of first appearance among the drafts.

The j-th visited child of b is the token of the first draft through b that is not among the
children already visited.  Drafts are i.i.d., so its law given what has been seen is p(·|b) with
the visited tokens removed, renormalised: S = p·1[not visited] / p(not visited).  At K = 1 this is
block verification exactly.

On a token tree of any shape and law (docs/maths.md, "Token trees") the same recursion runs with
the law's visit order and exact S_i (``core.data.laws``): ``wor`` visits in draw order with S = p
without the visited tokens, ``topk`` in rank order with S = δ, ``greedy`` the sampled child with
P′ and then the top tokens with δ.  For ``iid`` the children are visited in order of first
appearance, as above (not one round per draw: docs/choices.md).
"""
from __future__ import annotations

import numpy as np

from core.data.coins import Coins
from core.data.laws import DraftLaw, FirstAppearance, depth_policies, tree_state_count
from core.data.levels import node_recursion_cost
from core.data.shapes import Shape
from core.data.token_tree import TokenTree
from core.data.outcome import Outcome
from core.data.nodes import Node
from core.rules.traversal_walk import TraversalVerifier, traversal_output_law, traversal_walk


def first_appearance(p: np.ndarray, q: np.ndarray, w: float, k: int) -> FirstAppearance:
    """The traversal policy at a node entered with k drafts (q and w do not matter to it)."""
    return FirstAppearance(p, np.ones(p.size, dtype=bool), k)


def walk_how(first: str, law: str) -> str:
    """The step page's text on how Traversal walks: down the ``first`` child (a draft on K chains, a
    child on a token tree), each child tested against ``law``, the law of that child given the
    children already seen."""
    return ("**How Traversal walks the tree.** From the root it goes down the first " + first + " to its "
            "leaf, then comes back up: each child c of a node gets the weight "
            "w = min(1, w·T(c)/S(c)), where T is what the node still owes the target q and S is "
            "the law of that child given the children already seen (" + law + "). A rejected "
            "child leaves its parent the residual T = (w·T − S)₊ / A and weight A/(A + 1 − w); "
            "the parent is tested only when all its children are rejected.")


class Traversal(TraversalVerifier):
    name = "traversal"
    short = "Traversal"
    label = "leaf-to-root traversal of the draft tree"
    color = "#cc79a7"  # reddish purple
    summary = ("Walk the draft tree from the leaves up, children in order of first appearance, "
               "accepting a subtree with a weight that carries over to its siblings and parent.")
    source = "Weng et al., NeurIPS 2025 (arXiv 2505.12398)"
    single_draft = False
    order_invariant = False
    lossless_by_theory = True
    needs_models = False
    closed_form_tau = False
    how = walk_how("draft", "p without them")
    how_on_trees = walk_how("child", "the draft law's S_i")
    token_trees = True

    policy = staticmethod(first_appearance)

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:
        return traversal_walk(block, coins, first_appearance, block.draft_table())

    def run_tree(self, tree: TokenTree, coins: Coins) -> Outcome:
        return traversal_walk(tree, coins, depth_policies(tree.shape, tree.law), tree.table())

    def tree_output_law(self, draft, target, shape: Shape, law: DraftLaw) -> tuple[dict[Node, float], int]:
        """Exact output law on (shape, law): ``traversal_output_law`` with the law's policy per depth."""
        return traversal_output_law(depth_policies(shape, law), draft, target, shape.K, shape.L,
                                    shape.branching)

    @staticmethod
    def tree_law_cost(V: int, shape: Shape, law: DraftLaw) -> float:
        """Seconds, roughly: 5e-5 per state (``tree_state_count``), as ``traversal_law_cost``, and the
        pass over Ω^(L+1) that completes the law (``node_recursion_cost``)."""
        return 5e-5 * tree_state_count(V, shape, law) + node_recursion_cost(V, 1, shape.L)
