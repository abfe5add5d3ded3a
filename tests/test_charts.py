"""Every chart is a Plotly figure drawn by ``st.plotly_chart`` (issue 24, item 1): the numbers a reader
sees are read here off the figures the browser receives, and the slide style's marking of series
that coincide shows on the page (item 2)."""
from __future__ import annotations

import pytest

pytest.importorskip("streamlit")

from tests.apptest import figure, figures_json, no_errors, open_page, section  # noqa: E402
from core.rules.registry import REGISTRY, chains_rules  # noqa: E402

BINARY = {"preset": "binary-toy"}


def test_the_lab_draws_the_binary_toy_exactly_with_plotly():
    """The binary toy: SD's E[τ] = 10/9 and BV's = 11/9 (Sun et al. 2024), the LP optimum 11/9, read
    off the Plotly figure: close values, so dots on an axis that spans them (a bar from 1 would make BV
    look twice SD), each labelled with its value where the slots are wide enough; no SVG drawn in the
    page, no chart toggle."""
    at = open_page("pages/toy_lab.py", query={**BINARY, "K": "1", "methods": "sd,bv,lp_optimal"})
    no_errors(at)
    assert not [m for m in at.markdown if m.value.lstrip().startswith("<svg")]
    assert not [t for t in at.sidebar.toggle if "chart" in t.label.lower()]
    chart = figure(at, "Expected accepted tokens")
    dots = {t["name"]: t for t in chart["data"] if t["type"] == "scatter" and t.get("showlegend") is False}
    assert not [t for t in chart["data"] if t["type"] == "bar"]
    assert dots["SD"]["y"][0] == pytest.approx(10 / 9, abs=1e-12) and dots["BV"]["y"][0] == pytest.approx(11 / 9, abs=1e-12)
    assert (dots["SD"]["text"][0], dots["BV"]["text"][0]) == (f"{10 / 9:.4f}", f"{11 / 9:.4f}")
    assert all("%{y:.6f}" in t["hovertemplate"] for t in dots.values())
    low, top = chart["layout"]["yaxis"]["range"]
    assert 0 < low < 10 / 9 and (11 / 9 - 10 / 9) / (top - low) > 0.25
    # the LP optimum and the greedy relaxation are both 11/9 here: one line over the other, said so
    lp = next(t for t in chart["data"] if t["name"].startswith("LP optimum"))
    assert lp["y"][0] == pytest.approx(11 / 9, abs=1e-9)
    assert lp["name"] == f"LP optimum (best lossless verifier) = Greedy relaxation (upper bound) =<br>{11 / 9:.4f} here"
    assert chart["layout"]["template"]["layout"]["font"]["size"] >= 16        # the slide style travels with it
    assert "charts" not in at.query_params
    # every registered rule: the lossless ones' slots, 13 or more in a panel of 0.7 · 706 px (at most 38 px · 0.8), are
    # narrower than a label "1.1111" (6 · 0.6 · 14 + 4 = 54 px) and carry none; hover gives each value
    every = figure(open_page("pages/toy_lab.py", query=BINARY), "Expected accepted tokens")
    marks = [t for t in every["data"] if t.get("showlegend") is False]
    lossless = [t for t in marks if t.get("xaxis", "x") == "x"]
    # every rule the laboratory offers: those that take K i.i.d. drafts (not llama.cpp's, top-k trees only)
    assert len(marks) == len(chains_rules()) == len(REGISTRY) - 1 and len(lossless) > 8
    assert not [t for t in lossless if "text" in t.get("mode", "") or t.get("text") and t["type"] == "bar"]


def test_the_lab_draws_lossy_rules_apart():
    """At T = 0.3 on the binary toy Typical (lossy) accepts about 2 tokens where every lossless rule
    stays under 0.4: it is drawn in a panel of its own, on its own axis, and the lossless panel's axis
    stops near the LP optimum, so the lossless values are not squashed into its bottom fifth."""
    at = open_page("pages/toy_lab.py", query={**BINARY, "K": "2", "T": "0.3"})
    no_errors(at)
    chart = figure(at, "Expected accepted tokens")
    marks = {t["name"]: t for t in chart["data"] if t.get("showlegend") is False}
    assert marks["Typical"]["y"][0] > 1.9 and marks["Typical"]["xaxis"] == "x2"
    assert marks["Traversal"].get("xaxis", "x") == "x"
    lp = next(t for t in chart["data"] if t["name"].startswith("LP optimum"))["y"][0]
    assert chart["layout"]["yaxis"]["range"][1] < 1.5 * lp < marks["Typical"]["y"][0]


