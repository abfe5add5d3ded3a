"""A Plotly figure from ``figures`` drawn as SVG in the page itself, for a page that should not wait for Plotly.

Plotly's script in the browser is 4.7 MB: a browser that meets it for the first time spends about
2.5 s of this machine before the first chart appears (docs/app.md, "Page speed").  The charts of the
app are simple (bars, lines, markers, text), so they are drawn here from the very figure ``figures``
builds: the same positions, colours, symbols, labels and legend, and the hover text as each mark's
SVG ``<title>`` (the browser shows it as a tooltip).

What is drawn: ``scatter`` traces in ``lines``, ``markers`` and ``text`` modes and their combinations
(marker symbols circle, x, star, diamond, diamond-open; dashes solid, dot, dash, dashdot, with
Plotly's dash lengths); vertical ``bar`` traces, grouped or overlaid, with per-bar colours and outlines,
a ``/`` hatch and text outside; linear, log and categorical axes with a title, ``dtick``,
``tickvals``/``ticktext`` or automatic ticks, and horizontal gridlines; ``add_vline`` shapes; a
horizontal legend under the plot (shown by Plotly's rule: two traces or more); a title of one line
and at most one ``<br><sup>…</sup>`` line.  Hover text is each mark's ``hovertemplate`` filled in
(``%{x}``, ``%{y}``, ``%{text}``, d3 formats ``.Nf``, ``.Ne``, ``.Ng``, ``d``, ``,``), else its
``hovertext``, else "name: x, y"; a line's tooltip is its points' distinct texts.  Anything else
(another trace type, subplots, horizontal or stacked bars, fills, error bars, annotations, any
property not listed in ``TRACE_KEYS`` and ``LAYOUT_KEYS``) raises ValueError rather than draw a
picture that differs from the figure; the app then shows the figure with Plotly.

Geometry.  The drawing is ``width`` × ``layout.height`` px with the figure's margins l, r, t, b: data
point (x, y) is at
``(l + (u(x) − x0)/(x1 − x0)·(W − l − r),  H − b − (u(y) − y0)/(y1 − y0)·(H − t − b))``,
u the identity on a linear axis, log10 on a log axis (whose ``range`` is in log10 units, as Plotly's)
and the category's index on a categorical one (categories in order of first appearance, on
[−0.5, n − 0.5]).  Bars fill 1 − bargap of the least distance between their positions, split
equally in trace order where bar traces share a position (``barmode`` "group", as Plotly); a bar of
height 0 is drawn only when outlined, as Plotly.  With a fixed ``range`` every mark is exactly where
Plotly puts it.  Without one the range is this module's own autorange, not Plotly's algorithm (which
pads by the markers' size in px): the data's extent padded by 5% of its span at each end, not below a
bar's base at 0, 12% above bars labelled outside, and bar slots unpadded.  Where labels need more room
than the margins leave (x tick labels rotated 30° or 90° when they would overlap, wide y tick labels,
more legend rows), the margin grows, as Plotly's automargin does, approximately.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

__all__ = ["render", "WIDTH"]

WIDTH = 560            # the drawing's default width in px, about the start page's column; inline it scales to it
FONT = "'Source Sans', 'Source Sans Pro', sans-serif"   # Streamlit's own font where the page has it
TEXT_COLOR = "#31333f"
TICK_COLOR = "#555555"
GRID_COLOR = "#e5e5e5"
LEGEND_ROW = 24        # px per legend row, as ``figures._layout`` reserves them
CHAR_EM = 0.5          # an estimate of a character's average advance in Source Sans, in em (a little generous)
SYMBOLS = ("circle", "x", "star", "diamond", "diamond-open")
#: Plotly's dash patterns, in units of max(line width, 3) px (plotly.js ``Drawing.dashStyle``).
DASHES = {"solid": None, "dot": (1, 1), "dash": (3, 3), "dashdot": (3, 1, 1, 1)}
#: Plotly's default colour of the i-th trace when it sets none.
COLORWAY = ("#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A", "#19d3f3", "#FF6692", "#B6E880", "#FF97FF",
            "#FECB52")
BARGAP = 0.2           # Plotly's default gap between bar slots, a fraction of the slot
HATCH = 14             # px: the side of the ``/`` hatch's tile (Plotly's is 10·√2)

_ANY = True            # in an allow-list: any value
_LINE = {"color": _ANY, "width": _ANY, "dash": _ANY}
_COMMON = {key: _ANY for key in ("type", "x", "y", "name", "showlegend", "legendgroup", "uid", "cliponaxis",
                                 "xaxis", "yaxis", "text", "textposition", "hovertemplate", "hovertext",
                                 "hoverinfo", "customdata")}
_COMMON["textfont"] = {"size": _ANY, "color": _ANY}
#: What a trace may set, per type: a dict allows the keys of a nested object.  Anything else changes
#: what the chart shows (or may) and is refused.
TRACE_KEYS = {
    "scatter": {**_COMMON, "mode": _ANY, "line": _LINE,
                "marker": {"symbol": _ANY, "size": _ANY, "color": _ANY, "line": {"color": _ANY, "width": _ANY}}},
    "bar": {**_COMMON, "orientation": _ANY,
            "marker": {"color": _ANY, "line": {"color": _ANY, "width": _ANY}, "pattern": {"shape": _ANY}}},
}
_AXIS = {"title": {"text": _ANY}, "range": _ANY, "dtick": _ANY, "type": _ANY, "tickvals": _ANY, "ticktext": _ANY,
         "visible": _ANY, "showgrid": _ANY, "zeroline": _ANY}
#: What the layout may set (the template is Plotly's look, which Streamlit replaces by its own as here).
LAYOUT_KEYS = {
    "height": _ANY, "template": _ANY, "showlegend": _ANY, "barmode": _ANY, "bargap": _ANY, "shapes": _ANY,
    "margin": {side: _ANY for side in "lrtb"}, "xaxis": _AXIS, "yaxis": _AXIS,
    "title": {key: _ANY for key in ("text", "x", "xanchor", "y", "yanchor", "yref", "automargin", "pad")},
    "legend": {key: _ANY for key in ("orientation", "yref", "yanchor", "y", "x", "xanchor")},
}
SHAPE_KEYS = {key: _ANY for key in ("type", "x0", "x1", "y0", "y1", "xref", "yref")} | {"line": _LINE}


def render(fig, standalone: bool = False, width: int = WIDTH) -> str:
    """``fig`` (a ``plotly.graph_objects.Figure`` from ``figures``, which alone builds figures: this
    module only reads them) as one ``<svg>`` element, ``width`` by ``fig.layout.height`` px in its own
    units, marks placed as the module docstring says.

    Inline (the default) it takes the width of its container up to ``width`` px (never wider) and
    keeps its aspect ratio; ``standalone`` gives a file of fixed size (a download)."""
    _check(fig)
    lay = fig.layout
    W, H = width, int(lay.height or 450)
    l, r, t, b = (int(getattr(lay.margin, side) if getattr(lay.margin, side) is not None else 80)
                  for side in "lrtb")
    cats = _categories(fig)
    xlog, ylog = _is_log(lay.xaxis), _is_log(lay.yaxis)
    slots = _bar_slots(fig, cats, xlog, ylog)
    x0, x1 = _x_range(fig, cats, xlog, slots)
    y0, y1 = _y_range(fig, ylog)
    entries = _legend_entries(fig)
    legend = _legend_shown(fig, entries)
    ax = _axes(lay, W, H, (l, r, t, b), (x0, x1, xlog, cats), (y0, y1, ylog), _legend_rows(entries, W) if legend else 0)
    sx, sy = ax.sx, ax.sy
    title = (lay.title.text or "") if lay.title else ""
    size = (f'width="{W}" height="{H}"' if standalone
            else f'width="100%" style="max-width:{W}px;height:auto"')
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" {size} role="img" '
           f'aria-label={quoteattr(_plain(title))} font-family="{FONT}">',
           f'<rect width="{W}" height="{H}" fill="white"/>']
    out += _hatch_defs(fig)
    out += _title(title, lay.title, t, H)
    out += _y_axis(ax.yticks, sy, sx.p0, sx.p1, ax.ytitle, ax.ylabel_w, lay.yaxis.showgrid is not False)
    out += _x_axis(ax.xticks, sx, sy.p0, ax.angle, ax.depth, ax.xtitle)
    colors = [_color(trace, i) for i, trace in enumerate(fig.data)]
    out += [bar for i, trace in enumerate(fig.data) if trace.type == "bar"
            for bar in _bars(trace, slots[i], colors[i], sx, sy)]
    # every line under every mark (a line drawn later would cross the marks already there)
    scatters = [(trace, colors[i]) for i, trace in enumerate(fig.data) if trace.type == "scatter"]
    out += [line for trace, color in scatters for line in _scatter(trace, color, sx, sy, lines=True)]
    out += [mark for trace, color in scatters for mark in _scatter(trace, color, sx, sy, lines=False)]
    out += _shapes(lay.shapes, sx, sy)
    if legend:
        out += _legend([(trace, colors[i]) for i, trace in entries], W, H, ax.rows)
    out.append("</svg>")
    return "\n".join(out)


# ------------------------------------------------------------------------------------------------
# What can be drawn
# ------------------------------------------------------------------------------------------------

def _check(fig) -> None:
    """Raise ValueError naming the first trace type, property or shape this module cannot draw."""
    for trace in fig.data:
        if trace.type not in TRACE_KEYS:
            raise ValueError(f"inline_svg draws scatter and bar traces only, not {trace.type}")
        _refuse(_unknown(trace.to_plotly_json(), TRACE_KEYS[trace.type], trace.type))
        if (trace.xaxis or "x") != "x" or (trace.yaxis or "y") != "y":
            raise ValueError(f"inline_svg cannot draw subplots (a {trace.type} trace on {trace.xaxis}, {trace.yaxis})")
        if trace.type == "bar" and trace.orientation not in (None, "v"):
            raise ValueError("inline_svg draws vertical bars only, not orientation='h'")
    layout = fig.layout.to_plotly_json()
    axes = [key for key in layout if re.fullmatch(r"[xy]axis\d+", key)]
    if axes:
        raise ValueError(f"inline_svg cannot draw subplots ({', '.join(axes)})")
    _refuse(_unknown(layout, LAYOUT_KEYS, "layout"))
    for i, shape in enumerate(layout.get("shapes", ())):
        _refuse(_unknown(shape, SHAPE_KEYS, f"layout.shapes[{i}]"))
        if (shape.get("type"), shape.get("xref", "x"), shape.get("yref")) != ("line", "x", "y domain"):
            raise ValueError("inline_svg draws vertical lines (add_vline: a line shape with xref 'x' and yref "
                             f"'y domain') only, not a {shape.get('type')} shape on {shape.get('xref')}, "
                             f"{shape.get('yref')}")
    for name in ("xaxis", "yaxis"):
        kind = getattr(fig.layout, name).type
        if kind not in (None, "-", "linear", "log", "category"):
            raise ValueError(f"inline_svg draws linear, log and category axes, not a {kind} {name}")


def _unknown(obj: dict, allowed: dict, where: str) -> list[str]:
    """The keys of ``obj`` (a figure's JSON) that ``allowed`` does not list, as dotted paths."""
    out = []
    for key, value in obj.items():
        rule = allowed.get(key)
        if rule is None:
            out.append(f"{where}.{key}")
        elif isinstance(rule, dict) and isinstance(value, dict):
            out += _unknown(value, rule, f"{where}.{key}")
    return out


def _refuse(paths: list[str]) -> None:
    if paths:
        raise ValueError(f"inline_svg cannot draw {', '.join(paths)}")


# ------------------------------------------------------------------------------------------------
# Axes: units, ranges, ticks
# ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Scale:
    """An axis on screen: its unit u (``unit``) from ``lo`` to ``hi`` goes linearly from pixel ``p0``
    to ``p1``; u is the value on a linear axis, log10 of it on a log one, the category's index on a
    categorical one (``cats``)."""
    lo: float
    hi: float
    p0: float
    p1: float
    log: bool = False
    cats: tuple = ()

    def unit(self, v) -> float | None:
        return _unit(v, self.log, self.cats)

    def at(self, u: float) -> float:
        """The pixel of axis unit ``u``."""
        return self.p0 + (u - self.lo) / (self.hi - self.lo) * (self.p1 - self.p0)

    def __call__(self, v) -> float:
        return self.at(self.unit(v))


def _unit(v, log: bool, cats: tuple) -> float | None:
    """Data value ``v`` in axis units; None where it has no place (None, a log axis's v ≤ 0)."""
    if v is None:
        return None
    if cats:
        return float(cats.index(str(v)))
    if log:
        return math.log10(v) if v > 0 else None
    return float(v)


def _is_log(axis) -> bool:
    return axis.type == "log"


def _xs(trace) -> list:
    """The trace's x values; Plotly's 0, 1, 2, … where it has none."""
    return list(trace.x) if trace.x is not None else list(range(len(trace.y or ())))


def _categories(fig) -> tuple:
    """The x categories in order of first appearance across traces, when the x axis is categorical
    (``type="category"``, or strings among the x values); () when it is not."""
    xs = [v for trace in fig.data for v in _xs(trace) if v is not None]
    if fig.layout.xaxis.type != "category" and not any(isinstance(v, str) for v in xs):
        return ()
    return tuple(dict.fromkeys(str(v) for v in xs))


def _autorange(padded: list[float], fixed: list[float], below: float = 0.05, above: float = 0.05
               ) -> tuple[float, float]:
    """The range over ``padded`` and ``fixed`` values: the ``padded`` extremes pushed out by ``below``
    and ``above`` of the whole span, the ``fixed`` ones (a bar's base, a bar slot's edge) not.
    A single value v gets [v − 1, v + 1] ([0, 1] for a fixed 0)."""
    values = padded + fixed
    if not values:
        return -1.0, 1.0
    lo, hi = min(values), max(values)
    if hi - lo < 1e-12:
        return (0.0, 1.0) if lo == 0 and fixed else (lo - 1, hi + 1)
    span = hi - lo
    if padded:
        lo, hi = min(lo, min(padded) - below * span), max(hi, max(padded) + above * span)
    return lo, hi


def _x_range(fig, cats: tuple, log: bool, slots: dict) -> tuple[float, float]:
    """The x axis's range in its units: its own, else [−0.5, n − 0.5] for categories, else the
    scatter points (padded), bar slots and vertical lines (not padded)."""
    axis = fig.layout.xaxis
    if axis.range is not None:
        return tuple(axis.range)
    if cats:
        return -0.5, len(cats) - 0.5
    points, edges = [], []
    for i, trace in enumerate(fig.data):
        units = [_unit(x, log, ()) for x, y in zip(_xs(trace), trace.y or ()) if y is not None]
        units = [u for u in units if u is not None]
        if trace.type == "bar":
            edges += [u + side * slots[i].full / 2 for u in units for side in (-1, 1)]
        else:
            points += units
    edges += [u for shape in fig.layout.shapes for u in (_unit(shape.x0, log, ()), _unit(shape.x1, log, ()))
              if u is not None]
    return _autorange(points, edges)


def _y_range(fig, log: bool) -> tuple[float, float]:
    """The y axis's range in its units: its own, else the data's extent padded 5%, from a bar's base
    at 0 unpadded, with 12% room above (below) for text outside the bars."""
    axis = fig.layout.yaxis
    if axis.range is not None:
        return tuple(axis.range)
    bars = [trace for trace in fig.data if trace.type == "bar"]
    values = [_unit(y, log, ()) for trace in fig.data for y in (trace.y or ())]
    # a bar's top at 0 is its base: not padded either
    padded = [u for u in values if u is not None and not (bars and u == 0)]
    room = 0.12 if any(trace.text is not None and trace.textposition == "outside" for trace in bars) else 0.05
    return _autorange(padded, [0.0] if bars else [], below=room if min(padded, default=0) < 0 else 0.05,
                      above=room if max(padded, default=0) > 0 else 0.05)


def _nice_step(span: float, count: float) -> float:
    """The least of 1, 2, 5 × 10^k that is at least span/count (Plotly's automatic ``dtick``)."""
    rough = span / count
    base = 10 ** math.floor(math.log10(rough))
    return next(m * base for m in (1, 2, 5, 10) if m * base >= rough * (1 - 1e-9))


def _multiples(lo: float, hi: float, step: float) -> list[float]:
    """The multiples of ``step`` in [lo, hi] (to a millionth of a step)."""
    return [k * step for k in range(math.ceil(lo / step - 1e-6), math.floor(hi / step + 1e-6) + 1)]


def _ticks(axis, lo: float, hi: float, length: float, log: bool, cats: tuple, per_px: float
           ) -> list[tuple[float, str]]:
    """The axis's ticks as (unit, label) inside [lo, hi]: its ``tickvals``/``ticktext``, else every
    category (every k-th when fewer than 15 px each, as Plotly), else multiples of its ``dtick``, else
    nice ones: about one per ``per_px`` px, 5 to 10 of them (Plotly's count), powers of ten on a log axis
    over 3 decades or more, 1, 2, 5 × 10^k over fewer."""
    inside = (lambda u: u is not None and lo - 1e-9 <= u <= hi + 1e-9)
    if axis.dtick and (log or cats):
        raise ValueError("inline_svg takes a dtick on a linear axis only, not on a log or category axis")
    if axis.tickvals is not None:
        text = list(axis.ticktext or ())
        marks = [(_unit(v, log, cats), text[i] if i < len(text) else _compact(v)) for i, v in enumerate(axis.tickvals)]
        return [(u, s) for u, s in marks if inside(u)]
    if cats:
        step = max(1, math.ceil(len(cats) * 15 / length)) if length > 0 else 1
        return [(float(i), c) for i, c in enumerate(cats) if i % step == 0 and inside(float(i))]
    count = max(4.0, min(9.0, length / per_px)) + 1
    if not log:
        step = float(axis.dtick) if axis.dtick else _nice_step(hi - lo, count)
        return [(v, _compact(v)) for v in _multiples(lo, hi, step)]
    if hi - lo < 1:     # within a decade: ordinary ticks on the values themselves
        values = _multiples(10 ** lo, 10 ** hi, _nice_step(10 ** hi - 10 ** lo, count))
        return [(math.log10(v), _compact(v)) for v in values if v > 0]
    if hi - lo >= 3:
        return [(k, _compact(10 ** k)) for k in _multiples(lo, hi, max(1, math.ceil((hi - lo) / count)))]
    values = [m * 10 ** k for k in range(math.floor(lo), math.ceil(hi) + 1) for m in (1, 2, 5)]
    return [(math.log10(v), _compact(v)) for v in values if inside(math.log10(v))]


def _compact(v: float) -> str:
    """A number in few characters: 0.3 (not 0.30000000000000004), 1500, 20k, 3M, 1e-4."""
    if v == 0:
        return "0"
    if abs(v) >= 1e4:
        div, suffix = next((d, s) for d, s in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")) if abs(v) >= d)
        return f"{v / div:.6g}{suffix}"
    if abs(v) < 1e-3:
        mantissa, exponent = f"{v:.6e}".split("e")
        return f"{float(mantissa):g}e{int(exponent)}"
    return f"{v:.10g}"


def _text_width(body: str, size: float) -> float:
    """An estimate of a line of text's width in px."""
    return len(body) * size * CHAR_EM


def _tick_angle(ticks: list[tuple[float, str]], lo: float, hi: float, length: float) -> int:
    """0 when the x tick labels fit side by side, else 30 when rotated labels are at least 16 px apart,
    else 90 (Plotly's automatic angles, 0, 30, 90)."""
    if len(ticks) < 2:
        return 0
    spacing = min(b - a for (a, _), (b, _) in zip(ticks, ticks[1:])) / (hi - lo) * length
    if spacing >= max(_text_width(s, 12) for _, s in ticks) + 6:
        return 0
    return 30 if spacing * math.sin(math.radians(30)) >= 16 else 90


def _label_depth(labels: list[str], angle: int) -> float:
    """How far under the plot the x tick labels reach, in px (20 for labels not rotated)."""
    widest = max((_text_width(s, 12) for s in labels), default=0.0)
    if angle == 0:
        return 20.0
    return 8 + widest * math.sin(math.radians(angle)) + 6 * math.cos(math.radians(angle)) + 4


def _axis_title(axis) -> str:
    return (axis.title.text or "") if axis.title else ""


@dataclass(frozen=True)
class _Axes:
    """The plot area's axes as drawn: scales, ticks (unit, label), the x labels' angle and depth under
    the plot, the widest y label, the axis titles ("" for none) and the legend's rows."""
    sx: _Scale
    sy: _Scale
    xticks: list
    yticks: list
    angle: int
    depth: float
    ylabel_w: float
    xtitle: str
    ytitle: str
    rows: int


def _axes(lay, W: int, H: int, margins: tuple[int, int, int, int], x: tuple, y: tuple, rows: int) -> _Axes:
    """The axes of a figure ``W`` × ``H`` px with ``margins`` (l, r, t, b), x range and kind (x0, x1,
    log, categories), y range and kind (y0, y1, log) and a legend of ``rows`` rows.  A margin grows
    where it is too small for what it holds (Plotly's automargin, approximately): left for the y
    title beside the tick labels, at least 12 px from the edge; bottom for the x labels (deeper when
    rotated), the x title and the legend; right for the last x label rotated 30°."""
    (l, r, t, b), (x0, x1, xlog, cats), (y0, y1, ylog) = margins, x, y
    show_x, show_y = lay.xaxis.visible is not False, lay.yaxis.visible is not False
    yticks = _ticks(lay.yaxis, y0, y1, H - t - b, ylog, (), per_px=40) if show_y else []
    ylabel_w = max((_text_width(s, 12) for _, s in yticks), default=0.0)
    ytitle = _axis_title(lay.yaxis) if show_y else ""
    if ytitle:
        l = max(l, math.ceil(ylabel_w + 4 + 14 + 12))
    xticks = _ticks(lay.xaxis, x0, x1, W - l - r, xlog, cats, per_px=80) if show_x else []
    angle = _tick_angle(xticks, x0, x1, W - l - r)
    depth = _label_depth([s for _, s in xticks], angle)
    xtitle = _axis_title(lay.xaxis) if show_x else ""
    b = max(b, math.ceil(depth + (28 if xtitle else 0) + LEGEND_ROW * rows + 8))
    if angle == 30:
        r = _room_right(xticks, x0, x1, l, r, W)
    return _Axes(_Scale(x0, x1, l, W - r, xlog, cats), _Scale(y0, y1, H - b, t, ylog, ()), xticks, yticks, angle,
                 depth, ylabel_w, xtitle, ytitle, rows)


def _room_right(ticks: list[tuple[float, str]], x0: float, x1: float, l: int, r: int, W: int) -> int:
    """The right margin that keeps the last x label, rotated 30°, 4 px inside the figure: at fraction
    f of the plot's width, it runs cos 30°·(its width) right of its tick, so l + f·(W − l − r) + that
    ≤ W − 4."""
    u, label = max(ticks)
    f = (u - x0) / (x1 - x0)
    reach = _text_width(label, 12) * math.cos(math.radians(30))
    return max(r, math.ceil(W - l - (W - 4 - l - reach) / f)) if f > 0 else r


# ------------------------------------------------------------------------------------------------
# Text, title, axes
# ------------------------------------------------------------------------------------------------

def _plain(text: str) -> str:
    """Plotly's little HTML (``<br>``, ``<sup>``) as plain text."""
    return " ".join(text.replace("<sup>", "").replace("</sup>", "").split("<br>")).strip()


def _text(x: float, y: float, body: str, size: float, color: str = TEXT_COLOR, anchor: str = "middle",
          baseline: str = "central", rotate: float = 0) -> str:
    turn = f' transform="rotate({rotate:g} {x:.1f} {y:.1f})"' if rotate else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size:g}" fill="{color}" text-anchor="{anchor}" '
            f'dominant-baseline="{baseline}"{turn}>{escape(body)}</text>')


