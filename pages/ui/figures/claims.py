"""The claims page's charts: a value per rule or bound, and verification time against the vocabulary."""
from __future__ import annotations

from typing import Mapping, Sequence

import plotly.graph_objects as go

from pages.ui.figures.style import BOUND_STYLE, color, short
from pages.ui.figures.layout import _layout, value_range


# ------------------------------------------------------------------------------------------------
# Claims
# ------------------------------------------------------------------------------------------------

def claim_values(values: Mapping[str, float], title: str, ylab: str) -> go.Figure:
    """One bar per value (a rule's colour, or a bound's grey), its value written above it, with room
    above the tallest for its label (``value_range``: close values do not start at 0)."""
    keys = list(values)
    cols = [BOUND_STYLE[k][1] if k in BOUND_STYLE else color(k) for k in keys]
    names = [BOUND_STYLE[k][0] if k in BOUND_STYLE else short(k) for k in keys]
    fig = go.Figure(go.Bar(x=names, y=[values[k] for k in keys], marker_color=cols,
                           text=[f"{values[k]:.5f}" for k in keys], textposition="outside", cliponaxis=False))
    fig.update_yaxes(range=value_range(list(values.values()), headroom=0.3))
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
