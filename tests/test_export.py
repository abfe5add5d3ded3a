"""Every chart of the app can be exported (issue 12 item 8): each goes on its page through
``pages.ui.charts.chart``, which gives the modebar's camera a PNG at three times the on-screen size
(``figures.CHART_CONFIG``) and adds "SVG" and "PNG" downloads at slide size, rendered by Kaleido
(``figures.image``)."""
from __future__ import annotations

import ast
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pages.ui import figures
from tests.apptest import open_page

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "pages").glob("*.py"))
#: The one chart not drawn through ``charts.chart``: the live decoder's chart, redrawn in a
#: placeholder while text streams (a placeholder holds one element, so no button under it); it is
#: drawn by ``charts.draw``, like every other.
LIVE = {("live_decoder.py", "live_chart")}


def _calls(path: Path, name: str) -> list[ast.Call]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == name]


def test_every_chart_on_every_page_goes_through_the_export_helper():
    """Only ``pages/ui/charts.py`` calls ``plotly_chart`` (``charts.draw``); every page with a chart
    draws it with ``charts.chart``, the live decoder's streaming chart with ``charts.draw``."""
    direct = [f"{p.name}:{c.lineno}" for p in PAGES for c in _calls(p, "plotly_chart")]
    assert not direct, f"st.plotly_chart outside pages.ui.charts: {direct}"
    ui = sorted((ROOT / "pages" / "ui").glob("*.py"))
    assert [p.name for p in ui for _ in _calls(p, "plotly_chart")] == ["charts.py"]
    with_charts = {p.name for p in PAGES if [c for c in _calls(p, "chart") if ast.unparse(c.func.value) == "charts"]}
    assert {"one_step.py", "claims.py", "live_decoder.py", "sweeps.py", "leaderboard.py", "toy_lab.py",
            "start.py"} <= with_charts
    streamed = {(p.name, ast.unparse(c.args[0])) for p in PAGES for c in _calls(p, "draw")
                if ast.unparse(c.func.value) == "charts"}
    assert streamed == LIVE


@pytest.mark.parametrize("page", ["pages/start.py", "pages/toy_lab.py", "pages/one_step.py"])
def test_each_chart_has_its_svg_and_png_buttons_and_the_camera_at_slide_scale(page):
    at = open_page(page)
    charts = at.get("plotly_chart")
    assert charts
    buttons = [b.proto for b in at.get("download_button") if b.proto.label in ("SVG", "PNG")]
    assert [b.label for b in buttons].count("SVG") == [b.label for b in buttons].count("PNG") == len(charts)
    for c in charts:
        config = json.loads(c.proto.config)
        assert config["toImageButtonOptions"] == {"format": "png", "scale": 3, "filename": "speculative-decoding"}
        assert c.proto.theme == ""                    # the figure's own style (theme=None), not Streamlit's
    assert all(b.disabled == (figures.export_browser() is None) for b in buttons)


def test_svg_is_refused_in_one_sentence_without_a_browser(monkeypatch, tmp_path):
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "no-such-browser"))
    assert figures.export_browser() is None
    with pytest.raises(FileNotFoundError, match="needs Chrome or Chromium"):
        figures.image(figures.tau_vs_K({"bv": [(1, 1.0), (2, 1.2)]}, {}))


@pytest.mark.skipif(figures.export_browser() is None,
                    reason="no Chrome or Chromium for Kaleido: set BROWSER_PATH or apt-get install chromium")
def test_svg_is_a_vector_drawing_of_the_figure():
    fig = figures.tau_vs_K({"bv": [(1, 1.0), (2, 1.25), (3, 1.5)], "sd": [(1, 0.5), (2, 0.6), (3, 0.7)]}, {}, current_K=2)
    data = figures.image(fig)
    root = ET.fromstring(data)
    assert root.tag.endswith("svg") and float(root.get("width")) == figures.SLIDE[0]
    text = " ".join(t for t in root.itertext())
    assert fig.layout.title.text.split("<")[0].strip()[:20] in text       # the title, as text
    assert len(root.findall(".//{http://www.w3.org/2000/svg}path")) > 3   # drawn as paths, not pixels


@pytest.mark.skipif(figures.export_browser() is None,
                    reason="no Chrome or Chromium for Kaleido: set BROWSER_PATH or apt-get install chromium")
def test_png_is_a_slide_at_twice_its_size():
    """The "PNG" button: the figure laid out at a slide's width, as tall as its layout, rendered at
    ``PNG_SCALE`` (two) times that, without the toolbar's strip the page keeps above the title."""
    import struct
    fig = figures.tau_vs_K({"bv": [(1, 1.0), (2, 1.25)]}, {})
    data = figures.image(fig, "png")
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])                   # the IHDR chunk
    assert (width, height) == (2 * 1280, 2 * (fig.layout.height - figures.layout.TOOLBAR_PX))


