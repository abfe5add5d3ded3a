"""RBV: recursive block verification (derived in this project, docs/maths.md): BV generalised to K
drafts the way recursive rejection generalises token-level SD.  Lossless by induction; BV at K = 1, RRS at L = 1.

State: a node s (start ∅) and the target's next-token vector T_s there (start q(·|∅)); deeper
conditionals are q.  For k = 1..K: skip x^(k) unless it passes through s; run BV on its continuation
beyond s, with draft p and a target whose first conditional is T_s and then q.  A full acceptance
outputs the block and a bonus from q(·|block) and stops.  Otherwise move to the accepted node s' and
set T_(s') = BV's residual there.  After all drafts, y ~ T_s.

Why it is lossless: conditionally on reaching (s, T_s), the drafts not yet used that pass through s
are i.i.d. continuations from p(·|s); BV run against the target (T_s, q, q, ...) emits that target's
law, and its residual at s' is exactly the law the remaining mass must follow there (induction on
the number of drafts left).
"""
from __future__ import annotations

import itertools
from collections import defaultdict

import numpy as np

from core.rules.block import block_law, block_verify
from core.data.coins import Coins
from core.data.outcome import Outcome, Trace
from core.data.nodes import Node
from core.data.token_tree import TokenTree
from core.rules.base import Verifier


class RBV(Verifier):
    name = "rbv"
    short = "RBV"
    label = "recursive block verification"
    color = "#009e73"  # bluish green
    summary = ("Block verification on each draft in turn, starting where the previous draft stopped and "
               "verifying against the residual; lossless by induction.")
    source = "derived in this project (docs/maths.md): recursive block verification"
    walk = "block"
    single_draft = False
    order_invariant = False
    lossless_by_theory = True
    needs_models = False
    closed_form_tau = False
    carries_residual = True
    how = ("**How RBV tests its drafts.** It runs BV on each draft in turn. It stands at a node s (first the "
           "root) with T, what s still owes the target (first q(·|∅)). A draft through s is checked by BV on its "
           "continuation, with T in place of q for its first token: w = min(1, w_before·T(x)/p(x)), then q's "
           "ratios; the block passes with h = w, a sub-block with h = A/(A + 1 − w). A full pass ends the "
           "iteration; otherwise RBV moves to the node the draft reached and T becomes BV's residual there, ∝ "
           "(w·T − p)₊, which is what the next draft is tested against. A draft that does not pass through s is "
           "skipped; after the last draft the extra token comes from T.")

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:
        trace = Trace()
        s, s_draft = (), -1
        T = block.q[()]
        for k in range(block.K):
            x = block.draft(k)
            d = len(s)
            if x[:d] != s:
                trace.step(s, "skip", draft=k)          # this draft does not pass through s
                continue
            nodes = [x[:i] for i in range(d, block.L + 1)]
            p_rows = [block.p[u] for u in nodes[:-1]]
            q_rows = [T] + [block.q[u] for u in nodes[1:]]
            tau, dist = block_verify(x[d:], p_rows, q_rows, coins, trace, nodes, k)
            if d + tau == block.L:
                return Outcome(x, k, dist, trace)
            if tau > 0:
                s, s_draft = x[: d + tau], k
            T = dist
            # the next draft's target at s: BV's residual ∝ (w_τ·T_s − p)₊ there (T_s = q below the start)
            trace.step(s, "residual", T, draft=k, tau=tau)
        return Outcome(s, s_draft, T, trace)

    def model_output_law(self, draft, target, K: int, L: int) -> tuple[dict[Node, float], int]:
        """Exact output law on toy models, by a dynamic programme over drafts.

        The state after k drafts is (s, T_s, stopped).  A draft reaches s with probability p(s);
        BV on its continuation c gives τ with probability h_τ·Π_(j>τ)(1 − h_j) and a new target
        vector that depends on (s, T_s, c_≤τ) only, so states reached by different draft histories
        merge (keyed by the bytes of T_s).  Returns the law and the number of states visited.
        """
        V = draft.V
        law: dict[Node, float] = defaultdict(float)
        states: dict[tuple[Node, bytes], tuple[np.ndarray, float]] = {((), b""): (target.cond(()), 1.0)}
        visited = 0
        for _ in range(K):
            nxt: dict[tuple[Node, bytes], list] = {}

            def carry(s: Node, T: np.ndarray, prob: float) -> None:
                key = (s, T.tobytes())
                if key in nxt:
                    nxt[key][1] += prob
                else:
                    nxt[key] = [T, prob]

            for (s, _), (T, weight) in states.items():
                visited += 1
                d = len(s)
                reach = draft.joint(s)
                if reach < 1.0:
                    carry(s, T, weight * (1.0 - reach))  # this draft does not pass through s
                for c in itertools.product(range(V), repeat=L - d):
                    x = s + c
                    pc = draft.joint(x)  # p(s)·p(c | s)
                    if pc <= 0.0:
                        continue
                    nodes = [x[:i] for i in range(d, L + 1)]
                    p_rows = [draft.cond(u) for u in nodes[:-1]]
                    q_rows = [T] + [target.cond(u) for u in nodes[1:]]
                    for tau, prob, dist in block_law(c, p_rows, q_rows):
                        mass = weight * pc * prob
                        if d + tau == L:
                            for y in np.flatnonzero(dist > 0):
                                law[x + (int(y),)] += mass * float(dist[y])
                        else:
                            carry(x[: d + tau], dist, mass)
            states = {k: (v[0], v[1]) for k, v in nxt.items()}
        for (s, _), (T, weight) in states.items():
            for y in np.flatnonzero(T > 0):
                law[s + (int(y),)] += weight * float(T[y])
        return dict(law), visited

    @staticmethod
    def model_law_cost(V: int, K: int, L: int) -> float:
        """Seconds, roughly: a state at node s meets V^(L−|s|) continuations, so the first round
        (one state, the root) meets V^L and each later one at most a few states per node, i.e. a
        few × (L + 1)·V^L; each continuation costs one BV law, about 1.5e-5·(L + 1) s."""
        return 1.5e-5 * (L + 1) * V ** L * (1 + 3 * (K - 1) * (L + 1))
