"""``pages.ui.inline_svg``: a figure drawn as SVG in the page puts every mark where Plotly puts it,
with the figure's labels, legend and hover text, and refuses what it cannot draw."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import plotly.graph_objects as go
import pytest

from pages.ui import figures, inline_svg
from toy_models import PRESETS

SVG = "{http://www.w3.org/2000/svg}"
WIDE = 760          # ``charts.CHART_WIDTH``: the width the app draws its charts at


@pytest.fixture(scope="module")
def tree() -> go.Figure:
    """The start page's picture: three drafts, a rejected branch, τ = 2 and the extra token."""
    from pages.ui import cached
    preset = PRESETS["several-drafts"]
    spec = cached.model_spec(preset.draft, preset.target, 1.0)
    block = cached.draw(spec, preset.K, preset.L, seed=6)
    verdict = cached.verify(spec, "rbv", block, coin_seed=1)
    return figures.draft_tree(block, verdict.trace, accepted=verdict.accepted, extra=verdict.extra,
                              title="One iteration<br><sup>verified by RBV</sup>", height=400)


def _centres(root: ET.Element) -> list[tuple[float, float]]:
    """The centre of every marker drawn (circles, and the x and star polygons, symmetric about it)."""
    out = [(float(c.get("cx")), float(c.get("cy"))) for c in root.iter(f"{SVG}circle")]
    for poly in root.iter(f"{SVG}polygon"):
        xy = np.array([[float(v) for v in p.split(",")] for p in poly.get("points").split()])
        out.append(tuple(xy.mean(axis=0)))
    return out


def _marks(root: ET.Element) -> list[ET.Element]:
    """The groups that hold one mark each (the legend's swatches are not in a group)."""
    return [g for g in root.iter(f"{SVG}g")]


def test_every_node_is_drawn_with_its_label_hover_and_legend(tree):
    root = ET.fromstring(inline_svg.render(tree, standalone=True))
    assert root.get("width") == str(inline_svg.WIDTH) and root.get("height") == str(tree.layout.height)
    nodes = [t for t in tree.data if t.mode == "markers+text"]
    n_nodes = sum(len(t.x) for t in nodes)
    marked = [g for g in _marks(root) if g.find(f"{SVG}circle") is not None or g.find(f"{SVG}polygon") is not None]
    assert len(marked) == n_nodes
    tips = [g.find(f"{SVG}title").text for g in marked]
    expected = [h.replace("<br>", "\n") for t in nodes for h in t.hovertext]
    assert sorted(tips) == sorted(expected)
    labels = [g.find(f"{SVG}text").text for g in marked]
    assert sorted(labels) == sorted(str(x) for t in nodes for x in t.text)
    legend = {t.text for t in root.iter(f"{SVG}text")}
    assert {t.name for t in nodes} <= legend
    assert "One iteration" in legend and "verified by RBV" in legend
    branches = [t for t in tree.data if t.mode == "text"][0]
    drawn = [g.find(f"{SVG}text").text for g in _marks(root) if g.find(f"{SVG}circle") is None
             and g.find(f"{SVG}polygon") is None]
    assert drawn == [s for s in branches.text if s]                   # empty labels are not drawn
    rejected = sum(len(t.x) for t in nodes if t.marker.symbol == "x")
    assert rejected == 6 and len(list(root.iter(f"{SVG}polygon"))) == rejected + 1 + 2   # + star, + 2 swatches


def test_marks_sit_where_the_layout_puts_them(tree):
    """Data (x, y) maps to l + (x − x0)/(x1 − x0)·(W − l − r) across and H − b − (y − y0)/(y1 − y0)·(H − t − b)
    down: checked on the root and on the extra token's star, from the figure's own numbers."""
    lay = tree.layout
    W, H = inline_svg.WIDTH, lay.height
    (x0, x1), (y0, y1) = lay.xaxis.range, lay.yaxis.range
    l, r, t, b = lay.margin.l, lay.margin.r, lay.margin.t, lay.margin.b
    root_trace = next(tr for tr in tree.data if tr.name and tr.name.startswith("root"))
    star = next(tr for tr in tree.data if tr.marker and tr.marker.symbol == "star")
    centres = _centres(ET.fromstring(inline_svg.render(tree)))
    for trace in (root_trace, star):
        x, y = trace.x[0], trace.y[0]
        want = (l + (x - x0) / (x1 - x0) * (W - l - r), H - b - (y - y0) / (y1 - y0) * (H - t - b))
        assert min(np.hypot(cx - want[0], cy - want[1]) for cx, cy in centres) < 0.1


