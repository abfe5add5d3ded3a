"""``pages.ui.inline_svg``: a scatter figure drawn as SVG in the page puts every mark where Plotly
puts it, with the figure's labels, legend and hover text, and refuses what it cannot draw."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import plotly.graph_objects as go
import pytest

from pages.ui import figures, inline_svg
from toy_models import PRESETS

SVG = "{http://www.w3.org/2000/svg}"


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


def test_inline_it_scales_to_its_column(tree):
    root = ET.fromstring(inline_svg.render(tree))
    assert root.get("width") == "100%" and root.get("viewBox") == f"0 0 {inline_svg.WIDTH} {tree.layout.height}"


@pytest.mark.parametrize("change, what", [
    (lambda f: f.add_trace(go.Bar(x=[1], y=[1])), "scatter traces only"),
    (lambda f: f.update_layout(title_text="one<br>two<br>three"), "title"),
    (lambda f: f.update_xaxes(range=None), "fixed axis ranges"),
    (lambda f: f.update_traces(marker_symbol="diamond", selector=dict(mode="markers+text")), "marker symbols"),
    (lambda f: f.update_traces(line_dash="longdash", selector=dict(mode="lines")), "dashes"),
])
def test_what_it_cannot_draw_is_refused(tree, change, what):
    fig = go.Figure(tree)
    change(fig)
    with pytest.raises(ValueError, match=what):
        inline_svg.render(fig)
