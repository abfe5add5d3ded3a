"""Thomas & Pal, "Greedy multi-path block verification" (arXiv 2602.16961): block verification
is optimal among every single-path verifier, those that read off-path probabilities included, and
their greedy multi-path rule (the best of K drafts by q/p, then BV against the selected draft's law:
``best_of_k_bv``, reconstructed in docs/maths.md) gains over BV.

The LP (``core.bounds.lp_optimum``) at K = 1 optimises over every lossless verifier that sees one
drafted path and both models whole, so it is the best single-path verifier of any kind; BV's exact
E[τ] equal to it on an instance is the optimality claim there.
"""
from __future__ import annotations

from core import bounds
from core.analysis.exact import LOSSLESS_TOL, exact_analysis
from core.claims.base import Claim, Family, Instance, Source, Trial, trial_check

SOURCE = Source("greedy-multipath", "Thomas & Pal, Greedy multi-path block verification",
                "arXiv 2602.16961, §3-§4", "https://arxiv.org/abs/2602.16961")
BEST = "best_of_k_bv"


def bv_optimal_trial(draft, target, K: int, L: int) -> Trial:
    """BV's exact E[τ] at K = 1 against the LP optimum over every single-path lossless verifier."""
    lp = float(bounds.lp_optimum(draft, target, 1, L).value)
    bv = exact_analysis("bv", draft, target, 1, L).expected_accepted
    return Trial(abs(lp - bv) <= LOSSLESS_TOL, LOSSLESS_TOL - abs(lp - bv),
                 {"bv_expected_accepted": bv, "lp_optimum": lp, "gap": lp - bv})


def greedy_gain_trial(draft, target, K: int, L: int) -> Trial:
    """``best_of_k_bv`` at K drafts against BV on one; both lossless (TV checked)."""
    best = exact_analysis(BEST, draft, target, K, L)
    bv = exact_analysis("bv", draft, target, 1, L)
    gain = best.expected_accepted - bv.expected_accepted
    return Trial(gain >= -LOSSLESS_TOL and best.is_lossless, gain,
                 {"best_of_k_expected_accepted": best.expected_accepted, "bv_expected_accepted": bv.expected_accepted,
                  "gain": gain, "best_of_k_fidelity_tv": best.fidelity_tv})


CLAIMS = (
    Claim("bv-optimal-k1", SOURCE,
          "Block verification accepts as many tokens as the best single-path lossless verifier, even one "
          "that reads probabilities off the drafted path.",
          "BV's exact E[τ] at K = 1 against the optimal-verifier LP at K = 1, on the binary toy.",
          instance=Instance(1, 2, preset="binary-toy", methods=("sd", "bv", "lp_optimal")),
          check=trial_check(bv_optimal_trial)),
    Claim("bv-optimal-k1-family", SOURCE,
          "Block verification is optimal among single-path verifiers on every instance.",
          "BV's exact E[τ] at K = 1 against the LP at K = 1 on each seeded instance (sweep families).",
          family=Family(("iid", "markov", "table"), Vs=(2, 3), Ks=(1,), Ls=(2, 3), n=4),
          trial=bv_optimal_trial, methods=("sd", "bv", "lp_optimal")),
    Claim("greedy-gain", SOURCE,
          "Greedy multi-path block verification (the best of K drafts, then BV) accepts more than BV on one draft.",
          "best_of_k_bv's exact E[τ] with K = 2 drafts against BV's with one, on the binary toy.",
          instance=Instance(2, 2, preset="binary-toy", methods=("bv", BEST, "traversal")),
          check=trial_check(greedy_gain_trial)),
    Claim("greedy-gain-family", SOURCE,
          "Greedy multi-path block verification never accepts less than BV on one draft.",
          "best_of_k_bv at K = 2 and 3 against BV at K = 1 on each seeded instance; the worst gain.",
          family=Family(("iid", "markov"), Vs=(2, 3), Ks=(2, 3), Ls=(2,), n=4),
          trial=greedy_gain_trial, methods=("bv", BEST, "traversal")),
)
