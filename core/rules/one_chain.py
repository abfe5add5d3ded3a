"""One drafted chain, the drafts the serving engines' verifiers read (vLLM, vllm-ascend, transformers'
assisted generation): the chain itself, the rules' common base, and the exact law of a rule on it by
enumerating its paths (docs/maths.md, "Released rules, ported").

An engine's chain is draft 1 of K i.i.d. chains (the rule reads draft 1 only, as SD does), or, for
the rules that never read the drafter's probabilities (``any_law``), the one path of any tree
whose every node has one child, however drafted: sampled, or the drafter's argmax at every step (a
``topk`` chain b = (1, …, 1), EAGLE's and n-gram drafters' deterministic proposals).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, ClassVar, Iterable

import numpy as np

from core.data.coins import Coins
from core.data.laws import LAWS
from core.data.nodes import Node
from core.data.outcome import Outcome
from core.data.token_tree import TokenTree
from core.rules.base import Verifier


@dataclass(frozen=True)
class Chain:
    """The drafted tokens x_1..x_L, with p(·|x_<i) for i = 1..L and q(·|x_<i) for i = 1..L+1."""
    tokens: Node
    p: tuple[np.ndarray, ...]
    q: tuple[np.ndarray, ...]

    @property
    def L(self) -> int:
        return len(self.tokens)

    def node(self, i: int) -> Node:
        """x_≤i, the node reached after i tokens."""
        return self.tokens[:i]

    def p_token(self, i: int) -> float:
        """p(x_(i+1) | x_≤i), i = 0..L−1."""
        return float(self.p[i][self.tokens[i]])

    def q_token(self, i: int) -> float:
        """q(x_(i+1) | x_≤i), i = 0..L−1."""
        return float(self.q[i][self.tokens[i]])


def chain_of(tree: TokenTree) -> Chain:
    """Draft 1 of K i.i.d. chains, or the one path of a tree whose every node has one child."""
    if tree.iid_chains:
        x = tree.draft(0)
    else:
        x = ()
        while len(x) < tree.L:
            x = x + (tree.children(x)[0],)
    nodes = [x[:i] for i in range(len(x) + 1)]
    return Chain(tuple(x), tuple(tree.p[u] for u in nodes[:-1]), tuple(tree.q[u] for u in nodes))


#: ``Verifier.runs_on`` of a rule that reads the drafter's probabilities: one chain sampled from p,
#: draft 1 of K i.i.d. chains.
SAMPLED_CHAIN: tuple[tuple[str, str], ...] = (("chains", "iid"),)
#: ``Verifier.runs_on`` of a rule that never reads them: besides, one chain drafted by any law
#: (sampled, or the drafter's argmax at every step: a ``topk`` chain b = (1, …, 1)).
ANY_CHAIN: tuple[tuple[str, str], ...] = SAMPLED_CHAIN + tuple(("one-chain", name) for name in LAWS)


class OneChainRule(Verifier):
    """The common base of the engines' rules on one chain: ``verify_chain`` is the rule."""

    single_draft = True
    order_invariant = False
    needs_models = False
    closed_form_tau = False
    released_port = True
    runs_on = SAMPLED_CHAIN

    def verify_chain(self, tree: TokenTree, chain: Chain, coins: Coins) -> Outcome:  # pragma: no cover
        raise NotImplementedError

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:
        return self.verify_chain(block, chain_of(block), coins)

    def run_tree(self, tree: TokenTree, coins: Coins) -> Outcome:
        if not self.supports(tree.shape, tree.law):
            return super().run_tree(tree, coins)
        return self.verify_chain(tree, chain_of(tree), coins)


def chain_output_law(draft, target, L: int,
                     conditional: Callable[[Chain], Iterable[tuple[int, float, np.ndarray]]]
                     ) -> tuple[dict[Node, float], int]:
    """The exact output law of a rule on one chain drafted from p, by enumerating the V^L paths:
    ``conditional(chain)`` gives the rule's law given the chain, as (τ, P(τ | x), the extra token's
    law), and P(O = x_≤τ·y) = Σ_x p(x)·P(τ | x)·law(y).  Returns the law and the paths visited."""
    law: dict[Node, float] = {}
    paths = 0
    for x in itertools.product(range(draft.V), repeat=L):
        p_rows = tuple(np.asarray(draft.cond(x[:i]), dtype=np.float64) for i in range(L))
        weight = float(np.prod([p_rows[i][t] for i, t in enumerate(x)]))
        if weight <= 0.0:
            continue
        paths += 1
        chain = Chain(x, p_rows, tuple(np.asarray(target.cond(x[:i]), dtype=np.float64) for i in range(L + 1)))
        for tau, prob, extra in conditional(chain):
            extra = extra / extra.sum()
            for y in np.flatnonzero(extra > 0):
                key = x[:tau] + (int(y),)
                law[key] = law.get(key, 0.0) + weight * prob * float(extra[y])
    return law, paths


def chain_law_cost(V: int, K: int, L: int) -> float:
    """Seconds, roughly, of ``chain_output_law``: a few hundred microseconds per path."""
    return 3e-4 * V ** L + 1.5e-6 * V ** (L + 1) + 1e-3
