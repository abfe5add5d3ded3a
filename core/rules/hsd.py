"""Hierarchical Speculative Decoding (Zhou et al., arXiv 2601.05724, ICLR 2026) as released, a *lossy*
reference rule measured exactly (docs/maths.md, "Hierarchical speculative decoding (`hsd`)").

Notation as in this project: p = draft, q = target (the released code names them the other way
round).  For one draft x = x_1..x_L and a prefix length j, D(j) = p(x_≤j) and T(j) = q(x_≤j) are
joint probabilities.  One *round* verifies a draft from position n with start masses D(n), T(n)
(1 and 1 at n = 0) and rows j = n..L−1:

    A(j) = T(j) / max(1, max_(n≤i≤j) T(i)/D(i))       the capped prefix mass ("transformers")
    A(j) = min(T(j), D(j))                            ("algorithm_clean")
    d_j(v) = A(j)·q(v|x_≤j) − D(j)·p(v|x_≤j),   r_j = (d_j)₊ / max(Σ(d_j)₊, Σ(d_j)₋)
    step-back probability b_j = 1 − Σ_v r_j(v)

Each row tosses its own coin (steps back with probability b_j); the stop position is the deepest row
that does not step back.  The whole block is accepted with probability min(1, Π_(n≤j<L) q(x_(j+1)|·)/
p(x_(j+1)|·)); otherwise the prefix up to the stop position is accepted and the extra token is drawn
from r at that row (normalised); after a full block it is the bonus y ~ q(·|x).

The two released versions (ported line by line, ``VARIANTS``):

* ``transformers`` — ``_speculative_sampling(backward=True)`` in ``transformers/generation/utils.py``
  of ZhouYuxuanYX/Hierarchical-Speculative-Decoding at f3adf7f (2025-10-15), the code the README's
  HSD ("clever") and multi-draft scripts run; at HEAD b8575e2 (2026-04-14) the same rule is
  vectorised (``torch.cummax``) in lines that mix tabs and spaces (since 3b1ae00), so that file no
  longer compiles (TabError).  When every row steps back the stop position is 0.  With K ≥ 2 ("parallel"
  multi-draft, recursive rejection over drafts): draft b is verified next iff its first n tokens equal
  the accepted prefix, from position n, with q(·|x_≤n) replaced by the previous round's r at the stop
  row (normalised), T(n) and D(n) carried over from that round, and the acceptance ratio taken over
  positions n..L−1 only; the extra token is drawn from the last verified round's r.
* ``algorithm_clean`` — ``algorithm_clean.py`` with ``HSD=True`` at 8974510 (2025-08-11; deleted at
  177c8a5): single draft (draft 0 whatever K is), the uncapped A = min(T, D), b_j set to 0 where
  T(j+1)/D(j+1) ≥ 1, a stop at row L−1 when every row steps back, and where r at the stop row has no
  mass the next draft token is accepted with no extra token (recorded here as s = x_≤n, y = x_(n+1)
  drawn with probability 1: the same output, the same tokens per target call).

Neither version carries state from one iteration to the next (``hist_lengths`` is reset to [0] every
iteration and only its first element is read), so one iteration's output law is the whole story.
Where r at the stop row has no mass in ``transformers`` (0/0: NaN, which ``torch.multinomial``
refuses), the extra token is drawn from q(·|s) instead, this project's choice, reported as the
fallback mass (``HSD.fallback_mass``).
"""
from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Callable, ClassVar

import numpy as np

from core.data.coins import Coins, enumerate_outcomes
from core.data.outcome import Outcome, Trace
from core.data.nodes import Node
from core.data.token_tree import TokenTree
from core.rules.base import Verifier
from core.rules.params import Param

#: A conditional: node -> next-token law.
Cond = Callable[[Node], np.ndarray]

#: The released versions: the current one first (the default), then the earlier standalone file.
VARIANTS = ("transformers", "algorithm_clean")


