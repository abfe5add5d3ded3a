"""Every claim, grouped by source: adding a source is one module with ``SOURCE`` and ``CLAIMS`` and
one line in ``MODULES``; adding a claim is one ``Claim`` in its module's ``CLAIMS`` (plus its test)."""
from __future__ import annotations

from core.claims import (canonical_decomposition, delayed_expansion, eagle_verification, exact_match_acceptance,
                         flashinfer_chain_sampling, greedy_multipath, hf_static_ensemble, hierarchical_speculative,
                         llamacpp_speculative, mismatched_draft, optimal_multidraft, sglang_rocm_verify,
                         sglang_tree_sampling, spectr_gbv, trtllm_tree_rejection, typical_acceptance, vllm_ascend,
                         vllm_verification)
from core.claims.base import Claim, Source
from core.errors import InvalidInput

#: One module per source, in the order pages and the command line list them: the papers' and trackers'
#: (group ``papers``), then the serving engines' released code (group ``engines``).
MODULES = (spectr_gbv, greedy_multipath, delayed_expansion, optimal_multidraft, canonical_decomposition,
           typical_acceptance, mismatched_draft, hierarchical_speculative, eagle_verification,
           exact_match_acceptance,
           trtllm_tree_rejection, sglang_tree_sampling, sglang_rocm_verify, llamacpp_speculative,
           flashinfer_chain_sampling, vllm_verification, vllm_ascend, hf_static_ensemble)

SOURCES: dict[str, Source] = {m.SOURCE.id: m.SOURCE for m in MODULES}
CLAIMS: tuple[Claim, ...] = tuple(c for m in MODULES for c in m.CLAIMS)


def claims_of(source: str | None = None) -> tuple[Claim, ...]:
    """Every claim, or those of one source (its id); an unknown id is one sentence."""
    if source is None:
        return CLAIMS
    if source not in SOURCES:
        raise InvalidInput(f"unknown source {source!r}; choose one of {', '.join(SOURCES)}")
    return tuple(c for c in CLAIMS if c.source.id == source)


def get_claim(key: str) -> Claim:
    """A claim by its ``source/id`` key."""
    for c in CLAIMS:
        if c.key == key:
            return c
    raise InvalidInput(f"unknown claim {key!r}")


def _unique() -> None:
    keys = [c.key for c in CLAIMS]
    dup = {k for k in keys if keys.count(k) > 1}
    if dup:
        raise ValueError(f"claims registered twice: {sorted(dup)}")


_unique()
