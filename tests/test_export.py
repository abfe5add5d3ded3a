"""Every chart of the app can be exported (issue 12 item 8): each goes on its page through
``pages.ui.charts.chart``, which gives the modebar's camera a PNG at three times the on-screen size
(``figures.CHART_CONFIG``) and adds an "SVG" download rendered by Kaleido (``figures.image``), or
through ``charts.picture`` (drawn as SVG in the page), with "SVG" and "PNG" downloads."""
from __future__ import annotations

import ast
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pages.ui import figures
from tests.apptest import drawings, open_page

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "pages").glob("*.py"))
#: The one chart not drawn through ``charts.chart``: the live decoder's chart, redrawn in a
#: placeholder while text streams (a placeholder holds one element, so no button under it).
LIVE = {("live_decoder.py", "live_chart")}


def _calls(path: Path, name: str) -> list[ast.Call]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == name]


def test_every_chart_on_every_page_goes_through_the_export_helper():
    direct = [f"{p.name}:{c.lineno}" for p in PAGES for c in _calls(p, "plotly_chart")
              if (p.name, ast.unparse(c.func.value)) not in LIVE]
    assert not direct, f"st.plotly_chart outside pages.ui.charts.chart: {direct}"
    live = [c for p in PAGES for c in _calls(p, "plotly_chart")]
    assert all(any(k.arg == "config" and ast.unparse(k.value) == "figures.CHART_CONFIG" for k in c.keywords)
               for c in live)
    with_charts = {p.name for p in PAGES for kind in ("chart", "picture")
                   if [c for c in _calls(p, kind) if ast.unparse(c.func.value) == "charts"]}
    assert {"one_step.py", "claims.py", "live_decoder.py", "sweeps.py", "leaderboard.py", "toy_lab.py",
            "start.py"} <= with_charts
    drawn = [p.name for p in PAGES if "inline_svg" in p.read_text(encoding="utf-8")]
    assert not drawn, f"an SVG drawn outside pages.ui.charts.picture: {drawn}"


def test_the_start_picture_downloads_as_its_own_svg_and_as_png():
    at = open_page("pages/start.py")
    buttons = {b.proto.label: b.proto for b in at.get("download_button")}
    assert {"SVG", "PNG"} <= set(buttons)
    assert buttons["PNG"].disabled == (figures.export_browser() is None)
    assert not buttons["SVG"].disabled                                # no browser needed: it is the drawing
    [drawn] = drawings(at)
    assert 'width="100%"' in drawn and "One iteration: K = " in drawn


@pytest.mark.parametrize("page", ["pages/toy_lab.py", "pages/one_step.py"])
def test_each_chart_has_its_svg_button_and_a_slide_sized_png(page):
    at = open_page(page, interactive=True)
    charts = at.get("plotly_chart")
    assert charts
    buttons = {b.proto.id: b for b in at.get("download_button")}
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels.count("SVG") >= len(charts)
    for c in charts:
        config = json.loads(c.proto.config)
        assert config["toImageButtonOptions"] == {"format": "png", "scale": 3, "filename": "speculative-decoding"}
    assert all(b.proto.disabled == (figures.export_browser() is None) for b in buttons.values()
               if b.proto.label == "SVG")


def test_svg_is_refused_in_one_sentence_without_a_browser(monkeypatch, tmp_path):
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "no-such-browser"))
    assert figures.export_browser() is None
    with pytest.raises(FileNotFoundError, match="needs Chrome or Chromium"):
        figures.image(figures.tau_vs_K({"bv": [(1, 1.0), (2, 1.2)]}, {}))


@pytest.mark.skipif(figures.export_browser() is None,
                    reason="no Chrome or Chromium for Kaleido: set BROWSER_PATH or apt-get install chromium")
def test_svg_is_a_vector_drawing_of_the_figure():
    fig = figures.tau_vs_K({"bv": [(1, 1.0), (2, 1.25), (3, 1.5)], "sd": [(1, 0.5), (2, 0.6), (3, 0.7)]}, {}, current_K=2)
    data = figures.image(fig, width=900)
    root = ET.fromstring(data)
    assert root.tag.endswith("svg") and float(root.get("width")) == 900
    text = " ".join(t for t in root.itertext())
    assert fig.layout.title.text.split("<")[0].strip()[:20] in text       # the title, as text
    assert len(root.findall(".//{http://www.w3.org/2000/svg}path")) > 3   # drawn as paths, not pixels


@pytest.mark.skipif(figures.export_browser() is None,
                    reason="no Chrome or Chromium for Kaleido: set BROWSER_PATH or apt-get install chromium")
def test_png_is_three_times_the_asked_size():
    """The "PNG" button of ``charts.picture``: a PNG at the modebar camera's scale (three)."""
    import struct
    fig = figures.tau_vs_K({"bv": [(1, 1.0), (2, 1.25)]}, {})
    data = figures.image(fig, "png", width=560, height=400)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])                   # the IHDR chunk
    assert (width, height) == (3 * 560, 3 * 400)
