"""Every Plotly figure of the explorer, in one place, in one slide-ready style.

The style is set here once: ``TEMPLATE`` (fonts sized for a 1280×720 slide, ``SLIDE``), which
``_layout`` gives every figure, so what the page shows is what an export shows.  One colour per
method on every page (``color``, read from the rule's own class, from a colour-blind-safe palette,
``RULE_PALETTE``) and one marker per method (``symbol``: every registered rule its own), one grey
line style and open marker per bound (``BOUND_STYLE``, ``BOUND_SYMBOLS``).  Every chart reads from the
back row: titles wrap (``wrap``), legends lie below the plot with the rows they need (``legend_rows``),
bars of close values are on an axis that shows their gaps (``value_range``), and an export is laid
out for its own width (``for_width``).  Series that coincide are said to (``identical_groups``): "RBV = Traversal here"
in the legend, the one drawn on top dashed, rather than one hidden under the other.
Functions take plain data (numbers, dicts, core result objects) and return ``go.Figure``; nothing here
computes an algorithm: the numbers come from ``core``.
"""
from __future__ import annotations

import os
import re
import shutil
import threading
from typing import Callable, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from core.analysis.exact import LOSSLESS_TOL
from core.data.fractions import fraction
from core.rules.registry import REGISTRY

# ------------------------------------------------------------------------------------------------
# The style: one template, colours, markers and names
# ------------------------------------------------------------------------------------------------

#: The slide every chart is laid out for (px): an export is this wide (``image``), and the fonts
#: below stay readable at this size, from the back of a lecture room.
SLIDE = (1280, 720)
#: Font sizes (px): the body and hover text, tick labels, the legend, axis titles, the figure's title.
FONT_SIZE, TICK_SIZE, LEGEND_SIZE, AXIS_TITLE_SIZE, TITLE_SIZE = 16, 15, 15, 17, 20
#: A value label smaller than this is not drawn (``uniformtext``): hover gives the value instead.
MIN_LABEL_SIZE = 12

#: Paul Tol's "muted" scheme (https://personal.sron.nl/~pault/, "Colour schemes"): nine colours that
#: stay distinct with every common colour-vision deficiency; the figures that draw no rule (draft
#: laws, budgets) take their colours from it.
TOL_MUTED = ("#cc6677", "#332288", "#ddcc77", "#117733", "#88ccee", "#882255", "#44aa99", "#999933", "#aa4499")
#: Okabe and Ito's colour-blind-safe scheme ("Color Universal Design", 2008) without its yellow, too
#: pale on white: black, orange, sky blue, bluish green, blue, vermillion, reddish purple.
OKABE_ITO = ("#000000", "#e69f00", "#56b4e9", "#009e73", "#0072b2", "#d55e00", "#cc79a7")
#: The rules' palette: Okabe and Ito's seven and five of Tol's muted colours (wine, olive, indigo,
#: sand, green), every rule's ``color`` (``core/rules/*.py``) one of these, each its own.  Any two
#: stay at least ΔE 13 apart (CIELAB) with normal vision and with each simulated dichromacy
#: (``tests/test_figures.py``), and the rules most often drawn together differ in hue family, not
#: only in shade: BV blue, RBV bluish green, SpecTr-GBV vermillion (Sweeps' default three), RBV
#: against Traversal (green against reddish purple: they often coincide), BV against Best-of-K+BV
#: (blue against orange).
RULE_PALETTE = OKABE_ITO + ("#882255", "#999933", "#332288", "#ddcc77", "#117733", "#9922ff", "#8877ee", "#442200")

# White, with light grid lines (plotly_white's look).  Layout only: a template built on plotly_white
# itself carries defaults for every trace type, and building it imported about 140 more modules on
# the start page's first run (0.3 s) and put 10 kB more into every chart sent to the browser.
_AXIS = dict(gridcolor="#e5e9f0", linecolor="#c9ced6", zerolinecolor="#c9ced6", zerolinewidth=2, ticks="",
             automargin=True, title=dict(font=dict(size=AXIS_TITLE_SIZE), standoff=12), tickfont=dict(size=TICK_SIZE))
TEMPLATE = go.layout.Template(layout=dict(
    paper_bgcolor="white", plot_bgcolor="white", hovermode="closest",
    font=dict(family="Open Sans, Arial, sans-serif", size=FONT_SIZE, color="#222222"),
    title=dict(font=dict(size=TITLE_SIZE)),
    legend=dict(font=dict(size=LEGEND_SIZE)),
    hoverlabel=dict(font=dict(size=FONT_SIZE - 2), align="left"),
    colorway=list(TOL_MUTED),
    uniformtext=dict(minsize=MIN_LABEL_SIZE, mode="hide"),
    xaxis=_AXIS, yaxis=_AXIS,
))
#: Registered once, by name: every figure of ``figures`` uses it (``_layout``); so can a notebook.
pio.templates["explorer"] = TEMPLATE

#: The one series that is not a rule: the target model decoding alone (the speedup baseline).
#: Every rule's colour and short name are its own class attributes (``core.rules.base.Verifier``).
_BASELINE = {"autoregressive": ("#444444", "Target alone")}

#: One marker per series, in the registry's order, so that lines tell the rules apart without colour
#: too (a print in black and white, a projector that washes colours out).
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "triangle-down", "cross", "x", "star", "pentagon",
           "hexagon", "star-triangle-up", "hourglass", "triangle-left", "star-diamond", "bowtie")

#: Bounds: (legend name, colour, dash): greys, so that colour always means a rule; the dash tells
#: them apart.
BOUND_STYLE: dict[str, tuple[str, str, str]] = {
    "lp_optimum": ("LP optimum (best lossless verifier)", "#000000", "solid"),
    "acausal": ("Acausal coupling bound (unattainable)", "#555555", "dash"),
    "claimed_cic": ("Claimed E_CIC (SpecTr-GBV paper)", "#555555", "dot"),
    "greedy": ("Greedy relaxation (upper bound)", "#888888", "dashdot"),
}
#: Each bound's marker: open, so that a bound's point never reads as a rule's.
BOUND_SYMBOLS = {"lp_optimum": "diamond-open", "acausal": "square-open", "claimed_cic": "star-open",
                 "greedy": "triangle-down-open"}
#: Each bound's name where a line's worth of room is all there is (a metric's label).
BOUND_SHORT = {"lp_optimum": "LP optimum", "acausal": "Acausal bound", "claimed_cic": "Claimed E_CIC",
               "greedy": "Greedy relaxation"}

