"""Every figure laid out alike: wrapped titles, legends below the plot, axes that show gaps, and
series that coincide said to."""
from __future__ import annotations

import re
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from pages.ui.figures.style import LEGEND_SIZE, TITLE_SIZE


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
#: The strip at the top of a chart on a page that its toolbar (Plotly's modebar, shown while the
#: pointer rests on the chart: 22 px tall at the top right) takes, above the title, so that it never
#: covers the title's first line.  An export has no toolbar and no strip (``for_width``).
TOOLBAR_PX = 30


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
                      # below the toolbar's strip (``TOOLBAR_PX``)
                      title=dict(text=title, x=0.0, xanchor="left", y=1.0, yref="container", yanchor="top",
                                 pad=dict(l=12, t=22 + TOOLBAR_PX)),
                      height=height + TOOLBAR_PX + _LEGEND_ROW_PX * rows + _TITLE_LINE_PX * max(0, lines - 1),
                      margin=dict(l=_MARGIN_L, r=_MARGIN_R, t=TOOLBAR_PX + _MARGIN_T + _TITLE_LINE_PX * lines,
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
    """``fig`` (laid out by ``_layout`` for ``PAGE_WIDTH``) laid out for an export ``width`` px wide: its
    horizontal legend's rows counted again at that width (``legend_rows``), the bottom margin and the
    height shorter by the rows it no longer needs, and without the toolbar's strip at the top (an
    export has no toolbar: ``TOOLBAR_PX``); the plot's height kept.  ``fig`` itself is left as it is."""
    fewer = legend_rows(fig) - legend_rows(fig, width) if fig.layout.legend.orientation == "h" else 0
    strip = TOOLBAR_PX if fig.layout.title.pad.t == 22 + TOOLBAR_PX else 0
    if (fewer <= 0 and not strip) or not fig.layout.height:
        return fig
    fewer = max(0, fewer)
    return go.Figure(fig).update_layout(height=fig.layout.height - _LEGEND_ROW_PX * fewer - strip,
                                        margin_b=fig.layout.margin.b - _LEGEND_ROW_PX * fewer,
                                        margin_t=fig.layout.margin.t - strip, title_pad_t=22)


#: Values are *close* when the smallest is more than this share of the largest: bars from 0 would
#: then differ by less than half their length, so they are drawn as dots (``close``).
CLOSE = 0.5


def close(values: Sequence[float]) -> bool:
    """Whether values are too close for bars (the smallest above ``CLOSE`` of the largest, all
    positive): a bar's length is its value and starts at 0, so such values are dots on an axis that
    spans them (``value_range``) instead.

    >>> close([10 / 9, 11 / 9]), close([0.5, 1.5]), close([0.0, 1.0]), close([1.3])
    (True, False, False, True)
    """
    vals = [float(v) for v in values if v is not None and np.isfinite(v)]
    return bool(vals) and min(vals) > CLOSE * max(vals) > 0


def value_range(values: Sequence[float], headroom: float = 0.12) -> list[float]:
    """A value axis for dots of close values (``close``): from half the spread below the smallest
    (never below 0) to ``headroom`` of the spread above the largest, so that 1.40 and 1.62 differ
    on the slide as they do in the numbers; around the value when all are equal.  Never for bars:
    a bar starts at 0 (``bar_range``)."""
    vals = [float(v) for v in values if v is not None and np.isfinite(v)]
    if not vals:
        return [0.0, 1.0]
    lo, hi = min(vals), max(vals)
    spread = hi - lo
    if spread <= 1e-12 * max(1.0, abs(hi)):
        spread = 0.2 * max(abs(hi), 1e-3)
    return [max(0.0, lo - 0.5 * spread), hi + headroom * spread]


def bar_range(values: Sequence[float], headroom: float = 0.12) -> list[float]:
    """A value axis for bars: from 0, a bar's length being its value, to ``headroom`` above the
    largest value (room for a label over the tallest)."""
    vals = [float(v) for v in values if v is not None and np.isfinite(v)]
    top = max(vals, default=1.0)
    return [0.0, top * (1 + headroom) if top > 0 else 1.0]


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
    """Say in the legend which series coincide, and dash every one drawn over another, so that all
    their colours show.  The first of a group names the group once ("RBV = Traversal here"); each
    other keeps its own name and says which one it equals ("Traversal, same as RBV"), so the names
    are never repeated entry after entry, and each entry still hides its series alone.  A value the
    names end with, the same in each ("LP optimum = 1.2222"), is said once, in the first.  A name
    longer than the narrowest plot is wide wraps onto lines (``legend_rows`` counts them)."""
    for group in identical_groups(fig):
        names = [fig.data[i].name for i in group]
        value = re.search(r" = [-+0-9.e]+$", names[0])
        value = value.group() if value and all(n.endswith(value.group()) for n in names) else ""
        names = [n[:len(n) - len(value)] for n in names]
        for k, i in enumerate(group):
            trace = fig.data[i]
            name = " = ".join(names) + value + " here" if k == 0 else f"{names[k]}, same as {names[0]}"
            trace.name = wrap(name, PAGE_WIDTH - _MARGIN_L - _MARGIN_R - _LEGEND_ENTRY_PX, _LEGEND_CHAR_PX)
            if k:
                trace.line.dash = _OVER_DASH[(k - 1) % len(_OVER_DASH)]
    return fig


def own_name(name: str) -> str:
    """The series' own name in a legend name ``mark_identical`` wrote: "RBV" in "RBV = Traversal
    here" and in "RBV, same as Traversal"; a name it did not touch as it is.

    >>> own_name("RBV = Traversal here"), own_name("Traversal, same as RBV"), own_name("LP optimum (best<br>x) = 1.2 here")
    ('RBV', 'Traversal', 'LP optimum (best x)')
    """
    name = name.replace("<br>", " ")
    return re.split(r" = |, same as ", name)[0]
