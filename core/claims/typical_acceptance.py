"""Medusa's typical acceptance (Cai et al., arXiv 2401.10774, §2.3.1; proposed for vLLM in
github.com/vllm-project/vllm/issues/5015): a lossy rule by design, which trades the output
distribution for a higher acceptance rate, and which is greedy decoding at T = 0.  The rule is
``core.rules.typical`` (ported from FasterDecoding/Medusa, docs/maths.md).
"""
from __future__ import annotations

from core.analysis.exact import LOSSLESS_TOL, exact_analysis
from core.claims.base import Claim, Family, Instance, Source, holds, lossless_trial

SOURCE = Source("medusa", "Cai et al., Medusa: typical acceptance; vLLM's request to adopt it",
                "arXiv 2401.10774, §2.3.1; github.com/vllm-project/vllm/issues/5015",
                "https://github.com/vllm-project/vllm/issues/5015")
RULE = "typical"
LOSSLESS = ("sd", "specinfer", "traversal")


def _lossy(inst: Instance):
    """Lossy by design: the claim holds when the completed output law is away from q."""
    r = exact_analysis(RULE, *inst.models(), inst.K, inst.L)
    return holds(not r.is_lossless), {"fidelity_tv": r.fidelity_tv, "expected_accepted": r.expected_accepted}


def _accepts_more(inst: Instance):
    """Typical acceptance's E[τ] against every lossless rule's on the same K drafts (SD on one)."""
    draft, target = inst.models()
    typ = exact_analysis(RULE, draft, target, inst.K, inst.L).expected_accepted
    others = {m: exact_analysis(m, draft, target, 1 if m == "sd" else inst.K, inst.L).expected_accepted
              for m in LOSSLESS}
    return holds(typ > max(others.values()) + LOSSLESS_TOL), {"typical": typ, **others}




TOY = dict(preset="three-token-toy", methods=(RULE, *LOSSLESS))
CLAIMS = (
    Claim("lossy", SOURCE, "Typical acceptance changes the output distribution at T > 0 (it is lossy by design).",
          "The TV of its completed output law from q, K = 2, L = 2, on the three-token toy.",
          instance=Instance(2, 2, **TOY), check=_lossy),
    Claim("accepts-more", SOURCE, "Typical acceptance accepts more tokens than rejection sampling.",
          "Its exact E[τ] against SD's, SpecInfer's and Traversal's on the same drafts, K = 2, L = 2, on the "
          "three-token toy.", instance=Instance(2, 2, **TOY), check=_accepts_more),
    Claim("greedy-lossless", SOURCE, "At T = 0 typical acceptance is greedy decoding, hence lossless.",
          "The TV from q at T = 0 (both models one-hot at their argmax), K = 2, L = 2, on each seeded instance "
          "(E[τ] is L where the argmaxes agree along the path, less where they part).",
          family=Family(("iid", "markov", "table"), Vs=(2, 3), Ks=(2,), Ls=(2,), n=4, T=0.0), trial=lossless_trial(RULE),
          methods=(RULE, *LOSSLESS)),
)