def _every_rule_and_bound(coincide: bool = True):
    """E[τ] against K with every registered rule and every bound (a legend entry each), three of them
    long, as on the binary toy, where the LP-optimal rule reaches the LP optimum and the greedy
    relaxation equals it ("LP-optimal = LP optimum (best lossless verifier) = … here")."""
    from core.rules.registry import REGISTRY
    curves = {m: [(1, 1.0 + i / 100), (2, 1.1 + i / 100)] for i, m in enumerate(REGISTRY)}
    bounds = {k: [(1, 2.0 + j / 100), (2, 2.1 + j / 100)] for j, k in enumerate(figures.BOUND_STYLE)}
    if coincide:
        bounds["lp_optimum"] = bounds["greedy"] = curves["lp_optimal"]
    fig = figures.tau_vs_K(curves, bounds)
    return fig, [t.name for t in fig.data]


def test_an_export_is_laid_out_for_its_width_and_keeps_the_plot():
    """The page's layout gives the legend the rows it needs at 800 px; the export, 1,280 px wide,
    needs fewer (``for_width``), and is shorter by exactly those rows and the toolbar's strip (an export
    has no toolbar), its plot as tall.  The widest name, "Acausal coupling bound (not attained here)" (42
    characters: 42 · 9 + 50 = 428 px): one column in 706 px, a row per name; two in 1,186 px, half as
    many rows (rounded up)."""
    fig, names = _every_rule_and_bound(coincide=False)
    assert (figures.legend_rows(fig), figures.legend_rows(fig, figures.SLIDE[0])) == (len(names), -(-len(names) // 2))
    wide = figures.for_width(fig, figures.SLIDE[0])
    fewer = figures.legend_rows(fig) - figures.legend_rows(fig, figures.SLIDE[0])
    strip = figures.layout.TOOLBAR_PX
    assert fewer > 0 and figures.legend_rows(wide, figures.SLIDE[0]) == figures.legend_rows(fig, figures.SLIDE[0])
    assert fig.layout.margin.b - wide.layout.margin.b == 26 * fewer
    assert fig.layout.height - wide.layout.height == 26 * fewer + strip
    assert fig.layout.margin.t - wide.layout.margin.t == strip and wide.layout.title.pad.t == 22
    same = figures.for_width(fig, figures.PAGE_WIDTH)
    assert fig.layout.height - same.layout.height == strip and same.layout.margin.b == fig.layout.margin.b


@pytest.mark.skipif(figures.export_browser() is None,
                    reason="no Chrome or Chromium for Kaleido: set BROWSER_PATH or apt-get install chromium")
def test_an_export_draws_every_legend_entry_inside_the_image():
    """Kaleido's SVG of the chart with every rule's and bound's legend entry (the PNG is the same drawing in pixels) holds
    every entry, each inside the legend's box, the box inside the image, and no scrollbar (a legend
    that scrolls shows its first entries only in a still image).  The layout before, which counted
    the legend's rows from the names' total length, drew the last three entries below a 288-px
    legend box, cut from the image (at 308, 331 and 354 px)."""
    import re
    fig, names = _every_rule_and_bound()
    root = ET.fromstring(figures.image(fig))
    ns = "{http://www.w3.org/2000/svg}"
    height = float(root.get("height"))
    legend = next(g for g in root.iter(f"{ns}g") if g.get("class") == "legend")
    _, top = map(float, re.match(r"translate\(([-\d.]+),\s*([-\d.]+)\)", legend.get("transform")).groups())
    box = float(next(r for r in legend.iter(f"{ns}rect") if r.get("class") == "bg").get("height"))
    assert 0 < top and top + box <= height
    entries = [g for g in legend.iter(f"{ns}g") if g.get("class") == "traces"]
    texts = ["".join(t.itertext()) for g in entries for t in g.iter(f"{ns}text") if t.get("class") == "legendtext"]
    from core.rules.registry import REGISTRY
    # a wrapped name (``mark_identical``) is drawn as one text of a tspan per line
    assert texts == [n.replace("<br>", "") for n in names] and len(names) == len(REGISTRY) + len(figures.BOUND_STYLE)
    for g in entries:
        y = float(re.match(r"translate\([-\d.]+,\s*([-\d.]+)\)", g.get("transform")).group(1))
        assert 0 < y < box
    bars = [r for r in legend.iter(f"{ns}rect") if r.get("class") == "scrollbar"]
    assert all(float(r.get("height") or 0) == 0 for r in bars)
