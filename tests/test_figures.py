"""Figures that lay themselves out: the toy laboratory's panel grid of the law of τ."""
from __future__ import annotations

import numpy as np
import pytest

from pages.ui import figures

METHODS = ["sd", "bv", "spectr", "specinfer", "spectr_gbv", "rbv", "best_of_k_bv"]


@pytest.mark.parametrize("n_methods,rows", [(1, 1), (4, 1), (5, 2), (7, 2)])
def test_tau_histograms_grid(n_methods, rows):
    """One panel per method, four to a row, panels of a row sharing the first one's y-axis, a
    title over each panel, axis titles kept, and no axis drawn for an empty cell."""
    methods = METHODS[:n_methods]
    exact = {m: [0.25, 0.25, 0.5] for m in methods}
    freq, lo, hi = np.array([0.2, 0.3, 0.5]), np.array([0.1, 0.2, 0.4]), np.array([0.3, 0.45, 0.6])
    mc = {m: (freq, lo, hi) for m in methods[1:]}            # the first one without Monte Carlo
    fig = figures.tau_histograms(exact, mc, 1000)
    layout, data = fig.layout.to_plotly_json(), fig.data
    cols = min(4, n_methods)
    x_axes = sorted(k for k in layout if k.startswith("xaxis"))
    assert len(x_axes) == n_methods == len([k for k in layout if k.startswith("yaxis")])
    assert [a["text"] for a in layout["annotations"]] == [figures.short(m) for m in methods]
    assert len(data) == 2 * n_methods - 1
    width = (1 - 0.04 * (cols - 1)) / cols
    height = (1 - 0.16 * (rows - 1)) / rows
    for i, m in enumerate(methods):
        r, c = divmod(i, cols)
        ax = "" if i == 0 else str(i + 1)
        x, y = layout[f"xaxis{ax}"], layout[f"yaxis{ax}"]
        assert x["domain"] == pytest.approx([c * (width + 0.04), c * (width + 0.04) + width])
        assert y["domain"] == pytest.approx([1 - r * (height + 0.16) - height, 1 - r * (height + 0.16)])
        assert x["title"]["text"] == "τ (accepted draft tokens)" and x["anchor"] == f"y{ax}"
        if c == 0:
            assert y["title"]["text"] == "probability" and "matches" not in y
        else:
            assert y["matches"] == ("y" if r == 0 else f"y{r * cols + 1}") and y["showticklabels"] is False
        bars = [t for t in data if t.type == "bar" and t.xaxis == f"x{ax}"]
        assert len(bars) == 1 and list(bars[0].y) == exact[m] and bars[0].marker.color == figures.color(m)
        points = [t for t in data if t.type == "scatter" and t.xaxis == f"x{ax}"]
        if m in mc:
            (p,) = points
            assert list(p.error_y.array) == pytest.approx(list(hi - freq))
            assert list(p.error_y.arrayminus) == pytest.approx(list(freq - lo))
        else:
            assert not points
    # one legend entry each, the Monte Carlo one even when the first panel has no points
    assert [t.name for t in data if t.showlegend] == ["exact law"] + ["Monte Carlo, n = 1,000 (95% interval)"] * bool(mc)


def test_layout_leaves_axis_titles_when_given_none():
    fig = figures.tau_histograms({"sd": [0.5, 0.5]}, {}, 10)
    assert fig.layout.xaxis.title.text == "τ (accepted draft tokens)"
    assert fig.layout.yaxis.title.text == "probability"
    cleared = figures._layout(fig, "t", "", "")
    assert not cleared.layout.xaxis.title.text and not cleared.layout.yaxis.title.text


def test_distribution_bars_keep_the_most_probable_tokens_and_the_outlined_one():
    """V > top: the chart keeps the top - 1 most probable tokens under any series and the outlined
    one (a rejected token may be improbable), never dropping a probable token for it."""
    V, top = 40, 5
    p = np.full(V, 1e-4)
    p[[3, 7, 39]] = [0.3, 0.2, 0.4]                         # the most probable: 39, 3, 7
    q = np.full(V, 1e-4)
    q[[12, 20]] = [0.5, 0.45]                               # then 12 and 20, under q
    T = np.zeros(V)
    T[39] = 1.0                                             # the residual's whole mass on the last id
    fig = figures.traversal_step(p, q, T, "1", rejected=30, A=0.5, w=0.5, top=top)
    shown = set(fig.data[0].x)
    assert shown == {"39", "3", "12", "20", "30"}          # 7 makes way for the outlined 30
    outline = dict(zip(fig.data[0].x, fig.data[0].marker.line.width))
    assert outline["30"] == 3 and sum(outline.values()) == 3
    full = figures.traversal_step(p, q, T, "1", rejected=7, A=0.5, w=0.5, top=top)
    assert set(full.data[0].x) == {"39", "3", "12", "20", "7"}
