"""Khisti et al., "Multi-draft speculative sampling: canonical architectures and theoretical limits"
(ICLR 2025, arXiv 2410.18234): (§3, Theorem 1) the optimal token-level scheme decomposes into two
steps, an importance-sampling selection of one of the K drafted tokens and then single-draft
speculative sampling of the selected token against q; (§4, Theorem 3) for two identical drafts the
optimal acceptance is
    α*(p, q) = min_(S⊆Ω) [ Σ_(s∈S) q(s) + (Σ_(s∉S) p(s))² + 2·(Σ_(s∈S) p(s))·(Σ_(s∉S) p(s)) ]
(the paper writes p for the target and q for the draft; here p is the draft).

*The two-step optimum, computed.*  A selection rule picks y from the drafted multiset m with
probability σ(m, y) (Σ_(y∈m) σ(m, y) = 1); the selected token has law r(y) = Σ_m P(m)·σ(m, y), and
speculative sampling of r against q accepts Σ_y min(r(y), q(y)).  The best selection is the LP
max Σ_y t_y subject to t_y ≤ q(y), t_y ≤ Σ_m P(m)·σ(m, y), σ ≥ 0, Σ_(y∈m) σ(m, y) = 1, solved here
over the multisets m of K draws (HiGHS), and compared with the optimal-verifier LP
(``core.bounds.lp_optimum``) and with the closed form above, evaluated over all 2^V sets S.
"""
from __future__ import annotations

import itertools

import numpy as np

from core import bounds
from core.analysis.exact import LOSSLESS_TOL
from core.claims.base import Claim, Family, Instance, Source, Trial, trial_check

SOURCE = Source("khisti-2025", "Khisti et al., Multi-draft speculative sampling: canonical architectures "
                "and theoretical limits (ICLR 2025)", "arXiv 2410.18234, §3-§4",
                "https://arxiv.org/abs/2410.18234")


def two_step_optimum(p, q, K: int) -> float:
    """max over selection rules σ of Σ_y min(r(y), q(y)) (module docstring), by linear programming."""
    from scipy.optimize import linprog

    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    V = p.size
    sets = bounds.enumerate_multisets(V, K)
    probs = bounds.multiset_probabilities(sets, p)
    pairs = [(i, y) for i, m in enumerate(sets) for y in sorted(set(int(t) for t in m))]
    n_sigma = len(pairs)
    c = np.concatenate([np.zeros(n_sigma), -np.ones(V)])            # maximise Σ t_y
    A_ub = np.zeros((V, n_sigma + V))                                # t_y − Σ_m P(m) σ(m, y) ≤ 0
    for j, (i, y) in enumerate(pairs):
        A_ub[y, j] = -probs[i]
    A_ub[np.arange(V), n_sigma + np.arange(V)] = 1.0
    A_eq = np.zeros((len(sets), n_sigma + V))
    for j, (i, _) in enumerate(pairs):
        A_eq[i, j] = 1.0
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(V), A_eq=A_eq, b_eq=np.ones(len(sets)),
                  bounds=[(0, None)] * n_sigma + [(0, float(qy)) for qy in q], method="highs")
    if res.status != 0:
        raise bounds.LPFailed(f"the two-step selection LP failed: {res.message}")
    return float(-res.fun)


def two_draft_closed_form(p, q) -> float:
    """Theorem 3's α* for two identical drafts, minimised over every set S ⊆ Ω (module docstring)."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    best = np.inf
    for mask in itertools.product((False, True), repeat=p.size):
        s = np.asarray(mask)
        ps, pc = p[s].sum(), p[~s].sum()
        best = min(best, q[s].sum() + pc ** 2 + 2 * ps * pc)
    return float(best)


def two_step_trial(draft, target, K: int, L: int) -> Trial:
    """The best two-step scheme against the optimal-verifier LP at L = 1."""
    p, q = draft.cond(()), target.cond(())
    two = two_step_optimum(p, q, K)
    lp = float(bounds.lp_optimum(draft, target, K, 1).value)
    return Trial(abs(two - lp) <= LOSSLESS_TOL, LOSSLESS_TOL - abs(two - lp),
                 {"two_step_optimum": two, "lp_optimum": lp, "difference": two - lp})


def closed_form_trial(draft, target, K: int, L: int) -> Trial:
    """Theorem 3's closed form for two identical drafts against the LP at K = 2, L = 1."""
    closed = two_draft_closed_form(draft.cond(()), target.cond(()))
    lp = float(bounds.lp_optimum(draft, target, 2, 1).value)
    return Trial(abs(closed - lp) <= LOSSLESS_TOL, LOSSLESS_TOL - abs(closed - lp),
                 {"closed_form": closed, "lp_optimum": lp, "difference": closed - lp})



METHODS = ("specinfer", "spectr", "lp_optimal")
CLAIMS = (
    Claim("two-step-optimal", SOURCE,
          "Importance-sampling selection of one draft followed by single-draft speculative sampling attains "
          "the optimal acceptance with K = 2 drafts.",
          "The best two-step scheme (its own LP over selection rules) against the optimal-verifier LP, "
          "K = 2, L = 1, on the three-token toy.",
          instance=Instance(2, 1, preset="three-token-toy", methods=METHODS), check=trial_check(two_step_trial)),
    Claim("two-step-optimal-family", SOURCE,
          "The two-step scheme is optimal on every instance.",
          "As above on each seeded instance, K = 2 and 3, V = 2..4.",
          family=Family(("iid", "markov"), Vs=(2, 3, 4), Ks=(2, 3), Ls=(1,), n=3), trial=two_step_trial,
          methods=METHODS),
    Claim("two-draft-closed-form", SOURCE,
          "For two identical drafts the optimal acceptance is Theorem 3's minimum over token sets.",
          "Theorem 3's expression over all 2^V sets against the LP at K = 2, L = 1, on each seeded instance.",
          family=Family(("iid", "markov"), Vs=(2, 3, 4), Ks=(2,), Ls=(1,), n=4), trial=closed_form_trial,
          methods=METHODS),
)