def test_the_lab_says_rbv_and_traversal_coincide_on_the_binary_toy():
    at = section(open_page("pages/toy_lab.py", query={**BINARY, "every": "1"},
                           state={"toy_methods": ["bv", "rbv", "traversal"]}), "drafts")
    no_errors(at)
    curves = figure(at, "against the number of drafts K")
    names = [t["name"] for t in curves["data"] if t.get("mode") == "lines+markers"]
    assert names[:3] == ["BV", "RBV = Traversal here", "Traversal, same as RBV"]
    rbv, trav = (next(t for t in curves["data"] if t["name"].startswith(m))["y"] for m in ("RBV", "Traversal"))
    assert len(rbv) >= 2 and rbv == pytest.approx(trav, abs=1e-12)


@pytest.mark.parametrize("page,query,n", [("pages/start.py", None, 1),
                                          ("pages/one_step.py", {"preset": "several-drafts"}, 1),
                                          ("pages/claims.py", {"preset": "gbv-lossless", "tab": "live"}, 3)])
def test_the_learning_pages_draw_every_chart_with_plotly(page, query, n):
    at = open_page(page, query=query)
    no_errors(at)
    assert len(at.get("plotly_chart")) == n
    assert all(f["layout"]["template"]["layout"]["font"]["size"] >= 16 for f in figures_json(at))
    assert not [m for m in at.markdown if m.value.lstrip().startswith("<svg")]


@pytest.mark.parametrize("page,query", [
    ("pages/toy_lab.py", {**BINARY, "section": "depth"}),
    ("pages/toy_lab.py", {"preset": "several-drafts", "section": "depth"}),
    ("pages/toy_lab.py", {**BINARY, "K": "2"}),
    ("pages/draft_trees.py", {**BINARY, "shape": "tree", "b": "2,2", "law": "topk", "chart_max": "6"}),
    ("pages/claims.py", None),
    ("pages/claims.py", {"tab": "live"})])
def test_no_page_shows_round_off_for_an_exact_value(page, query):
    """A value within 1e-12 of an exact one (0, 1, a fraction) is shown as that value: the gain by
    depth of rules that coincide with SD is 0, not "1.1e-16"; a lossless rule's TV is 0."""
    import re

    from tests.apptest import ROUND_OFF, page_texts
    at = open_page(page, query=query)
    no_errors(at)
    shown = [t for t in page_texts(at) if re.search(ROUND_OFF, t)]
    assert not shown, shown[:5]


def test_gain_by_depth_names_each_group_of_coinciding_rules_once():
    """The binary toy's gain by depth: rules whose P(τ ≥ d) coincide are one group in the legend,
    named once by its first member; the others say whom they equal ("SpecTr, same as SD")."""
    at = open_page("pages/toy_lab.py", query={**BINARY, "section": "depth"})
    names = [t["name"].replace("<br>", " ") for t in figure(at, "Gain by depth")["data"]]
    groups = [n for n in names if n.endswith(" here")]
    assert groups, names
    for group in groups:
        members = group[:-len(" here")].split(" = ")
        others = [n for n in names if ", same as " in n and n.split(", same as ")[1] == members[0]]
        assert sorted(n.split(", same as ")[0] for n in others) == sorted(members[1:])
        assert not [n for n in names if n != group and n.count(" = ") and set(n.split(" = ")) & set(members)]


def test_the_lab_says_why_rules_sit_below_sd_and_names_several_lossy_rules_in_the_plural():
    """The binary toy with every rule (K = 2): EAGLE (82/81) and exact match (52/81) accept less than
    SD (10/9); the chart's hover and a caption under it say why (each accepts a drafted token with
    probability q(x), at most SD's min(1, q/p)), and the warning about SpecTr-GBV, Typical and HSD says
    "their output laws", not "its"."""
    at = open_page("pages/toy_lab.py", query={**BINARY, "K": "2"})
    no_errors(at)
    chart = figure(at, "Expected accepted tokens")
    marks = {t["name"]: t for t in chart["data"] if t.get("showlegend") is False}
    for rule in ("EAGLE", "Match"):
        assert "below SD: it accepts a drafted token x" in marks[rule]["hovertemplate"], rule
    assert "below SD" not in marks["Traversal"]["hovertemplate"]
    caption = next(c.value for c in at.caption if c.value.startswith("Below SD"))
    assert "EAGLE" in caption and "Match" in caption and "q(x)" in caption
    warning = next(w.value for w in at.warning if w.value.startswith("Not lossless"))
    assert "Their output laws differ from q" in warning and "Its output law" not in warning
