"""Hierarchical speculative decoding (Zhou et al., arXiv 2601.05724, ICLR 2026): the paper claims HSD
is lossless and has a higher block efficiency than block verification.  The rule is ``core.rules.hsd``,
ported from ZhouYuxuanYX/Hierarchical-Speculative-Decoding (``transformers/generation/utils.py`` at
f3adf7f, ``algorithm_clean.py`` at 8974510; docs/maths.md, "Hierarchical speculative decoding"), and
its numbers come from ``core.analysis.released_ports``.

HSD's gain over BV is compared with its loss beside it: a lossy rule's E[τ] is no fair comparison.
The loss is repaired, where it can be, by compensating the next iteration's target
(``core.analysis.compensation``); the repaired stream's tokens per target call are then set against
BV's.  The claims run the default ``transformers`` variant, the one the laboratory's links open;
``algorithm_clean`` agrees with it at L ≤ 2 and has no multi-draft (draft 0 alone).
"""
from __future__ import annotations

from core.analysis.exact import LOSSLESS_TOL
from core.analysis.released_ports import hsd_numbers, hsd_stream_numbers
from core.claims.base import Claim, Family, Instance, Source, beats_trial, holds, lossless_trial
from core.data.exact_fraction import fraction

SOURCE = Source("hsd", "Zhou et al., Hierarchical speculative decoding (ICLR 2026), as released",
                "arXiv 2601.05724; github.com/ZhouYuxuanYX/Hierarchical-Speculative-Decoding at f3adf7f "
                "and 8974510", "https://arxiv.org/abs/2601.05724")
RULE = "hsd"
METHODS = (RULE, "bv", "sd")
#: Iterations of the generated stream whose first tokens are measured (each emits at least one).
STREAM_TOKENS = 3


def _numbers(inst: Instance, variant: str = "transformers") -> dict:
    draft, target = inst.models()
    return hsd_numbers(inst.K, inst.L, variant, draft=draft, target=target)


def _lossless(inst: Instance):
    """One iteration's completed output law against q, both released variants."""
    one, clean = _numbers(inst), _numbers(inst, "algorithm_clean")
    return holds(one["lossless"]), {
        "hsd_tv": one["hsd_tv"], "hsd_expected_accepted": one["hsd_expected_accepted"],
        "algorithm_clean_tv": clean["hsd_tv"], "repairable": one["compensable"], "min_F": one["min_F"]}


def _stream(inst: Instance) -> dict:
    draft, target = inst.models()
    return hsd_stream_numbers(inst.K, inst.L, STREAM_TOKENS, draft=draft, target=target)


def _text(x: float) -> str:
    return fraction(x, max_denominator=1000) or f"{x:.3g}"


def _beats_bv(inst: Instance):
    """HSD's exact E[τ] against BV's on the same K drafts, with HSD's TV beside it and, where the loss
    can be repaired (no over-emission: ``hsd_numbers``' ``compensable``), the repaired stream's tokens
    per target call against BV's; the stream is run only then."""
    one = _numbers(inst)
    gain = one["hsd_expected_accepted"] - one["bv_expected_accepted"]
    numbers = {"hsd_expected_accepted": one["hsd_expected_accepted"], "bv_expected_accepted": one["bv_expected_accepted"],
               "gain": gain, "gain_bought_with": "nothing: HSD is lossless here", "hsd_tv": one["hsd_tv"],
               "repairable": one["compensable"]}
    if not one["lossless"]:
        bought = f"a lossy law (TV {_text(one['hsd_tv'])} from q)"
        if one["compensable"]:
            s = _stream(inst)
            numbers.update(repaired_tokens_per_call=s["repaired_tokens_per_call"],
                           bv_tokens_per_call=s["bv_tokens_per_call"])
            bought += (f"; made exact, {_text(s['repaired_tokens_per_call'])} tokens per target call against "
                       f"BV's {_text(s['bv_tokens_per_call'])}")
        else:
            bought += "; no repair (over-emission)"
        numbers["gain_bought_with"] = bought
    return holds(gain > LOSSLESS_TOL), numbers


def _stream_lossless(inst: Instance):
    """The law of the first ``STREAM_TOKENS`` generated tokens over as many iterations, against q."""
    s = _stream(inst)
    return holds(s["stream_tv"] <= LOSSLESS_TOL), {
        "stream_tv": s["stream_tv"], "tokens_per_call": s["tokens_per_call"],
        "bv_tokens_per_call": s["bv_tokens_per_call"], "repairable": s["repairable"],
        **({"repaired_tv": s["repaired_tv"], "repaired_tokens_per_call": s["repaired_tokens_per_call"]}
           if s["repairable"] else {})}


TOY = dict(preset="binary-toy", methods=METHODS)
#: L ≥ 2 only: at L = 1 HSD's one row never steps back and HSD is speculative sampling.
FAMILY = Family(("iid", "markov"), Vs=(2, 3), Ks=(1, 2), Ls=(2, 3), n=3)
CLAIMS = (
    Claim("lossless", SOURCE, "HSD is lossless: its output follows the target's law.",
          "The TV of one iteration's completed output law from q, K = 1, L = 2, on the binary toy (both released "
          "variants).", instance=Instance(1, 2, **TOY), check=_lossless),
    Claim("lossless-k2", SOURCE, "HSD's multi-draft version (recursive rejection over drafts) is lossless.",
          "The same TV with K = 2 drafts, L = 2, on the binary toy (algorithm_clean verifies draft 0 alone).",
          instance=Instance(2, 2, **TOY), check=_lossless),
    Claim("lossless-family", SOURCE, "HSD is lossless on every instance.",
          "The TV from q on each seeded instance, K ∈ {1, 2}, L ∈ {2, 3}; the worst (largest) TV.",
          family=FAMILY, trial=lossless_trial(RULE), methods=METHODS),
    Claim("beats-bv", SOURCE, "HSD has a higher block efficiency than block verification.",
          "HSD's exact E[τ] against BV's, K = 1, L = 2, on the binary toy, with HSD's TV from q beside it and "
          "the stream repaired by compensating the next iteration's target (tokens per target call, 3 tokens).",
          instance=Instance(1, 2, **TOY), check=_beats_bv),
    Claim("beats-bv-k2", SOURCE, "HSD with two drafts has a higher block efficiency than block verification.",
          "HSD's exact E[τ] with K = 2 drafts against BV's on the same drafts, L = 2, on the binary toy, "
          "with HSD's TV beside it.", instance=Instance(2, 2, **TOY), check=_beats_bv),
    Claim("beats-bv-family", SOURCE, "HSD accepts at least as much as block verification on every instance.",
          "HSD's and BV's exact E[τ] on each seeded instance, K ∈ {1, 2}, L ∈ {2, 3}, HSD's TV beside; the "
          "smallest gain.", family=FAMILY, trial=beats_trial(RULE, "bv"), methods=METHODS),
    Claim("stream-lossless", SOURCE, "The text HSD generates over several iterations follows the target's law.",
          f"The exact law of the first {STREAM_TOKENS} generated tokens over {STREAM_TOKENS} iterations "
          "(iterate_exact), K = 1, L = 2, on the binary toy, against q; tokens per target call against BV's.",
          instance=Instance(1, 2, **TOY), check=_stream_lossless),
    Claim("stream-lossless-k2", SOURCE,
          "The text multi-draft HSD generates over several iterations follows the target's law.",
          f"The same with K = 2 drafts: the first {STREAM_TOKENS} generated tokens against q.",
          instance=Instance(2, 2, **TOY), check=_stream_lossless),
)