def _title(title: str, layout_title, top: int, H: int) -> list[str]:
    """The title at the left: just above the plot when it is placed on the plot (``yref="paper"``,
    the draft tree), else with its top at (1 − y)·H from the figure's top, as Plotly's default."""
    if not title:
        return []
    lines = title.split("<br>")
    if len(lines) > 2 or "<" in lines[0] or (len(lines) == 2 and not lines[1].startswith("<sup>")):
        raise ValueError(f"inline_svg draws a title of one line and one <sup> line, not {title!r}")
    if layout_title.yref == "paper":
        first, second = top - (40 if len(lines) == 2 else 20), top - 18
    else:
        first = (1 - (layout_title.y if layout_title.y is not None else 0.98)) * H + 8
        second = first + 22
    out = [_text(10, first, lines[0], 17, anchor="start")]
    if len(lines) == 2:
        out.append(_text(10, second, _plain(lines[1]), 12, color=TICK_COLOR, anchor="start"))
    return out


def _x_axis(ticks: list[tuple[float, str]], sx: _Scale, base: float, angle: int, depth: float, title: str
            ) -> list[str]:
    """Tick labels under the plot (centred on their tick, or from it rotated ``angle``°) and the title
    centred under them."""
    if angle:
        out = [_text(sx.at(u), base + 8, s, 12, TICK_COLOR, anchor="start", rotate=angle) for u, s in ticks]
    else:
        out = [_text(sx.at(u), base + 14, s, 12, TICK_COLOR) for u, s in ticks]
    if title:
        out.append(_text((sx.p0 + sx.p1) / 2, base + depth + 18, title, 14))
    return out


