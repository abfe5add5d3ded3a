"""The tree walk by which SpecTr and SpecInfer use K drafts of length L (docs/maths.md).

Start at the root with all K drafts alive.  At node s with k alive drafts, a single-token core run on
their next tokens yields y ~ q(·|s).  Drafts whose next token equals y stay alive.  If none does, the
output is (s, y); if some do and |s| + 1 = L, the output is the full block and a bonus from q(·|block);
otherwise the walk recurses at s·y.

A core is prepared once per node, ``core(p(·|s), q(·|s), k, trace, s)`` (K-SEQ solves for ρ* there),
and returns a function of the k alive drafts' next tokens that gives the alive draft whose token it
accepted, or ``None`` and the residual it draws y from when it rejects every token.  For both cores here a token that some alive draft proposed has zero
residual mass (a proposed token with q > ρ·p is accepted with probability one; a rejected token's
mass is removed by RRS), so "stays alive after a residual draw" happens with probability 0.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np

from core.data.coins import Coins
from core.data.outcome import Outcome, Trace
from core.data.nodes import Node
from core.data.token_tree import TokenTree
from core.rules.base import Verifier

#: run(tokens, drafts, coins, trace) -> (accepted draft or None, residual or None)
CoreRun = Callable[[Sequence[int], Sequence[int], Coins, Trace], tuple[Optional[int], Optional[np.ndarray]]]
#: core(p(·|s), q(·|s), k, trace, s) -> CoreRun
Core = Callable[[np.ndarray, np.ndarray, int, Trace, Node], CoreRun]


def tree_walk(block: TokenTree, coins: Coins, core: Core) -> Outcome:
    trace = Trace()
    s: Node = ()
    alive = list(range(block.K))
    rows = [block.draft(k) for k in alive]
    while True:
        depth = len(s)
        tokens = [rows[k][depth] for k in alive]
        run = core(block.p[s], block.q[s], len(alive), trace, s)
        chosen, dist = run(tokens, alive, coins, trace)
        if chosen is None:
            return Outcome(s, alive[0] if s else -1, dist, trace)
        y = rows[chosen][depth]
        s = s + (y,)
        alive = [k for k in alive if rows[k][depth] == y]
        if len(s) == block.L:
            return Outcome(s, alive[0], block.q[s], trace)


class TreeWalkVerifier(Verifier):
    """A multi-draft rule made of a single-token core and the tree walk."""

    core: Core

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:
        return tree_walk(block, coins, type(self).core)

    def model_output_law(self, draft, target, K: int, L: int) -> tuple[dict[Node, float], int]:
        """Exact output law on toy models without enumerating Ω^(K·L) (see ``tree_walk_output_law``)."""
        return tree_walk_output_law(type(self).core, draft, target, K, L)

    @staticmethod
    def model_law_cost(V: int, K: int, L: int) -> float:
        """Seconds, roughly: V^k ordered tuples (k+1 coin outcomes each) at every (s, k) state."""
        return 3e-5 * sum(V ** d for d in range(L)) * sum((k + 1) * V ** k for k in range(1, K + 1))


def tree_walk_output_law(core: Core, draft, target, K: int, L: int) -> tuple[dict[Node, float], int]:
    """Exact P(O = u) of a tree walk on toy models by recursion over alive drafts (docs/maths.md).

    Given that k drafts are alive at node s, their next tokens are i.i.d. draws from p(·|s),
    independent of everything before, so the law of the rest of the walk depends on (s, k) alone and
    is memoised; only the V^k ordered next-token tuples at each (s, k) are enumerated.  Returns the
    law and the number of (s, k) states visited.
    """
    from itertools import product

    from core.data.coins import enumerate_outcomes

    memo: dict[tuple[Node, int], dict[Node, float]] = {}

    def law_at(s: Node, k: int) -> dict[Node, float]:
        key = (s, k)
        if key in memo:
            return memo[key]
        p, q = draft.cond(s), target.cond(s)
        run = core(p, q, k, Trace(), s)
        out: dict[Node, float] = {}

        def add(u: Node, mass: float) -> None:
            out[u] = out.get(u, 0.0) + mass

        for tokens in product(range(draft.V), repeat=k):
            weight = float(np.prod(p[list(tokens)]))
            if weight == 0.0:
                continue
            leaves = enumerate_outcomes(lambda coins: run(tokens, range(k), coins, Trace()))
            for prob, (chosen, dist) in leaves:
                mass = weight * prob
                if chosen is None:
                    dist = dist / dist.sum()
                    for y in np.flatnonzero(dist > 0):
                        add(s + (int(y),), mass * float(dist[y]))
                    continue
                y = tokens[chosen]
                child = s + (y,)
                if len(child) == L:
                    bonus = target.cond(child)
                    for y2 in np.flatnonzero(bonus > 0):
                        add(child + (int(y2),), mass * float(bonus[y2]))
                else:
                    for u, pr in law_at(child, tokens.count(y)).items():
                        add(u, mass * pr)
        memo[key] = out
        return out

    return law_at((), K), len(memo)
