"""Verifying with a law other than the one sampled (github.com/huggingface/transformers/issues/47932):
a candidate generator that drafts with top-k, top-p or a temperature but hands the verifier the raw
softmax breaks losslessness; handing it the law it sampled from restores it.  Computed exactly for
SD and BV (``core.analysis.mismatch``): the TV from q as a function of the mismatch, top-k for
k = 1..V (k = V: no mismatch) and a draft temperature T' (T' = 1: no mismatch).
"""
from __future__ import annotations

from core.analysis.exact import LOSSLESS_TOL
from core.analysis.mismatch import mismatched_law, top_k_model
from core.claims.base import FAILS, HOLDS, Claim, Instance, Source

SOURCE = Source("transformers-47932", "transformers: candidate generators return a draft law they did not "
                "sample from", "github.com/huggingface/transformers/issues/47932",
                "https://github.com/huggingface/transformers/issues/47932")
RULES = ("sd", "bv")
DRAFT_TEMPERATURES = (0.5, 0.8, 1.0, 1.25, 2.0)


def mismatch_table(inst: Instance) -> list[dict]:
    """One row per rule and mismatch: its kind and size, and E[τ] and the TV from q with the raw law
    stated (the bug) and with the sampled law stated (the repair)."""
    draft, target = inst.models()
    rows = []
    mismatches = [("top-k", k, top_k_model(draft, k)) for k in range(1, target.V + 1)]
    mismatches += [("draft temperature", t, draft.with_temperature(t)) for t in DRAFT_TEMPERATURES]
    for rule in RULES:
        for kind, size, sampled in mismatches:
            e, tv = mismatched_law(rule, sampled, draft, target, inst.L)
            e_fixed, tv_fixed = mismatched_law(rule, sampled, sampled, target, inst.L)
            rows.append({"rule": rule, "mismatch": kind, "size": size, "expected_accepted": e,
                         "tv_raw_law_stated": tv, "expected_accepted_sampled_law": e_fixed,
                         "tv_sampled_law_stated": tv_fixed})
    return rows


def _no_mismatch(row: dict) -> bool:
    return (row["mismatch"] == "top-k" and row["size"] == row["V"]) or \
        (row["mismatch"] == "draft temperature" and row["size"] == 1.0)


def _breaks(inst: Instance):
    """Holds when every real mismatch gives a TV above the tolerance and no mismatch gives none."""
    V = inst.V
    rows = [{**r, "V": V} for r in mismatch_table(inst)]
    real = [r for r in rows if not _no_mismatch(r)]
    control = [r for r in rows if _no_mismatch(r)]
    ok = all(r["tv_raw_law_stated"] > LOSSLESS_TOL for r in real) and \
        all(r["tv_raw_law_stated"] <= LOSSLESS_TOL for r in control)
    worst = max(real, key=lambda r: r["tv_raw_law_stated"])
    return (HOLDS if ok else FAILS), {
        "largest_tv": worst["tv_raw_law_stated"], "at": f"{worst['rule']}, {worst['mismatch']} {worst['size']:g}",
        "tv_by_mismatch": [{k: r[k] for k in ("rule", "mismatch", "size", "tv_raw_law_stated")} for r in rows]}


def _repair(inst: Instance):
    """Holds when stating the sampled law gives TV ≤ tolerance for every mismatch and rule."""
    rows = mismatch_table(inst)
    worst = max(rows, key=lambda r: r["tv_sampled_law_stated"])
    return (HOLDS if worst["tv_sampled_law_stated"] <= LOSSLESS_TOL else FAILS), {
        "largest_tv": worst["tv_sampled_law_stated"],
        "expected_accepted_by_mismatch": [{k: r[k] for k in ("rule", "mismatch", "size", "expected_accepted",
                                                             "expected_accepted_sampled_law")} for r in rows]}


TOY = dict(preset="binary-toy", methods=RULES)
CLAIMS = (
    Claim("raw-law-is-lossy", SOURCE,
          "Verifying top-k or tempered drafts against the raw softmax changes the output distribution.",
          "The exact TV from q of SD and BV, L = 2, drafts drawn by top-k (k = 1, 2) or at a draft temperature "
          "T' ∈ {0.5, 0.8, 1, 1.25, 2}, the rule reading the raw p, on the binary toy.",
          instance=Instance(1, 2, **TOY), check=_breaks),
    Claim("sampled-law-repairs", SOURCE,
          "Handing the verifier the law the draft was sampled from restores losslessness.",
          "The same TV with the rule reading the sampled law.",
          instance=Instance(1, 2, **TOY), check=_repair),
)