def _y_axis(ticks: list[tuple[float, str]], sy: _Scale, left: float, right: float, title: str, label_w: float,
            grid: bool) -> list[str]:
    """Horizontal gridlines across the plot at the ticks, tick labels left of the plot, the title
    rotated −90° left of the labels."""
    out = [f'<line x1="{left:.1f}" y1="{sy.at(u):.1f}" x2="{right:.1f}" y2="{sy.at(u):.1f}" '
           f'stroke="{GRID_COLOR}" stroke-width="1"/>' for u, _ in ticks] if grid else []
    out += [_text(left - 4, sy.at(u), s, 12, TICK_COLOR, anchor="end") for u, s in ticks]
    if title:
        x = left - label_w - 4 - 14
        out.append(_text(x, (sy.p0 + sy.p1) / 2, title, 14, rotate=-90))
    return out


# ------------------------------------------------------------------------------------------------
# Colours and hover text
# ------------------------------------------------------------------------------------------------

def _first(value):
    """A per-point property's first item, or the property itself when it is one value."""
    return value[0] if isinstance(value, (tuple, list)) and value else value


def _at(value, i: int):
    """A per-point property's i-th item, or the property itself when it is one value."""
    return value[i] if isinstance(value, (tuple, list)) else value


def _color(trace, index: int) -> str:
    """The trace's colour: its marker's or line's, else Plotly's default for the ``index``-th trace."""
    line = trace.line.color if trace.type == "scatter" and trace.line else None
    return _first(trace.marker.color) if trace.marker and trace.marker.color is not None else (
        line or COLORWAY[index % len(COLORWAY)])


