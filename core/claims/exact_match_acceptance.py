"""Exact-match acceptance at T > 0, the verifier llama.cpp (PR 27694) and mlx-swift-lm (PR 459) propose
to replace with rejection sampling: a draft token is accepted iff it equals the target's own sample,
and at the first mismatch that sample is emitted.  PR 459 argues the rule is biased toward the modes
both models agree on; the reason to replace it is that speculative sampling accepts more at the same
output law.  The rule is ``core.rules.exact_match`` (docs/maths.md, "Exact-match acceptance"), its
numbers ``core.analysis.released_ports.exact_match_numbers``.
"""
from __future__ import annotations

from core.analysis.exact import LOSSLESS_TOL
from core.analysis.released_ports import exact_match_numbers
from core.claims.base import Claim, Family, Instance, Source, beats_trial, holds, lossless_trial

SOURCE = Source("exact-match",
                "Exact-match acceptance at a positive temperature, as proposed for llama.cpp and mlx-swift-lm",
                "github.com/ggml-org/llama.cpp/pull/27694; github.com/ml-explore/mlx-swift-lm/pull/459",
                "https://github.com/ml-explore/mlx-swift-lm/pull/459")
RULE = "exact_match"
METHODS = (RULE, "sd", "bv")


def _numbers(inst: Instance) -> dict:
    draft, target = inst.models()
    return exact_match_numbers(inst.K, inst.L, inst.T, draft=draft, target=target)


def _lossless(inst: Instance):
    n = _numbers(inst)
    return holds(n["lossless"]), {"exact_match_tv": n["exact_match_tv"],
                                  "exact_match_expected_accepted": n["exact_match_expected_accepted"]}


def _sd_accepts_more(inst: Instance):
    """SD's exact E[τ] against exact match's on one draft, both lossless (exact match's TV beside)."""
    n = _numbers(inst)
    gain = n["sd_expected_accepted"] - n["exact_match_expected_accepted"]
    return holds(gain > LOSSLESS_TOL), {"sd_expected_accepted": n["sd_expected_accepted"],
                                        "exact_match_expected_accepted": n["exact_match_expected_accepted"],
                                        "gain": gain, "exact_match_tv": n["exact_match_tv"]}


TOY = dict(preset="binary-toy", methods=METHODS)
FAMILY = Family(("iid", "markov", "table"), Vs=(2, 3), Ks=(1,), Ls=(2, 3), n=4, T=0.7)
CLAIMS = (
    Claim("lossless", SOURCE, "Exact-match acceptance keeps the target's output law at T > 0.",
          "The TV of its completed output law from q at T = 1, K = 1, L = 2, on the binary toy.",
          instance=Instance(1, 2, **TOY), check=_lossless),
    Claim("lossless-family", SOURCE, "Exact-match acceptance is lossless at T > 0 on every instance.",
          "Its TV from q at T = 0.7 on each seeded instance, K = 1, L ∈ {2, 3}; the worst (largest) TV.",
          family=FAMILY, trial=lossless_trial(RULE), methods=METHODS),
    Claim("sd-accepts-more", SOURCE, "Speculative sampling accepts more tokens than exact-match acceptance at T > 0.",
          "Both exact E[τ] on one draft at T = 1, L = 2, on the binary toy (Σ min(p, q) against Σ p·q per token).",
          instance=Instance(1, 2, **TOY), check=_sd_accepts_more),
    Claim("sd-accepts-more-family", SOURCE, "Speculative sampling never accepts less than exact-match acceptance.",
          "Both exact E[τ] at T = 0.7 on each seeded instance, K = 1, L ∈ {2, 3}; the smallest gain.",
          family=FAMILY, trial=beats_trial("sd", RULE), methods=METHODS),
)
