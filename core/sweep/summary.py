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
and tied rules are all best.  The mean of r is also broken down by K, L and family.  A lossy rule is
never crowned: the methods are listed lossless first (max TV ≤ ``LOSSLESS_TOL`` on every row), each
group by its mean, and the text leaderboard ranks the lossy ones in a table of their own.  Rows of a
rule from outside the project that failed (``failure``) are counted apart, never scored.

A draft sweep's rows (``core.sweep.work.DRAFT_COLUMNS``) are scored against their own law's
optimum: r = E[τ]/LP with LP the own-law LP of the row's shape and law, so r is each rule's share
of the best any lossless verifier does with those drafts.  Best is then per instance *and draft*,
the mean of r is also broken down by law and budget, the instances counted are the pairs of models,
and ``law_board`` adds what compares laws at an equal budget: each law's own optimum over the
optimum of i.i.d. chains of the same budget and length, each rule's share of its own law's
optimum, and the best shape per budget and law.  Where the rows hold several temperatures, the
breakdowns and the law board are per temperature.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from core.analysis.exact import LOSSLESS_TOL
from core.analysis.intervals import t_975
from core.data.shapes import Shape
from core.rules.registry import ALIASES, REGISTRY, resolve
from core.sweep.work import DRAFT_COLUMNS, KEY_COLUMNS, group_columns

TIE = 1e-9
BREAKDOWNS = ("K", "L", "family")
#: A draft sweep's breakdowns beside ``BREAKDOWNS`` (and ``temperature`` where it varies).
DRAFT_BREAKDOWNS = ("law", "budget")
def tree_rules() -> tuple[str, ...]:
    """The rules ``law_board`` finds the best shape for beside the LP: those defined on every shape and
    law (``Verifier.token_trees``, no ``runs_on``), by every name they have, a rule loaded from outside included;
    ``lp_optimal``'s value is the LP's."""
    return tuple(name for name in (*REGISTRY, *ALIASES)
                 if resolve(name).token_trees and not resolve(name).runs_on and not resolve(name).optimal_lp)
#: The columns that name a pair of models: every shape, law and rule of a draft sweep's unit is
#: analysed on the same pair.
PAIR_COLUMNS = ("family", "V", "L", "index", "temperature", "seed")


def is_draft_frame(frame: pd.DataFrame) -> bool:
    """Whether the rows come from a draft sweep (they carry ``DRAFT_COLUMNS``)."""
    return all(c in frame.columns for c in DRAFT_COLUMNS)


def row_shape(shape: str, branching: str) -> Shape:
    """The ``Shape`` of a draft sweep's row, from its ``shape`` and ``branching`` columns."""
    return Shape(tuple(int(x) for x in str(branching).split(",")), chains=shape == "chains")


def shape_label(shape: str, branching: str) -> str:
    """A row's shape as ``Shape.label`` writes it: ``chains 2×2`` or ``b = (2, 1)``."""
    return row_shape(shape, branching).label


def _key(row, columns) -> dict:
    return {c: (row[c].item() if hasattr(row[c], "item") else row[c]) for c in columns}


def score_column(frame: pd.DataFrame) -> str:
    return "ratio_lp" if "ratio_lp" in frame.columns else "expected_accepted"


def best_flags(frame: pd.DataFrame) -> pd.Series:
    """Whether each row is a best lossless row of its instance (module docstring)."""
    lossless = frame["fidelity_tv"] <= LOSSLESS_TOL
    best_e = frame["expected_accepted"].where(lossless).groupby(
        [frame[c] for c in group_columns(frame)], dropna=False).transform("max")
    return lossless & (frame["expected_accepted"] >= best_e - TIE)


def mean_ci(values: np.ndarray) -> tuple[float, float, float]:
    """(mean, low, high): the 95% Student-t interval mean ± t_(0.975, n − 1)·s/√n."""
    mean = float(np.mean(values))
    n = values.size
    half = t_975(n - 1) * float(np.std(values, ddof=1)) / math.sqrt(n) if n > 1 else 0.0
    return mean, mean - half, mean + half


def _stats(values: np.ndarray) -> dict:
    """n, mean with its 95% interval (``mean_ci``), median, min and max of ``values``."""
    mean, lo, hi = mean_ci(values)
    return {"n": int(values.size), "mean": mean, "ci_low": lo, "ci_high": hi,
            "median": float(np.median(values)), "min": float(values.min()), "max": float(values.max())}