def _rgb(color: str) -> tuple[float, float, float]:
    """``#rgb``, ``#rrggbb``, ``rgb(…)`` or ``rgba(…)`` as (r, g, b) in 0..255."""
    c = color.strip().lower()
    if re.fullmatch(r"#[0-9a-f]{3}", c):
        return tuple(int(ch * 2, 16) for ch in c[1:])
    if re.fullmatch(r"#[0-9a-f]{6}", c):
        return tuple(int(c[k:k + 2], 16) for k in (1, 3, 5))
    m = re.fullmatch(r"rgba?\(([^)]*)\)", c)
    if m:
        return tuple(float(v) for v in m.group(1).split(",")[:3])
    raise ValueError(f"inline_svg reads hex and rgb() colours for a hatch, not {color!r}")


def _hatch_id(color: str) -> str:
    """The hatch pattern's id for bars of ``color``: the same colour, the same pattern in every drawing
    (two drawings on a page then share it harmlessly)."""
    return "inline-svg-hatch-" + re.sub(r"[^0-9a-zA-Z]", "", color)


def _hatch_defs(fig) -> list[str]:
    """One ``<pattern>`` per colour of ``/``-hatched bars: the colour, crossed by diagonal lines every
    HATCH/√2 px in white on a dark colour and dark grey on a light one (Plotly's contrast rule)."""
    colors = []
    for i, trace in enumerate(fig.data):
        if trace.type != "bar":
            continue
        for k in range(len(trace.y or ())):
            shape = _at(trace.marker.pattern.shape, k) if trace.marker.pattern else None
            if shape not in (None, "", "/"):
                raise ValueError(f"inline_svg draws bar patterns '/' only, not {shape!r}")
            if shape == "/":
                colors.append(_at(trace.marker.color, k) or COLORWAY[i % len(COLORWAY)])
    out = []
    for color in dict.fromkeys(colors):
        r, g, b = _rgb(color)
        ink = "#ffffff" if (299 * r + 587 * g + 114 * b) / 1000 < 128 else "#444444"
        h, q = HATCH, HATCH / 4
        out.append(f'<pattern id="{_hatch_id(color)}" width="{h}" height="{h}" patternUnits="userSpaceOnUse">'
                   f'<rect width="{h}" height="{h}" fill="{color}"/>'
                   f'<path d="M{-q:g},{q:g}l{2 * q:g},{-2 * q:g}M0,{h}L{h},0M{3 * q:g},{5 * q:g}l{2 * q:g},{-2 * q:g}" '
                   f'stroke="{ink}" stroke-opacity="0.5" stroke-width="2"/></pattern>')
    return ["<defs>" + "".join(out) + "</defs>"] if out else []


