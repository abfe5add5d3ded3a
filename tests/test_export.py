"""Every chart of the app can be exported (issue 12 item 8): each ``st.plotly_chart`` call on every
page passes ``config=figures.CHART_CONFIG``, whose modebar camera saves a PNG at three times the
on-screen size."""
from __future__ import annotations

import ast
from pathlib import Path

PAGES = sorted((Path(__file__).resolve().parent.parent / "pages").glob("*.py"))


def _chart_calls(path: Path) -> list[ast.Call]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "plotly_chart"]


def test_every_chart_on_every_page_passes_the_export_config():
    missing = [f"{p.name}:{c.lineno}" for p in PAGES for c in _chart_calls(p)
               if not any(k.arg == "config" and ast.unparse(k.value) == "figures.CHART_CONFIG" for k in c.keywords)]
    assert not missing, f"charts without config=figures.CHART_CONFIG: {missing}"


def test_the_pages_with_charts_are_all_checked():
    with_charts = {p.name for p in PAGES if _chart_calls(p)}
    assert {"one_step.py", "claims.py", "live_decoder.py", "sweeps.py", "leaderboard.py", "toy_lab.py",
            "start.py"} <= with_charts