@pytest.mark.skipif(figures.export_browser() is None,
                    reason="no Chrome or Chromium for Kaleido: set BROWSER_PATH or apt-get install chromium")
def test_marks_sit_where_plotly_draws_them(tree):
    """Against Plotly itself: Kaleido's SVG of the same figure at the same size places each point at
    translate(x, y) inside a plot area translated by (l, t)."""
    plotly_svg = figures.image(tree, width=inline_svg.WIDTH).decode()
    offset = (tree.layout.margin.l, tree.layout.margin.t)
    assert f'transform="translate({offset[0]},{offset[1]})"' in plotly_svg     # the plot area's corner
    points = [(float(x) + offset[0], float(y) + offset[1]) for x, y in
              re.findall(r'class="point[^"]*" transform="translate\(([-\d.]+),([-\d.]+)\)"', plotly_svg)]
    ours = _centres(ET.fromstring(inline_svg.render(tree)))
    assert len(points) == sum(len(t.x) for t in tree.data if t.mode and "markers" in t.mode)
    for px, py in points:
        assert min(np.hypot(cx - px, cy - py) for cx, cy in ours) < 0.6


def test_inline_it_scales_to_its_column_but_never_above_its_width(tree):
    root = ET.fromstring(inline_svg.render(tree))
    assert root.get("width") == "100%" and root.get("viewBox") == f"0 0 {inline_svg.WIDTH} {tree.layout.height}"
    assert root.get("style") == f"max-width:{inline_svg.WIDTH}px;height:auto"
    wide = ET.fromstring(inline_svg.render(tree, width=WIDE))
    assert wide.get("viewBox") == f"0 0 {WIDE} {tree.layout.height}"
    assert wide.get("style") == f"max-width:{WIDE}px;height:auto"
    fixed = ET.fromstring(inline_svg.render(tree, standalone=True, width=WIDE))
    assert (fixed.get("width"), fixed.get("height")) == (str(WIDE), str(tree.layout.height))


def test_the_draft_tree_has_no_y_axis(tree):
    root = ET.fromstring(inline_svg.render(tree))
    assert not [ln for ln in root.iter(f"{SVG}line") if ln.get("stroke") == inline_svg.GRID_COLOR]
    assert not [t for t in root.iter(f"{SVG}text") if t.get("transform")]          # no rotated title or labels


@pytest.mark.parametrize("change, what", [
    (lambda f: f.add_trace(go.Heatmap(z=[[1, 2], [3, 4]])), "scatter and bar traces only, not heatmap"),
    (lambda f: f.add_trace(go.Box(y=[1, 2])), "not box"),
    (lambda f: f.update_layout(title_text="one<br>two<br>three"), "title"),
    (lambda f: f.update_traces(marker_symbol="triangle-up", selector=dict(mode="markers+text")), "marker symbols"),
    (lambda f: f.update_traces(line_dash="longdash", selector=dict(mode="lines")), "dashes"),
    (lambda f: f.update_traces(fill="tozeroy", selector=dict(mode="lines")), "scatter.fill"),
    (lambda f: f.update_traces(error_y=dict(array=[0.1]), selector=dict(mode="markers+text")), "scatter.error_y"),
    (lambda f: f.update_traces(marker_opacity=0.5, selector=dict(mode="markers+text")), "scatter.marker.opacity"),
    (lambda f: f.add_annotation(text="note", x=1, y=0), "layout.annotations"),
    (lambda f: f.add_trace(go.Scatter(x=[1], y=[1], xaxis="x2")), "subplots"),
    (lambda f: f.update_layout(xaxis2=dict(domain=[0.5, 1])), "subplots"),
    (lambda f: f.add_shape(type="rect", x0=0, x1=1, y0=0, y1=1), "vertical lines"),
    (lambda f: f.add_hline(y=0), "vertical lines"),
    (lambda f: f.update_xaxes(type="date"), "date xaxis"),
])
def test_what_it_cannot_draw_is_refused(tree, change, what):
    fig = go.Figure(tree)
    change(fig)
    with pytest.raises(ValueError, match=what):
        inline_svg.render(fig)


