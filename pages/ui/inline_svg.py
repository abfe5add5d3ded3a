"""A Plotly scatter figure drawn as SVG in the page itself, for a page that should not wait for Plotly.

Plotly's script in the browser is 4.7 MB: a browser that meets it for the first time spends about
2.5 s of this machine before the first chart appears (docs/app.md, "Page speed").  The start page
has one picture, a draft tree made of lines, markers and text, so it is drawn here from the very
figure ``figures.draft_tree`` builds: the same positions, colours, symbols, labels and legend, and the
hover text as each mark's SVG ``<title>`` (the browser shows it as a tooltip).

Only what such a figure uses is drawn: ``scatter`` traces in ``lines``, ``markers`` and ``text``
modes and their combinations; marker symbols circle, x and star; dashes solid, dot, dash and
dashdot; an x-axis with a fixed ``range``, ``dtick`` and title; a y-axis with a fixed ``range``; a
horizontal legend under the plot; a title of one line and at most one ``<br><sup>…</sup>`` line.
Anything else raises ValueError rather than draw a picture that differs from the figure.
"""
from __future__ import annotations

import math
from xml.sax.saxutils import escape, quoteattr

__all__ = ["render"]

WIDTH = 560            # the drawing's own width in px, about the start page's column; inline it scales to it
FONT = "'Source Sans', 'Source Sans Pro', sans-serif"   # Streamlit's own font where the page has it
TEXT_COLOR = "#31333f"
LEGEND_ROW = 24        # px per legend row, as ``figures._layout`` reserves them
SYMBOLS = ("circle", "x", "star")
DASHES = {"solid": None, "dot": (1, 2), "dash": (3, 2), "dashdot": (3, 2, 1, 2)}


def render(fig, standalone: bool = False) -> str:
    """``fig`` (a ``plotly.graph_objects.Figure`` from ``figures``, which alone builds figures: this
    module only reads them) as one ``<svg>`` element, ``WIDTH`` by ``fig.layout.height`` px in its own units.

    Inline (the default) it takes the width of its container and keeps its aspect ratio;
    ``standalone`` gives a file of fixed size (a download).  Data point (x, y) goes to
    ``(l + (x - x0)/(x1 - x0)·(W - l - r),  H - b - (y - y0)/(y1 - y0)·(H - t - b))`` with the
    figure's margins l, r, t, b and axis ranges [x0, x1], [y0, y1], as Plotly places it."""
    lay = fig.layout
    W, H = WIDTH, int(lay.height or 450)
    l, r, t, b = (int(getattr(lay.margin, side) if getattr(lay.margin, side) is not None else 80)
                  for side in "lrtb")
    if lay.xaxis.range is None or lay.yaxis.range is None:
        raise ValueError("inline_svg draws figures with fixed axis ranges only")
    (x0, x1), (y0, y1) = lay.xaxis.range, lay.yaxis.range

    def px(x: float) -> float:
        return l + (x - x0) / (x1 - x0) * (W - l - r)

    def py(y: float) -> float:
        return H - b - (y - y0) / (y1 - y0) * (H - t - b)

    title = (lay.title.text or "") if lay.title else ""
    size = f'width="{W}" height="{H}"' if standalone else 'width="100%" style="height:auto;max-width:100%"'
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" {size} role="img" '
           f'aria-label={quoteattr(_plain(title))} font-family="{FONT}">',
           f'<rect width="{W}" height="{H}" fill="white"/>']
    out += _title(title, t)
    out += _x_axis(lay.xaxis, px, x0, x1, H - b, l + (W - l - r) / 2)
    # every line under every mark (a line drawn later would cross the marks already there)
    out += [line for trace in fig.data for line in _trace(trace, px, py, lines=True)]
    out += [mark for trace in fig.data for mark in _trace(trace, px, py, lines=False)]
    out += _legend(fig, W, H)
    out.append("</svg>")
    return "\n".join(out)


def _plain(text: str) -> str:
    """Plotly's little HTML (``<br>``, ``<sup>``) as plain text."""
    return " ".join(text.replace("<sup>", "").replace("</sup>", "").split("<br>")).strip()


def _text(x: float, y: float, body: str, size: float, color: str = TEXT_COLOR, anchor: str = "middle",
          baseline: str = "central") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size:g}" fill="{color}" text-anchor="{anchor}" '
            f'dominant-baseline="{baseline}">{escape(body)}</text>')


def _title(title: str, top: int) -> list[str]:
    if not title:
        return []
    lines = title.split("<br>")
    if len(lines) > 2 or "<" in lines[0] or (len(lines) == 2 and not lines[1].startswith("<sup>")):
        raise ValueError(f"inline_svg draws a title of one line and one <sup> line, not {title!r}")
    out = [_text(10, top - (40 if len(lines) == 2 else 20), lines[0], 17, anchor="start")]
    if len(lines) == 2:
        out.append(_text(10, top - 18, _plain(lines[1]), 12, color="#555555", anchor="start"))
    return out


def _x_axis(axis, px, x0: float, x1: float, base: float, middle: float) -> list[str]:
    if axis.visible is False:
        return []
    step = float(axis.dtick or 1)
    out = [_text(px(v), base + 14, f"{v:g}", 12, color="#555555")
           for v in (k * step for k in range(math.ceil(x0 / step), math.floor(x1 / step) + 1))]
    if axis.title and axis.title.text:
        out.append(_text(middle, base + 38, axis.title.text, 14))
    return out


