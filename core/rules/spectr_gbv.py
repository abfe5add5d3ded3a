"""SpecTr-GBV (Lin, Sheng, Cai, Zhou, 2026): K i.i.d. drafts + block verification, as released in
the authors' public code (docs/maths.md).  Its claims (lossless, optimal, attains E_CIC, monotone in K) are
hypotheses that ``core.analysis.exact`` measures; nothing here assumes them.

For a node s, with p(s), q(s) joint probabilities:
    m(s) = min(p(s)/q(s), 1),   C(s) = q(s)·[1 − (1 − m(s))^K],   D(s) = 1 − (1 − p(s))^K.
Sub-block acceptance (their Eq. 2), 1 ≤ |s| ≤ L−1:
    h(s) = [C(s) − Σ_x C(s·x)] / [D(s) − Σ_x C(s·x)];
full-block acceptance, |s| = L: h(s) = C(s)/D(s).
Residual after accepted prefix s, |s| < L (their Eq. 4): r_s(x) ∝ q(s·x)·[1 − m(s·x)^K].

Loop (their Algorithm 1): a = 0, S = ∅, H = {}.  For k = 1..K: for l = a+1..L−1 (range fixed when
draft k starts) with s = x^(k)_1..l not in H: if U < h(s) then S = s, a = l, else add s to H.  Then
if U < h(x^(k)): S = x^(k), a = L, stop.  After the loop y ~ r_S if a < L, else y ~ q(·|S).

Where a ratio leaves [0, 1] (possible: nothing in the rule keeps it there) the coin ``U < h`` is what
the released code computes, so h < 0 never passes and h > 1 always does; the raw h is in the trace.
A zero denominator (0/0) is taken as h = 1 as in BV's convention.
"""
from __future__ import annotations

import itertools
import math
from collections import defaultdict
from typing import Callable

import numpy as np

from core.data.coins import Coins
from core.data.distributions import residual
from core.data.outcome import Outcome, Trace
from core.data.nodes import Node
from core.data.token_tree import TokenTree
from core.rules.base import Verifier