# ------------------------------------------------------------------------------------------------
# Bar charts, axes, autorange: the other figures of ``figures``
# ------------------------------------------------------------------------------------------------

#: The toy laboratory's table, for four rules on a binary toy configuration; SpecTr-GBV is lossy here.
ROWS = [{"method": "sd", "expected_accepted": 0.8, "fidelity_tv": 0.0},
        {"method": "bv", "expected_accepted": 10 / 9, "fidelity_tv": 0.0},
        {"method": "spectr_gbv", "expected_accepted": 1.25, "fidelity_tv": 0.03},
        {"method": "rbv", "expected_accepted": 1.2, "fidelity_tv": 0.0}]
BOUNDS = {"lp_optimum": 1.22, "acausal": 1.3, "claimed_cic": 1.27, "greedy": None}
P, Q, R = np.array([0.5, 0.3, 0.15, 0.05]), np.array([0.2, 0.3, 0.4, 0.1]), np.array([0.05, 0.05, 0.7, 0.2])


def _tau_vs_K(current_K: int = 2) -> go.Figure:
    curves = {"spectr_gbv": [(1, 0.9), (2, 1.1), (3, 1.2), (4, 1.25)], "bv": [(K, 1.0) for K in range(1, 5)]}
    bounds = {"lp_optimum": [(1, 1.0), (2, 1.15), (3, 1.25), (4, 1.3)], "greedy": []}
    return figures.tau_vs_K(curves, bounds, current_K=current_K)


def _compare() -> go.Figure:
    return figures.compare_methods_bar([{"method": m, "tau": t, "expected_tau_given_drafts": e} for m, t, e in
                                        (("sd", 1, 0.7), ("bv", 2, 1.3), ("rbv", 2, None), ("otv", 0, 0.9))])


SUPPORTED = {
    "expected_tau_bars": lambda: figures.expected_tau_bars(ROWS, BOUNDS),
    "tau_vs_K": _tau_vs_K,
    "claim_values": lambda: figures.claim_values({"spectr_gbv": 1.2, "claimed_cic": 1.27, "lp_optimum": 1.22},
                                                 "SpecTr-GBV's E[τ] against what the paper claims", "E[τ]"),
    "scaling_plot": lambda: figures.scaling_plot((16, 64, 256, 1024, 4096), (2e-5, 3e-5, 5e-5, 1e-4, 3e-4), 0.42),
    "compare_methods_bar": _compare,
    "residual_bars": lambda: figures.residual_bars(P, Q, R, 2, "1 2", False),
    "residual_bars_bonus": lambda: figures.residual_bars(None, Q, R, 1, "1 2", True),
    "traversal_step": lambda: figures.traversal_step(np.arange(1, 41) / 820, np.ones(40) / 40, np.r_[np.zeros(39), 1.0],
                                                     "∅", 5, 0.3, 0.7, top=30),
    "acceptance_per_position": lambda: figures.acceptance_per_position({"sd": [0.8, 0.6, 0.4, 0.2],
                                                                        "bv": [0.85, 0.65, 0.5, 0.3]}),
}


