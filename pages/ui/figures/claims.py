"""The claims page's charts: a value per rule or bound, and verification time against the vocabulary."""
from __future__ import annotations

from typing import Mapping, Sequence

import plotly.graph_objects as go

from pages.ui.figures.style import BOUND_STYLE, BOUND_SYMBOLS, color, short, symbol
from pages.ui.figures.layout import _layout, bar_range, close, value_range


# ------------------------------------------------------------------------------------------------
# Claims
# ------------------------------------------------------------------------------------------------

def claim_values(values: Mapping[str, float], title: str, ylab: str) -> go.Figure:
    """One value per rule (its colour and marker) or bound (grey, its open marker), its value written
    beside it: a bar from 0 each, or, where the values are close (``close``: 1.17 against 1.20), a dot
    each on an axis that spans them (``value_range``), so that no bar's length lies."""
    keys = list(values)
    cols = [BOUND_STYLE[k][1] if k in BOUND_STYLE else color(k) for k in keys]
    names = [BOUND_STYLE[k][0] if k in BOUND_STYLE else short(k) for k in keys]
    ys = [values[k] for k in keys]
    labels = [f"{v:.5f}" for v in ys]
    if close(ys):
        fig = go.Figure(go.Scatter(
            x=names, y=ys, mode="markers+text", text=labels, textposition="middle right", cliponaxis=False,
            marker=dict(color=cols, size=18, line=dict(color="#222222", width=1),
                        symbol=[BOUND_SYMBOLS[k] if k in BOUND_STYLE else symbol(k) for k in keys]),
            showlegend=False, hovertemplate="%{x}: %{y:.6f}<extra></extra>"))
        fig.update_yaxes(range=value_range(ys, headroom=0.3))
    else:
        fig = go.Figure(go.Bar(x=names, y=ys, marker_color=cols, text=labels, textposition="outside",
                               cliponaxis=False, hovertemplate="%{x}: %{y:.6f}<extra></extra>"))
        fig.update_yaxes(range=bar_range(ys, headroom=0.3))
    fig.update_xaxes(type="category")
    return _layout(fig, title, "", ylab, height=340)


def scaling_plot(Vs: Sequence[int], seconds: Sequence[float], slope: float, rule: str) -> go.Figure:
    """Rule ``rule``'s verification time against |Ω| on log-log axes, beside a line of slope 1."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=list(Vs), y=[1e6 * s for s in seconds], mode="lines+markers",
                             name=f"{short(rule)} verify (log-log slope {slope:.2f})",
                             line=dict(color=color(rule), width=2.5)))
    ref = [1e6 * seconds[0] * v / Vs[0] for v in Vs]
    fig.add_trace(go.Scatter(x=list(Vs), y=ref, mode="lines", name="∝ |Ω| (slope 1)",
                             line=dict(color="#999", dash="dash")))
    fig.update_xaxes(type="log", tickvals=list(Vs), ticktext=[str(v) for v in Vs])
    fig.update_yaxes(type="log")
    return _layout(fig, "Verification time per block against vocabulary size |Ω|", "|Ω| (log)",
                   "microseconds per verification (log)", height=360)
