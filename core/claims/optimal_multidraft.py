"""Hu et al., "Towards optimal multi-draft speculative decoding" (ICLR 2025, arXiv 2502.18779):
the optimal acceptance rate of one token with K i.i.d. drafts has the closed form
α* = min_(A⊆Ω) [q(A) + 1 − p(A)^K] (§3; the project's ``core.bounds.single_token_optimum``), and
drafting without replacement raises the optimum above i.i.d. drafting (§4).

The closed form is checked against the optimal-verifier LP at L = 1 (``core.bounds.lp_optimum``),
an independent computation; the two drafting schemes against each other by the own-law LP of a
token tree (``core.bounds.tree_lp_optimum``, K chains of length 1 drafted ``wor`` or ``iid``).
"""
from __future__ import annotations

from core import bounds
from core.analysis.exact import LOSSLESS_TOL
from core.claims.base import Claim, Family, Instance, Source, Trial, trial_check
from core.data.laws import IID_LAW, WOR_LAW
from core.data.shapes import Shape

SOURCE = Source("hu-2025", "Hu et al., Towards optimal multi-draft speculative decoding (ICLR 2025)",
                "arXiv 2502.18779, §3-§4", "https://arxiv.org/abs/2502.18779")


def closed_form_trial(draft, target, K: int, L: int) -> Trial:
    """α* by the closed form against the LP optimum at L = 1."""
    closed = bounds.single_token_optimum(draft.cond(()), target.cond(()), K)
    lp = float(bounds.lp_optimum(draft, target, K, 1).value)
    return Trial(abs(closed - lp) <= LOSSLESS_TOL, LOSSLESS_TOL - abs(closed - lp),
                 {"closed_form": closed, "lp_optimum": lp, "difference": closed - lp})


def wor_trial(draft, target, K: int, L: int) -> Trial:
    """The optimal acceptance of K drafts of one token drawn without replacement against i.i.d."""
    shape = Shape.chains_of(K, 1)
    wor = float(bounds.tree_lp_optimum(draft, target, shape, WOR_LAW).value)
    iid = float(bounds.tree_lp_optimum(draft, target, shape, IID_LAW).value)
    return Trial(wor >= iid - LOSSLESS_TOL, wor - iid, {"wor_optimum": wor, "iid_optimum": iid, "gain": wor - iid})



CLAIMS = (
    Claim("closed-form", SOURCE,
          "The optimal acceptance of K i.i.d. drafts is min over token sets A of q(A) + 1 − p(A)^K.",
          "The closed form against the optimal-verifier LP at L = 1, K = 2, on the binary toy.",
          instance=Instance(2, 1, preset="binary-toy", methods=("specinfer", "spectr", "lp_optimal")),
          check=trial_check(closed_form_trial)),
    Claim("closed-form-family", SOURCE,
          "The closed form equals the optimal acceptance on every instance.",
          "The closed form against the LP at L = 1 on each seeded instance, K = 2 and 3.",
          family=Family(("iid", "markov"), Vs=(2, 3, 4), Ks=(2, 3), Ls=(1,), n=3), trial=closed_form_trial,
          methods=("specinfer", "spectr", "lp_optimal")),
    Claim("wor-beats-iid", SOURCE,
          "At the optimum, drafting without replacement accepts at least as much as i.i.d. drafting.",
          "The own-law LP of K = 2 drafts of one token, drawn wor and iid, on each seeded instance (V = 3, 4).",
          family=Family(("iid", "markov"), Vs=(3, 4), Ks=(2, 3), Ls=(1,), n=3), trial=wor_trial,
          opens=lambda K, L: {"page": "trees", "b": (K,), "law": WOR_LAW.name}),
)