def _refused() -> dict:
    import pandas as pd
    sweep = pd.DataFrame({"method": ["sd"] * 3, "K": [1, 2, 3], "mean": [1.0, 1.2, 1.3], "lo": [0.9, 1.1, 1.2],
                          "hi": [1.1, 1.3, 1.4]})
    boxes = pd.DataFrame({"method": ["sd", "sd", "bv", "bv"], "K": [1, 2, 1, 2], "score": [1.0, 1.1, 1.2, 1.3]})
    return {
        "coupling_heatmap": lambda: figures.coupling_heatmap([[(0,), (1,)]], [1.0], [{((), 0): 0.5, ((), 1): 0.5}]),
        "tau_histograms": lambda: figures.tau_histograms({"sd": [0.5, 0.5], "bv": [0.4, 0.6]}, {}, 100),
        "time_split": lambda: figures.time_split({"sd": {"draft": 1.0, "target": 2.0}}),
        "sweep_lines": lambda: figures.sweep_lines(sweep, "K", "mean", "lo", "hi", title="t", xlab="K", ylab="E"),
        "score_boxes": lambda: figures.score_boxes(boxes, "K", "score", "score", ["sd", "bv"]),
    }


def _svg(fig: go.Figure, width: int = WIDE) -> ET.Element:
    return ET.fromstring(inline_svg.render(fig, width=width))


def _plot_area(fig: go.Figure, width: int = WIDE) -> tuple[float, float, float, float]:
    """(left, top, right, bottom) of the plot area, from the figure's own margins."""
    m, H = fig.layout.margin, fig.layout.height
    return m.l, m.t, width - m.r, H - m.b


def _bars(root: ET.Element) -> list[dict]:
    """Every bar drawn: its rectangle, fill, outline, text and tooltip."""
    out = []
    for g in root.iter(f"{SVG}g"):
        rect = g.find(f"{SVG}rect")
        if rect is None:
            continue
        x, y, w, h = (float(rect.get(k)) for k in ("x", "y", "width", "height"))
        text, title = g.find(f"{SVG}text"), g.find(f"{SVG}title")
        out.append(dict(x=x, y=y, w=w, h=h, fill=rect.get("fill"), stroke=float(rect.get("stroke-width", 0)),
                        text=None if text is None else text.text, tip=None if title is None else title.text))
    return out


def _x_labels(root: ET.Element, bottom: float) -> dict[str, float]:
    """The x tick labels (not rotated) by their text: their x."""
    return {t.text: float(t.get("x")) for t in root.iter(f"{SVG}text")
            if abs(float(t.get("y")) - (bottom + 14)) < 0.05 and t.get("text-anchor") == "middle"}


def _y_labels(root: ET.Element, left: float) -> list[tuple[float, float]]:
    """The y tick labels as (value, y px)."""
    return [(float(t.text), float(t.get("y"))) for t in root.iter(f"{SVG}text")
            if t.get("text-anchor") == "end" and abs(float(t.get("x")) - (left - 4)) < 0.05]


def _grid(root: ET.Element) -> list[float]:
    return [float(ln.get("y1")) for ln in root.iter(f"{SVG}line") if ln.get("stroke") == inline_svg.GRID_COLOR]