def _trace(trace, px, py, lines: bool) -> list[str]:
    """The trace's lines (``lines``), else its markers and text, each point a group with its tooltip."""
    if trace.type != "scatter":
        raise ValueError(f"inline_svg draws scatter traces only, not {trace.type}")
    mode = set((trace.mode or "lines+markers").split("+"))
    points = list(zip(trace.x or (), trace.y or ()))
    if lines:
        return _lines(points, trace.line, px, py) if "lines" in mode else []
    hover = trace.hovertext if trace.hoverinfo != "skip" else None
    paint = _paint(trace.marker) if "markers" in mode else None
    out = []
    texts = trace.text if isinstance(trace.text, (tuple, list)) else [trace.text] * len(points)
    for i, (x, y) in enumerate(points):
        if x is None or y is None:
            continue
        mark = []
        if paint:
            mark.append(_marker(px(x), py(y), *paint))
        if "text" in mode and texts[i]:
            mark.append(_label(px(x), py(y), str(texts[i]), trace, "markers" in mode))
        if mark:
            tip = hover[i] if isinstance(hover, (tuple, list)) else hover
            tip = f"<title>{escape(tip.replace('<br>', chr(10)))}</title>" if tip else ""
            out.append(f"<g>{tip}{''.join(mark)}</g>")
    return out


def _lines(points, line, px, py) -> list[str]:
    width = float(line.width or 2)
    dash = DASHES.get(line.dash or "solid", "unknown")
    if dash == "unknown":
        raise ValueError(f"inline_svg draws dashes {sorted(DASHES)}, not {line.dash!r}")
    style = f' stroke-dasharray="{",".join(f"{d * width:g}" for d in dash)}"' if dash else ""
    runs, run = [], []
    for x, y in points + [(None, None)]:    # Plotly breaks a line at a None
        if x is None or y is None:
            if len(run) > 1:
                runs.append(run)
            run = []
        else:
            run.append(f"{px(x):.1f},{py(y):.1f}")
    return [f'<polyline points="{" ".join(run)}" fill="none" stroke="{line.color or "#444444"}" '
            f'stroke-width="{width:g}" stroke-linecap="round"{style}/>' for run in runs]


def _paint(marker) -> tuple[str, float, str, str, float]:
    """A Plotly marker's (symbol, size, fill, edge colour, edge width)."""
    symbol = marker.symbol or "circle"
    if symbol not in SYMBOLS:
        raise ValueError(f"inline_svg draws marker symbols {SYMBOLS}, not {symbol!r}")
    edge = marker.line.color if marker.line and marker.line.color else "none"
    width = float(marker.line.width or 0) if marker.line else 0.0
    return symbol, float(marker.size or 6), marker.color or "#1f77b4", edge, width


def _marker(cx: float, cy: float, symbol: str, size: float, fill: str, edge: str, edge_width: float) -> str:
    radius = size / 2
    paint = f'fill="{fill}" stroke="{edge}" stroke-width="{edge_width:g}"'
    if symbol == "circle":
        return f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{radius:.1f}" {paint}/>'
    if symbol == "x":   # two diagonal bars across the square [-a, a]²; each bar meets an edge w from a corner
        a, w = radius, radius / 3
        corners = [(-a + w, -a), (0, -w), (a - w, -a), (a, -a + w), (w, 0), (a, a - w), (a - w, a), (0, w),
                   (-a + w, a), (-a, a - w), (-w, 0), (-a, -a + w)]
    else:               # a five-pointed star, inner radius 0.4 of the outer
        corners = [((radius if k % 2 == 0 else 0.4 * radius) * math.sin(k * math.pi / 5),
                    -(radius if k % 2 == 0 else 0.4 * radius) * math.cos(k * math.pi / 5)) for k in range(10)]
    pts = " ".join(f"{cx + dx:.1f},{cy + dy:.1f}" for dx, dy in corners)
    return f'<polygon points="{pts}" {paint}/>'


def _label(cx: float, cy: float, body: str, trace, on_marker: bool) -> str:
    font = trace.textfont
    size = float(font.size or 12) if font else 12.0
    color = (font.color if font and font.color else None) or TEXT_COLOR
    where = (trace.textposition or "middle center").split()[0]
    gap = float(trace.marker.size or 6) / 2 + 2 if on_marker else 6
    if where == "top":
        return _text(cx, cy - gap, body, size, color, baseline="auto")
    if where == "bottom":
        return _text(cx, cy + gap + size * 0.8, body, size, color, baseline="auto")
    return _text(cx, cy, body, size, color)


def _entry_width(name: str) -> float:
    """A legend entry's width in px: swatch, gap and about 6.5 px a character of 12 px text."""
    return len(name) * 6.5 + 40


def _legend(fig, W: int, H: int) -> list[str]:
    if fig.layout.showlegend is False:
        return []
    entries = [t for t in fig.data if t.showlegend is not False and t.name]
    out, x, row = [], 10.0, 0
    rows = max(1, -(-sum(_entry_width(t.name) for t in entries) // (W - 20)))
    for t in entries:
        wide = _entry_width(t.name)
        if x + wide > W - 10 and x > 10:
            x, row = 10.0, row + 1
        y = H - LEGEND_ROW * (rows - row) + 6
        if "markers" in (t.mode or ""):
            symbol, _, fill, edge, edge_width = _paint(t.marker)
            out.append(_marker(x + 8, y, symbol, 16 if symbol == "star" else 14, fill, edge, edge_width))
        else:
            out.append(f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{x + 18:.1f}" y2="{y:.1f}" '
                       f'stroke="{t.line.color or "#444444"}" stroke-width="3"/>')
        out.append(_text(x + 22, y, t.name, 12, anchor="start"))
        x += wide
    return out
