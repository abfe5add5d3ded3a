"""Gain by depth: where in the draft a rule earns its accepted tokens (docs/maths.md, "Gain by depth").

For a rule's exact law of τ, P(τ ≥ d), d = 1..L, is the chance that the d-th drafted position is
accepted; beside SD's (one draft, token by token) it shows at which depths extra drafts or a better
verifier pay.  The conditional acceptance a_d = P(τ ≥ d)/P(τ ≥ d − 1) (P(τ ≥ 0) = 1) is the chance
of accepting position d once d − 1 are accepted; its gain over SD's a_d says whether a rule gains
near the root or deeper (Thomas, Kitanovski, Goldblum & Pal, arXiv 2602.16994, §4).
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from core.analysis.exact import ExactResult


def conditional_acceptance(result: ExactResult) -> np.ndarray:
    """a_d = P(τ ≥ d)/P(τ ≥ d − 1) for d = 1..L (0 where P(τ ≥ d − 1) = 0)."""
    tail = np.concatenate([[1.0], result.acceptance_per_position])
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(tail[:-1] > 0, tail[1:] / np.where(tail[:-1] > 0, tail[:-1], 1.0), 0.0)


def conditional_gain(result: ExactResult, sd: ExactResult) -> np.ndarray:
    """a_d(rule) − a_d(SD), d = 1..L."""
    return conditional_acceptance(result) - conditional_acceptance(sd)


def depth_rows(results: Mapping[str, ExactResult], sd: ExactResult) -> list[dict]:
    """One row per rule and depth d: P(τ ≥ d), SD's P(τ ≥ d), the gain P(τ ≥ d) − SD's, and the
    conditional acceptance a_d with its gain over SD's."""
    base, base_a = sd.acceptance_per_position, conditional_acceptance(sd)
    rows = []
    for name, r in results.items():
        tail, a = r.acceptance_per_position, conditional_acceptance(r)
        for d in range(r.L):
            rows.append({"method": name, "depth": d + 1, "P(τ ≥ d)": float(tail[d]), "SD's P(τ ≥ d)": float(base[d]),
                         "gain": float(tail[d] - base[d]), "a_d": float(a[d]), "a_d gain": float(a[d] - base_a[d])})
    return rows