#: The draft tree's nodes: Okabe and Ito's bluish green and vermillion for accepted and rejected (a
#: pair that red-green colour blindness keeps apart; rejected nodes are crosses as well).
STATUS_COLORS = {
    "accepted": "#009e73", "passed": "#99d8c9", "rejected": "#d55e00", "untested": "#c7c7c7",
    "root": "#444444", "extra": "#ffbf00", "current": "#0072b2",
}

#: ``st.plotly_chart(fig, config=CHART_CONFIG)`` for every chart (``charts.draw``): the modebar's
#: camera button saves a PNG at three times the on-screen size (about 2,000 px wide: slide resolution).
CHART_CONFIG = {"toImageButtonOptions": {"format": "png", "scale": 3, "filename": "speculative-decoding"},
                "displaylogo": False}
#: An exported PNG (``image``) is this many times ``SLIDE``'s width: sharp on a high-density screen.
PNG_SCALE = 2


#: Where ``image`` looks for a Chrome or Chromium when ``BROWSER_PATH`` is not set.
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "microsoft-edge")
_EXPORT_LOCK = threading.Lock()
_EXPORT_SERVER: list[bool] = []


def export_browser() -> str | None:
    """The browser ``image`` renders with: ``$BROWSER_PATH`` if it is an executable file, else the
    first of ``BROWSERS`` on the PATH; None when there is none."""
    path = os.environ.get("BROWSER_PATH")
    if path:
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    return next((found for name in BROWSERS if (found := shutil.which(name))), None)


def image(fig: go.Figure, fmt: str = "svg", width: int = SLIDE[0], height: int | None = None) -> bytes:
    """The figure as an SVG file (vector: sharp at any slide size), ``width`` px wide (a slide's) and
    as tall as its layout says (else a slide's height); with ``fmt="png"``, a PNG of ``PNG_SCALE``
    times that size.

    Plotly.js's modebar downloads one format only (``CHART_CONFIG``: a PNG of the chart as shown), so
    the slide-sized exports are rendered here by Kaleido, Plotly's own static-image exporter, which
    drives a headless Chrome or Chromium (``export_browser``), the figure laid out for that width
    first (``for_width``: a legend needs fewer rows on a wider chart).  Kaleido's browser is started on the
    first export and kept for the process (about 0.25 s an export after that, about 3 s for the
    first).  Exports are serialized."""
    import warnings

    import kaleido

    browser = export_browser()
    if browser is None:
        raise FileNotFoundError("Export needs Chrome or Chromium: install one, or set BROWSER_PATH "
                                "to its executable")
    os.environ.setdefault("BROWSER_PATH", browser)   # Kaleido then uses the same browser
    with _EXPORT_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")               # "kopts ignored when a server runs": expected
        if not _EXPORT_SERVER:
            kaleido.start_sync_server(silence_warnings=True)
            _EXPORT_SERVER.append(True)
        fig = for_width(fig, width)
        return fig.to_image(format=fmt, width=width, height=height or fig.layout.height or SLIDE[1],
                            scale=PNG_SCALE if fmt == "png" else None)


def color(method: str) -> str:
    """The method's colour, the same on every page; KeyError for a name that is no series."""
    return _BASELINE[method][0] if method in _BASELINE else REGISTRY[method].color


def short(method: str) -> str:
    """The method's legend name; KeyError for a name that is no series."""
    return _BASELINE[method][1] if method in _BASELINE else REGISTRY[method].short


def symbol(method: str) -> str:
    """The method's marker, the same on every page (``SYMBOLS``, in the registry's order)."""
    return "circle-open" if method in _BASELINE else SYMBOLS[list(REGISTRY).index(method) % len(SYMBOLS)]


#: The narrowest a chart is drawn (px): the main column of a 1280×720 window with the sidebar open
#: (820 px measured; the export, ``SLIDE``, is wider).  Titles wrap and legends are laid out for it.
PAGE_WIDTH = 800
#: Margins (px) around the plot area: left, right, top (and a line per line of the title), bottom
#: (and a row per row of the legend).
_MARGIN_L, _MARGIN_R, _MARGIN_T, _MARGIN_B = 70, 24, 24, 70
#: Height of one legend row; the width of one character of the legend's and the title's fonts,
#: generous (Open Sans and Arial average about 0.5 em), so that a line estimated to fit does fit.
_LEGEND_ROW_PX, _LEGEND_CHAR_PX, _TITLE_CHAR_PX = LEGEND_SIZE + 11, LEGEND_SIZE * 0.6, TITLE_SIZE * 0.6
#: Plotly's legend entry beside its text (px): the swatch, the gap to the text, the gap to the next.
_LEGEND_ENTRY_PX = 50
#: Height of one line of the title (px).
_TITLE_LINE_PX = round(TITLE_SIZE * 1.3)


