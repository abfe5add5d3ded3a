"""The draft laws' charts: E[τ] against the budget per law, and each law's own optimum over the i.i.d. one."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from core.data.laws import LAWS
from pages.ui.figures.layout import _layout


#: One colour and marker per draft law, as the law carries them (``DraftLaw.color``, ``.marker``).
LAW_STYLE = {name: (law.color, law.marker) for name, law in LAWS.items()}


#: The markers of the budget chart's reference lines (``budget_curves``' ``bounds``), in order: open,
#: each its own and none a law's.
BUDGET_BOUND_SYMBOLS = ("diamond-open", "star-open", "hexagon-open")


def budget_curves(curves: Mapping[str, Sequence[tuple[int, float, str]]], rule: str, L: int,
                  bounds: Mapping[str, Sequence[tuple[int, float]]] | None = None,
                  names: Mapping[str, str] | None = None) -> go.Figure:
    """E[τ] against the budget n (drafted tokens): for each draft law, the best shape of budget at
    most n and depth L under ``rule`` (points (n, E[τ], the shapes' labels), the labels on hover;
    ``core.analysis.budget.law_curves``), its legend name ``names[law]`` (else the law's), its colour
    and marker ``LAW_STYLE``'s; ``bounds`` (name → points) as grey dashed lines, each its own open
    marker (``BUDGET_BOUND_SYMBOLS``): the i.i.d.-chains LP, the best top-k tree, …  A budget where a
    series has no point (chains where n/L is not whole) breaks its line: no segment suggests a value
    there.  Laws that coincide are given once, by the caller, with a name that says so."""
    every = sorted({n for pts in [*curves.values(), *(bounds or {}).values()] for n, *_ in pts})

    def gapped(pts):
        at = {n: rest for n, *rest in pts}
        return every, [at[n][0] if n in at else None for n in every], [at[n][1:] if n in at else () for n in every]

    fig = go.Figure()
    for law, pts in curves.items():
        if not pts:
            continue
        ns, values, rest = gapped(pts)
        shapes = [r[0] if r else "" for r in rest]
        col, mark = LAW_STYLE.get(law, ("#444444", "circle"))
        name = (names or {}).get(law, law)
        fig.add_trace(go.Scatter(
            x=list(ns), y=list(values), mode="lines+markers", name=name, customdata=list(shapes),
            line=dict(color=col, width=3), marker=dict(symbol=mark, size=11),
            hovertemplate=f"{law}<br>n = %{{x}} drafted tokens at most<br>best shape: %{{customdata}}<br>"
                          "E[τ] = %{y:.6f}<extra></extra>"))
    for i, (name, pts) in enumerate((bounds or {}).items()):
        if not pts:
            continue
        ns, values, _ = gapped(pts)
        fig.add_trace(go.Scatter(x=list(ns), y=list(values), mode="lines+markers", name=name,
                                 line=dict(color="#555555" if i == 0 else "#888888", width=2.5,
                                           dash=("dash", "dot", "dashdot")[i % 3]),
                                 marker=dict(symbol=BUDGET_BOUND_SYMBOLS[i % len(BUDGET_BOUND_SYMBOLS)],
                                             size=10),
                                 hovertemplate=f"{name}<br>n = %{{x}}<br>%{{y:.6f}}<extra></extra>"))
    fig.update_xaxes(dtick=1)
    return _layout(fig, f"E[τ] against the budget: each law's best shape of at most n drafted tokens, depth "
                        f"L = {L}, verified by {rule}", "budget n (drafted tokens)", "E[τ] (exact)")


#: The budgets' colours in ``law_gain_boxes``, from ``TOL_MUTED``: no rule is drawn there, so colour
#: tells budgets apart.
BUDGET_COLORS = ("#88ccee", "#332288", "#44aa99", "#999933", "#aa4499", "#ddcc77")


def law_gain_boxes(gains, laws: Sequence[str]) -> go.Figure:
    """Each draft law's own optimum over the i.i.d. optimum at an equal budget: one box per law and
    budget (``gains``: rows of ``core.sweep.summary.law_gains``, one per pair of models, with the
    law's best shape of that budget), every pair drawn beside it as a point, the mean dashed; the
    line at 1 is the optimum of i.i.d. chains of the same budget."""
    fig = go.Figure()
    for i, n in enumerate(sorted(set(gains["budget"]))):
        sub = gains[gains["budget"] == n]
        sub = sub.iloc[np.argsort([list(laws).index(x) for x in sub["law"]], kind="stable")]
        text = [f"{f} V={V} L={L} #{k}<br>best shape {s}" for f, V, L, k, s in
                zip(sub["family"], sub["V"], sub["L"], sub["index"], sub["shape"])]
        fig.add_trace(go.Box(x=sub["law"].tolist(), y=sub["gain"].tolist(), name=f"n = {n} drafted tokens",
                             marker_color=BUDGET_COLORS[i % len(BUDGET_COLORS)], boxmean=True, boxpoints="all",
                             jitter=0.4, pointpos=0, marker=dict(size=4), text=text,
                             hovertemplate="%{text}<br>own LP / i.i.d. LP = %{y:.4f}"))
    fig.add_hline(y=1.0, line=dict(color="#000000", dash="dash", width=1),
                  annotation_text="i.i.d. chains' optimum", annotation_position="bottom right")
    fig.update_layout(boxmode="group")
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=list(laws))
    return _layout(fig, "Each law's own optimum over the i.i.d. optimum, at an equal budget", "draft law",
                   "own-law LP / i.i.d.-chains LP")
