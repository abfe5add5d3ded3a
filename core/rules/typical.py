"""Medusa's typical acceptance (Cai et al., "Medusa", arXiv 2401.10774, §2.3.1), a *lossy* reference
rule on any token tree (docs/maths.md, "Typical acceptance (`typical`)").

At an accepted node u (the root is accepted) a drafted child u·x **passes** iff

    q(x|u) > min(ε, δ·exp(−H(q(·|u)))),   H(P) = −Σ_(x: P(x) > 0) P(x) ln P(x)   (natural log),

with ε Medusa's ``posterior_threshold`` and δ its ``posterior_alpha``.  The accepted prefix s is the
longest root path of the tree all of whose tokens pass; among the passing paths of that length, the
one with the highest likelihood Σ ln q(s_i|s_<i) (ties: equal to 1e-12 in log), and among equally
likely ones the first in Medusa's candidate order, which lists the leaves by decreasing
lexicographic order of their child positions.  A child's position is its rank among its parent's
children by decreasing p(·|u), ties to the smaller id: for ``topk`` its rank in p, Medusa's top-k
index; for the other laws a canonical order that does not depend on the order of the draws, so the
rule reads the drafted node set only.  The extra token is y = argmax q(·|s) (the smallest token id
among ties), whether τ < L or τ = L.

Where this follows the released code (FasterDecoding/Medusa, ``medusa/model/utils.py``):
``evaluate_posterior`` with ``sampling='typical', fast=True`` tests ``candidates_prob > threshold``
with ``threshold = min(posterior_threshold, exp(−entropy)·posterior_alpha)``, keeps the longest
accepted prefix (``cumprod`` of the mask) and picks among equal lengths by ``argmax`` of the summed
log-probabilities (``torch.argmax``: the first maximum in row order); the next iteration's first
token is ``generate_candidates``'s ``argmax(logits)`` whenever ``temperature == 0 or fast`` (the
paper: "greedy decoding for the first token"), and ``medusa_generate`` defaults to
``posterior_threshold=0.09, posterior_alpha=0.3, sampling='typical', fast=True``.  The released
entropy is −Σ P·ln(P + 1e-5); this module uses the clean H (the two thresholds differ by a factor
exp(Σ P ln(1 + 1e-5/P)) ≤ e^(V·1e-5), immaterial unless q(x|u) lies within that factor of the
threshold).  At T = 0 the code skips the test and compares with argmax q; with q one-hot and
ε < 1 (enforced) the test above passes exactly the argmax, so the two agree.

The rule reads q only (never p or the draft law), so it is defined on every shape and law; on K
i.i.d. chains it reads the chains' token tree (each node's draws, in draft order).  Given the tree it
is deterministic: its coin programme tosses no coin, and the extra token's distribution is the
point mass at argmax q(·|s) (``extra_token="target"`` draws y ~ q(·|s) instead, a variant that isolates
what the acceptance test alone does to the output law).  Lossy: on a ``topk`` tree the whole
iteration is deterministic, so the completed law is q(·|O) on the extensions of the one output O
and TV = 1 − q(O) > 0 whenever q is not a point mass along O.
"""
from __future__ import annotations

import math
from typing import ClassVar, Mapping

import numpy as np

from core.data.coins import Coins
from core.data.token_tree import TokenTree
from core.data.outcome import Outcome, Trace
from core.data.nodes import Node
from core.rules.base import Verifier
from core.rules.params import Param

#: Medusa's defaults (``medusa_generate``): ε = posterior_threshold, δ = posterior_alpha = √ε.
MEDUSA_EPSILON = 0.09
MEDUSA_DELTA = 0.3
#: What the extra token is: Medusa's greedy first token, or a draw from the target (a variant).
EXTRA_TOKENS = ("greedy", "target")
#: Likelihoods Σ ln q within this of each other are tied (float sums of equal products differ by ~1e-16).
LOG_TIE = 1e-12


def entropy(P: np.ndarray) -> float:
    """H(P) = −Σ_(x: P(x) > 0) P(x) ln P(x), in nats."""
    P = P[P > 0]
    return float(-np.dot(P, np.log(P)))


def threshold(P: np.ndarray, epsilon: float, delta: float) -> float:
    """min(ε, δ·exp(−H(P))): a child x of a node with target P passes iff P(x) exceeds it."""
    return min(epsilon, delta * math.exp(-entropy(P)))