def _m(p: np.ndarray | float, q: np.ndarray | float):
    """m = min(p/q, 1), with m = 1 where q = 0 (C is 0 there anyway)."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.where(q > 0, np.minimum(p / np.where(q > 0, q, 1.0), 1.0), 1.0)


def coverage(p_joint, q_joint, K: int):
    """C = q·[1 − (1 − m)^K] for joint probabilities (scalars or arrays)."""
    return np.asarray(q_joint) * (1.0 - (1.0 - _m(p_joint, q_joint)) ** K)


class GBVQuantities:
    """m, C, D, h and residuals at nodes, each computed once.

    Built from two callables node -> conditional (a draft block's dicts or toy models' ``cond``),
    so the sampled rule and the model-level exact law share one set of formulas.
    """

    def __init__(self, p_cond: Callable[[Node], np.ndarray], q_cond: Callable[[Node], np.ndarray],
                 K: int, L: int):
        self.p_cond, self.q_cond, self.K, self.L = p_cond, q_cond, K, L
        self._cache: dict[Node, dict[str, float]] = {}
        self._joint: dict[Node, tuple[float, float]] = {(): (1.0, 1.0)}

    def joint(self, s: Node) -> tuple[float, float]:
        """(p(s), q(s))."""
        out = self._joint.get(s)
        if out is None:
            ps, qs = self.joint(s[:-1])
            u, t = s[:-1], s[-1]
            out = self._joint[s] = (ps * float(self.p_cond(u)[t]), qs * float(self.q_cond(u)[t]))
        return out

    def at(self, s: Node) -> dict[str, float]:
        out = self._cache.get(s)
        if out is not None:
            return out
        K = self.K
        ps, qs = self.joint(s)
        m = float(_m(ps, qs))
        C = float(coverage(ps, qs, K))
        D = 1.0 - (1.0 - ps) ** K
        if len(s) == self.L:
            num, den = C, D
        else:
            children = float(coverage(ps * self.p_cond(s), qs * self.q_cond(s), K).sum())
            num, den = C - children, D - children
        h = 1.0 if den <= 0.0 else num / den
        out = self._cache[s] = {"m": m, "C": C, "D": D, "h": h}
        return out

    def residual_weights(self, s: Node) -> np.ndarray:
        """q(s·x)·[1 − m(s·x)^K], unnormalised."""
        ps, qs = self.joint(s)
        q_child = qs * self.q_cond(s)
        return q_child * (1.0 - _m(ps * self.p_cond(s), q_child) ** self.K)

    def falls_back(self, s: Node) -> bool:
        """Whether r_s has no positive mass, so that y is drawn from q(·|s) instead.

        The paper and its code leave r_s undefined when every child has m(s·x) = 1 (p ≥ q on every
        child, e.g. p = q); drawing from q(·|s) there is this project's choice, and the mass that
        takes it is reported (``SpecTrGBV.fallback_mass``), because the measured fidelity error
        depends on it."""
        return not float(np.maximum(self.residual_weights(s), 0.0).sum()) > 1e-300

    def residual(self, s: Node) -> np.ndarray:
        """r_s(x) ∝ q(s·x)·[1 − m(s·x)^K], or q(·|s) where that has no mass (``falls_back``)."""
        return residual(self.residual_weights(s), self.q_cond(s))


def gbv_stops(draft, target, K: int, L: int) -> tuple[GBVQuantities, dict[tuple[Node, bool], float], int]:
    """Exact P(S = s, full block?) of the released rule on toy models, by a dynamic programme over
    drafts.

    Drafts are i.i.d., so the loop's state after draft k — (a, S, the rejected sub-blocks deeper
    than a) — carries everything later drafts depend on: sub-blocks at depth ≤ a are never tested
    again because a only grows.  States reached by different draft histories merge, which avoids
    enumerating Ω^(K·L).  Returns the node quantities, the stop law and the number of states
    visited.
    """
    gbv = GBVQuantities(draft.cond, target.cond, K, L)
    paths = [(x, draft.joint(x)) for x in itertools.product(range(draft.V), repeat=L)]
    paths = [(x, w) for x, w in paths if w > 0]

    def passes(s: Node) -> float:
        return min(max(gbv.at(s)["h"], 0.0), 1.0)  # U < h with U ~ U[0, 1)

    states: dict[tuple, float] = {(0, (), frozenset()): 1.0}
    stops: dict[tuple[Node, bool], float] = defaultdict(float)   # (S, full block?) -> probability
    visited = 0
    for _ in range(K):
        nxt: dict[tuple, float] = defaultdict(float)
        for (a, S, H), weight in states.items():
            visited += 1
            for x, px in paths:
                branches = [(a, S, H, weight * px)]
                for l in range(a + 1, L):
                    s = x[:l]
                    if s in H:
                        continue
                    h = passes(s)
                    grown = []
                    for a2, S2, H2, pr in branches:
                        if h > 0.0:
                            grown.append((l, s, H2, pr * h))
                        if h < 1.0:
                            grown.append((a2, S2, H2 | {s}, pr * (1.0 - h)))
                    branches = grown
                h = passes(x)
                for a2, S2, H2, pr in branches:
                    if h > 0.0:
                        stops[(x, True)] += pr * h
                    if h < 1.0:
                        nxt[(a2, S2, frozenset(u for u in H2 if len(u) > a2))] += pr * (1.0 - h)
        states = nxt
    for (a, S, H), weight in states.items():
        stops[(S, False)] += weight
    return gbv, dict(stops), visited


def gbv_model_output_law(draft, target, K: int, L: int) -> tuple[dict[Node, float], int]:
    """Exact P(O = u): the stop law (``gbv_stops``) followed by y ~ r_S, or q(·|S) after a full
    block.  Returns the law and the number of states visited."""
    gbv, stops, visited = gbv_stops(draft, target, K, L)
    law: dict[Node, float] = defaultdict(float)
    for (S, full), prob in stops.items():
        dist = target.cond(S) if full else gbv.residual(S)
        for y in np.flatnonzero(dist > 0):
            law[S + (int(y),)] += prob * float(dist[y])
    return dict(law), visited


class SpecTrGBV(Verifier):
    name = "spectr_gbv"
    short = "SpecTr-GBV"
    label = "as released"
    color = "#d55e00"  # vermillion
    summary = ("K drafts with block-level acceptance probabilities built from C(s) = q(s)·[1 − (1 − m(s))^K], "
               "as released; its claims are measured on the Claims page.")
    source = "Lin, Sheng, Cai, Zhou 2026"
    single_draft = False
    order_invariant = False
    lossless_by_theory = False  # claimed by the paper given an unpublished Algorithm 2; measured here
    needs_models = False
    closed_form_tau = False
    how = ("**How SpecTr-GBV tests.** With joint probabilities p(s), q(s), m(s) = min(p(s)/q(s), 1), C(s) = "
           "q(s)·[1 − (1 − m(s))^K] and D(s) = 1 − (1 − p(s))^K: a full block passes with h = C/D, a sub-block s "
           "with h = [C(s) − Σ_y C(s·y)] / [D(s) − Σ_y C(s·y)] (the paper's Eq. 2; this rule is not lossless, as "
           "the toy laboratory measures). Each line gives the node's C and D.")

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:
        K, L = block.K, block.L
        gbv = block.memo.get("spectr_gbv")
        if gbv is None:
            gbv = block.memo["spectr_gbv"] = GBVQuantities(block.p.__getitem__, block.q.__getitem__, K, L)
        trace = Trace()
        a, S, S_draft = 0, (), -1
        H: set[Node] = set()

        def test(s: Node, k: int, kind: str) -> bool:
            q = gbv.at(s)
            trace.note(s, **q)
            return trace.test(s, k, q["h"], coins.bernoulli(q["h"]), kind)

        for k in range(K):
            x = block.draft(k)
            for l in range(a + 1, L):  # range fixed when draft k starts, as in the released code
                s = x[:l]
                if s in H:
                    continue
                if test(s, k, "sub-block"):
                    S, S_draft, a = s, k, l
                else:
                    H.add(s)
            if test(x, k, "full-block"):
                return Outcome(x, k, block.q[x], trace)
        if gbv.falls_back(S):
            trace.note(S, residual_fallback=True)
        return Outcome(S, S_draft, gbv.residual(S), trace)

    def model_output_law(self, draft, target, K: int, L: int) -> tuple[dict[Node, float], int]:
        """Exact output law on toy models without enumerating Ω^(K·L) (see ``gbv_model_output_law``)."""
        return gbv_model_output_law(draft, target, K, L)

    def fallback_mass(self, draft, target, K: int, L: int) -> float:
        """P(y is drawn from q(·|S) because r_S has no positive mass) (``GBVQuantities.falls_back``)."""
        gbv, stops, _ = gbv_stops(draft, target, K, L)
        return float(sum(prob for (S, full), prob in stops.items() if not full and gbv.falls_back(S)))

    @staticmethod
    def model_law_cost(V: int, K: int, L: int) -> float:
        """Seconds, roughly: states are bounded by multisets of earlier drafts' paths, each
        meeting V^L next drafts with up to 2^(L−1) coin branches."""
        paths = V ** L
        return 2e-7 * paths * math.comb(paths + K - 2, K - 1) * 2 ** (L - 1) + 1e-4 * paths