def wrap(text: str, width_px: float, char_px: float) -> str:
    """``text`` broken into lines (``<br>``) at spaces, each at most ``width_px`` wide at ``char_px``
    a character; lines already broken stay so, and a word longer than a line stands alone."""
    most = max(8, int(width_px // char_px))
    lines: list[str] = []
    for part in (text or "").split("<br>"):
        line = ""
        for word in part.split(" "):
            if line and len(line) + 1 + len(word) > most:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(line)
    return "<br>".join(lines)


def _layout(fig: go.Figure, title: str, x: str | None, y: str | None, height: int = 420,
            series: bool = True) -> go.Figure:
    """The house style (``TEMPLATE``), series that coincide marked (``mark_identical``; not in a
    diagram, ``series=False``, whose marks are meant to overlap), the title on top, wrapped to the
    narrowest chart (``PAGE_WIDTH``) in a top margin one line taller per line, the legend at the very
    bottom of the figure (below the x-axis title, never on it), the figure taller by the legend's
    rows at that width (``legend_rows``) so that the plot keeps its ``height``, and the plot at least
    as tall as the legend; axis titles ``x`` and ``y`` on every axis ("" clears them, None leaves
    them as they are)."""
    if series:
        mark_identical(fig)
    rows = legend_rows(fig)
    title = wrap(title, PAGE_WIDTH - _MARGIN_R, _TITLE_CHAR_PX)
    lines = title.count("<br>") + 1 if title else 0
    # a legend of many rows is never taller than the plot: the plot grows to the legend's height
    height += max(0, _LEGEND_ROW_PX * rows - (height - _MARGIN_T - _TITLE_LINE_PX - _MARGIN_B))
    fig.update_layout(template="explorer",
                      # at the top of the figure, in a top margin as tall as its lines: Plotly draws the
                      # lines of a title anchored at its bottom down into the plot, so it hangs from the top
                      title=dict(text=title, x=0.0, xanchor="left", y=1.0, yref="container", yanchor="top",
                                 pad=dict(l=12, t=22)),
                      height=height + _LEGEND_ROW_PX * rows + _TITLE_LINE_PX * max(0, lines - 1),
                      margin=dict(l=_MARGIN_L, r=_MARGIN_R, t=_MARGIN_T + _TITLE_LINE_PX * lines,
                                  b=_MARGIN_B + _LEGEND_ROW_PX * rows),
                      legend=dict(orientation="h", yref="container", yanchor="bottom", y=0.0,
                                  x=0.0, xanchor="left"))
    if x is not None:   # None leaves the axes' own titles (the panels of ``tau_histograms``)
        fig.update_xaxes(title_text=x)
    if y is not None:
        fig.update_yaxes(title_text=y)
    return fig


def legend_rows(fig: go.Figure, width_px: int = PAGE_WIDTH) -> int:
    """How many rows the horizontal legend takes in a chart ``width_px`` wide: its entries (one per
    name), each its text (at ``_LEGEND_CHAR_PX`` a character) and ``_LEGEND_ENTRY_PX``, laid out as
    Plotly lays them: one row when all fit the plot area's width, else a grid whose columns are as
    wide as the widest entry."""
    names = []
    for t in fig.data:
        if t.showlegend is False or not t.name or t.name in names:
            continue
        names.append(t.name)
    if not names:
        return 0
    room = width_px - _MARGIN_L - _MARGIN_R
    lines = [n.split("<br>") for n in names]          # an entry of several lines (``mark_identical``)
    entries = [max(map(len, ls)) * _LEGEND_CHAR_PX + _LEGEND_ENTRY_PX for ls in lines]
    if sum(entries) <= room:
        return max(map(len, lines))
    columns = max(1, int(room // max(entries)))
    return sum(max(map(len, lines[i:i + columns])) for i in range(0, len(lines), columns))


def for_width(fig: go.Figure, width: int) -> go.Figure:
    """``fig`` (laid out by ``_layout`` for ``PAGE_WIDTH``) laid out for a chart ``width`` px wide: its
    horizontal legend's rows counted again at that width (``legend_rows``), the bottom margin and the
    height shorter by the rows it no longer needs, the plot's height kept.  ``fig`` itself is left
    as it is."""
    fewer = legend_rows(fig) - legend_rows(fig, width)
    if fewer <= 0 or fig.layout.legend.orientation != "h" or not fig.layout.height:
        return fig
    return go.Figure(fig).update_layout(height=fig.layout.height - _LEGEND_ROW_PX * fewer,
                                        margin_b=fig.layout.margin.b - _LEGEND_ROW_PX * fewer)


def value_range(values: Sequence[float], headroom: float = 0.12) -> list[float]:
    """A y-axis range for bars of close values: from somewhat below the smallest (half the spread
    below it, never below 0) to ``headroom`` of the spread above the largest, so that 1.40 and 1.62
    differ on the slide as they do in the numbers; from 0 when the values are far apart (the half
    spread below the smallest reaches 0) or all equal."""
    vals = [float(v) for v in values if v is not None and np.isfinite(v)]
    if not vals:
        return [0.0, 1.0]
    lo, hi = min(vals), max(vals)
    spread = hi - lo
    if spread <= 1e-12 * max(1.0, abs(hi)):
        return [0.0, hi * (1 + headroom) if hi > 0 else 1.0]
    return [max(0.0, lo - 0.5 * spread), hi + headroom * spread]


# ------------------------------------------------------------------------------------------------
# Series that coincide
# ------------------------------------------------------------------------------------------------

#: Two series coincide when their y values differ by at most this much at every x (relative to 1 or
#: to the value, whichever is larger): far below what a chart can show, far above float64 round-off
#: on these numbers.
SAME_TOL = 1e-12
#: The dash of the second, third, … series of a group that coincide: drawn over the first, each lets
#: the ones below show through.
_OVER_DASH = ("dash", "dot", "dashdot", "longdash")


def _points(trace) -> tuple | None:
    """A line or marker series' (axes, x, y) for comparison, or None for any other trace (bars,
    text, a series without a legend entry: a band, an edge of a tree)."""
    if trace.type != "scatter" or trace.showlegend is False or not trace.name or trace.x is None \
            or trace.y is None or not len(trace.x) or (trace.mode or "lines").replace("text", "").strip("+") == "":
        return None
    y = np.asarray([np.nan if v is None else v for v in trace.y], dtype=np.float64)
    return (trace.xaxis or "x", trace.yaxis or "y"), tuple(trace.x), y


def identical_groups(fig: go.Figure) -> list[list[int]]:
    """The series of ``fig`` that draw the same points, as groups of trace indices in drawing order
    (two or more each): lines or markers on the same axes, at the same x, whose y agree within
    ``SAME_TOL`` everywhere (gaps in the same places).  One drawn exactly over another would hide it."""
    points = {i: p for i, t in enumerate(fig.data) if (p := _points(t)) is not None}
    groups: list[list[int]] = []
    grouped: set[int] = set()
    for i, (axes, x, y) in points.items():
        if i in grouped:
            continue
        group = [i]
        for j, (axes_j, x_j, y_j) in points.items():
            if j <= i or j in grouped or axes_j != axes or x_j != x or y_j.shape != y.shape:
                continue
            gaps = np.isnan(y)
            if (gaps == np.isnan(y_j)).all() and np.all(
                    np.abs(y[~gaps] - y_j[~gaps]) <= SAME_TOL * np.maximum(1.0, np.abs(y[~gaps]))):
                group.append(j)
        if len(group) > 1:
            groups.append(group)
            grouped.update(group)
    return groups


def mark_identical(fig: go.Figure) -> go.Figure:
    """Say in the legend which series coincide ("RBV = Traversal here", each keeping its own entry,
    which hides it alone), and dash every one drawn over another, so that all their colours show.
    A value the names end with, the same in each ("LP optimum = 1.2222"), is said once, at the end.
    A name longer than the narrowest plot is wide wraps onto lines (``legend_rows`` counts them)."""
    for group in identical_groups(fig):
        names = [fig.data[i].name for i in group]
        value = re.search(r" = [-+0-9.e]+$", names[0])
        value = value.group() if value and all(n.endswith(value.group()) for n in names) else ""
        names = [n[:len(n) - len(value)] for n in names]
        for k, i in enumerate(group):
            trace = fig.data[i]
            trace.name = wrap(" = ".join([names[k]] + names[:k] + names[k + 1:]) + value + " here",
                              PAGE_WIDTH - _MARGIN_L - _MARGIN_R - _LEGEND_ENTRY_PX, _LEGEND_CHAR_PX)
            if k:
                trace.line.dash = _OVER_DASH[(k - 1) % len(_OVER_DASH)]
    return fig


def tokens_str(node: Sequence[int], text: Callable[[int], str] | None = None) -> str:
    """A node (a token path) as text: ids separated by spaces ("1 3 2 1", never "1321", which is
    ambiguous once V > 10), or the tokens' own text joined as the model writes it; "∅" for the root
    (the empty prefix), and for the root only."""
    if not node:
        return "∅"
    if text is not None:
        return "".join(text(t) for t in node)
    return " ".join(str(t) for t in node)


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


# ------------------------------------------------------------------------------------------------
# Draft tree and one verification step
# ------------------------------------------------------------------------------------------------

def _tree_positions(nodes: Sequence[tuple[int, ...]]) -> dict[tuple[int, ...], tuple[float, float]]:
    children: dict[tuple, list] = {}
    for s in nodes:
        if s:
            children.setdefault(s[:-1], []).append(s)
    pos: dict[tuple, tuple[float, float]] = {}
    counter = [0]

    def place(s):
        kids = sorted(children.get(s, []))
        if not kids:
            y = float(counter[0])
            counter[0] += 1
        else:
            ys = [place(k) for k in kids]
            y = float(np.mean(ys))
        pos[s] = (float(len(s)), y)
        return y

    place(())
    return pos


def _drafts_through(block) -> dict[tuple[int, ...], list[int]]:
    """For every node below the root, the drafts (1-based) whose path goes through it."""
    out: dict[tuple[int, ...], list[int]] = {}
    for k in range(block.K):
        x = tuple(int(t) for t in block.draft(k))
        for d in range(1, len(x) + 1):
            out.setdefault(x[:d], []).append(k + 1)
    return out


def _drafts_label(drafts: Sequence[int]) -> str:
    return ("draft " if len(drafts) == 1 else "drafts ") + ", ".join(map(str, drafts))


def _free_row(y: float, taken: Sequence[float]) -> float:
    """A row near ``y`` at least half a row away from every y in ``taken`` (the nodes already drawn
    at that depth), the nearest such; ``y`` itself when nothing is there."""
    candidates = [y] + [y + sign * step for step in (0.5, 1.0, 1.5, 2.0) for sign in (-1, 1)]
    return next((c for c in candidates if all(abs(c - t) >= 0.5 for t in taken)), y - 0.5)


#: A row of the draft tree (px): the extra token can sit half a row from a node (``_free_row``), and
#: half a row must clear a node (``_TREE_NODE_PX``), so ``height`` is at least what the rows need.
_TREE_ROW_PX, _TREE_NODE_PX = 96, 28


def _test_status(trace, upto: int | None, accepted) -> tuple[list, bool, dict, set]:
    """(tests shown, whether every test is shown, status per node, accepted path) of a verification
    trace revealed up to its first ``upto`` tests: passed or rejected as tested, the accepted
    sub-block's nodes "accepted" once the whole trace is shown."""
    tests = list(trace.tests) if trace is not None else []
    shown = tests if upto is None else tests[:upto]
    complete = upto is None or upto >= len(tests)
    status = {t.node: "passed" if t.passed else "rejected" for t in shown}
    acc_path: set = set()
    if complete and accepted is not None:
        acc_path = {tuple(accepted[:i]) for i in range(1, len(accepted) + 1)}
        status.update({s: "accepted" for s in acc_path})
    return shown, complete, status, acc_path


def _tree_edges(fig: go.Figure, nodes, pos, acc_path: set, dashed: set = frozenset()) -> None:
    """The tree's edges: grey (dotted into the nodes of ``dashed``: sampled children), the accepted
    path thick and green."""
    lines: dict[str, tuple[list, list]] = {"edges": ([], []), "sampled edges": ([], []), "accepted path": ([], [])}
    for s in nodes:
        if s:
            (x0, y0), (x1, y1) = pos[s[:-1]], pos[s]
            xs, ys = lines["accepted path" if s in acc_path else "sampled edges" if s in dashed else "edges"]
            xs.extend([x0, x1, None])
            ys.extend([y0, y1, None])
    style = {"edges": dict(color="#bbbbbb", width=2), "sampled edges": dict(color="#888888", width=2, dash="dot"),
             "accepted path": dict(color=STATUS_COLORS["accepted"], width=6)}
    for name, (xs, ys) in lines.items():
        if xs or name == "edges":
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=style[name], hoverinfo="skip",
                                     showlegend=False, name=name))


def _tree_nodes(fig: go.Figure, groups: Mapping[str, Sequence], pos, hover: Callable, node_text: Callable,
                token_text: Callable[[int], str] | None) -> None:
    """One marker trace per non-empty group of ``_NODE_GROUPS`` (legend name, colour, symbol, white
    label)."""
    for key, members in groups.items():
        if not members:
            continue
        name, fill, mark, dark = _NODE_GROUPS[key]
        fig.add_trace(go.Scatter(
            x=[pos[s][0] for s in members], y=[pos[s][1] for s in members], mode="markers+text",
            name=name, customdata=[tokens_str(s, token_text) for s in members],
            marker=dict(size=_TREE_NODE_PX, color=fill, symbol=mark, line=dict(width=1, color="#333333")),
            text=[node_text(s) for s in members],
            textposition="middle center" if token_text is None or key == "root" else "top center",
            textfont=dict(color="white" if dark and (token_text is None or key == "root") else "black",
                          size=FONT_SIZE if token_text is None else TICK_SIZE - 2),
            hovertext=[hover(s) for s in members], hoverinfo="text"))


def _tree_ending(fig: go.Figure, pos, current, complete: bool, accepted, extra, token_text) -> None:
    """The blue ring on ``current``; once the whole trace is shown, the extra token as a gold star at
    depth τ + 1, on a row clear of that depth's nodes."""
    if current is not None and tuple(current) in pos:
        cx, cy = pos[tuple(current)]
        fig.add_trace(go.Scatter(
            x=[cx], y=[cy], mode="markers", name="blue ring: the latest step revealed",
            marker=dict(size=_TREE_NODE_PX + 8, color="rgba(0,0,0,0)", line=dict(width=4, color=STATUS_COLORS["current"])),
            hoverinfo="skip"))
    if complete and accepted is not None and extra is not None:
        ax, ay = pos[tuple(accepted)]
        depth = len(accepted) + 1
        ex_x, ex_y = float(depth), _free_row(ay, [y for s, (x, y) in pos.items() if len(s) == depth])
        fig.add_trace(go.Scatter(x=[ax, ex_x], y=[ay, ex_y], mode="lines", line=dict(color="#ffbf00", width=3, dash="dot"),
                                 hoverinfo="skip", showlegend=False))
        fig.add_trace(go.Scatter(
            x=[ex_x], y=[ex_y], mode="markers+text", name="extra token (correction or bonus)",
            marker=dict(size=_TREE_NODE_PX + 4, color=STATUS_COLORS["extra"], symbol="star", line=dict(width=1, color="#333")),
            text=[token_text(extra) if token_text else str(extra)], textfont=dict(size=FONT_SIZE if token_text is None else TICK_SIZE - 2),
            textposition="middle center" if token_text is None else "bottom center",
            hovertext=[f"extra token y = {token_text(extra) if token_text else extra}, at depth {depth}"],
            hoverinfo="text"))


def _tree_layout(fig: go.Figure, nodes, L: int, title: str, height: int | None, right: float = 1.5) -> go.Figure:
    """Depth on x (0 to L, room for the extra token and ``right`` of labels), one row per leaf (a node
    without children: above depth L too, in a rank-path or dynamic tree)."""
    parents = {s[:-1] for s in nodes if s}
    n_leaves = max(1, len([s for s in nodes if s not in parents]))
    fig.update_xaxes(title_text="depth (tokens into the block)", dtick=1, range=[-0.4, L + right],
                     showgrid=False, zeroline=False)
    fig.update_yaxes(visible=False, range=[-1.0, n_leaves - 0.2])
    fig = _layout(fig, title, "depth (tokens into the block)", None,
                  height=max(height or 0, round(_TREE_ROW_PX * (n_leaves + 0.8)) + 170), series=False)
    return fig


#: The nodes of a tree diagram: (legend name, colour, marker, whether the label is white) per group.
#: Test outcomes in Okabe and Ito's colours (``STATUS_COLORS``); a drafted tree before any test tells
#: deterministic children (a rank of p: a square) from sampled ones (a circle), in two of Tol's
#: muted colours.
_NODE_GROUPS = {
    "root": ("root ∅ (the empty prefix)", STATUS_COLORS["root"], "circle", True),
    "accepted": ("accepted sub-block", STATUS_COLORS["accepted"], "circle", True),
    "passed": ("passed, not kept", STATUS_COLORS["passed"], "circle", False),
    "rejected": ("rejected (set H)", STATUS_COLORS["rejected"], "x", True),
    "untested": ("not tested", STATUS_COLORS["untested"], "circle", False),
    "deterministic": ("deterministic: a rank of p (top-k, greedy's Top)", "#332288", "square", True),
    "sampled": ("sampled from p (iid, wor, greedy's X)", "#88ccee", "circle", False),
}


def draft_tree(block, trace=None, upto: int | None = None, accepted=None, extra: int | None = None,
               title: str = "Draft tree", token_text: Callable[[int], str] | None = None,
               height: int | None = None, current: tuple[int, ...] | None = None) -> go.Figure:
    """The draft tree of a ``DraftBlock`` (shared prefixes are shared nodes); node x = depth.

    With a ``trace``: node colours show the tests made so far (the first ``upto`` tests; all by
    default): green = accepted sub-block, light green = passed but not kept, red = rejected (the set
    H), grey = not tested.  A blue ring marks ``current`` (by default the latest test revealed, while
    some are still hidden).  When the whole trace is shown, the accepted path is drawn thick and the
    extra token hangs off its end as a gold star at depth τ + 1.  Each branch is labelled with the
    drafts that take it; hover shows p, q and the method's quantities.  ``height`` (px) is a
    minimum: the figure is as tall as its rows need (``_TREE_ROW_PX``).
    """
    nodes = block.nodes()
    pos = _tree_positions(nodes)
    through = _drafts_through(block)
    shown, complete, status, acc_path = _test_status(trace, upto, accepted)
    if current is None and shown and not complete:
        current = shown[-1].node

    fig = go.Figure()
    _tree_edges(fig, nodes, pos, acc_path)
    # the drafts on each branch (written where a set of drafts splits off, hover everywhere)
    mids: list[tuple[float, float, str, str]] = []
    for s in nodes[1:]:
        (x0, y0), (x1, y1) = pos[s[:-1]], pos[s]
        label = _drafts_label(through[s])
        branches = len(s) == 1 or through[s] != through[s[:-1]]
        mids.append(((x0 + x1) / 2, (y0 + y1) / 2, label if branches else "",
                     f"{label} go from {tokens_str(s[:-1], token_text)} to {tokens_str(s, token_text)}"))
    if mids:
        fig.add_trace(go.Scatter(x=[m[0] for m in mids], y=[m[1] for m in mids], mode="text",
                                 text=[m[2] for m in mids], textposition="top center",
                                 textfont=dict(size=TICK_SIZE - 2, color="#555555"), hovertext=[m[3] for m in mids],
                                 hoverinfo="text", showlegend=False, name="drafts on each branch"))
    quantities = trace.quantities if trace is not None else {}

    def hover(s):
        if not s:
            return f"root ∅: the empty prefix (the context before the block)<br>drafts through it: {block.K}"
        lines = [f"node {tokens_str(s, token_text)}  (depth {len(s)})",
                 f"{_drafts_label(through[s])} ({block.multiplicity(s)} in all)"]
        lines += _node_lines(s, block, token_text)
        for k, v in quantities.get(s, {}).items():
            lines.append(f"{k} = {v:.4f}")
        return "<br>".join(lines + _test_lines(s, shown, "draft"))

    groups = {"root": [], "accepted": [], "passed": [], "rejected": [], "untested": []}
    for s in nodes:
        groups["root" if not s else status.get(s, "untested")].append(s)
    _tree_nodes(fig, groups, pos, hover, _node_token(token_text), token_text)
    _tree_ending(fig, pos, current, complete, accepted, extra, token_text)
    return _tree_layout(fig, nodes, block.L, title, height)


def _node_token(token_text: Callable[[int], str] | None) -> Callable:
    """A node's label: ∅ at the root, else its last token."""
    return lambda s: "∅" if not s else (token_text(s[-1]) if token_text else str(s[-1]))


def _node_lines(s, tree, token_text) -> list[str]:
    """Hover lines of a non-root node of a draft tree (``DraftBlock`` or ``TokenTree``): p, q, q/p of
    its token given its parent, and of the whole path."""
    u, t = s[:-1], s[-1]
    pt, qt = float(tree.p[u][t]), float(tree.q[u][t])
    return [f"p(token|parent) = {pt:.4f},  q(token|parent) = {qt:.4f}",
            f"q/p = {qt / pt:.4f}" if pt > 0 else "q/p = ∞",
            f"p(s) = {tree.p_joint(s):.4g},  q(s) = {tree.q_joint(s):.4g}"]


def _test_lines(s, shown, who: str) -> list[str]:
    """Hover lines of the tests of node s among those ``shown``; ``who`` names a test's index
    ("draft": the draft that offered it; "draw": its first draw among its parent's)."""
    return [f"test ({t.kind}, {who} {t.draft + 1}): pass prob {t.prob:.4f} → {'PASSED' if t.passed else 'REJECTED'}"
            for t in shown if t.node == s]


def token_tree(tree, trace=None, upto: int | None = None, accepted=None, extra: int | None = None,
               title: str = "Token tree", current: tuple[int, ...] | None = None,
               path_q: bool = False, token_text: Callable[[int], str] | None = None) -> go.Figure:
    """A drafted token tree (``core.data.token_tree.TokenTree``, any shape and law); node x = depth.

    Children drafted deterministically (a rank of p: every child of ``topk``, greedy's Top) hang on
    solid edges, sampled ones (iid, wor, greedy's X) on dotted edges; a child drawn m > 1 times
    (``iid``) is labelled ×m on its edge.  Without a ``trace`` the nodes themselves are squares
    (deterministic) or circles (sampled); with one they show the tests revealed, as ``draft_tree``
    (the first ``upto`` tests, the ring on ``current``, the accepted path and the extra token once
    all are shown).  ``path_q`` writes q(s), the target's probability of the path to each node, beside
    it: on a tree drafted by ``topk`` at every node these terms sum to E[τ] (docs/maths.md, "Top-k
    trees: a closed form").  Hover gives p, q, the draw and the test of every node.  ``token_text``
    labels each node with its token's text instead of its id (a real model's tree)."""
    nodes = tree.nodes()
    pos = _tree_positions(nodes)
    shown, complete, status, acc_path = _test_status(trace, upto, accepted)
    if current is None and shown and not complete:
        current = shown[-1].node
    sampled = {s for s in nodes[1:] if not tree.deterministic(s)}

    fig = go.Figure()
    _tree_edges(fig, nodes, pos, acc_path, sampled)
    many = [s for s in nodes[1:] if tree.multiplicity(s) > 1]
    if many:
        fig.add_trace(go.Scatter(
            x=[(pos[s[:-1]][0] + pos[s][0]) / 2 for s in many], y=[(pos[s[:-1]][1] + pos[s][1]) / 2 for s in many],
            mode="text", text=[f"×{tree.multiplicity(s)}" for s in many], textposition="top center",
            textfont=dict(size=TICK_SIZE - 1, color="#555555"), showlegend=False, name="multiplicities",
            hovertext=[f"{tokens_str(s, token_text)} was drawn {tree.multiplicity(s)} times at "
                       f"{tokens_str(s[:-1], token_text)}" for s in many],
            hoverinfo="text"))

    def hover(s):
        if not s:
            return f"root ∅: the empty prefix (the context before the block)<br>{len(tree.draws[()])} draws by {tree.law_at(0).name}"
        u = s[:-1]
        law = tree.law_at(len(u)).name
        how = "deterministic (a rank of p)" if s not in sampled else "sampled from p"
        lines = [f"node {tokens_str(s, token_text)}  (depth {len(s)})",
                 f"drafted by {law} at {tokens_str(u, token_text)}: {how}; drawn {tree.multiplicity(s)} time(s) "
                 f"of {len(tree.draws[u])}"]
        lines += _node_lines(s, tree, token_text)
        return "<br>".join(lines + _test_lines(s, shown, "draw"))

    if trace is None:
        groups = {"root": [()], "deterministic": [s for s in nodes[1:] if s not in sampled],
                  "sampled": [s for s in nodes[1:] if s in sampled]}
    else:
        groups = {"root": [], "accepted": [], "passed": [], "rejected": [], "untested": []}
        for s in nodes:
            groups["root" if not s else status.get(s, "untested")].append(s)
    _tree_nodes(fig, groups, pos, hover, _node_token(token_text), token_text)
    if path_q and len(nodes) > 1:
        terms = [(s, tree.q_joint(s)) for s in nodes[1:]]
        fig.add_trace(go.Scatter(
            # a third of a row below each node: clear of the node's mark and of its edges
            x=[pos[s][0] for s, _ in terms], y=[pos[s][1] - 0.36 for s, _ in terms], mode="text",
            text=[f"q = {_short_fraction(v)}" for _, v in terms], textposition="middle center",
            textfont=dict(size=TICK_SIZE - 1, color="#332288"), customdata=[v for _, v in terms],
            hovertext=[f"q({tokens_str(s)}) = {v:.6f}: the target's probability of this path, this node's "
                       f"term of Σ q(s)" for s, v in terms], hoverinfo="text",
            name="q(s): each node's term of E[τ] = Σ q(s)"))
    _tree_ending(fig, pos, current, complete, accepted, extra, token_text)
    return _tree_layout(fig, nodes, tree.L, title, None)


def _short_fraction(x: float) -> str:
    """``x`` as the small fraction it is (denominator at most 10⁴), else to four decimals."""
    return fraction(x, max_denominator=10_000, integers=True) or f"{x:.4f}"


def _distribution_bars(series: Sequence[tuple[str, np.ndarray, str]], outlined: int | None, title: str,
                       token_text: Callable[[int], str] | None, top: int) -> go.Figure:
    """Grouped bars of distributions over the same tokens (name, vector, colour), the ``top`` most
    probable under any of them when V is larger (the ``outlined`` token always kept and outlined)."""
    V = len(series[0][1])
    idx = np.arange(V)
    if V > top:  # keep the most relevant tokens: the top most probable, or top - 1 and the outlined one
        score = np.maximum.reduce([np.asarray(v) for _, v, _ in series])
        order = np.argsort(-score, kind="stable")
        keep = order[:top] if outlined is None or outlined in order[:top] else np.append(order[:top - 1], outlined)
        idx = np.sort(keep)
    xs = [token_text(int(i)) if token_text else str(int(i)) for i in idx]
    fig = go.Figure()
    for name, vec, col in series:
        fig.add_trace(go.Bar(x=xs, y=np.asarray(vec)[idx].tolist(), name=name, marker_color=col,
                             marker_line=dict(width=[3 if int(i) == outlined else 0 for i in idx], color="#000")))
    fig.update_layout(barmode="group")
    fig.update_xaxes(type="category")
    return _layout(fig, title, "token", "probability", height=360)


def residual_bars(p: np.ndarray | None, q: np.ndarray, residual: np.ndarray, extra: int, where: str,
                  is_bonus: bool, token_text: Callable[[int], str] | None = None,
                  top: int = 30) -> go.Figure:
    """The law the extra token y was drawn from at the accepted node s, y outlined.  A bonus
    (the whole block accepted) is drawn from q(·|s) itself: q alone is shown, there is no p at a
    leaf and no residual.  A correction is drawn from the rule's residual, shown beside p(·|s) and
    q(·|s) (for SD it is normalize((q − p)₊); each rule has its own)."""
    y = token_text(extra) if token_text else extra
    if is_bonus:
        return _distribution_bars([("q(·|s) (target): the bonus token's law", q, "#3182bd")], extra,
                                  f"Extra token {y} (outlined): a bonus, drawn from q(·|s) at s = {where}", token_text, top)
    series = ([] if p is None else [("p (draft)", p, "#9ecae1")]) + [
        ("q (target)", q, "#3182bd"), ("residual: the correction token's law", residual, "#ffbf00")]
    return _distribution_bars(series, extra, f"Extra token {y} (outlined): a correction, drawn from the residual at s = {where}",
                              token_text, top)


def traversal_step(p: np.ndarray, q: np.ndarray, T: np.ndarray, where: str, rejected: int, A: float, w: float,
                   token_text: Callable[[int], str] | None = None, top: int = 30) -> go.Figure:
    """One residual update of a traversal rule at node b after its child ``rejected`` was rejected:
    p(·|b), q(·|b) and the new target T = (w·T − S)₊ / A beside them; the rejected token (outlined)
    has T = 0 there, and b keeps weight w = A/(A + 1 − w) (1 at the root)."""
    c = token_text(rejected) if token_text else rejected
    return _distribution_bars(
        [("p(·|b) (draft)", p, "#9ecae1"), ("q(·|b) (target)", q, "#3182bd"),
         ("T: what b still owes after the rejection", T, "#ffbf00")], rejected,
        f"At b = {where}, after rejecting {c} (outlined): A = {A:.4f}, b's weight w = {w:.4f}", token_text, top)


#: One colour and marker per draft law (``core.data.laws.LAWS``), from Tol's muted scheme: the laws
#: are never drawn beside the rules, so sharing the palette does not confuse them.
LAW_STYLE = {"iid": ("#332288", "circle"), "wor": ("#117733", "square"), "topk": ("#cc6677", "diamond"),
             "greedy": ("#ddcc77", "triangle-up")}


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


def round_bars(S: np.ndarray, T: np.ndarray, child: int, title: str, T_name: str = "T: what the node still owes q",
               after: np.ndarray | None = None, token_text: Callable[[int], str] | None = None,
               top: int = 30) -> go.Figure:
    """One round of a tree verifier at a node: S_i, the exact law of the visited child given the
    rounds before (what the test is against), beside T, what is left of the target there (for
    traversal, w·T), the visited ``child`` outlined; after a rejection, ``after`` = the new T,
    (T − S_i)₊ normalised."""
    series = [("S_i: the law of the visited child", S, "#9ecae1"), (T_name, T, "#3182bd")]
    if after is not None:
        series.append(("T after the rejection: (T − S_i)₊, normalised", after, "#ffbf00"))
    return _distribution_bars(series, child, title, token_text, top)


def compare_methods_bar(rows: Sequence[Mapping]) -> go.Figure:
    """τ on the same drafts and coins, and E[τ | these drafts], per method."""
    fig = go.Figure()
    fig.add_trace(go.Bar(x=[short(r["method"]) for r in rows], y=[r["tau"] for r in rows],
                         marker_color=[color(r["method"]) for r in rows], name="τ with these coins",
                         hovertemplate="%{x}: τ = %{y}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[short(r["method"]) for r in rows],
                             y=[r.get("expected_tau_given_drafts") for r in rows], mode="markers",
                             marker=dict(symbol="diamond", size=13, color="#111"),
                             name="E[τ | these drafts] (exact over the coins)"))
    return _layout(fig, "Every method on the same drafts and the same coins", "method",
                   "accepted draft tokens τ", height=360)


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


def scaling_plot(Vs: Sequence[int], seconds: Sequence[float], slope: float) -> go.Figure:
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=list(Vs), y=[1e6 * s for s in seconds], mode="lines+markers",
                             name=f"SpecTr-GBV verify (log-log slope {slope:.2f})",
                             line=dict(color=color("spectr_gbv"), width=2.5)))
    ref = [1e6 * seconds[0] * v / Vs[0] for v in Vs]
    fig.add_trace(go.Scatter(x=list(Vs), y=ref, mode="lines", name="∝ |Ω| (slope 1)",
                             line=dict(color="#999", dash="dash")))
    fig.update_xaxes(type="log", tickvals=list(Vs), ticktext=[str(v) for v in Vs])
    fig.update_yaxes(type="log")
    return _layout(fig, "Verification time per block against vocabulary size |Ω|", "|Ω| (log)",
                   "microseconds per verification (log)", height=360)


