"""The toy laboratory's charts: E[τ] per rule and against K, the coupling, τ's histograms, the gain by depth."""
from __future__ import annotations

from typing import Collection, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from core.analysis.exact import LOSSLESS_TOL
from core.rules.registry import BASELINE, REGISTRY
from pages.ui.figures.style import BOUND_STYLE, BOUND_SYMBOLS, TICK_SIZE, bound_name, color, short, symbol
from pages.ui.figures.layout import (PAGE_WIDTH, _MARGIN_L, _MARGIN_R, _TITLE_LINE_PX, _layout, bar_range, close,
                                     value_range)
from pages.ui.text import number
from pages.ui.figures.trees import tokens_str


# ------------------------------------------------------------------------------------------------
# Toy laboratory
# ------------------------------------------------------------------------------------------------

def _ink(fill: str) -> str:
    """Black or white, whichever reads better on ``fill`` (#rrggbb; WCAG's relative luminance)."""
    rgb = [int(fill.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lum = sum(w * (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4)
              for w, c in zip((0.2126, 0.7152, 0.0722), rgb))
    return "#000000" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "#ffffff"


#: The share of the plot's width the panel of lossy rules takes per rule, and at least.
_LOSSY_SHARE, _LOSSY_MIN, _LOSSY_MAX = 0.12, 0.2, 0.6
#: The gap between the two panels (a share of the plot's width).
_PANEL_GAP = 0.06
#: The panel titles, above each panel.
LOSSLESS_PANEL, LOSSY_PANEL = "lossless", "not lossless: not comparable"


def _values_panel(fig: go.Figure, rows: Sequence[Mapping], axis: str, lines: Sequence[float],
                  width_px: float) -> tuple[str, list[float]]:
    """One panel of ``expected_tau_chart`` on axes x``axis``, y``axis``: a bar from 0 per method, or a
    dot per method when the values (with ``lines``, the bounds drawn over the panel) are close
    (``close``); each value written at the foot of its bar or under its dot when the slots are wide
    enough for it (``width_px`` the panel's width); returns the form ("bars" or "dots") and the
    value axis's range."""
    values = [r["expected_accepted"] for r in rows]
    baseline = next((r["expected_accepted"] for r in rows if r["method"] == BASELINE), None)
    dots = close(values + list(lines))
    span = value_range(values + list(lines)) if dots else bar_range(values + list(lines))
    slot_px = width_px / max(1, len(rows))
    labelled = 0.8 * slot_px >= len("1.0000") * 0.6 * (TICK_SIZE - 1) + 4
    x, y = f"x{axis}", f"y{axis}"
    for r in rows:
        name, tv = short(r["method"]), r["fidelity_tv"]
        why = REGISTRY[r["method"]].below_baseline
        below = (f"<br>below {short(BASELINE)}: {why}" if why and baseline is not None
                 and r["expected_accepted"] < baseline - LOSSLESS_TOL else "")
        hover = (f"{name}<br>E[τ] = %{{y:.6f}}<br>fidelity error (TV) = {number(tv)}"
                 f"{' (not lossless)' if tv > LOSSLESS_TOL else ''}{below}<extra></extra>")
        value = f"{r['expected_accepted']:.4f}"
        if dots:
            fig.add_trace(go.Scatter(
                x=[name], y=[r["expected_accepted"]], xaxis=x, yaxis=y, name=name, showlegend=False,
                mode="markers+text" if labelled else "markers", text=[value], textposition="bottom center",
                textfont=dict(size=TICK_SIZE - 1), cliponaxis=False,
                marker=dict(color=color(r["method"]), symbol=symbol(r["method"]), size=18,
                            line=dict(color="#222222", width=1)),
                hovertemplate=hover))
        else:
            fig.add_trace(go.Bar(
                x=[name], y=[r["expected_accepted"]], xaxis=x, yaxis=y, name=name, showlegend=False,
                marker=dict(color=color(r["method"])), text=[value] if labelled else None,
                textposition="inside", insidetextanchor="start",
                textfont=dict(size=TICK_SIZE - 1, color=_ink(color(r["method"]))), hovertemplate=hover))
    return ("dots" if dots else "bars"), span


def expected_tau_chart(rows: Sequence[Mapping], bounds: Mapping[str, float | None]) -> go.Figure:
    """Exact E[τ] per method, the bounds as horizontal lines, lossless and lossy methods apart.

    A method measured lossy (fidelity error above ``LOSSLESS_TOL``) buys its E[τ] with another
    output law: it is drawn in a panel of its own on the right, on its own axis, where it neither
    meets the bounds (which are about lossless verifiers) nor squashes the lossless values (Typical
    at T = 0.3 reaches 2 where the lossless rules stay under 1.3).  In each panel a value is a bar
    from 0 (its length is its value) or, where the values are close (``close``: the binary toy's
    10/9 against 11/9), a dot on an axis that spans them (``value_range``), so that their differences
    show without a bar that lies.  Each value is written at the foot of its bar or under its dot
    where the slots are wide enough at ``PAGE_WIDTH``; hover gives it to six places.

    rows: dicts with keys method, expected_accepted, fidelity_tv."""
    fig = go.Figure()
    lossless = [r for r in rows if r["fidelity_tv"] <= LOSSLESS_TOL]
    lossy = [r for r in rows if r["fidelity_tv"] > LOSSLESS_TOL]
    lines = {k: v for k, v in bounds.items() if v is not None and np.isfinite(v)}
    plot_px = PAGE_WIDTH - _MARGIN_L - _MARGIN_R
    lossy_share = min(_LOSSY_MAX, max(_LOSSY_MIN, _LOSSY_SHARE * len(lossy)))
    split = (1.0 - lossy_share - _PANEL_GAP) if lossless and lossy else 1.0
    panels = []
    if lossless:
        panels.append(("", lossless, list(lines.values()), [0.0, split], LOSSLESS_PANEL))
    if lossy:
        panels.append(("2" if lossless else "", lossy, [], [split + _PANEL_GAP if lossless else 0.0, 1.0], LOSSY_PANEL))
    for axis, panel_rows, panel_lines, domain, title in panels:
        form, span = _values_panel(fig, panel_rows, axis, panel_lines, plot_px * (domain[1] - domain[0]))
        fig.update_layout({f"xaxis{axis}": dict(domain=domain, anchor=f"y{axis}", type="category"),
                           f"yaxis{axis}": dict(anchor=f"x{axis}", range=span, rangemode="tozero" if form == "bars"
                                                else "normal")})
        if len(panels) > 1:
            fig.add_annotation(text=title, x=(domain[0] + domain[1]) / 2, y=1.0, xref="paper", yref="paper",
                               xanchor="center", yanchor="bottom", showarrow=False, font=dict(size=TICK_SIZE))
    names = [short(r["method"]) for r in lossless]
    for key, value in lines.items():
        if not lossless:
            break
        _, col, dash = BOUND_STYLE[key]
        name = bound_name(key, value, lines.get("lp_optimum"))
        fig.add_trace(go.Scatter(
            x=names, y=[value] * len(names), mode="lines", name=f"{name} = {value:.4f}",
            line=dict(color=col, dash=dash, width=2.5), hovertemplate=f"{name}: {value:.6f}<extra></extra>"))
    fig = _layout(fig, "Expected accepted tokens per iteration E[τ] (exact), with bounds", None, None, height=440)
    fig.update_layout(xaxis_title_text="method", yaxis_title_text="E[τ] (exact)")
    if len(panels) > 1:      # the panel titles sit above the plot area: a line more of top margin
        fig.update_layout(margin_t=fig.layout.margin.t + _TITLE_LINE_PX, height=fig.layout.height + _TITLE_LINE_PX)
    return fig


#: The axes E[τ] is drawn against (``tau_curves``): (title, x-axis title, hover name, tick step).
CURVE_AXES = {
    "K": ("E[τ] against the number of drafts K (exact)", "number of drafts K", "K", 1),
    "T": ("E[τ] against the temperature T (exact)", "temperature T (both models)", "T", None),
    "L": ("E[τ] against the draft length L (exact)", "draft length L", "L", 1),
}
#: What a method's name adds in the legend when some of its points are not lossless (drawn open).
LOSSY_MARK = " (open marks: not lossless)"


def tau_curves(axis: str, curves: Mapping[str, Sequence[tuple[float, float]]],
               bounds: Mapping[str, Sequence[tuple[float, float]]], current: float | None = None,
               lossy: Mapping[str, Collection[float]] | None = None,
               hidden: Collection[str] = ()) -> go.Figure:
    """E[τ] against K, T or L (``axis``, ``CURVE_AXES``): one line per method, the bounds as grey lines
    with open markers; the dotted vertical line marks ``current``.  A method's points at the x in
    ``lossy[method]`` (its output law is not q there) are drawn open and its legend name says so
    (``LOSSY_MARK``): such a value is bought with another output law.  The series named in ``hidden``
    (methods or bound keys) start hidden, one click on their legend entry away."""
    title, xlab, x_name, dtick = CURVE_AXES[axis]
    lossy = lossy or {}
    fig = go.Figure()
    for method, pts in curves.items():
        if not pts:
            continue
        xs, vals = zip(*pts)
        bad = set(lossy.get(method, ()))
        fig.add_trace(go.Scatter(
            x=list(xs), y=list(vals), mode="lines+markers", name=short(method) + (LOSSY_MARK if bad else ""),
            line=dict(color=color(method), width=3),
            marker=dict(symbol=[symbol(method) + ("-open" if x in bad else "") for x in xs], size=10,
                        line=dict(color=color(method), width=2)),
            visible="legendonly" if method in hidden else True,
            customdata=["not lossless" if x in bad else "lossless" for x in xs],
            hovertemplate=f"{short(method)}<br>{x_name} = %{{x}}<br>E[τ] = %{{y:.5f}}<br>%{{customdata}}<extra></extra>"))
    lp = dict(bounds.get("lp_optimum") or [])
    for key, pts in bounds.items():
        if not pts:
            continue
        xs, vals = zip(*pts)
        _, col, dash = BOUND_STYLE[key]
        name = bound_name(key, list(vals), [lp.get(x) for x in xs] if lp else None)
        fig.add_trace(go.Scatter(x=list(xs), y=list(vals), mode="lines+markers", name=name,
                                 marker=dict(symbol=BOUND_SYMBOLS[key], size=10),
                                 line=dict(color=col, dash=dash, width=2.5),
                                 visible="legendonly" if key in hidden else True,
                                 hovertemplate=f"{name}<br>{x_name} = %{{x}}<br>%{{y:.5f}}<extra></extra>"))
    if current is not None:
        fig.add_vline(x=current, line=dict(color="#999999", dash="dot", width=1))
    xs_all = [x for pts in [*curves.values(), *bounds.values()] for x, _ in pts]
    if axis == "K" and xs_all and max(xs_all) > 8:          # K to 64: doublings equally spaced
        fig.update_xaxes(type="log", tickvals=[k for k in (1, 2, 4, 8, 16, 32, 64) if k <= max(xs_all)])
    elif dtick:
        fig.update_xaxes(dtick=dtick)
    return _layout(fig, title, xlab, "E[τ] (exact)")


def loss_gain_chart(frontier_pts: Sequence[tuple[float, float]],
                    knobs: Mapping[str, Sequence[tuple[float, float, str]]],
                    points: Mapping[str, tuple[float, float]]) -> go.Figure:
    """E[τ] against the total variation from q: the loss-gain frontier (the best any verifier does
    within that TV, ``core.bounds.frontier``) as a grey line, each lossy rule's knob as a curve of
    (TV, E[τ]) points (``knobs``: a series name → points with their setting's label, the series
    named "rule: parameter"), and each other rule at its own (TV, E[τ]) (``points``, by rule)."""
    fig = go.Figure()
    if frontier_pts:
        xs, ys = zip(*frontier_pts)
        fig.add_trace(go.Scatter(x=list(xs), y=list(ys), mode="lines+markers", name="frontier: the best any "
                                 "verifier does at this TV", line=dict(color="#555555", width=2.5),
                                 marker=dict(symbol="diamond-open", size=9),
                                 hovertemplate="frontier<br>TV ≤ %{x:.4f}<br>E[τ] ≤ %{y:.5f}<extra></extra>"))
    for series, pts in knobs.items():
        method = series.split(":")[0]
        xs, ys, labels = zip(*pts)
        fig.add_trace(go.Scatter(x=list(xs), y=list(ys), mode="lines+markers", name=f"{short(method)}:{series.split(':', 1)[1]}",
                                 line=dict(color=color(method), width=2, dash="dot"),
                                 marker=dict(symbol=symbol(method), size=9), customdata=list(labels),
                                 hovertemplate=f"{short(method)} %{{customdata}}<br>TV = %{{x:.4f}}<br>"
                                               "E[τ] = %{y:.5f}<extra></extra>"))
    for method, (tv, e) in points.items():
        fig.add_trace(go.Scatter(x=[tv], y=[e], mode="markers", name=short(method),
                                 marker=dict(symbol=symbol(method), size=11, color=color(method)),
                                 hovertemplate=f"{short(method)}<br>TV = %{{x:.4f}}<br>E[τ] = %{{y:.5f}}<extra></extra>"))
    return _layout(fig, "What loss buys: E[τ] against the total variation from q (exact)",
                   "TV of the completed output law from q", "E[τ] (exact)")


def tau_vs_K(curves: Mapping[str, Sequence[tuple[int, float]]],
             bounds: Mapping[str, Sequence[tuple[int, float]]], current_K: int | None = None,
             **kw) -> go.Figure:
    """E[τ] against K (``tau_curves`` on the K axis): a method that uses its drafts well never goes down."""
    return tau_curves("K", curves, bounds, current_K, **kw)


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
