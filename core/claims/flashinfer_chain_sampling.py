"""FlashInfer's ``chain_speculative_sampling`` (``ChainSpeculativeSampling`` in
``include/flashinfer/sampling.cuh``; the rule ``core.rules.flashinfer_chain``): the standard rule, a
control.  Its output law is measured against q and against SD's, coin for coin in the tests
(tests/test_engine_ports.py) and law for law here.
"""
from __future__ import annotations

from core.analysis.exact import LOSSLESS_TOL, exact_analysis
from core.claims.base import Claim, Family, Instance, Source, Trial, lossless_trial, trial_check

SOURCE = Source("flashinfer", "FlashInfer, chain speculative sampling (released kernel)",
                "github.com/flashinfer-ai/flashinfer, include/flashinfer/sampling.cuh at fb28d72",
                "https://github.com/flashinfer-ai/flashinfer/blob/main/include/flashinfer/sampling.cuh", group="engines")
RULE = "flashinfer_chain"
METHODS = (RULE, "sd")
FAMILY = Family(("iid", "markov", "table"), Vs=(2, 3), Ks=(1,), Ls=(2, 3), n=3)


def same_law_as_sd(draft, target, K: int, L: int) -> Trial:
    """The largest difference between its output law and SD's on the same drafts (and both E[τ])."""
    ours, sd = exact_analysis(RULE, draft, target, K, L), exact_analysis("sd", draft, target, K, L)
    keys = set(ours.output_law) | set(sd.output_law)
    gap = max(abs(ours.output_law.get(u, 0.0) - sd.output_law.get(u, 0.0)) for u in keys)
    return Trial(gap <= LOSSLESS_TOL, LOSSLESS_TOL - gap,
                 {RULE: ours.expected_accepted, "sd": sd.expected_accepted, "law_tv": gap})


CLAIMS = (
    Claim("lossless", SOURCE, "Chain speculative sampling keeps the target's distribution.",
          "The TV from q of its completed output law on one draft of two tokens on the binary toy; SD's E[τ] beside.",
          instance=Instance(1, 2, preset="binary-toy", methods=METHODS), check=trial_check(lossless_trial(RULE))),
    Claim("lossless-family", SOURCE, "Chain speculative sampling keeps the target's distribution on every instance.",
          "Its TV from q on each seeded instance, one draft, L ∈ {2, 3}; the worst (largest) TV.",
          family=FAMILY, trial=lossless_trial(RULE), methods=METHODS),
    Claim("same-as-sd-family", SOURCE, "Its output law is token-level speculative sampling's (SD) on every instance.",
          "The largest difference between its exact output law and SD's on each seeded instance; both E[τ].",
          family=FAMILY, trial=same_law_as_sd, methods=METHODS),
)
