"""The leaderboard's charts: scores per rule in boxes, and one rule against another per instance."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from pages.ui.figures.style import color, short
from pages.ui.figures.layout import _layout


# ------------------------------------------------------------------------------------------------
# Leaderboard (core.sweep)
# ------------------------------------------------------------------------------------------------

def score_boxes(df, by: str, score: str, ylab: str, methods: Sequence[str]) -> go.Figure:
    """One box per method and value of ``by`` (K or L), every instance drawn beside it as a point,
    the mean as a dashed line; ``df`` holds one row per (instance, method)."""
    fig = go.Figure()
    for m in methods:
        sub = df[df["method"] == m]
        fig.add_trace(go.Box(x=sub[by].tolist(), y=sub[score].tolist(), name=short(m), marker_color=color(m),
                             boxmean=True, boxpoints="all", jitter=0.4, pointpos=0, marker=dict(size=4)))
    fig.update_layout(boxmode="group")
    fig.update_xaxes(type="category", categoryorder="category ascending")
    return _layout(fig, f"{ylab} per rule, by {by}", by, ylab)


def rule_scatter(a_values: Sequence[float], b_values: Sequence[float], a: str, b: str, ylab: str,
                 hover: Sequence[str], tie: float) -> go.Figure:
    """Per instance, rule b's score against rule a's, with the diagonal: points above it are
    instances where b scores higher (b's colour, triangles up), below where a does (a's colour,
    triangles down), on it ties (within ``tie``, grey circles)."""
    x, y, text = np.asarray(a_values, float), np.asarray(b_values, float), np.asarray(hover, object)
    fig = go.Figure()
    lo, hi = (float(min(x.min(), y.min())), float(max(x.max(), y.max()))) if x.size else (0.0, 1.0)
    fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="equal scores",
                             line=dict(color="#888888", dash="dash", width=1)))
    groups = [(y > x + tie, f"{short(b)} higher", color(b), "triangle-up"),
              (x > y + tie, f"{short(a)} higher", color(a), "triangle-down"),
              (np.abs(x - y) <= tie, "tied", "#9e9e9e", "circle")]
    for sel, name, c, mark in groups:
        fig.add_trace(go.Scatter(x=x[sel].tolist(), y=y[sel].tolist(), mode="markers", name=name,
                                 text=text[sel].tolist(), hovertemplate="%{text}<br>%{x:.4f} vs %{y:.4f}",
                                 marker=dict(color=c, size=10, opacity=0.85, symbol=mark)))
    return _layout(fig, f"{ylab} per instance: {short(b)} against {short(a)}", f"{ylab} of {short(a)}",
                   f"{ylab} of {short(b)}")
