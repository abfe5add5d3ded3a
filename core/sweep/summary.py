"""The leaderboard of a sweep's rows: how close each rule comes to the optimal lossless verifier.

The score of a row is r = E[τ]/LP (``ratio_lp``; E[τ] itself when the sweep computed no LP).  Per
method, over its n instances: the mean of r with a 95% confidence interval mean ± t·s/√n (s the
sample standard deviation, t the 97.5% quantile of Student's t with n − 1 degrees of freedom, so
that few instances give a wide interval, not an overconfident one; the interval is the mean alone
when n = 1; being symmetric, it can reach past 1 when n is small though E/LP of a lossless rule
cannot), the
minimum of r and the instance where it occurs, the largest fidelity error max TV(P̃, q), and the
share of instances where the method is best: its E[τ] is within ``TIE`` of the largest E[τ] among
the rows of that instance that are lossless (TV ≤ ``LOSSLESS_TOL``), so a lossy rule is never best
and tied rules are all best.  The mean of r is also broken down by K, L and family.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from core.analysis.exact import LOSSLESS_TOL
from core.analysis.intervals import t_975
from core.sweep.work import KEY_COLUMNS

TIE = 1e-9
BREAKDOWNS = ("K", "L", "family")


def score_column(frame: pd.DataFrame) -> str:
    return "ratio_lp" if "ratio_lp" in frame.columns else "expected_accepted"


def best_flags(frame: pd.DataFrame) -> pd.Series:
    """Whether each row is a best lossless row of its instance (module docstring)."""
    lossless = frame["fidelity_tv"] <= LOSSLESS_TOL
    best_e = frame["expected_accepted"].where(lossless).groupby([frame[c] for c in KEY_COLUMNS]).transform("max")
    return lossless & (frame["expected_accepted"] >= best_e - TIE)


def mean_ci(values: np.ndarray) -> tuple[float, float, float]:
    """(mean, low, high): the 95% Student-t interval mean ± t_(0.975, n − 1)·s/√n."""
    mean = float(np.mean(values))
    n = values.size
    half = t_975(n - 1) * float(np.std(values, ddof=1)) / math.sqrt(n) if n > 1 else 0.0
    return mean, mean - half, mean + half


def leaderboard(frame: pd.DataFrame) -> dict:
    """The leaderboard as plain data: ``score``, ``instances``, ``methods`` (one dict per method, best
    mean first) and ``by`` (mean score per K, L and family for each method)."""
    score = score_column(frame)
    frame = frame.assign(best=best_flags(frame))
    methods = []
    for method, rows in frame.groupby("method", sort=False):
        mean, lo, hi = mean_ci(rows[score].to_numpy())
        worst = rows.loc[rows[score].idxmin()]
        methods.append({"method": method, "n": int(len(rows)), "mean": mean, "ci_low": lo, "ci_high": hi,
                        "min": float(worst[score]), "best_share": float(rows["best"].mean()),
                        "max_tv": float(rows["fidelity_tv"].max()),
                        "worst": {c: (worst[c].item() if hasattr(worst[c], "item") else worst[c])
                                  for c in KEY_COLUMNS}})
    methods.sort(key=lambda m: -m["mean"])
    by = {column: {str(value): {m: float(v) for m, v in part.groupby("method", sort=False)[score].mean().items()}
                   for value, part in frame.groupby(column)} for column in BREAKDOWNS}
    instances = int(frame[list(KEY_COLUMNS)].drop_duplicates().shape[0])
    return {"score": score, "instances": instances, "methods": methods, "by": by}


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)), "  ".join("-" * w for w in widths)]
    return "\n".join(lines + ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows])


def format_leaderboard(board: dict) -> str:
    """The leaderboard as text tables: one line per method, then the mean score by K, L and family."""
    name = "E/LP" if board["score"] == "ratio_lp" else "E[tau]"
    rows = [[m["method"], str(m["n"]), f"{m['mean']:.4f}", f"[{m['ci_low']:.4f}, {m['ci_high']:.4f}]",
             f"{m['min']:.4f}", f"{100 * m['best_share']:.1f}%", f"{m['max_tv']:.2e}",
             "{family} V={V} K={K} L={L} #{index}".format(**m["worst"])] for m in board["methods"]]
    parts = [f"{board['instances']} instances; score {name} (higher is better)",
             _table(["method", "n", f"mean {name}", "95% CI", "min", "best", "max TV", "worst instance"], rows)]
    order = [m["method"] for m in board["methods"]]
    for column, groups in board["by"].items():
        keys = list(groups)
        parts.append(_table([f"mean {name} by {column}", *(f"{column}={k}" for k in keys)],
                            [[m, *(f"{groups[k][m]:.4f}" if m in groups[k] else "-" for k in keys)]
                             for m in order]))
    return "\n\n".join(parts)
