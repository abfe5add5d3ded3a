"""Every chart is a Plotly figure drawn by ``st.plotly_chart`` (issue 24, item 1): the numbers a reader
sees are read here off the figures the browser receives, and the slide style's marking of series
that coincide shows on the page (item 2)."""
from __future__ import annotations

import pytest

pytest.importorskip("streamlit")

from tests.apptest import figure, figures_json, no_errors, open_page, section  # noqa: E402
from core.rules.registry import REGISTRY  # noqa: E402

BINARY = {"preset": "binary-toy"}


def test_the_lab_draws_the_binary_toy_exactly_with_plotly():
    """The binary toy: SD's E[τ] = 10/9 and BV's = 11/9 (Sun et al. 2024), the LP optimum 11/9, read
    off the Plotly figure, each bar labelled with its value where the bars are wide enough; no SVG drawn
    in the page, no chart toggle."""
    at = open_page("pages/toy_lab.py", query=BINARY)
    no_errors(at)
    assert not [m for m in at.markdown if m.value.lstrip().startswith("<svg")]
    assert not [t for t in at.sidebar.toggle if "chart" in t.label.lower()]
    bars = figure(at, "Expected accepted tokens")
    value = {t["name"]: t["y"][0] for t in bars["data"] if t["type"] == "bar"}
    assert value["SD"] == pytest.approx(10 / 9, abs=1e-12) and value["BV"] == pytest.approx(11 / 9, abs=1e-12)
    # every registered rule: 15 bars of 0.8 · (800 − 94) / 15 = 38 px, narrower than a label "1.1111"
    # (6 · 0.6 · 14 + 4 = 54 px), carry none; hover gives each value
    assert len(value) == len(REGISTRY) == 15 and not [t for t in bars["data"] if t["name"] == "values"]
    assert all("%{y:.6f}" in t["hovertemplate"] for t in bars["data"] if t["type"] == "bar")
    # three bars of 0.8 · 706 / 3 = 188 px do: each labelled with its value over its foot
    few = figure(open_page("pages/toy_lab.py", query={**BINARY, "methods": "sd,bv,traversal"}), "Expected accepted tokens")
    values = next(t for t in few["data"] if t["name"] == "values")
    labels = dict(zip(values["x"], values["text"]))
    assert (labels["SD"], labels["BV"]) == (f"{10 / 9:.4f}", f"{11 / 9:.4f}")
    # the LP optimum and the greedy relaxation are both 11/9 here: one line over the other, said so
    lp = next(t for t in bars["data"] if t["name"].startswith("LP optimum"))
    assert lp["y"][0] == pytest.approx(11 / 9, abs=1e-9)
    assert lp["name"] == f"LP optimum (best lossless verifier) = Greedy relaxation (upper bound) =<br>{11 / 9:.4f} here"
    assert bars["layout"]["template"]["layout"]["font"]["size"] >= 16        # the slide style travels with it
    assert "charts" not in at.query_params


def test_the_lab_says_rbv_and_traversal_coincide_on_the_binary_toy():
    at = section(open_page("pages/toy_lab.py", query=BINARY, state={"toy_methods": ["bv", "rbv", "traversal"]}),
                 "drafts")
    no_errors(at)
    curves = figure(at, "against the number of drafts K")
    names = [t["name"] for t in curves["data"] if t.get("mode") == "lines+markers"]
    assert names[:3] == ["BV", "RBV = Traversal here", "Traversal = RBV here"]
    rbv, trav = (next(t for t in curves["data"] if t["name"].startswith(m))["y"] for m in ("RBV", "Traversal"))
    assert len(rbv) >= 2 and rbv == pytest.approx(trav, abs=1e-12)


@pytest.mark.parametrize("page,query,n", [("pages/start.py", None, 1),
                                          ("pages/one_step.py", {"preset": "several-drafts"}, 1),
                                          ("pages/claims.py", {"preset": "gbv-lossless"}, 3)])
def test_the_learning_pages_draw_every_chart_with_plotly(page, query, n):
    at = open_page(page, query=query)
    no_errors(at)
    assert len(at.get("plotly_chart")) == n
    assert all(f["layout"]["template"]["layout"]["font"]["size"] >= 16 for f in figures_json(at))
    assert not [m for m in at.markdown if m.value.lstrip().startswith("<svg")]