def leaderboard(frame: pd.DataFrame) -> dict:
    """The leaderboard as plain data: ``score``, ``instances``, ``methods`` (one dict per method, best
    mean first) and ``by`` (mean score per K, L and family for each method); for a draft sweep also
    ``analyses`` (instances × drafts), the breakdowns by law and budget, and ``laws``
    (``law_board``)."""
    score = score_column(frame)
    drafts = is_draft_frame(frame)
    groups = group_columns(frame)
    named = [*KEY_COLUMNS, *(DRAFT_COLUMNS if drafts else ())]
    failed = frame["failure"].notna() if "failure" in frame.columns else pd.Series(False, index=frame.index)
    failures = {m: (int(part.sum()), str(frame.loc[part[part].index[0], "failure"]))
                for m, part in failed.groupby(frame["method"], sort=False) if part.any()}
    frame = frame[~failed].assign(best=best_flags(frame[~failed]))
    methods = []
    for method, rows in frame.groupby("method", sort=False):
        mean, lo, hi = mean_ci(rows[score].to_numpy())
        worst = rows.loc[rows[score].idxmin()]
        max_tv = float(rows["fidelity_tv"].max())
        methods.append({"method": method, "n": int(len(rows)), "mean": mean, "ci_low": lo, "ci_high": hi,
                        "min": float(worst[score]), "best_share": float(rows["best"].mean()),
                        "max_tv": max_tv, "lossless": max_tv <= LOSSLESS_TOL, "worst": _key(worst, named),
                        **({"failures": failures[method][0], "failure": failures[method][1]}
                           if method in failures else {})})
    # a lossy rule is never crowned: the lossless rules first, each group by its mean score; means
    # equal to 12 digits (rules that attain the same optimum, whose LP ratios differ by rounding
    # only) keep the rules' order
    methods.sort(key=lambda m: (not m["lossless"], -round(m["mean"], 12)))
    methods += [{"method": m, "n": 0, "lossless": False, "failures": n, "failure": text}
                for m, (n, text) in failures.items() if m not in {x["method"] for x in methods}]
    breakdowns = [*BREAKDOWNS, *(DRAFT_BREAKDOWNS if drafts else ()),
                  *(["temperature"] if frame["temperature"].nunique() > 1 else [])]
    by = {column: {str(value): {m: float(v) for m, v in part.groupby("method", sort=False)[score].mean().items()}
                   for value, part in frame.groupby(column)} for column in breakdowns}
    if drafts:
        board = {"score": score, "instances": int(frame[list(PAIR_COLUMNS)].drop_duplicates().shape[0]),
                 "analyses": int(frame[groups].drop_duplicates().shape[0]), "methods": methods, "by": by}
        laws = law_board(frame)
        return {**board, "laws": laws} if laws is not None else board
    instances = int(frame[groups].drop_duplicates().shape[0])
    return {"score": score, "instances": instances, "methods": methods, "by": by}


def law_gains(frame: pd.DataFrame) -> pd.DataFrame:
    """Each law's own optimum over the i.i.d. optimum at an equal budget, per pair of models: one
    row per (pair, budget, law) with the law's best shape of that budget (``shape``, its label; the
    first in the rows' order among equals), its own-law LP (``lp``), the LP of i.i.d. chains of the
    same budget and length (``lp_iid``) and ``gain`` = lp / lp_iid; pairs where L does not divide
    the budget (no such chains) are left out."""
    analyses = frame[frame["lp_iid"] > 0].drop_duplicates(group_columns(frame))
    keys = [*PAIR_COLUMNS, "budget", "law"]
    top = analyses.loc[analyses.groupby(keys, sort=False)["lp"].idxmax()]
    shape = [shape_label(s, b) for s, b in zip(top["shape"], top["branching"])]
    return (top[keys + ["lp", "lp_iid"]].assign(shape=shape, gain=top["lp"] / top["lp_iid"])
            .reset_index(drop=True))