_FIELD = re.compile(r"%\{(\w+)(?::([^}]*))?\}")
_D3 = re.compile(r"(,)?(?:\.(\d+))?([efgd])?")


def _d3(v, spec: str) -> str:
    """``v`` formatted by a d3 format ``spec`` of the forms ``.Nf``, ``.Ne``, ``.Ng``, ``d`` and ``,``."""
    m = _D3.fullmatch(spec)
    if not m or not spec:
        raise ValueError(f"inline_svg formats hover values with .Nf, .Ne, .Ng, d or ',', not {spec!r}")
    if isinstance(v, str):
        return v
    comma, digits, kind = m.groups()
    if kind == "d":
        return f"{round(v):{comma or ''}d}"
    return format(v, f"{comma or ''}{'.' + digits if digits else ''}{kind or ''}")


def _value(v) -> str:
    """A hover value without a format: categories as they are, numbers to 6 significant digits."""
    return v if isinstance(v, str) else f"{v:.6g}"


def _tooltips(trace, xs: list, ys: list) -> list[str | None]:
    """Each point's hover text: its ``hovertemplate`` filled in (``%{x}``, ``%{y}``, ``%{text}``, with
    d3 formats; ``<extra>`` dropped), else its ``hovertext``, else its text where ``hoverinfo`` is
    "text", else "name: x, y"; None where the trace does not hover."""
    n = min(len(xs), len(ys))
    if trace.hoverinfo in ("skip", "none"):
        return [None] * n
    drawn = [x is not None and y is not None for x, y in zip(xs, ys)]    # a point not drawn has no tooltip
    if trace.hovertemplate:
        def fill(i: int) -> str:
            values = {"x": xs[i], "y": ys[i], "text": _at(trace.text, i)}

            def field(m: re.Match) -> str:
                if m.group(1) not in values or values[m.group(1)] is None:
                    raise ValueError(f"inline_svg fills %{{x}}, %{{y}} and %{{text}} in hover text, not {m.group(0)}")
                value = values[m.group(1)]
                return _d3(value, m.group(2)) if m.group(2) is not None else _value(value)
            template = re.sub(r"<extra>.*?</extra>", "", _at(trace.hovertemplate, i), flags=re.S)
            return _FIELD.sub(field, template).replace("<br>", "\n")
        return [fill(i) if drawn[i] else None for i in range(n)]
    hover = trace.hovertext if trace.hovertext is not None else (trace.text if trace.hoverinfo == "text" else None)
    if hover is not None:
        return [(_at(hover, i) or "").replace("<br>", "\n") or None for i in range(n)]
    prefix = f"{trace.name}: " if trace.name else ""
    return [f"{prefix}{_value(x)}, {_value(y)}" if ok else None for x, y, ok in zip(xs, ys, drawn)]