def test_expected_tau_bars_are_placed_labelled_hatched_and_hover_as_plotly():
    """Fixed y range: each bar's top is H − b − (v − y0)/(y1 − y0)·(H − t − b), its centre category i's
    l + (i + ½)/n·(W − l − r); the lossy bar is hatched and labelled so; bounds span the categories."""
    fig = figures.expected_tau_bars(ROWS, BOUNDS)
    root = _svg(fig)
    left, top, right, bottom = _plot_area(fig)
    y0, y1 = fig.layout.yaxis.range
    py = (lambda v: bottom - (v - y0) / (y1 - y0) * (bottom - top))
    centre = (lambda i: left + (i + 0.5) / len(ROWS) * (right - left))
    bars = _bars(root)
    assert len(bars) == len(ROWS)
    patterns = {p.get("id") for p in root.iter(f"{SVG}pattern")}
    for i, (row, bar) in enumerate(zip(ROWS, bars)):
        v, lossy = row["expected_accepted"], row["fidelity_tv"] > 0
        assert abs(bar["y"] - py(v)) < 0.1 and abs(bar["y"] + bar["h"] - bottom) < 0.1
        assert abs(bar["x"] + bar["w"] / 2 - centre(i)) < 0.1
        assert abs(bar["w"] - 0.8 * (right - left) / len(ROWS)) < 0.1       # one bar per category: the whole slot
        assert bar["text"] == f"{v:.4f}" + (" ⚠ lossy" if lossy else "")
        if lossy:
            assert bar["fill"].startswith("url(#") and bar["fill"][5:-1] in patterns
        else:
            assert bar["fill"] == figures.color(row["method"])
        assert f"E[τ] = {v:.6f}" in bar["tip"] and "<extra>" not in bar["tip"] and "\n" in bar["tip"]
    lines = {ln.get("stroke"): ln for ln in root.iter(f"{SVG}polyline")}
    for key, value in BOUNDS.items():
        if value is None:
            assert figures.BOUND_STYLE[key][1] not in lines
            continue
        line = lines[figures.BOUND_STYLE[key][1]]
        xy = [tuple(map(float, p.split(","))) for p in line.get("points").split()]
        assert abs(xy[0][0] - centre(0)) < 0.1 and abs(xy[-1][0] - centre(len(ROWS) - 1)) < 0.1
        assert all(abs(y - py(value)) < 0.1 for _, y in xy)
        assert line.find(f"{SVG}title").text == f"{figures.BOUND_STYLE[key][0]}: {value:.6f}"
    assert set(_x_labels(root, bottom)) == {figures.short(r["method"]) for r in ROWS}
    for name, x in _x_labels(root, bottom).items():
        assert abs(x - centre([figures.short(r["method"]) for r in ROWS].index(name))) < 0.1


def test_grouped_bars_share_each_category_side_by_side():
    """Three distributions over the same tokens: per token three equal bars filling 0.8 of the slot,
    in trace order; the outlined token's bars have a 3 px outline; the legend shows each colour."""
    fig = figures.residual_bars(P, Q, R, 2, "1 2", False)
    root = _svg(fig)
    left, top, right, bottom = _plot_area(fig)
    slot = (right - left) / len(P)
    colours = [t.marker.color for t in fig.data]
    bars = _bars(root)
    assert len(bars) == 3 * len(P) and all(b["tip"] for b in bars)
    for token in range(len(P)):
        mine = [b for b in bars if b["tip"].rsplit(": ", 1)[1].startswith(f"{token}, ")]
        assert [b["fill"] for b in mine] == colours
        assert all(abs(b["w"] - 0.8 * slot / 3) < 0.1 for b in mine)
        assert abs(mine[0]["x"] - (left + token * slot + 0.1 * slot)) < 0.1
        assert all(abs(a["x"] + a["w"] - b["x"]) < 0.15 for a, b in zip(mine, mine[1:]))
        assert all(b["stroke"] == (3 if token == 2 else 0) for b in mine)
        assert all(abs(b["y"] + b["h"] - bottom) < 0.1 for b in mine)        # autorange from 0: the base is the axis
    assert [b["tip"] for b in bars[:2]] == ["p (draft): 0, 0.5", "p (draft): 1, 0.3"]
    swatches = [r.get("fill") for r in root.findall(f"{SVG}rect") if r.get("width") == "12"]   # not in a group
    assert swatches == colours
    texts = {t.text for t in root.iter(f"{SVG}text")}
    assert {t.name for t in fig.data} <= texts and {"0", "1", "2", "3"} <= texts
    highest = max(R.max(), P.max(), Q.max())
    tallest = min(b["y"] for b in bars)
    assert top < tallest and (bottom - tallest) / (bottom - top) == pytest.approx(1 / 1.05, abs=1e-3)
    assert highest == 0.7


