"""The law p* of the draft a selection rule picks, for any selection score (docs/maths.md,
"Best-of-K + BV"; docs/your_rule.md, "A selection rule").

A selection rule draws K i.i.d. drafts x^(1..K) ~ p, keeps the one with the highest score (the first
among equal scores) and verifies it alone.  The kept draft is not distributed as p: verifying it
against p is lossy, against its own law p* lossless (block verification is lossless for any draft
law it is handed).  With the paths of Ω^L ordered by score, A(x) the p-mass of the paths scoring
above x and E(x) that of the paths scoring as x does (x among them),

    P*(x) = p(x)/E(x) · [(1 − A(x))^K − (1 − A(x) − E(x))^K],

since the best score among the drafts is x's with the probability in brackets, and then, the drafts
being exchangeable, the first of them with that score is any path of its class in proportion to p.
The conditionals along a path are p*(x_i | x_<i) = P*(x_≤i)/P*(x_<i), with P*(u) the mass of the
paths through u (p(·|u) where P*(u) = 0: the rule never gets there).

``SelectedDraftLaw(score, p_cond, q_cond, V, L, K)`` computes it for any ``score(path, p_cond,
q_cond)`` by enumerating Ω^L (toy models: a score may read any node, so the law needs the models,
and a rule using one sets ``needs_models``); ``verify_selected`` runs BV on the selected draft
against p*, and ``selected_output_law`` is the exact law of that rule without enumerating the draws.
The q/p ranking of best-of-K + BV (``RANK``) is the one score whose p* is known in closed form along
a path (``core.rules.best_of_k``): the helper uses it, so that rule runs on real models too.
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Callable

import numpy as np

from core.data.coins import Coins
from core.data.levels import law_from_levels, level_conditionals
from core.data.nodes import Node
from core.data.outcome import Outcome, Trace
from core.data.token_tree import TokenTree
from core.rules.base import VerifierError
from core.rules.block import block_output_levels, block_verify

#: A selection score: (path, p_cond, q_cond) → a number or a tuple; the highest is selected.
Score = Callable[[Node, Callable[[Node], np.ndarray], Callable[[Node], np.ndarray]], object]
#: The most paths V^L the general law enumerates.
MAX_PATHS = 100_000


# ------------------------------------------------------------------------------------------------
# The q/p ranking (best-of-K + BV, after Thomas & Pal 2026): at every node rank tokens by q/p
# descending (ties by token id; p = 0 ranks first), paths lexicographically by rank.  With
# F(u) = 1 − Σ_(j≤|u|) p(u_<j)·Σ_(t ranked above u_j) p(t|u_<j) (the chance that one draft is not
# better than u), the selected path extends u with probability P*(u) = F(u)^K − (F(u) − p(u))^K, and
# its conditionals are p*(x|u) = P*(u·x)/P*(u): only the rows along a path are needed.

def _ratios(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """q/p per token, +inf where p = 0 (those rank first).  The division runs on p > 0 only (a
    draft with a reduced vocabulary, like SmolLM2's, has p = 0 on most ids)."""
    r = np.full(p.shape, np.inf)
    pos = p > 0
    with np.errstate(over="ignore"):
        r[pos] = q[pos] / p[pos]
    return r


def rank_order(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Token ids from best to worst: q/p descending, p = 0 first, ties by token id; row by row for
    2-D arrays."""
    return order_by_key(-_ratios(p, q))


def order_by_key(key: np.ndarray) -> np.ndarray:
    """The permutation that sorts ``key`` ascending along its last axis, equal keys by index (what
    a stable sort gives), row by row (``_row_order``)."""
    flat = key.reshape(-1, key.shape[-1])
    order = np.empty(flat.shape, dtype=np.intp)
    for r, row in enumerate(flat):
        order[r] = _row_order(row)
    return order.reshape(key.shape)


def _row_order(key: np.ndarray) -> np.ndarray:
    """``order_by_key`` of one row.

    Keys of −∞ (ratio +∞: tokens the draft gives p = 0, 40960 of SmolLM2's 49152 ids, whose draft
    keeps 8192) come first in index order without being sorted; only the rest is sorted.  Numpy's
    default sort is several times faster than its stable sort and orders distinct keys exactly;
    real rows do have equal ratios (float32 logits make equal q/p likely), so the default order is
    kept and only the runs of equal keys are put in index order (``_order_ties``).
    """
    first = key == -np.inf
    if first.any():
        rest = np.flatnonzero(~first)
        return np.concatenate([np.flatnonzero(first), rest[_row_order(key[rest])]])
    order = np.argsort(key)
    ordered = key[order]
    tied = ordered[1:] == ordered[:-1]
    if tied.any():
        _order_ties(order, ordered, tied)
    return order


def _order_ties(order: np.ndarray, ordered: np.ndarray, tied: np.ndarray) -> None:
    """Within every run of equal keys of one sorted row, put the token ids in increasing order (in
    place).  ``tied[i]`` says that positions i and i + 1 hold equal keys.  The members of all runs
    are sorted at once by (run number, id), packed into one integer for numpy's fast sort of plain
    values."""
    member = np.zeros(order.size, dtype=bool)
    member[1:] |= tied
    member[:-1] |= tied
    at = np.flatnonzero(member)
    starts = np.ones(at.size, dtype=np.int64)     # a member not tied to the position before it
    starts[1:] = ~tied[at[1:] - 1]
    run = np.cumsum(starts)
    order[at] = np.sort(run * order.size + order[at]) % order.size


def mass_above(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """For each token x, Σ_(t ranked above x) p(t); row by row for 2-D arrays (one node per row)."""
    return mass_above_in_order(p, rank_order(p, q))


def mass_above_in_order(p: np.ndarray, order: np.ndarray) -> np.ndarray:
    """For each token x, Σ_(t before x in ``order``) p(t), summed in that order."""
    ranked = np.take_along_axis(p, order, axis=-1)
    above = np.empty_like(p)
    before = np.cumsum(ranked, axis=-1)[..., :-1]
    np.put_along_axis(above, order, np.concatenate([np.zeros_like(ranked[..., :1]), before], axis=-1),
                      axis=-1)
    return above


def select_best(block: TokenTree) -> int:
    """Index of the lexicographically best draft (the first one among equals).

    Two drafts are compared at the first position where they differ, i.e. at a shared node u, by
    the rank of their tokens there; that needs two ratios, not a sort of the vocabulary.
    """
    def better(a: int, b: int) -> bool:
        x, y = block.draft(a), block.draft(b)
        for i in range(block.L):
            if x[i] != y[i]:
                u = x[:i]
                p, q = block.p[u], block.q[u]
                rx = np.inf if p[x[i]] <= 0 else q[x[i]] / p[x[i]]
                ry = np.inf if p[y[i]] <= 0 else q[y[i]] / p[y[i]]
                return rx > ry or (rx == ry and x[i] < y[i])
        return False

    best = 0
    for k in range(1, block.K):
        if better(k, best):
            best = k
    return best


def selected_mass(F, p_u, K: int):
    """P*(u) = F(u)^K − (F(u) − p(u))^K: the chance that the best of K i.i.d. drafts extends u."""
    return F ** K - np.maximum(F - p_u, 0.0) ** K


def mass_above_token(p: np.ndarray, ratios: np.ndarray, t: int) -> float:
    """Σ_(s ranked above t) p(s) for one token t, by comparison with t's ratio (``ratios`` = q/p,
    ``_ratios``): O(V), no sort."""
    r = ratios
    above = (r > r[t]) | ((r == r[t]) & (np.arange(r.size) < t))
    return float(p[above].sum())


class SelectedPathLaw(Sequence):
    """p*(·|u) for u = path_<i, i = 0..|path|−1: the law of the best of K i.i.d. drafts along one
    path, as a sequence of rows computed on first access.

    A row needs the ranking of the whole vocabulary at its node (a sort); the path's own
    probabilities p*(path_i|u) (``tokens``) and the recursion F(u·x) = F(u) − p(u)·Σ_(ranked above x)
    p(·|u) along the path need only comparisons with one token, so BV can decide after sorting just
    the rows its coins reach (``block_verify(..., complete=False)``).
    """

    def __init__(self, p_cond: Callable[[Node], np.ndarray], q_cond: Callable[[Node], np.ndarray],
                 path: Node, K: int):
        self.K = K
        self.p = [p_cond(path[:i]) for i in range(len(path))]
        # q/p once per node: the path's recursion compares with it, a row's sort orders by it
        self.ratios = [_ratios(p, q_cond(path[:i])) for i, p in enumerate(self.p)]
        self.F, self.p_u, self.tokens = [], [], []
        F, p_u = 1.0, 1.0
        for p, r, t in zip(self.p, self.ratios, path):
            self.F.append(F)
            self.p_u.append(p_u)
            F_t, p_t = F - p_u * mass_above_token(p, r, t), p_u * float(p[t])
            P_u = selected_mass(F, p_u, K)
            self.tokens.append(float(selected_mass(F_t, p_t, K) / P_u) if P_u > 0 else float(p[t]))
            F, p_u = F_t, p_t
        self._rows: dict[int, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self.p)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = range(len(self))[i]
        if i not in self._rows:
            self._rows[i] = self._row(i)
        return self._rows[i]

    def _row(self, i: int) -> np.ndarray:
        """p*(·|u) at u = path_<i, computed on the tokens with p(x|u) > 0 only where that is exact.

        Leaving out a token with p = 0 changes no sum of p in rank order (adding 0.0 is exact), and
        such a token has p*(x|u) = 0 when F(u·x) = F(u) − p(u)·above(x) ≥ 0 (``selected_rows``);
        rounding is monotone, so F(u) − p(u)·(Σ p) ≥ 0 guarantees that for all of them.
        Otherwise (never seen) the whole row is computed.
        """
        p, r, F, p_u = self.p[i], self.ratios[i], np.array([self.F[i]]), np.array([self.p_u[i]])
        on = np.flatnonzero(p > 0)
        p_on = p[on]
        order = order_by_key(-r[on])
        above = mass_above_in_order(p_on, order)
        last = order[-1]
        if F[0] - p_u[0] * (above[last] + p_on[last]) < 0:
            above = mass_above_in_order(p, order_by_key(-r))
            return selected_rows(F, p_u, p[None], above[None], self.K)[0][0]
        row = np.zeros_like(p)
        row[on] = selected_rows(F, p_u, p_on[None], above[None], self.K)[0][0]
        return row


def selected_rows(F: np.ndarray, p_u: np.ndarray, p: np.ndarray, above: np.ndarray, K: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(p*(·|u), F(u·x)) for a batch of nodes u (one per row; F(u), p(u) of shape (n,), p(·|u)
    and above(x) = Σ_(ranked above x) p(·|u) (``mass_above``) of shape (n, V)):
    F(u·x) = F(u) − p(u)·above(x) and p*(x|u) = P*(u·x)/P*(u), or p(x|u) where P*(u) = 0.

    P*(u·x) = F(u·x)^K − max(F(u·x) − p(u)·p(x|u), 0)^K is exactly 0 where p(x|u) = 0 and
    F(u·x) ≥ 0 (the same power twice), so the powers, the costly part, are taken elsewhere only
    (on SmolLM2's rows, 8192 of 49152 tokens).
    """
    F_child = F[:, None] - p_u[:, None] * above
    P_u = selected_mass(F, p_u, K)
    ok = P_u > 0
    joint = p_u[:, None] * p
    live = (p > 0) | (F_child < 0)
    P_child = np.zeros_like(F_child)
    P_child[live] = selected_mass(F_child[live], joint[live], K)
    rows = np.where(ok[:, None], P_child / np.where(ok, P_u, 1.0)[:, None], p)
    return rows, F_child


def best_of_k_levels(p_levels: list[np.ndarray], q_levels: list[np.ndarray], K: int
                     ) -> list[np.ndarray]:
    """p*(·|u) at every node of depths 0..len(p_levels)−1 (``core.data.levels`` order), one depth at a
    time (``selected_rows``)."""
    out = []
    F, p_u = np.ones(1), np.ones(1)
    for p, q in zip(p_levels, q_levels):
        rows, F_child = selected_rows(F, p_u, p, mass_above(p, q), K)
        out.append(rows)
        F, p_u = F_child.ravel(), (p_u[:, None] * p).ravel()
    return out


# ------------------------------------------------------------------------------------------------
# Any score

def rank_score(path: Node, p_cond, q_cond) -> tuple:
    """Best-of-K + BV's score: the path's tokens' ranks by q/p (descending, p = 0 first, ties by
    token id) node by node, compared lexicographically (a smaller rank is better, hence negated)."""
    ranks = []
    for i, token in enumerate(path):
        order = rank_order(p_cond(path[:i]), q_cond(path[:i]))
        ranks.append(-int(np.flatnonzero(order == token)[0]))
    return tuple(ranks)


#: The q/p ranking of best-of-K + BV, the score with a closed form (module docstring).
RANK: Score = rank_score


class SelectedDraftLaw:
    """p* of the best of K i.i.d. drafts by ``score`` (module docstring), from the conditionals of the
    draft and target models (``p_cond``, ``q_cond``: node → distribution over V tokens), drafts of
    length L."""

    def __init__(self, score: Score, p_cond: Callable[[Node], np.ndarray], q_cond: Callable[[Node], np.ndarray],
                 V: int, L: int, K: int):
        self.score, self.p_cond, self.q_cond, self.V, self.L, self.K = score, p_cond, q_cond, V, L, K
        self._mass: np.ndarray | None = None

    @property
    def closed_form(self) -> bool:
        """Whether p* along a path is known without enumerating Ω^L (the q/p ranking, ``RANK``)."""
        return self.score is RANK

    def select(self, block: TokenTree) -> int:
        """The index of the draft with the highest score, the first among equals."""
        if self.closed_form:
            return select_best(block)
        scores = [self.score(block.draft(k), self.p_cond, self.q_cond) for k in range(block.K)]
        return max(range(block.K), key=lambda k: (scores[k], -k))

    def masses(self) -> np.ndarray:
        """P*(x) for every path x ∈ Ω^L, shape (V,)*L in lexicographic order."""
        if self._mass is None:
            self._mass = self._path_masses()
        return self._mass

    def _path_masses(self) -> np.ndarray:
        V, L, K = self.V, self.L, self.K
        if V ** L > MAX_PATHS:
            raise VerifierError(f"the selected-draft law enumerates V^L = {V ** L:,} paths (limit "
                                f"{MAX_PATHS:,}); lower V or L")
        paths, probs, scores = [], [], []
        for path in itertools.product(range(V), repeat=L):
            prob = 1.0
            for i, token in enumerate(path):
                prob *= float(self.p_cond(path[:i])[token])
            if prob > 0:
                paths.append(path)
                probs.append(prob)
                scores.append(self.score(path, self.p_cond, self.q_cond))
        mass = np.zeros((V,) * L)
        order = sorted(range(len(paths)), key=lambda j: scores[j], reverse=True)
        above = 0.0
        for _, group in itertools.groupby(order, key=lambda j: scores[j]):
            group = list(group)
            equal = sum(probs[j] for j in group)
            best = (1.0 - above) ** K - max(1.0 - above - equal, 0.0) ** K
            for j in group:
                mass[paths[j]] = probs[j] / equal * best
            above += equal
        return mass

    def levels(self) -> list[np.ndarray]:
        """p*(·|u) at every node of depths 0..L−1, one array (V^d, V) per depth in the order of
        ``core.data.levels``: what BV's node recursion reads (``selected_output_law``)."""
        if self.closed_form:
            return best_of_k_levels(self._conditionals(self.p_cond, self.L - 1),
                                    self._conditionals(self.q_cond, self.L - 1), self.K)
        mass, V, out = self.masses(), self.V, []
        joints = [mass.sum(axis=tuple(range(d, self.L))) for d in range(self.L + 1)]
        p_levels = self._conditionals(self.p_cond, self.L - 1)
        for d in range(self.L):
            parent = np.asarray(joints[d], dtype=np.float64).reshape(V ** d)
            child = np.asarray(joints[d + 1], dtype=np.float64).reshape(V ** d, V)
            ok = parent > 0
            out.append(np.where(ok[:, None], child / np.where(ok, parent, 1.0)[:, None], p_levels[d]))
        return out

    def _conditionals(self, cond, depth: int) -> list[np.ndarray]:
        """The conditionals of a model at depths 0..depth (``level_conditionals``' layout)."""
        return level_conditionals(SimpleNamespace(V=self.V, cond=cond), depth)

    def path_rows(self, path: Node) -> Sequence[np.ndarray]:
        """p*(·|path_<i) for i = 0..|path|−1, with ``.tokens`` = p*(path_i|path_<i) where known in
        closed form (the q/p ranking's rows are computed on first access, ``SelectedPathLaw``)."""
        if self.closed_form:
            return SelectedPathLaw(self.p_cond, self.q_cond, path, self.K)
        mass = self.masses()
        rows = []
        for i in range(len(path)):
            below = np.asarray(mass[path[:i]], dtype=np.float64).reshape(self.V, -1).sum(axis=1)
            parent = float(below.sum())
            rows.append(below / parent if parent > 0 else self.p_cond(path[:i]))
        return rows


def verify_selected(law: SelectedDraftLaw, block: TokenTree, coins: Coins, complete: bool = True) -> Outcome:
    """Block verification of the draft ``law`` selects, against its own law p*: lossless whatever
    the score.  The trace notes the selected draft and p* of each of its tokens."""
    k = law.select(block)
    x = block.draft(k)
    nodes = [x[:i] for i in range(block.L + 1)]
    p_star = law.path_rows(x)
    tokens = getattr(p_star, "tokens", None) or [float(row[t]) for row, t in zip(p_star, x)]
    trace = Trace()
    trace.note((), selected_draft=k)
    for i, prob in enumerate(tokens):
        trace.note(nodes[i + 1], p_star=prob)
    tau, dist = block_verify(x, p_star, [block.q[u] for u in nodes], coins, trace, nodes, k,
                             p_tokens=tokens, complete=complete)
    return Outcome(x[:tau], k if tau else -1, dist, trace)


def selected_output_law(law: SelectedDraftLaw, target) -> tuple[dict[Node, float], int]:
    """The exact output law of ``verify_selected`` on toy models (BV's node recursion with p* as the
    draft law, ``block_output_levels``), and the number of nodes it visits."""
    q_levels = level_conditionals(target, law.L)
    out = law_from_levels(block_output_levels(law.levels(), q_levels), target.V)
    return out, sum(target.V ** d for d in range(law.L + 1))