def _tip(text: str | None) -> str:
    return f"<title>{escape(text)}</title>" if text else ""


# ------------------------------------------------------------------------------------------------
# Bars
# ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Slot:
    """Where a bar trace's bars sit around their position, in x units: centred ``offset`` from it,
    ``width`` wide, in a slot ``full`` wide (the least distance between bar positions)."""
    offset: float
    width: float
    full: float


def _bar_slots(fig, cats: tuple, xlog: bool, ylog: bool) -> dict[int, _Slot]:
    """Each bar trace's ``_Slot`` by trace index.  A slot is the least distance between positions;
    bars take 1 − bargap of it.  In ``barmode`` "group" (Plotly's default) bar traces that share a
    position split that into equal bars side by side in trace order, every bar trace taking its
    place even where it has no bar (as Plotly); traces that share none, or "overlay", take it whole."""
    bars = [(i, trace) for i, trace in enumerate(fig.data) if trace.type == "bar"]
    if not bars:
        return {}
    if xlog or ylog:
        raise ValueError("inline_svg draws bars on linear and category axes only, not on a log axis")
    mode = fig.layout.barmode or "group"
    if mode not in ("group", "overlay"):
        raise ValueError(f"inline_svg draws barmode 'group' and 'overlay', not {mode!r}")
    positions = [{_unit(x, False, cats) for x in _xs(trace) if x is not None} for _, trace in bars]
    distinct = sorted(set().union(*positions))
    full = min((b - a for a, b in zip(distinct, distinct[1:])), default=1.0)
    shared = sum(len(p) for p in positions) > len(distinct)
    n = len(bars) if mode == "group" and shared else 1
    group = full * (1 - (fig.layout.bargap if fig.layout.bargap is not None else BARGAP))
    return {i: _Slot(-group / 2 + (j + 0.5) * group / n if n > 1 else 0.0, group / n, full)
            for j, (i, _) in enumerate(bars)}