def law_board(frame: pd.DataFrame) -> dict | None:
    """What compares draft laws at an equal budget, from a draft sweep's rows with the ``lp`` bound
    (None without it), per temperature (``temperature`` on every entry):

    - ``own_over_iid``: per law, the own-law optimum LP(shape, law) over the optimum of i.i.d.
      chains of the same budget n and length L (``lp_iid``; pairs where L divides n), for every
      shape (``per_shape``) and for the law's best shape at each budget (``best_shape``: the max
      over the shapes of budget n of the own-law LP, over the same ``lp_iid``; ``by_cell``, the same
      per V, L and budget): n, mean with its 95% interval, median, min (and where, ``worst``), max;
    - ``shares``: per law and rule, E[τ] over the own-law optimum (``_stats``; ``by_shape``: n,
      mean and min on chains and on static trees apart, since a ``topk`` chain is deterministic at
      its root only), the largest and the mean fidelity error and the share of analyses it is
      lossless on (TV ≤ ``LOSSLESS_TOL``);
    - ``best_shapes``: per (V, L, budget, law), and per (V, L, budget) over every law (law
      ``any``), for the own-law LP (``lp``) and each rule defined on every draft (``tree_rules``):
      the shape (with its law, for ``any``) of the highest mean over the pairs, those within
      ``TIE`` of it (``tied``: chains K×L and the tree (K, 1, …, 1) draft alike but for ``topk``),
      that mean, each candidate's mean and the share of pairs where the best one is best (within
      ``TIE``).  Per V, because whether a distinct-token law can
      draft a shape depends on V: every candidate is then scored on the same pairs."""
    if "lp" not in frame.columns or not is_draft_frame(frame):
        return None
    frame = frame.assign(label=[shape_label(s, b) for s, b in zip(frame["shape"], frame["branching"])])
    analyses = frame.drop_duplicates(group_columns(frame))
    pair = list(PAIR_COLUMNS)
    own, shares, best = [], [], []
    for T, part in analyses.groupby("temperature"):
        for law, rows in part.groupby("law", sort=False):
            rows = rows[rows["lp_iid"] > 0]
            if not len(rows):
                continue
            ratio = (rows["lp"] / rows["lp_iid"]).to_numpy()
            worst = rows.iloc[int(np.argmin(ratio))]
            gains = law_gains(rows)
            own.append({"temperature": float(T), "law": law,
                        "per_shape": {**_stats(ratio), "worst": {**_key(worst, KEY_COLUMNS), "shape": worst["label"]}},
                        "best_shape": _stats(gains["gain"].to_numpy()),
                        "by_cell": [{"V": int(V), "L": int(L), "budget": int(n), **_stats(cell["gain"].to_numpy())}
                                    for (V, L, n), cell in gains.groupby(["V", "L", "budget"])]})
    for (T, law, method), rows in frame.groupby(["temperature", "law", "method"], sort=False):
        ratio = np.where(rows["lp"] > 0, rows["expected_accepted"] / rows["lp"].where(rows["lp"] > 0, 1.0), 1.0)
        kinds = {kind: {"n": int(sel.sum()), "mean": float(ratio[sel].mean()), "min": float(ratio[sel].min())}
                 for kind in ("chains", "tree") if (sel := (rows["shape"] == kind).to_numpy()).any()}
        shares.append({"temperature": float(T), "law": law, "method": method, **_stats(ratio),
                       "max_tv": float(rows["fidelity_tv"].max()), "mean_tv": float(rows["fidelity_tv"].mean()),
                       "lossless_share": float((rows["fidelity_tv"] <= LOSSLESS_TOL).mean()), "by_shape": kinds})
    for (T, V, L, n), part in frame.groupby(["temperature", "V", "L", "budget"]):
        for law, rows in [*part.groupby("law", sort=False), ("any", part)]:
            rows = rows.assign(candidate=rows["label"] if law != "any" else rows["label"] + " " + rows["law"])
            values = {"lp": rows.drop_duplicates(group_columns(rows))[[*pair, "candidate", "lp"]]
                      .rename(columns={"lp": "value"})}
            for method, mine in rows.groupby("method", sort=False):
                if method in tree_rules():
                    values[method] = mine[[*pair, "candidate", "expected_accepted"]].rename(
                        columns={"expected_accepted": "value"})
            entry = {"temperature": float(T), "V": int(V), "L": int(L), "budget": int(n), "law": law, "by": {}}
            for what, table in values.items():
                means = table.groupby("candidate", sort=False)["value"].mean()
                top = str(means.idxmax())
                wide = table.pivot_table(index=pair, columns="candidate", values="value")
                wins = float((wide[top] >= wide.max(axis=1) - TIE).mean())
                tied = [str(k) for k, v in means.items() if v >= means[top] - TIE]
                entry["by"][what] = {"best": top, "tied": tied, "mean": float(means[top]), "wins": wins,
                                     "means": {str(k): float(v) for k, v in means.items()}}
            best.append(entry)
    return {"own_over_iid": own, "shares": shares, "best_shapes": best}


def _table(header: list[str], rows: list[list[str]]) -> str:
    """Aligned columns under a header; "" without rows."""
    if not rows:
        return ""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)), "  ".join("-" * w for w in widths)]
    return "\n".join(lines + ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows])


def describe(worst: dict) -> str:
    """An instance (and its draft) as one line: ``iid V=2 K=2 L=1 #3`` (``b = (2, 1) wor``)."""
    text = "{family} V={V} K={K} L={L} #{index}".format(**worst)
    if "law" in worst:
        text += f" {shape_label(worst['shape'], worst['branching'])} {worst['law']}"
    return text