def test_a_bar_of_height_zero_is_drawn_only_when_outlined():
    """As Plotly: no rectangle for a 0 unless it is the outlined token's (a 3 px line on the axis)."""
    p, q, r = np.array([0.6, 0.4, 0.0]), np.array([0.2, 0.3, 0.5]), np.array([0.0, 0.0, 1.0])
    bars = _bars(_svg(figures.residual_bars(p, q, r, 1, "∅", False)))
    assert len(bars) == 9 - 3 + 1
    assert [b["h"] for b in bars if b["h"] == 0] == [0] and max(b["stroke"] for b in bars) == 3


def test_a_single_bar_trace_without_name_has_no_legend():
    fig = SUPPORTED["residual_bars_bonus"]()
    root = _svg(fig)
    assert fig.data[0].name not in {t.text for t in root.iter(f"{SVG}text")}     # Plotly: no legend for one trace
    assert len(_bars(root)) == len(Q)


def test_a_log_axis_places_by_log10():
    """x = 100 on a log axis over [log10(10), log10(1000)] is in the middle of the plot."""
    fig = go.Figure(go.Scatter(x=[10, 100, 1000], y=[1, 2, 3], mode="markers", name="m"))
    fig.update_layout(height=300, margin=dict(l=50, r=30, t=40, b=60))
    fig.update_xaxes(type="log", range=[1, 3])
    fig.update_yaxes(range=[0, 4])
    xs = sorted(x for x, _ in _centres(_svg(fig, width=500)))
    assert xs == pytest.approx([50, 50 + 420 / 2, 470], abs=0.1)


def test_scaling_plot_has_its_tick_texts_and_log_ticks():
    fig = SUPPORTED["scaling_plot"]()
    root = _svg(fig)
    left, top, right, bottom = _plot_area(fig)
    labels = _x_labels(root, bottom)
    positions = [labels[str(v)] for v in (16, 64, 256, 1024, 4096)]           # the figure's ticktext
    steps = np.diff(positions)
    assert np.allclose(steps, steps[0], atol=0.15)                              # ×4 each: equal steps on a log axis
    ys = _y_labels(root, left)
    values = [v for v, _ in ys]
    assert values == [20, 50, 100, 200, 500, 1000, 2000, 5000]                  # 1, 2, 5 × 10^n: under 3 decades
    heights = np.array([y for _, y in ys])                                      # linear in log10(value)
    fit = np.polyval(np.polyfit(np.log10(values), heights, 1), np.log10(values))
    assert np.abs(fit - heights).max() < 0.1
    assert all(left <= x <= right and top <= y <= bottom for x, y in _centres(root) if y < bottom + 10)


def test_autorange_keeps_every_point_inside_and_bars_from_zero():
    fig = _compare()
    root = _svg(fig)
    left, top, right, bottom = _plot_area(fig)
    marks = [c for c in _centres(root) if c[1] < bottom]         # the markers (legend swatches lie below)
    assert len(marks) == 3                                         # the None is skipped
    assert all(left < x < right and top < y < bottom for x, y in marks)
    bars = _bars(root)
    assert all(abs(b["y"] + b["h"] - bottom) < 0.1 for b in bars)
    values = [v for v, _ in _y_labels(root, left)]
    assert values[0] == 0 and max(values) == 2
    assert [b["tip"] for b in bars] == ["SD: τ = 1", "BV: τ = 2", "RBV: τ = 2"]   # OTV: τ = 0, no bar, as Plotly
    tallest = min(b["y"] for b in bars)
    assert (bottom - tallest) / (bottom - top) == pytest.approx(1 / 1.05, abs=1e-3)     # 5% above the top