def _bars(trace, slot: _Slot, color: str, sx: _Scale, sy: _Scale) -> list[str]:
    """Each bar a group: its tooltip and a rectangle from 0 to y (cut to the plot area, which Plotly
    clips it to), ``slot.width`` wide centred ``slot.offset`` from x, filled with its colour or hatch,
    outlined where ``marker.line.width`` says; its text above (below for y < 0) when ``outside``.  A bar
    of height 0 is drawn only when outlined, as Plotly does."""
    xs, ys = _xs(trace), list(trace.y or ())
    tips = _tooltips(trace, xs, ys)
    if trace.text is not None and trace.textposition not in ("outside", "none"):
        raise ValueError(f"inline_svg draws bar text outside only, not textposition={trace.textposition!r}")
    marker, line = trace.marker, trace.marker.line
    top, bottom = min(sy.p0, sy.p1), max(sy.p0, sy.p1)
    out = []
    for i, (x, y) in enumerate(zip(xs, ys)):
        u = sx.unit(x)
        if u is None or y is None:
            continue
        left, right = sx.at(u + slot.offset - slot.width / 2), sx.at(u + slot.offset + slot.width / 2)
        y_top, y_base = sorted((sy(y), sy(0)))
        y_top, y_base = min(max(y_top, top), bottom), min(max(y_base, top), bottom)
        bar_color = _at(marker.color, i) or color
        hatched = marker.pattern is not None and _at(marker.pattern.shape, i) == "/"
        fill = f"url(#{_hatch_id(bar_color)})" if hatched else bar_color
        edge = float(_at(line.width, i) or 0) if line else 0.0
        stroke = f' stroke="{_at(line.color, i) or "#444444"}" stroke-width="{edge:g}"' if edge else ""
        # Plotly leaves out a bar of no height unless it is outlined (its text stays)
        mark = [f'<rect x="{left:.1f}" y="{y_top:.1f}" width="{right - left:.1f}" height="{y_base - y_top:.1f}" '
                f'fill="{fill}"{stroke}/>'] if y_base - y_top > 1e-9 or edge else []
        text = _at(trace.text, i) if trace.textposition == "outside" else None
        if text:
            mark.append(_bar_text(str(text), (left + right) / 2, sy(y), sy(y) > sy(0), right - left, trace))
        if mark:
            out.append(f"<g>{_tip(tips[i])}{''.join(mark)}</g>")
    return out


def _bar_text(body: str, cx: float, y_end: float, below: bool, bar_width: float, trace) -> str:
    """A bar's text outside it: centred on the bar, 6 px past its end, shrunk to the bar's width where
    wider (Plotly's ``constraintext``)."""
    size, color = _font(trace)
    size = min(size, size * bar_width / max(_text_width(body, size), 1.0))
    if below:
        return _text(cx, y_end + 6 + size * 0.8, body, round(size, 1), color, baseline="auto")
    return _text(cx, y_end - 6, body, round(size, 1), color, baseline="auto")


# ------------------------------------------------------------------------------------------------
# Scatter traces
# ------------------------------------------------------------------------------------------------

def _scatter(trace, color: str, sx: _Scale, sy: _Scale, lines: bool) -> list[str]:
    """The trace's lines (``lines``), else its markers and text, each point a group with its tooltip."""
    mode = set((trace.mode or "lines+markers").split("+"))
    if not mode <= {"lines", "markers", "text", "none"}:
        raise ValueError(f"inline_svg draws scatter modes lines, markers and text, not {trace.mode!r}")
    xs, ys = _xs(trace), list(trace.y or ())
    tips = _tooltips(trace, xs, ys)
    points = [(sx.unit(x), sy.unit(y)) for x, y in zip(xs, ys)]
    if lines:
        return _lines(points, trace.line, color, sx, sy, tips) if "lines" in mode else []
    paint = _paint(trace.marker, color) if "markers" in mode else None
    out = []
    for i, (u, v) in enumerate(points):
        if u is None or v is None:
            continue
        cx, cy = sx.at(u), sy.at(v)
        mark = []
        if paint:
            mark.append(_marker(cx, cy, *paint))
        text = _at(trace.text, i) if "text" in mode else None
        if text:
            mark.append(_label(cx, cy, str(text), trace, "markers" in mode))
        if mark:
            out.append(f"<g>{_tip(tips[i])}{''.join(mark)}</g>")
    return out


def _dasharray(dash: str | None, width: float) -> str:
    """The SVG ``stroke-dasharray`` attribute of a Plotly dash ("" for solid)."""
    pattern = DASHES.get(dash or "solid", "unknown")
    if pattern == "unknown":
        raise ValueError(f"inline_svg draws dashes {sorted(DASHES)}, not {dash!r}")
    unit = max(width, 3)
    return f' stroke-dasharray="{",".join(f"{d * unit:g}" for d in pattern)}"' if pattern else ""


def _lines(points, line, color: str, sx: _Scale, sy: _Scale, tips: list) -> list[str]:
    """One polyline per run of points without a None (Plotly breaks a line there), with the run's
    distinct hover texts as its tooltip."""
    width = float(line.width if line.width is not None else 2)
    style = _dasharray(line.dash, width)
    runs, run = [], []
    for (u, v), tip in zip(points + [(None, None)], tips + [None]):
        if u is None or v is None:
            if len(run) > 1:
                runs.append(run)
            run = []
        else:
            run.append((f"{sx.at(u):.1f},{sy.at(v):.1f}", tip))
    out = []
    for run in runs:
        tip = "\n".join(dict.fromkeys(t for _, t in run if t))
        body = f">{_tip(tip)}</polyline>" if tip else "/>"
        out.append(f'<polyline points="{" ".join(p for p, _ in run)}" fill="none" stroke="{line.color or color}" '
                   f'stroke-width="{width:g}" stroke-linecap="round"{style}{body}')
    return out


def _paint(marker, color: str) -> tuple[str, float, str, str, float]:
    """A Plotly marker's (symbol, size, fill, edge colour, edge width); an open symbol is its edge
    alone, in the marker's colour, 1 px unless its line says."""
    symbol = marker.symbol or "circle"
    if symbol not in SYMBOLS:
        raise ValueError(f"inline_svg draws marker symbols {SYMBOLS}, not {symbol!r}")
    if isinstance(marker.color, (tuple, list)):
        raise ValueError("inline_svg draws a scatter trace's markers in one colour, not one per point")
    fill = marker.color or color
    width = float(marker.line.width or 0) if marker.line else 0.0
    if symbol.endswith("-open"):
        return symbol, float(marker.size or 6), "none", fill, width or 1.0
    edge = marker.line.color if marker.line and marker.line.color else "none"
    return symbol, float(marker.size or 6), fill, edge, width


