"""EAGLE's released sampling verification (Li et al., EAGLE / EAGLE-2 / EAGLE-3, SafeAILab/EAGLE,
``eagle/model/utils.py``: ``evaluate_posterior`` with a ``logits_processor``), on any token tree
(docs/maths.md, "EAGLE's sampling verification (`eagle`)").

At an accepted node u (the root first) the distinct drafted children c_1, c_2, … are tried in
candidate order with the target law g = q(·|u): c_k is accepted with probability g(c_k) (the code's
``qx = 1.0``: the drafter's top-k proposal is taken as deterministic), and after a rejection g(c_k)
is set to 0 and g renormalised.  An accepted child becomes u; when every child is rejected the extra
token is drawn from the last g (q with the children removed).  When u has no drafted child (a leaf,
or depth L) the extra token is the bonus, drawn from the target's next-token law at u.

Child c_k is thus accepted with probability q(c_k|u), whatever the order: the rule samples y ~ q(·|u)
and moves to y when y was drafted, so it is lossless for any tree whose drafting does not look at
the target's coins (the drafter's law is never read).

Where the two releases differ (``RELEASES``), the bonus line alone:

* ``current`` — HEAD cb7e084 (2026-02-19; since c892473, 2025-04-29): the bonus law is
  ``softmax(logits_processor(logits))``, the target at the sampling temperature T: q(·|u).
* ``eagle2`` — the EAGLE-2 release bfeb532 (2024-06-27) up to c892473 (the same function at be222e5
  and at the EAGLE-3 commit f2f2366): the bonus law is ``softmax(logits)``, the raw logits without
  the processor, i.e. the target at temperature 1.  The toy target here is already tempered
  (q_T ∝ q_1^(1/T)), so that law is q_T^T renormalised, which needs ``temperature`` = the T the
  models were tempered at.  At T = 1 the two releases are the same rule; at T = 0 EAGLE takes its
  greedy branch (argmax match), which is lossless, and so does this port (q_0 is a point mass).
"""
from __future__ import annotations

from typing import ClassVar, Mapping

import numpy as np

from core.data.coins import Coins
from core.data.distributions import residual
from core.data.token_tree import TokenTree
from core.data.outcome import Outcome, Trace
from core.data.nodes import Node
from core.rules.base import Verifier
from core.rules.params import Param

#: The released versions of the bonus line: the current one first (the default).
RELEASES = ("current", "eagle2")


def raw_bonus(q_T: np.ndarray, temperature: float) -> np.ndarray:
    """softmax(logits) from a tempered q_T = softmax(logits/T): q_T^T renormalised (T > 0), q_T at T = 0."""
    if temperature == 0.0:
        return q_T
    w = np.where(q_T > 0, np.power(q_T, temperature, where=q_T > 0, out=np.zeros_like(q_T)), 0.0)
    return w / w.sum()