def _rows(A: np.ndarray, D: np.ndarray, q_rows: np.ndarray, p_rows: np.ndarray, nan_to_zero: bool):
    """(r_j, b_j) for every row: d = A·q − D·p, r = d₊/max(Σd₊, Σd₋), b = 1 − Σr.  A 0/0 row is NaN
    as in ``transformers`` (torch without ``nan_to_num``), or 0 as in ``algorithm_clean``."""
    diffs = A[:, None] * q_rows - D[:, None] * p_rows
    plus, minus = np.maximum(diffs, 0.0), np.maximum(-diffs, 0.0)
    den = np.maximum(plus.sum(axis=1), minus.sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = plus / den[:, None]
    if nan_to_zero:
        r = np.nan_to_num(r)
    return r, 1.0 - r.sum(axis=1)


class HSD(Verifier):
    """Hierarchical speculative decoding as released: step back from the deepest row whose coin says
    stay, accept the whole draft with probability min(1, q(x)/p(x))."""

    name = "hsd"
    short = "HSD"
    label = "hierarchical speculative decoding, as released"
    color = "#9922ff"  # violet
    summary = ("Accept the whole draft with probability min(1, q(x)/p(x)); otherwise step back to the "
               "deepest position whose coin keeps it and draw a correction from the capped joint "
               "residual there, as released.")
    source = ("Zhou et al. 2026, Hierarchical Speculative Decoding (arXiv 2601.05724, ICLR 2026), as "
              "released in ZhouYuxuanYX/Hierarchical-Speculative-Decoding: "
              "transformers/generation/utils.py at f3adf7f, algorithm_clean.py at 8974510")
    single_draft = False
    order_invariant = False
    lossless_by_theory = False  # claimed by the paper; measured here
    needs_models = False
    closed_form_tau = False
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("variant", str, VARIANTS[0], "the released version (default transformers: the repository's "
              "transformers/generation/utils.py)", choices=VARIANTS),
    )
    released_port = True

    def __init__(self, variant: str = VARIANTS[0]):
        self.variant = self.parameters[0].check(variant)

    def _round(self, x: Node, k: int, q_cond: Cond, p_cond: Cond, n: int, D0: float, T0: float,
               row0: np.ndarray | None, coins: Coins, trace: Trace) -> tuple[int, np.ndarray, np.ndarray]:
        """One round on draft x (number k) from position n: (tokens accepted, r rows, T(j) for each
        row), reading the conditionals through ``q_cond`` and ``p_cond`` (node -> vector)."""
        clean = self.variant == "algorithm_clean"
        L = len(x)
        prefixes = [x[:j] for j in range(n, L)]
        q_rows = np.array([q_cond(u) for u in prefixes])
        p_rows = np.array([p_cond(u) for u in prefixes])
        if row0 is not None:
            total = row0.sum()
            q_rows[0] = row0 / (total if total != 0 else 1.0)
        qi = q_rows[np.arange(L - n), list(x[n:])]
        pi = p_rows[np.arange(L - n), list(x[n:])]
        D = D0 * np.concatenate(([1.0], np.cumprod(pi)[:-1]))
        T = T0 * np.concatenate(([1.0], np.cumprod(qi)[:-1]))
        if clean:
            A = np.minimum(T, D)
        else:
            with np.errstate(invalid="ignore", divide="ignore"):
                A = T / np.maximum.accumulate(np.maximum(T / D, 1.0))
        r, back = _rows(A, D, q_rows, p_rows, nan_to_zero=clean)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratios = np.cumprod(qi / pi)
        if clean:
            back = np.where(ratios >= 1.0, 0.0, back)
        stays = []
        for j, prob in enumerate(back):
            node = x[: n + j]
            trace.note(node, A=float(A[j]), D=float(D[j]), step_back=float(prob))
            prob = float(prob) if np.isfinite(prob) else 0.0     # U < NaN is False: the row stays
            stays.append(not coins.bernoulli(prob))
        if any(stays):
            stop = max(j for j, stay in enumerate(stays) if stay)
        else:
            stop = L - n - 1 if clean else 0
        accept = float(ratios[-1]) if np.isfinite(ratios[-1]) else 0.0
        if trace.test(x, k, min(accept, 1.0), coins.bernoulli(accept), "full-block"):
            return L - n, r, T
        return stop, r, T

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:
        trace = Trace()
        L = block.L
        drafts = 1 if self.variant == "algorithm_clean" else block.K
        n, k, row0, D0, T0 = 0, 0, None, 1.0, 1.0
        r = T = None
        cur = 0
        for b in range(drafts):
            if block.draft(b)[:n] != block.draft(k)[:n]:
                continue
            if b > 0:
                D0 = block.p_joint(block.draft(b)[:n])
                T0, row0 = float(T[cur]), r[cur]
            k = b
            cur, r, T = self._round(block.draft(k), k, block.q.__getitem__, block.p.__getitem__, n, D0, T0,
                                    row0, coins, trace)
            n += cur
            if n == L:
                break
        x = block.draft(k)
        if n == L:
            return Outcome(x, k, block.q[x], trace)
        s = x[:n]
        row = r[cur]
        total = float(row.sum())
        if total > 0:
            return Outcome(s, k if n else -1, row / total, trace)
        if self.variant == "algorithm_clean":      # no mass: accept x_(n+1), no extra token
            y = np.zeros(block.V)
            y[x[n]] = 1.0
            trace.note(s, next_draft_token=True)
            return Outcome(s, k if n else -1, y, trace)
        trace.note(s, residual_fallback=True)
        return Outcome(s, k if n else -1, block.q[s], trace)

    def _model_law(self, draft, target, K: int, L: int) -> tuple[dict[Node, float], float, int]:
        """Exact (output law, fallback mass, states visited) on toy models by a dynamic programme over
        drafts.  After a round the loop's future depends on the drafts so far only through
        (n, x_≤n, T at the stop row, r at the stop row) and, for ``algorithm_clean``, the next draft
        token; drafts are i.i.d., so states reached by different histories merge."""
        memo = getattr(self, "_memo", None)         # the last call's: fallback_mass follows the law
        if memo is not None and memo[0] is draft and memo[1] is target and memo[2:4] == (K, L):
            return memo[4]
        clean = self.variant == "algorithm_clean"
        paths = [(x, draft.joint(x)) for x in itertools.product(range(draft.V), repeat=L)]
        paths = [(x, w) for x, w in paths if w > 0]
        law: dict[Node, float] = defaultdict(float)
        # state: (n, s, T0, row0 as a tuple, next draft token or -1) or None before the first round
        states: dict[tuple | None, float] = {None: 1.0}
        visited = 0
        for _ in range(1 if clean else K):
            following: dict[tuple | None, float] = defaultdict(float)
            for state, weight in states.items():
                visited += 1
                for x, px in paths:
                    if state is None:
                        n, D0, T0, row0 = 0, 1.0, 1.0, None
                    else:
                        n, s, T0, row0, _ = state
                        if x[:n] != s:
                            following[state] += weight * px
                            continue
                        D0, row0 = draft.joint(s), np.array(row0)

                    def one_round(coins, x=x, n=n, D0=D0, T0=T0, row0=row0):
                        return self._round(x, 0, target.cond, draft.cond, n, D0, T0, row0, coins, Trace())
                    for prob, (cur, r, T) in enumerate_outcomes(one_round):
                        mass = weight * px * prob
                        if n + cur == L:
                            bonus = target.cond(x)
                            for y in np.flatnonzero(bonus > 0):
                                law[x + (int(y),)] += mass * float(bonus[y])
                        else:
                            nxt = x[n + cur] if clean else -1
                            following[(n + cur, x[:n + cur], float(T[cur]), tuple(r[cur]), nxt)] += mass
            states = following
        fallback = 0.0
        for (n, s, _, row0, nxt), weight in states.items():
            row = np.array(row0)
            total = float(row.sum())
            if total > 0:
                dist = row / total
            elif clean:
                dist = np.eye(draft.V)[nxt]
            else:
                dist, fallback = target.cond(s), fallback + weight
            for y in np.flatnonzero(dist > 0):
                law[s + (int(y),)] += weight * float(dist[y])
        self._memo = (draft, target, K, L, (dict(law), fallback, visited))
        return self._memo[4]

    def model_output_law(self, draft, target, K: int, L: int) -> tuple[dict[Node, float], int]:
        """Exact output law on toy models without enumerating Ω^(K·L) (``_model_law``; the tests check
        it against the coin-by-coin law of every draft tuple)."""
        law, _, visited = self._model_law(draft, target, K, L)
        return law, visited

    def fallback_mass(self, draft, target, K: int, L: int) -> float:
        """P(r at the stop row has no mass, so that y is drawn from q(·|s)) (``transformers`` only:
        ``algorithm_clean`` accepts the next draft token there, as released)."""
        return self._model_law(draft, target, K, L)[1]

    @staticmethod
    def model_law_cost(V: int, K: int, L: int) -> float:
        """Seconds, roughly: up to V^L states a round (the prefix and its draft), each meeting V^L
        next drafts with up to 2^L coin branches."""
        paths = V ** L
        return 3e-6 * paths * min(paths, 1 + (K - 1) * paths) * 2 ** L

    def __repr__(self) -> str:
        return f"<verifier hsd {self.variant}>"