def format_leaderboard(board: dict) -> str:
    """The leaderboard as text tables: one line per method, the lossless rules ranked apart from the
    lossy ones (whose score is bought with loss), then the rules that failed, then the mean score by
    K, L and family; for a draft sweep also by law and budget, then the law board
    (``format_law_board``)."""
    name = "E/LP" if board["score"] == "ratio_lp" else "E[tau]"
    scored = [m for m in board["methods"] if m["n"]]
    header = ["method", "n", f"mean {name}", "95% CI", "min", "best", "max TV", "worst instance"]

    def line(m: dict) -> list[str]:
        return [m["method"], str(m["n"]), f"{m['mean']:.4f}", f"[{m['ci_low']:.4f}, {m['ci_high']:.4f}]",
                f"{m['min']:.4f}", f"{100 * m['best_share']:.1f}%", f"{m['max_tv']:.2e}", describe(m["worst"])]

    head = f"{board['instances']} instances; score {name} (higher is better)"
    if "analyses" in board:
        head = (f"{board['instances']} instances (pairs of models), {board['analyses']} analyses (instance × "
                f"shape × law); score {name}, E[tau] over the own-law LP (higher is better)")
    lossy = [m for m in scored if not m["lossless"]]
    parts = [head, _table(header, [line(m) for m in scored if m["lossless"]])]
    if lossy:
        parts.append(f"lossy rules (TV from q above {LOSSLESS_TOL:g} on some instance): ranked apart, their "
                     f"{name} is bought with loss\n" + _table(header, [line(m) for m in lossy]))
    failed = [m for m in board["methods"] if m.get("failures")]
    if failed:
        parts.append("\n".join(f"{m['method']} failed on {m['failures']} analyses; the first: {m['failure']}"
                               for m in failed))
    parts = [p for p in parts if p]
    order = [m["method"] for m in scored]
    for column, groups in board["by"].items():
        keys = list(groups)
        parts.append(_table([f"mean {name} by {column}", *(f"{column}={k}" for k in keys)],
                            [[m, *(f"{groups[k][m]:.4f}" if m in groups[k] else "-" for k in keys)]
                             for m in order]))
    if board.get("laws"):
        parts.append(format_law_board(board["laws"]))
    return "\n\n".join(parts)


def format_law_board(laws: dict) -> str:
    """``law_board`` as text tables (the temperature is a column where the rows hold several)."""
    temps = len({e["temperature"] for e in laws["own_over_iid"] + laws["shares"]}) > 1

    def T(entry) -> list[str]:
        return [f"{entry['temperature']:g}"] if temps else []

    head_T = ["T"] if temps else []
    own = [[*T(e), e["law"], str(e[kind]["n"]), f"{e[kind]['mean']:.4f}", f"{e[kind]['median']:.4f}",
            f"{e[kind]['min']:.4f}", f"{e[kind]['max']:.4f}"]
           for e in laws["own_over_iid"] for kind in ("best_shape",)]
    per_shape = [[*T(e), e["law"], str(e["per_shape"]["n"]), f"{e['per_shape']['mean']:.4f}",
                  f"{e['per_shape']['median']:.4f}", f"{e['per_shape']['min']:.4f}", f"{e['per_shape']['max']:.4f}",
                  "{family} V={V} K={K} L={L} #{index} {shape}".format(**e["per_shape"]["worst"])]
                 for e in laws["own_over_iid"]]
    shares = [[*T(e), e["law"], e["method"], str(e["n"]), f"{e['mean']:.4f}", f"[{e['ci_low']:.4f}, {e['ci_high']:.4f}]",
               f"{e['median']:.4f}", f"{e['min']:.4f}", f"{e['max_tv']:.2e}", f"{e['mean_tv']:.2e}",
               f"{100 * e['lossless_share']:.1f}%"]
              for e in laws["shares"]]
    best = []
    for e in laws["best_shapes"]:
        for what, b in e["by"].items():
            best.append([*T(e), str(e["V"]), str(e["L"]), str(e["budget"]), e["law"], what, " = ".join(b["tied"]),
                         f"{b['mean']:.4f}", f"{100 * b['wins']:.1f}%"])
    tables = [
        _table([*head_T, "law", "n", "own LP / iid LP, best shape: mean", "median", "min", "max"], own),
        _table([*head_T, "law", "n", "own LP / iid LP, every shape: mean", "median", "min", "max", "at the min"],
               per_shape),
        _table([*head_T, "law", "method", "n", "E / own LP: mean", "95% CI", "median", "min", "max TV", "mean TV",
                "lossless"],
               shares),
        _table([*head_T, "V", "L", "n", "law", "of", "best shape", "mean", "best on"], best),
    ]
    return "\n\n".join(t for t in tables if t)