class Eagle(Verifier):
    """EAGLE's sampling verification as released: try the drafted children in order, each with the
    renormalised target probability, and draw the bonus from the target."""

    name = "eagle"
    short = "EAGLE"
    label = "tree sampling verification of SafeAILab's drafter, as released"
    color = "#8877ee"  # lavender
    summary = ("At each accepted node try the drafted children in order, each accepted with its "
               "target probability renormalised after every rejection, then draw the extra token "
               "from what is left or from the target, as released.")
    source = ("Li, Wei, Zhang, Zhang 2024-2025, EAGLE / EAGLE-2 / EAGLE-3, as released in "
              "SafeAILab/EAGLE (eagle/model/utils.py, evaluate_posterior, at cb7e084 and at the "
              "EAGLE-2 release bfeb532)")
    single_draft = False
    order_invariant = True        # child k passes with q(c_k|u) whatever the order (module docstring)
    lossless_by_theory = False    # the eagle2 release is lossy at T ≠ 1; the current one is proven lossless
    needs_models = False
    closed_form_tau = False
    token_trees = True
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("release", str, RELEASES[0], "the release (default current; eagle2 draws the bonus token at "
              "temperature 1)", choices=RELEASES),
        Param("temperature", float, 1.0, "the models' temperature, which the eagle2 bonus line undoes",
              within="[0, inf)", context="temperature"),
    )
    released_port = True
    below_baseline = ("it accepts a drafted token x with probability q(x) (renormalised after each rejection), "
                      "never more than SD's min(1, q(x)/p(x)) for one draft")

    def __init__(self, release: str = RELEASES[0], temperature: float = 1.0):
        RELEASE, TEMPERATURE = self.parameters
        self.release, self.temperature = RELEASE.check(release), TEMPERATURE.check(temperature)

    def settings(self) -> dict[str, object]:
        """The release, and the temperature only where it is read: the ``eagle2`` bonus line."""
        return {"release": self.release} | ({"temperature": self.temperature} if self.release == "eagle2" else {})

    def lossless(self) -> bool:
        """The current release always; ``eagle2`` where its bonus law softmax(logits) is the tempered
        target: T = 1, and T = 0 (the greedy branch)."""
        return self.release == "current" or self.temperature in (0.0, 1.0)

    def bonus(self, q: np.ndarray) -> np.ndarray:
        """The bonus law at a node whose target law (at temperature T) is q."""
        return q if self.release == "current" else raw_bonus(q, self.temperature)

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:
        """K i.i.d. chains as their token tree, each node offered by the first draft through it."""
        return self._walk(block, coins, block.draft_table())

    def run_tree(self, tree: TokenTree, coins: Coins) -> Outcome:
        """Each node offered by the first of its parent's draws that drew it."""
        return self._walk(tree, coins, tree.table())

    def _walk(self, tree: TokenTree, coins: Coins, offered: Mapping[Node, Mapping[int, tuple[int, int]]]) -> Outcome:
        """The walk, a node's draft index read from ``offered`` (``draft_table`` or ``table``)."""
        def draft_of(node: Node) -> int:
            return offered[node[:-1]][node[-1]][0]
        trace = Trace()
        u: Node = ()
        while True:
            children = tree.children(u) if len(u) < tree.L else ()
            if not children:
                return Outcome(u, draft_of(u) if u else -1, self.bonus(tree.q[u]), trace)
            g = tree.q[u].copy()
            for c in children:
                prob = float(g[c])
                if trace.test(u + (c,), draft_of(u + (c,)), prob, coins.bernoulli(prob), "token"):
                    u = u + (c,)
                    break
                g[c] = 0.0
                total = g.sum()
                g = g / total if total > 0 else g
            else:
                return Outcome(u, draft_of(u) if u else -1, residual(g, tree.q[u]), trace)

    def model_output_law(self, draft, target, K: int, L: int) -> tuple[dict[Node, float], int]:
        """Exact output law on K i.i.d. chains without enumerating the drafts.  The rule walks a
        target path z ~ q while z_≤d is drafted; on chains P(z_≤d drafted) = c(z_≤d) with
        c(v) = 1 − (1 − p(v))^K (c(∅) = 1), nested in d, so for |s| = d < L
            P(O = s·y) = q(s)·q(y|s)·[c(s) − c(s·y)],
        and for |s| = L, P(O = s·y) = q(s)·c(s)·b(y|s) with b the bonus law (``bonus``).
        Returns the law and the number of nodes."""
        law: dict[Node, float] = {}
        nodes = 0
        frontier: list[tuple[Node, float, float]] = [((), 1.0, 1.0)]     # (s, q(s), p(s))
        for depth in range(L + 1):
            following = []
            for s, q_s, p_s in frontier:
                nodes += 1
                c_s = 1.0 - (1.0 - p_s) ** K if s else 1.0
                q_next = target.cond(s)
                if depth == L:
                    bonus = self.bonus(q_next)
                    for y in np.flatnonzero(bonus > 0):
                        law[s + (int(y),)] = q_s * c_s * float(bonus[y])
                    continue
                p_next = draft.cond(s)
                for y in range(draft.V):
                    p_child = p_s * float(p_next[y])
                    mass = q_s * float(q_next[y]) * (c_s - (1.0 - (1.0 - p_child) ** K))
                    if mass > 0:
                        law[s + (y,)] = mass
                    if p_child > 0 and q_next[y] > 0:
                        following.append((s + (y,), q_s * float(q_next[y]), p_child))
            frontier = following
        return law, nodes

    @staticmethod
    def model_law_cost(V: int, K: int, L: int) -> float:
        """Seconds, roughly: every node of depth ≤ L with V children."""
        return 2e-6 * V ** (L + 1)

    def __repr__(self) -> str:
        return f"<verifier eagle {self.release} T={self.temperature:g}>"