def test_tau_vs_K_draws_the_vline_at_current_K_across_the_plot():
    fig = _tau_vs_K(current_K=3)
    root = _svg(fig)
    left, top, right, bottom = _plot_area(fig)
    ticks = _x_labels(root, bottom)
    assert set(ticks) == {"1", "2", "3", "4"}                       # dtick = 1
    px = (lambda K: ticks["1"] + (K - 1) * (ticks["4"] - ticks["1"]) / 3)
    assert all(abs(ticks[str(K)] - px(K)) < 0.1 for K in range(1, 5))
    (vline,) = [ln for ln in root.iter(f"{SVG}line") if ln.get("stroke") == "#999999"]
    assert float(vline.get("x1")) == float(vline.get("x2")) == pytest.approx(px(3), abs=0.1)
    assert {float(vline.get("y1")), float(vline.get("y2"))} == {bottom, top}
    assert vline.get("stroke-dasharray") == "3,3"                   # Plotly's dot for a 1 px line
    diamonds = [p for p in root.iter(f"{SVG}polygon") if p.get("fill") == "none"]
    assert len(diamonds) == 4 + 1                                    # diamond-open: 4 points, 1 legend swatch
    assert all(d.get("stroke") == figures.BOUND_STYLE["lp_optimum"][1] for d in diamonds)
    assert all(left < x < right and top < y < bottom for x, y in _centres(root) if y < bottom)
    tips = [g.find(f"{SVG}title").text for g in root.iter(f"{SVG}g") if g.find(f"{SVG}title") is not None]
    assert "SpecTr-GBV\nK = 2\nE[τ] = 1.10000" in tips


@pytest.mark.parametrize("name", sorted(SUPPORTED))
def test_y_ticks_are_nice_inside_the_range_with_gridlines(name):
    fig = SUPPORTED[name]()
    root = _svg(fig)
    left, top, right, bottom = _plot_area(fig)
    ticks = _y_labels(root, left)
    assert 3 <= len(ticks) <= 11
    assert all(top - 0.1 <= y <= bottom + 0.1 for _, y in ticks)
    assert sorted(_grid(root)) == pytest.approx(sorted(y for _, y in ticks), abs=0.05)
    values = [v for v, _ in ticks]
    if fig.layout.yaxis.type == "log":
        return
    steps = np.diff(values)
    assert np.allclose(steps, steps[0]) and steps[0] > 0
    mantissa = steps[0] / 10 ** np.floor(np.log10(steps[0]))
    assert min(abs(mantissa - m) for m in (1, 2, 5)) < 1e-9
    assert all(abs(v / steps[0] - round(v / steps[0])) < 1e-9 for v in values)
    # compact: "0.3", not "0.30000000000000004"
    assert all(len(t.text) <= 6 for t in root.iter(f"{SVG}text") if t.get("text-anchor") == "end")


@pytest.mark.parametrize("name", sorted(SUPPORTED))
def test_every_category_has_its_label_under_it(name):
    fig = SUPPORTED[name]()
    categories = [str(x) for t in fig.data for x in t.x if isinstance(x, str)]
    if not categories:
        return
    root = _svg(fig)
    left, top, right, bottom = _plot_area(fig)
    order = list(dict.fromkeys(categories))
    labels = _x_labels(root, bottom)
    assert set(labels) == set(order)
    for i, c in enumerate(order):
        assert labels[c] == pytest.approx(left + (i + 0.5) / len(order) * (right - left), abs=0.1)


@pytest.mark.parametrize("name", sorted(SUPPORTED))
def test_every_supported_figure_is_drawn(name):
    fig = SUPPORTED[name]()
    for width in (inline_svg.WIDTH, WIDE):
        root = ET.fromstring(inline_svg.render(fig, standalone=True, width=width))
        assert root.get("width") == str(width)
        assert fig.layout.title.text in {t.text for t in root.iter(f"{SVG}text")}
        # everything drawn inside the figure (labels may be rotated: their anchor at least)
        for t in root.iter(f"{SVG}text"):
            assert 0 <= float(t.get("x")) <= width and 0 <= float(t.get("y")) <= fig.layout.height


@pytest.mark.parametrize("name", ["coupling_heatmap", "tau_histograms", "time_split", "sweep_lines", "score_boxes"])
def test_what_plotly_must_draw_is_refused(name):
    with pytest.raises(ValueError, match="inline_svg"):
        inline_svg.render(_refused()[name]())


