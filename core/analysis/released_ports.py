"""The numbers behind the claims about three released verifiers (docs/maths.md, "Hierarchical
speculative decoding", "EAGLE's sampling verification", "Exact-match acceptance"): small pure
functions a claims registry reads, each returning E[τ], TV and the comparison rule's E[τ] on one
instance, exactly (``core.analysis.exact``).
"""
from __future__ import annotations

from toy_models import PRESETS, ToyModel, random_pair

from core.analysis.compensation import compensate, iterate_exact
from core.analysis.exact import exact_analysis
from core.rules.eagle import Eagle
from core.rules.hsd import HSD


def _binary_toy(temperature: float = 1.0) -> tuple[ToyModel, ToyModel]:
    toy = PRESETS["binary-toy"]
    return toy.draft.with_temperature(temperature), toy.target.with_temperature(temperature)


def hsd_numbers(K: int = 1, L: int = 2, variant: str = "transformers",
                draft: ToyModel | None = None, target: ToyModel | None = None) -> dict:
    """HSD as released against BV: its E[τ] and TV (the claim "lossless" holds iff TV = 0), BV's
    E[τ] (the claim "higher block efficiency than BV"), and whether the loss can be repaired by
    compensating the next iteration's target (no over-emission, ``core.analysis.compensation``).
    Default instance: the binary toy."""
    if draft is None:
        draft, target = _binary_toy()
    hsd = exact_analysis(HSD(variant), draft, target, K, L)
    bv = exact_analysis("bv", draft, target, K, L)
    repair = compensate(hsd.output_law, target, L)
    return {"K": K, "L": L, "variant": variant,
            "hsd_expected_accepted": hsd.expected_accepted, "hsd_tv": hsd.fidelity_tv,
            "bv_expected_accepted": bv.expected_accepted,
            "lossless": hsd.is_lossless, "beats_bv": hsd.expected_accepted > bv.expected_accepted,
            "compensable": not repair.over_emission, "min_F": repair.min_F}


def hsd_family_numbers(seeds=range(20), V: int = 2, K: int = 1, L: int = 3,
                       variant: str = "transformers") -> dict:
    """HSD against BV over seeded Markov pairs (``random_pair("markov", V, alpha=0.5, mix=0.6)``):
    on how many it accepts more than BV and on how many it is lossy, and the instance where its gain
    over BV is smallest (the worst case for the claim "higher block efficiency than BV")."""
    rows = []
    for seed in seeds:
        draft, target = random_pair("markov", V=V, alpha=0.5, mix=0.6, seed=seed)
        hsd = exact_analysis(HSD(variant), draft, target, K, L)
        bv = exact_analysis("bv", draft, target, K, L)
        rows.append({"seed": seed, "gain": hsd.expected_accepted - bv.expected_accepted,
                     "tv": hsd.fidelity_tv, "lossless": hsd.is_lossless})
    return {"instances": len(rows), "V": V, "K": K, "L": L, "variant": variant,
            "beats_bv": sum(r["gain"] > 0 for r in rows), "lossy": sum(not r["lossless"] for r in rows),
            "worst": min(rows, key=lambda r: r["gain"])}


def hsd_stream_numbers(K: int = 1, L: int = 2, n: int = 3, variant: str = "transformers",
                       draft: ToyModel | None = None, target: ToyModel | None = None) -> dict:
    """The generated stream over n iterations, exactly (``iterate_exact``; default instance: the binary
    toy): the TV of its first n tokens as released (iterations carry no state, so this is the
    one-iteration loss seen in the stream), and, where the loss can be repaired by compensating each
    next iteration's target, the repaired stream's TV and tokens per target call against BV's."""
    if draft is None:
        draft, target = _binary_toy()
    plain = iterate_exact(HSD(variant), draft, target, K, L, n, compensate_target=False)
    repaired = iterate_exact(HSD(variant), draft, target, K, L, n, compensate_target=True)
    bv = iterate_exact("bv", draft, target, K, L, n, compensate_target=False)
    return {"K": K, "L": L, "n": n, "variant": variant, "stream_tv": plain.tv,
            "tokens_per_call": plain.tokens_per_iteration,
            "repairable": not repaired.over_emission, "repaired_tv": repaired.tv,
            "repaired_tokens_per_call": repaired.tokens_per_iteration,
            "bv_tokens_per_call": bv.tokens_per_iteration}


def eagle_numbers(release: str, temperature: float, K: int = 2, L: int = 2,
                  draft: ToyModel | None = None, target: ToyModel | None = None) -> dict:
    """EAGLE's sampling verification of one release at temperature T on K i.i.d. chains: E[τ] and TV
    (lossless iff TV = 0).  Default instance: the binary toy tempered at T; models given are taken
    as already tempered at T (the eagle2 release's bonus undoes the temperature)."""
    if draft is None:
        draft, target = _binary_toy(temperature)
    result = exact_analysis(Eagle(release, temperature), draft, target, K, L)
    return {"release": release, "temperature": temperature, "K": K, "L": L,
            "expected_accepted": result.expected_accepted, "tv": result.fidelity_tv,
            "lossless": result.is_lossless}


def exact_match_numbers(K: int = 1, L: int = 2, temperature: float = 1.0,
                        draft: ToyModel | None = None, target: ToyModel | None = None) -> dict:
    """Exact-match acceptance against speculative sampling: both E[τ], and the exact-match rule's TV
    (the claim "exact match changes the output law at T > 0" holds iff TV > 0).  Default instance:
    the binary toy tempered at T; models given are taken as already tempered."""
    if draft is None:
        draft, target = _binary_toy(temperature)
    match = exact_analysis("exact_match", draft, target, K, L)
    sd = exact_analysis("sd", draft, target, K, L)
    return {"K": K, "L": L, "temperature": temperature,
            "exact_match_expected_accepted": match.expected_accepted, "exact_match_tv": match.fidelity_tv,
            "sd_expected_accepted": sd.expected_accepted, "lossless": match.is_lossless}