def _marker(cx: float, cy: float, symbol: str, size: float, fill: str, edge: str, edge_width: float) -> str:
    radius = size / 2
    paint = f'fill="{fill}" stroke="{edge}" stroke-width="{edge_width:g}"'
    if symbol == "circle":
        return f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{radius:.1f}" {paint}/>'
    if symbol == "x":   # two diagonal bars across the square [-a, a]²; each bar meets an edge w from a corner
        a, w = radius, radius / 3
        corners = [(-a + w, -a), (0, -w), (a - w, -a), (a, -a + w), (w, 0), (a, a - w), (a - w, a), (0, w),
                   (-a + w, a), (-a, a - w), (-w, 0), (-a, -a + w)]
    elif symbol.startswith("diamond"):   # Plotly's: the corners 1.3 × the radius from the centre
        a = 1.3 * radius
        corners = [(a, 0), (0, a), (-a, 0), (0, -a)]
    else:               # a five-pointed star, inner radius 0.4 of the outer
        corners = [((radius if k % 2 == 0 else 0.4 * radius) * math.sin(k * math.pi / 5),
                    -(radius if k % 2 == 0 else 0.4 * radius) * math.cos(k * math.pi / 5)) for k in range(10)]
    pts = " ".join(f"{cx + dx:.1f},{cy + dy:.1f}" for dx, dy in corners)
    return f'<polygon points="{pts}" {paint}/>'


def _font(trace) -> tuple[float, str]:
    """The size and colour of a trace's text: its ``textfont``'s, else 12 px in TEXT_COLOR."""
    font = trace.textfont
    size = float(font.size or 12) if font else 12.0
    return size, (font.color if font and font.color else None) or TEXT_COLOR


def _label(cx: float, cy: float, body: str, trace, on_marker: bool) -> str:
    size, color = _font(trace)
    where = (trace.textposition or "middle center").split()[0]
    gap = float(trace.marker.size or 6) / 2 + 2 if on_marker else 6
    if where == "top":
        return _text(cx, cy - gap, body, size, color, baseline="auto")
    if where == "bottom":
        return _text(cx, cy + gap + size * 0.8, body, size, color, baseline="auto")
    return _text(cx, cy, body, size, color)


# ------------------------------------------------------------------------------------------------
# Shapes and legend
# ------------------------------------------------------------------------------------------------

def _shapes(shapes, sx: _Scale, sy: _Scale) -> list[str]:
    """Vertical lines (``add_vline``): x in data units, y0 and y1 fractions of the plot's height;
    Plotly's default line is 2 px of #444."""
    out = []
    for shape in shapes:
        line = shape.line
        width = float(line.width if line and line.width is not None else 2)
        y0, y1 = (sy.p0 + f * (sy.p1 - sy.p0) for f in (shape.y0 or 0, shape.y1 if shape.y1 is not None else 1))
        out.append(f'<line x1="{sx(shape.x0):.1f}" y1="{y0:.1f}" x2="{sx(shape.x1):.1f}" y2="{y1:.1f}" '
                   f'stroke="{(line.color if line else None) or "#444444"}" stroke-width="{width:g}"'
                   f'{_dasharray(line.dash if line else None, width)}/>')
    return out


def _legend_entries(fig) -> list[tuple[int, object]]:
    """The (index, trace) of every trace the legend lists: named and not ``showlegend=False``."""
    return [(i, t) for i, t in enumerate(fig.data) if t.showlegend is not False and t.name]


def _legend_shown(fig, entries: list) -> bool:
    """Plotly's rule: the layout's ``showlegend``, else a legend when some trace shows in it and the
    figure has two traces or more (one that sets ``showlegend=True`` counts twice)."""
    if fig.layout.showlegend is not None:
        shown = bool(fig.layout.showlegend)
    else:
        shown = bool(entries) and len(fig.data) + sum(t.showlegend is True for t in fig.data) > 1
    if shown and (fig.layout.legend.orientation or "v") != "h":
        raise ValueError("inline_svg draws a horizontal legend (legend.orientation='h') only")
    return shown


def _entry_width(name: str) -> float:
    """A legend entry's width in px: swatch, gap and about 6.5 px a character of 12 px text."""
    return len(name) * 6.5 + 40


def _legend_places(names: list[str], W: int) -> list[tuple[float, int]]:
    """Where each legend entry starts, (x px, row): left to right, a new row where the next would pass
    ``W`` − 10 px."""
    out, x, row = [], 10.0, 0
    for name in names:
        if x + _entry_width(name) > W - 10 and x > 10:
            x, row = 10.0, row + 1
        out.append((x, row))
        x += _entry_width(name)
    return out


def _legend_rows(entries: list, W: int) -> int:
    """How many rows the legend takes ``W`` px wide (0 without entries)."""
    places = _legend_places([t.name for _, t in entries], W)
    return places[-1][1] + 1 if places else 0


def _legend(entries: list[tuple[object, str]], W: int, H: int, rows: int) -> list[str]:
    """A horizontal legend in ``rows`` rows at the figure's bottom: each (trace, colour) as its line
    and marker, or a square of its bar colour, then its name."""
    out = []
    for (t, color), (x, row) in zip(entries, _legend_places([t.name for t, _ in entries], W)):
        y = H - LEGEND_ROW * (rows - row) + 6
        if t.type == "bar":
            hatched = t.marker.pattern is not None and _first(t.marker.pattern.shape) == "/"
            out.append(f'<rect x="{x + 2:.1f}" y="{y - 6:.1f}" width="12" height="12" '
                       f'fill="{f"url(#{_hatch_id(color)})" if hatched else color}"/>')
        else:
            mode = t.mode or "lines+markers"
            if "lines" in mode:
                width = min(float(t.line.width if t.line.width is not None else 2), 4)
                out.append(f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{x + 18:.1f}" y2="{y:.1f}" '
                           f'stroke="{t.line.color or color}" stroke-width="{width:g}"'
                           f'{_dasharray(t.line.dash, width)}/>')
            if "markers" in mode:
                symbol, _, fill, edge, edge_width = _paint(t.marker, color)
                out.append(_marker(x + 8, y, symbol, 16 if symbol == "star" else 14 if "lines" not in mode
                                   else 10, fill, edge, edge_width))
        out.append(_text(x + 22, y, t.name, 12, anchor="start"))
    return out