# ------------------------------------------------------------------------------------------------
# Real decoder and sweeps
# ------------------------------------------------------------------------------------------------

# A *run* of the real decoder, as its charts key it: a method ("rbv", "autoregressive"), or a method
# with the draft it verified: ("traversal", "chains 4×4, iid").

#: Bar patterns telling apart the drafts of runs that compare several (colour stays the rule's).
DRAFT_PATTERNS = ("", "/", "x", ".", "\\", "-", "|", "+")


def _runs(keys: Sequence) -> list[tuple[str, str, str]]:
    """(legend name, colour, bar pattern) of each run (above): the rule's short name and colour; when
    the runs verified more than one draft, the name also says the draft and the pattern tells it."""
    drafts = list(dict.fromkeys(k[1] for k in keys if isinstance(k, tuple)))
    out = []
    for k in keys:
        method, draft = k if isinstance(k, tuple) else (k, None)
        several = len(drafts) > 1 and draft is not None
        out.append((f"{short(method)} · {draft}" if several else short(method), color(method),
                    DRAFT_PATTERNS[drafts.index(draft) % len(DRAFT_PATTERNS)] if several else ""))
    return out


def acceptance_per_position(rates: Mapping) -> go.Figure:
    """P(τ ≥ i) per draft position i, one group of bars per position, one bar per run (keyed as above)."""
    fig = go.Figure()
    for (name, fill, pattern), r in zip(_runs(list(rates)), rates.values()):
        fig.add_trace(go.Bar(x=list(range(1, len(r) + 1)), y=list(r), name=name,
                             marker=dict(color=fill, pattern=dict(shape=pattern))))
    fig.update_layout(barmode="group")
    fig.update_xaxes(dtick=1)
    fig.update_yaxes(range=[0, 1.05])
    return _layout(fig, "Acceptance per draft position: P(τ ≥ i)", "draft position i", "fraction of iterations",
                   height=340)