def test_many_categories_rotate_and_the_margins_make_room():
    """Eleven rules at 560 px: the names would overlap, so they turn 30° and the plot gets shorter."""
    from core.rules.registry import REGISTRY
    rows = [{"method": m, "expected_accepted": 1 + i / 20, "fidelity_tv": 0.0} for i, m in enumerate(REGISTRY)]
    fig = figures.expected_tau_bars(rows, {})
    root = _svg(fig, width=inline_svg.WIDTH)
    turned = [t for t in root.iter(f"{SVG}text") if t.get("transform", "").startswith("rotate(30 ")]
    assert {t.text for t in turned} == {figures.short(m) for m in REGISTRY}
    base = max(b["y"] + b["h"] for b in _bars(root))
    assert base < fig.layout.height - fig.layout.margin.b
    title = next(t for t in root.iter(f"{SVG}text") if t.text == fig.layout.xaxis.title.text)
    assert float(title.get("y")) > base + max(len(t.text) for t in turned) * 12 * inline_svg.CHAR_EM / 2


def test_hover_templates_take_d3_formats():
    fig = go.Figure(go.Bar(x=["a"], y=[1234.56789], text=["t"], textposition="outside", name="n",
                           hovertemplate="%{x}|%{y:.3f}|%{y:.2e}|%{y:.3g}|%{y:d}|%{y:,.1f}|%{y}|%{text}<br>z"
                                         "<extra>gone</extra>"))
    (bar,) = _bars(_svg(fig))
    assert bar["tip"] == "a|1234.568|1.23e+03|1.23e+03|1235|1,234.6|1234.57|t\nz"
    fig.update_traces(hovertemplate="%{customdata}")
    with pytest.raises(ValueError, match="customdata"):
        inline_svg.render(fig)


@pytest.mark.parametrize("change, what", [
    (lambda f: f.update_traces(orientation="h"), "vertical bars"),
    (lambda f: f.update_layout(barmode="stack"), "barmode"),
    (lambda f: f.update_traces(marker_pattern_shape="x", selector=dict(type="bar")), "patterns"),
    (lambda f: f.update_traces(textposition="inside", selector=dict(type="bar")), "outside"),
    (lambda f: f.update_traces(marker_opacity=0.5, selector=dict(type="bar")), "bar.marker.opacity"),
    (lambda f: f.update_yaxes(type="log"), "log axis"),
])
def test_what_it_cannot_draw_of_bars_is_refused(change, what):
    fig = figures.expected_tau_bars(ROWS, BOUNDS)
    change(fig)
    with pytest.raises(ValueError, match=what):
        inline_svg.render(fig)


@pytest.mark.skipif(figures.export_browser() is None,
                    reason="no Chrome or Chromium for Kaleido: set BROWSER_PATH or apt-get install chromium")
@pytest.mark.parametrize("name", ["expected_tau_bars", "residual_bars", "acceptance_per_position"])
def test_bars_sit_where_plotly_draws_them(name):
    """Against Plotly: Kaleido's bars (paths ``M x0,y0 V y1 H x1 V y0 Z`` inside the plot area at
    (l, t)) have the same left and right edges, and, with a fixed y range, the same top and bottom."""
    fig = SUPPORTED[name]()
    plotly_svg = figures.image(fig, width=WIDE).decode()
    l, t = fig.layout.margin.l, fig.layout.margin.t
    assert f'transform="translate({l},{t})"' in plotly_svg
    theirs = sorted((float(a) + l, float(d) + l, float(c) + t, float(b) + t) for a, b, c, d in re.findall(
        r'class="point"><path d="M([-\d.]+),([-\d.]+)V([-\d.]+)H([-\d.]+)V[-\d.]+Z"', plotly_svg))
    ours = sorted((b["x"], b["x"] + b["w"], b["y"], b["y"] + b["h"]) for b in _bars(_svg(fig)))
    assert len(theirs) == len(ours)
    for a, b in zip(theirs, ours):
        assert abs(a[0] - b[0]) < 0.6 and abs(a[1] - b[1]) < 0.6
        if fig.layout.yaxis.range is not None:
            assert abs(a[2] - b[2]) < 0.6 and abs(a[3] - b[3]) < 0.6
