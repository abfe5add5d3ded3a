"""The charts a reader first sees are SVG drawn in the page, so no page needs Plotly's script to show
(issue 12, item 11); the sidebar's "Interactive charts" (or ``?charts=interactive``) makes them
Plotly charts, and the address keeps that choice.  A figure the SVG drawing cannot make (the
coupling heatmap) is a Plotly chart either way."""
from __future__ import annotations

import re

import pytest

pytest.importorskip("streamlit")

from tests.apptest import drawings, figure, no_errors, open_page, section  # noqa: E402

BINARY = {"preset": "binary-toy"}


def _toggle(at):
    return next(t for t in at.sidebar.toggle if t.key == "interactive_charts")


def test_the_lab_draws_its_chart_as_svg_with_the_exact_values():
    """The binary toy: SD's E[τ] = 10/9 and BV's = 11/9 (Sun et al. 2024), read off the drawing."""
    at = open_page("pages/toy_lab.py", query=BINARY)
    no_errors(at)
    assert not at.get("plotly_chart")
    assert not _toggle(at).value
    [svg] = drawings(at)
    assert "Expected accepted tokens per iteration E[τ]" in svg
    labels = re.findall(r">([0-9.]+)(?: ⚠ lossy)?</text>", svg)
    assert f"{10 / 9:.4f}" in labels and f"{11 / 9:.4f}" in labels
    tips = re.findall(r"<title>([^<]*)</title>", svg)
    assert f"SD\nE[τ] = {10 / 9:.6f}" in "\n".join(tips) and f"BV\nE[τ] = {11 / 9:.6f}" in "\n".join(tips)
    assert f"LP optimum (best lossless verifier) = {11 / 9:.4f}" in svg
    buttons = {b.proto.id: b.proto.label for b in at.get("download_button")}
    assert sorted(label for label in buttons.values() if label in ("SVG", "PNG")) == ["PNG", "SVG"]
    assert "charts" not in at.query_params


def test_the_toggle_draws_the_same_figure_with_plotly_and_the_address_keeps_it():
    at = open_page("pages/toy_lab.py", query=BINARY)
    _toggle(at).set_value(True).run()
    no_errors(at)
    assert not drawings(at)
    bars = figure(at, "Expected accepted tokens")
    sd = next(t["y"][0] for t in bars["data"] if t.get("name") == "SD")
    assert sd == pytest.approx(10 / 9, abs=1e-12)
    assert at.query_params["charts"] == "interactive"

    again = open_page("pages/toy_lab.py", query=dict(at.query_params))     # the link, in a new session
    no_errors(again)
    assert _toggle(again).value and again.get("plotly_chart") and not drawings(again)

    _toggle(at).set_value(False).run()
    assert drawings(at) and not at.get("plotly_chart")
    assert "charts" not in at.query_params


@pytest.mark.parametrize("page,query,n", [("pages/one_step.py", {"preset": "several-drafts"}, 1),   # hidden at first: the tree
                                          ("pages/claims.py", {"preset": "gbv-lossless"}, 3)])
def test_the_other_learning_pages_load_no_plotly_at_first(page, query, n):
    at = open_page(page, query=query)
    no_errors(at)
    assert not at.get("plotly_chart")
    assert len(drawings(at)) == n


def test_a_figure_svg_cannot_draw_stays_a_plotly_chart():
    at = section(open_page("pages/toy_lab.py", query=BINARY), "coupling")
    no_errors(at)
    [heat] = at.get("plotly_chart")
    assert "Optimal lossless verifier" in heat.proto.spec
    assert not drawings(at)