#: The decoder's wall-clock phases, in the order an iteration runs them, and their colours.
PHASE_COLORS = {"draft": "#9ecae1", "target": "#3182bd", "verify": "#ffbf00", "cache": "#44aa99",
                "other": "#c7c7c7"}


def time_split(parts: Mapping, title: str = "Where the time goes", unit: str = "seconds") -> go.Figure:
    """One stacked bar per run (keyed as above): its time in each phase (``PHASE_COLORS``' order), in ``unit``."""
    fig = go.Figure()
    runs = list(parts)
    names = [name for name, _, _ in _runs(runs)]
    keys = sorted({k for v in parts.values() for k in v},
                  key=lambda k: list(PHASE_COLORS).index(k) if k in PHASE_COLORS else 99)
    for k in keys:
        fig.add_trace(go.Bar(y=names, x=[parts[m].get(k, 0.0) for m in runs], name=k, orientation="h",
                             marker_color=PHASE_COLORS.get(k, "#888"),
                             hovertemplate=f"%{{y}}: {k} %{{x:.4g}} {unit}<extra></extra>"))
    fig.update_layout(barmode="stack", legend_traceorder="normal")
    return _layout(fig, title, unit, "method", height=260 + 30 * len(runs))


def sweep_lines(df, x: str, y: str, lo: str | None, hi: str | None, theory: str | None = None,
                title: str = "", xlab: str = "", ylab: str = "", runs: str | None = None) -> go.Figure:
    """One line per method with a shaded 95% confidence band (columns lo/hi) over the points that
    have an interval (NaN: none, so no band there), and dashed theory curves.  With ``runs`` (a
    column of counts) each point's hover text gives its number of runs and its interval.

    A band is a filled area between two edges drawn without a line or markers (``band_traces``), in
    its method's legend group: a click on the method in the legend hides its band with it."""
    fig = go.Figure()
    for m, sub in df.groupby("method", sort=False):
        sub = sub.sort_values(x)
        c = color(m)
        band = bool(lo and hi and lo in sub and hi in sub)
        if band:
            for part in (sub.iloc[s] for s in _stretches((sub[lo].notna() & sub[hi].notna()).tolist())):
                fig.add_traces(band_traces(part[x].tolist(), part[lo].tolist(), part[hi].tolist(), c,
                                           group=m, name=f"{short(m)} 95% band"))
        hover = {}
        if runs:
            los, his = (sub[lo], sub[hi]) if band else ([np.nan] * len(sub),) * 2
            ci = [f"<br>95% CI: {a:.3f} to {b:.3f}" if np.isfinite(a) and np.isfinite(b) else ""
                  for a, b in zip(los, his)]
            hover = dict(text=[f"runs: {int(n)}{s}" for n, s in zip(sub[runs], ci)],
                         hovertemplate=f"{short(m)}<br>{xlab or x} = %{{x}}<br>{ylab or y}: %{{y:.3f}}"
                                       "<br>%{text}<extra></extra>")
        fig.add_trace(go.Scatter(x=sub[x].tolist(), y=sub[y].tolist(), mode="lines+markers", name=short(m),
                                 legendgroup=m, line=dict(color=c, width=3),
                                 marker=dict(symbol=symbol(m), size=10), **hover))
        if theory and theory in sub and sub[theory].notna().any():
            fig.add_trace(go.Scatter(x=sub[x].tolist(), y=sub[theory].tolist(), mode="lines", name=f"{short(m)}: 1 + E[τ | drafts]",
                                     line=dict(color=c, dash="dash", width=1.5)))
    fig.update_xaxes(dtick=1 if x in ("K", "L") else None)
    return _layout(fig, title, xlab, ylab)


