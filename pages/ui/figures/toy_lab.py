"""The toy laboratory's charts: E[τ] per rule and against K, the coupling, τ's histograms, the gain by depth."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from core.analysis.exact import LOSSLESS_TOL
from core.rules.registry import BASELINE
from pages.ui.figures.style import BOUND_STYLE, BOUND_SYMBOLS, TICK_SIZE, color, short, symbol
from pages.ui.figures.layout import PAGE_WIDTH, _MARGIN_L, _MARGIN_R, _TITLE_LINE_PX, _layout, value_range
from pages.ui.figures.trees import tokens_str


# ------------------------------------------------------------------------------------------------
# Toy laboratory
# ------------------------------------------------------------------------------------------------

#: A value label inside a bar sits at its foot, in the lowest ``LABEL_BAND`` of the y-axis: a bound
#: line that low would cross it, so then the bars carry no labels (hover gives every value).
LABEL_BAND = 0.15


def _ink(fill: str) -> str:
    """Black or white, whichever reads better on ``fill`` (#rrggbb; WCAG's relative luminance)."""
    rgb = [int(fill.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lum = sum(w * (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4)
              for w, c in zip((0.2126, 0.7152, 0.0722), rgb))
    return "#000000" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "#ffffff"


def expected_tau_bars(rows: Sequence[Mapping], bounds: Mapping[str, float | None]) -> go.Figure:
    """Bars: exact E[τ] per method; horizontal lines: the bounds that could be computed.

    The y-axis spans the values (``value_range``): close values, 1.40 against 1.62, look as far
    apart as they are, and the bound lines spread out above the bars instead of bunching at the top.
    Each bar's value is written inside it at the foot of the axis (a text series, "values", since
    a bar's own inside label sits at 0, below the axis), where no bound line passes (every bound is
    at least the LP optimum, far above the foot; else no labels, ``LABEL_BAND``), and only when the
    bars are wide enough for it at ``PAGE_WIDTH``; hover always gives it, to six places.

    rows: dicts with keys method, expected_accepted, fidelity_tv."""
    fig = go.Figure()
    lines = [v for v in bounds.values() if v is not None and np.isfinite(v)]
    low, top = value_range([r["expected_accepted"] for r in rows] + lines)
    bar_px = 0.8 * (PAGE_WIDTH - _MARGIN_L - _MARGIN_R) / max(1, len(rows))     # Plotly's bars: 80% of a slot
    label_px = len("1.0000") * 0.6 * (TICK_SIZE - 1) + 4
    labelled = all(v >= low + LABEL_BAND * (top - low) for v in lines) and bar_px >= label_px
    for r in rows:
        lossy = r["fidelity_tv"] > LOSSLESS_TOL
        fig.add_trace(go.Bar(
            x=[short(r["method"])], y=[r["expected_accepted"]], name=short(r["method"]), showlegend=False,
            marker=dict(color=color(r["method"]), pattern=dict(shape="/" if lossy else "", fillmode="overlay",
                                                                   solidity=0.2)),
            hovertemplate=(f"{short(r['method'])}<br>E[τ] = %{{y:.6f}}<br>"
                           f"fidelity error (TV) = {r['fidelity_tv']:.2e}"
                           f"{' (not lossless)' if lossy else ''}<extra></extra>")))
    for key, value in bounds.items():
        if value is None or not np.isfinite(value):
            continue
        name, col, dash = BOUND_STYLE[key]
        fig.add_trace(go.Scatter(
            x=[short(r["method"]) for r in rows], y=[value] * len(rows), mode="lines",
            name=f"{name} = {value:.4f}", line=dict(color=col, dash=dash, width=2.5),
            hovertemplate=f"{name}: {value:.6f}<extra></extra>"))
    if labelled:
        fig.add_trace(go.Scatter(
            x=[short(r["method"]) for r in rows], y=[low + 0.02 * (top - low)] * len(rows), mode="text",
            text=[f"{r['expected_accepted']:.4f}" for r in rows], textposition="top center",
            textfont=dict(size=TICK_SIZE - 1, color=[_ink(color(r["method"])) for r in rows]),
            hoverinfo="skip", showlegend=False, name="values", cliponaxis=False))
    fig.update_yaxes(range=[low, top])
    return _layout(fig, "Expected accepted tokens per iteration E[τ] (exact), with bounds",
                   "method (hatched = not lossless)", "E[τ] (exact)", height=440)


def tau_vs_K(curves: Mapping[str, Sequence[tuple[int, float]]],
             bounds: Mapping[str, Sequence[tuple[int, float]]], current_K: int | None = None) -> go.Figure:
    """E[τ] against K: one line per method, dashed lines for the bounds (a monotone method never
    goes down)."""
    fig = go.Figure()
    for method, pts in curves.items():
        if not pts:
            continue
        ks, vals = zip(*pts)
        fig.add_trace(go.Scatter(x=list(ks), y=list(vals), mode="lines+markers", name=short(method),
                                 line=dict(color=color(method), width=3),
                                 marker=dict(symbol=symbol(method), size=10),
                                 hovertemplate=f"{short(method)}<br>K = %{{x}}<br>E[τ] = %{{y:.5f}}<extra></extra>"))
    for key, pts in bounds.items():
        if not pts:
            continue
        ks, vals = zip(*pts)
        name, col, dash = BOUND_STYLE[key]
        fig.add_trace(go.Scatter(x=list(ks), y=list(vals), mode="lines+markers", name=name,
                                 marker=dict(symbol=BOUND_SYMBOLS[key], size=10),
                                 line=dict(color=col, dash=dash, width=2.5),
                                 hovertemplate=f"{name}<br>K = %{{x}}<br>%{{y:.5f}}<extra></extra>"))
    if current_K is not None:
        fig.add_vline(x=current_K, line=dict(color="#999999", dash="dot", width=1))
    fig.update_xaxes(dtick=1)
    return _layout(fig, "E[τ] against the number of drafts K (exact)", "number of drafts K",
                   "E[τ] (exact)")


def coupling_heatmap(multisets: Sequence[Sequence[Sequence[int]]], probabilities: Sequence[float],
                     plans: Sequence[Mapping[tuple[tuple[int, ...], int], float]],
                     max_rows: int = 25) -> go.Figure:
    """The optimal lossless verifier's plan: row = draft multiset m, column = output s·y, cell =
    π(m, s, y)/P(m).  The most likely ``max_rows`` multisets are shown."""
    order = np.argsort(-np.asarray(probabilities))[:max_rows]
    outputs = sorted({s + (y,) for i in order for (s, y) in plans[i]}, key=lambda u: (len(u), u))
    col = {u: j for j, u in enumerate(outputs)}
    z = np.full((len(order), len(outputs)), np.nan)
    for r, i in enumerate(order):
        for (s, y), w in plans[i].items():
            z[r, col[s + (y,)]] = w
    ylabels = ["{" + ", ".join(tokens_str(x) for x in multisets[i]) + f"}}  P={probabilities[i]:.3f}"
               for i in order]
    xlabels = [tokens_str(u[:-1]) + "·" + str(u[-1]) for u in outputs]
    fig = go.Figure(go.Heatmap(
        z=z, x=xlabels, y=ylabels, colorscale="Blues", zmin=0, zmax=1,
        colorbar=dict(title="P(output | drafts)"),
        hovertemplate="drafts %{y}<br>output s·y = %{x}<br>probability %{z:.4f}<extra></extra>"))
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category")
    return _layout(fig, "Optimal lossless verifier: which output (accepted prefix s, extra y) to emit for each draft multiset",
                   "output s·y (accepted prefix · extra token)", "draft multiset m<br>(most likely first)",
                   height=max(360, 22 * len(order) + 160))


def tau_histograms(exact: Mapping[str, Sequence[float]],
                   mc: Mapping[str, tuple[Sequence[float], Sequence[float], Sequence[float]]],
                   n: int) -> go.Figure:
    """One panel per method, four to a row: the exact law of τ (bars) and the Monte Carlo
    frequencies with 95 % Wilson intervals (points); the panels of a row share their y-axis.  Each
    panel's x-axis is titled "τ" alone (the figure's title says what τ is): a longer title is wider
    than a panel of a 800-px chart and runs into its neighbour's.

    The grid is laid out here rather than by ``plotly.subplots.make_subplots``, and the figure is
    built from plain dicts in one go: with seven methods that took 0.17 s of the server's time on
    every rerun of the toy laboratory, this takes a fifth of it."""
    methods = list(exact)
    cols = min(4, max(1, len(methods)))
    rows = max(1, -(-len(methods) // cols))
    h_gap, v_gap = 0.04, 0.16
    width, height = (1 - h_gap * (cols - 1)) / cols, (1 - v_gap * (rows - 1)) / rows
    traces: list[dict] = []
    layout: dict = {"annotations": []}
    for i, m in enumerate(methods):
        r, c = divmod(i, cols)
        ax = "" if i == 0 else str(i + 1)
        x0, y1 = round(c * (width + h_gap), 12), round(1 - r * (height + v_gap), 12)
        row_y = "y" if r == 0 else f"y{r * cols + 1}"          # the row's first panel's y-axis
        layout[f"xaxis{ax}"] = dict(domain=[x0, round(x0 + width, 12)], anchor=f"y{ax}", dtick=1,
                                    title=dict(text="τ"))
        layout[f"yaxis{ax}"] = (dict(domain=[round(y1 - height, 12), y1], anchor=f"x{ax}", title=dict(text="probability"))
                                if c == 0 else
                                dict(domain=[round(y1 - height, 12), y1], anchor=f"x{ax}", matches=row_y, showticklabels=False))
        layout["annotations"].append(dict(text=short(m), x=x0 + width / 2, y=y1, xref="paper", yref="paper",
                                          xanchor="center", yanchor="bottom", showarrow=False, font=dict(size=16)))
        pmf = np.asarray(exact[m], dtype=np.float64)
        taus = list(range(pmf.size))
        traces.append(dict(type="bar", x=taus, y=pmf, xaxis=f"x{ax}", yaxis=f"y{ax}", marker=dict(color=color(m)),
                           opacity=0.55, name="exact law", legendgroup="exact", showlegend=i == 0,
                           hovertemplate=f"{short(m)} exact<br>P(τ=%{{x}}) = %{{y:.4f}}<extra></extra>"))
        if m in mc:
            freq, lo, hi = (np.asarray(a, dtype=np.float64) for a in mc[m])
            traces.append(dict(
                type="scatter", x=taus, y=freq, xaxis=f"x{ax}", yaxis=f"y{ax}", mode="markers",
                marker=dict(color="#222222", size=7, symbol="circle"),
                error_y=dict(type="data", symmetric=False, array=hi - freq, arrayminus=freq - lo, color="#222222"),
                name=f"Monte Carlo, n = {n:,} (95% interval)", legendgroup="mc",
                showlegend=not any(t.get("legendgroup") == "mc" for t in traces),   # once, on the first
                hovertemplate=f"{short(m)} Monte Carlo<br>τ=%{{x}}: %{{y:.4f}}<extra></extra>"))
    fig = _layout(go.Figure(data=traces, layout=layout), "Law of τ, the accepted draft tokens: exact (bars) "
                  "against Monte Carlo (points with 95% intervals)", None, None, height=300 * rows + 120)
    # the first row's panel titles sit above the plot area: a line more of top margin for them
    return fig.update_layout(margin_t=fig.layout.margin.t + _TITLE_LINE_PX,
                             height=fig.layout.height + _TITLE_LINE_PX)


def gain_by_depth(rows: Sequence[Mapping]) -> go.Figure:
    """P(τ ≥ d) against the depth d, one line per method, SD's dashed in grey unless SD is one of the
    methods (rows of ``core.analysis.depth_gain.depth_rows``): where a method earns its accepted tokens."""
    fig = go.Figure()
    methods = list(dict.fromkeys(r["method"] for r in rows))
    for m in methods:
        pts = [r for r in rows if r["method"] == m]
        fig.add_trace(go.Scatter(x=[r["depth"] for r in pts], y=[r["P(τ ≥ d)"] for r in pts], mode="lines+markers",
                                 name=short(m), line=dict(color=color(m), width=3), marker=dict(symbol=symbol(m), size=10),
                                 customdata=[r["gain"] for r in pts],
                                 hovertemplate=f"{short(m)}<br>d = %{{x}}<br>P(τ ≥ d) = %{{y:.5f}}"
                                               "<br>gain over SD = %{customdata:.5f}<extra></extra>"))
    sd = [r for r in rows if r["method"] == methods[0]] if methods and BASELINE not in methods else []
    if sd:
        fig.add_trace(go.Scatter(x=[r["depth"] for r in sd], y=[r["SD's P(τ ≥ d)"] for r in sd], mode="lines+markers",
                                 name="SD (one draft)", line=dict(color="#888888", dash="dash", width=2.5),
                                 marker=dict(symbol="diamond-open", size=10),
                                 hovertemplate="SD<br>d = %{x}<br>P(τ ≥ d) = %{y:.5f}<extra></extra>"))
    fig.update_xaxes(dtick=1)
    return _layout(fig, "Gain by depth: P(τ ≥ d) of each method beside SD's", "depth d", "P(τ ≥ d) (exact)")