def typical_prefix(tree: TokenTree, epsilon: float, delta: float, trace: Trace | None = None,
                   offered: Mapping[Node, Mapping[int, tuple[int, int]]] | None = None) -> Node:
    """The accepted prefix s of typical acceptance on ``tree`` (module docstring).

    Depth first from the root over the children of passing nodes; each test is recorded in
    ``trace`` as a 'token' test that passed with probability 1 or 0, offered by the draft
    ``offered`` names for it (``draft_table`` on K i.i.d. drafts; by default ``table``: the index of
    the node's first draw at its parent), and each tested node's threshold and entropy as its
    quantities."""
    table = tree.table()
    offered = table if offered is None else offered
    best: tuple[int, float, tuple[int, ...]] = (0, 0.0, ())     # (depth, Σ ln q, positions)
    best_node: Node = ()
    stack: list[tuple[Node, float, tuple[int, ...]]] = [((), 0.0, ())]
    while stack:
        u, loglik, positions = stack.pop()
        if len(u) == tree.L:
            continue
        P = tree.q[u]
        cut = threshold(P, epsilon, delta)
        if trace is not None:
            trace.note(u, threshold=cut, entropy=entropy(P))
        draft = tree.p[u]
        rank = {c: i for i, c in enumerate(sorted(table[u], key=lambda x: (-draft[x], x)))}
        for c in table[u]:
            passed = bool(P[c] > cut)
            if trace is not None:
                trace.test(u + (c,), offered[u][c][0], 1.0 if passed else 0.0, passed, "token")
            if not passed:
                continue
            child = (u + (c,), loglik + math.log(P[c]), positions + (rank[c],))
            stack.append(child)
            depth, ll, pos = len(child[0]), child[1], child[2]
            if depth > best[0] or (depth == best[0] and (
                    ll > best[1] + LOG_TIE or (abs(ll - best[1]) <= LOG_TIE and pos > best[2]))):
                best, best_node = (depth, ll, pos), child[0]
    return best_node


class Typical(Verifier):
    """Medusa's typical acceptance: pass every drafted token with q above min(ε, δ·e^(−H)), keep the
    longest passing path, and continue greedily."""

    name = "typical"
    short = "Typical"
    label = "Medusa's typical acceptance (lossy)"
    color = "#117733"  # green
    summary = ("Accept the longest drafted path whose every token has target probability above "
               "min(ε, δ·exp(−entropy)), the most likely on ties, then add the target's most "
               "probable next token.")
    source = ("Cai et al. 2024, Medusa (arXiv 2401.10774, §2.3.1), as released in "
              "FasterDecoding/Medusa (evaluate_posterior with sampling='typical', fast=True)")
    single_draft = False
    order_invariant = True        # it reads the node set (ties go to p's ranks, not to draw order)
    lossless_by_theory = False
    needs_models = False
    closed_form_tau = False
    how = ("**How typical acceptance tests.** Deterministically: a drafted token x at an accepted node passes "
           "when q(x) > min(ε, δ·exp(−H(q))), H the entropy of q there (Medusa's rule; lossy).")
    token_trees = True
    # ε < 1 keeps the argmax of a one-hot q passing, so that T = 0 is greedy decoding for every
    # (ε, δ), as Medusa's code makes it by skipping the test there.
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("epsilon", float, MEDUSA_EPSILON, "the hard threshold ε (Medusa's posterior_threshold; "
              "default 0.09, Medusa's)", within="[0, 1)", label="Medusa's posterior threshold",
              sweep=(0.01, 0.03, 0.09, 0.2, 0.4, 0.7, 0.95)),
        Param("delta", float, MEDUSA_DELTA, "the entropy factor δ (Medusa's posterior_alpha; default 0.3, "
              "Medusa's)", within="[0, inf)", label="Medusa's posterior alpha",
              sweep=(0.0, 0.1, 0.3, 0.6, 1.0, 2.0)),
        Param("extra_token", str, EXTRA_TOKENS[0], "the extra token: greedy (Medusa's) or drawn from the "
              "target", choices=EXTRA_TOKENS),
    )
    released_port = True

    def __init__(self, epsilon: float = MEDUSA_EPSILON, delta: float = MEDUSA_DELTA,
                 extra_token: str = "greedy"):
        EPSILON, DELTA, EXTRA = self.parameters
        self.epsilon, self.delta, self.extra_token = EPSILON.check(epsilon), DELTA.check(delta), EXTRA.check(extra_token)

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:
        """K i.i.d. chains as their token tree, each node offered by the first draft through it."""
        return self.run_tree(block, coins, block.draft_table())

    def run_tree(self, tree: TokenTree, coins: Coins,
                 offered: Mapping[Node, Mapping[int, tuple[int, int]]] | None = None) -> Outcome:
        """The longest typical prefix of ``tree``; a node is offered by the draft ``offered`` names
        (default ``table``: the first of its parent's draws that drew it)."""
        trace = Trace() if self.complete_trace else None
        offered = tree.table() if offered is None else offered
        s = typical_prefix(tree, self.epsilon, self.delta, trace, offered)
        q = tree.q[s]
        if self.extra_token == "greedy":
            y = np.zeros(q.size)
            y[int(np.argmax(q))] = 1.0
        else:
            y = q
        first = offered[s[:-1]][s[-1]][0] if s else -1
        return Outcome(s, first, y, trace if trace is not None else Trace())

    def __repr__(self) -> str:
        return f"<verifier typical ε={self.epsilon:g} δ={self.delta:g}>"