def band_traces(x: Sequence, lo: Sequence[float], hi: Sequence[float], line_color: str, group: str,
                name: str) -> list[go.Scatter]:
    """A shaded band from ``lo`` to ``hi`` over ``x``: the lower edge, then the upper one filled down
    to it (``fill="tonexty"``), both without a line or markers, without hover and without a legend
    entry of their own, in legend group ``group`` (with the series they belong to)."""
    edge = dict(x=list(x), mode="lines", line=dict(width=0, color=line_color), hoverinfo="skip",
                showlegend=False, legendgroup=group, name=name)
    return [go.Scatter(y=list(lo), **edge),
            go.Scatter(y=list(hi), fill="tonexty", fillcolor=_rgba(line_color, 0.2), **edge)]


def _stretches(mask: Sequence[bool]) -> list[slice]:
    """The maximal stretches of consecutive True entries of ``mask``, as slices."""
    out, start = [], None
    for i, v in enumerate(list(mask) + [False]):
        if v and start is None:
            start = i
        elif not v and start is not None:
            out.append(slice(start, i))
            start = None
    return out


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)
    return f"rgba({r},{g},{b},{alpha})"


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
    sd = [r for r in rows if r["method"] == methods[0]] if methods and "sd" not in methods else []
    if sd:
        fig.add_trace(go.Scatter(x=[r["depth"] for r in sd], y=[r["SD's P(τ ≥ d)"] for r in sd], mode="lines+markers",
                                 name="SD (one draft)", line=dict(color="#888888", dash="dash", width=2.5),
                                 marker=dict(symbol="diamond-open", size=10),
                                 hovertemplate="SD<br>d = %{x}<br>P(τ ≥ d) = %{y:.5f}<extra></extra>"))
    fig.update_xaxes(dtick=1)
    return _layout(fig, "Gain by depth: P(τ ≥ d) of each method beside SD's", "depth d", "P(τ ≥ d) (exact)")
