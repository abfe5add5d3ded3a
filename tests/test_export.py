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
    ``PNG_SCALE`` (two) times that."""
    import struct
    fig = figures.tau_vs_K({"bv": [(1, 1.0), (2, 1.25)]}, {})
    data = figures.image(fig, "png")
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])                   # the IHDR chunk
    assert (width, height) == (2 * 1280, 2 * fig.layout.height)
