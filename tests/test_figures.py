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
        assert x["title"]["text"] == "τ" and x["anchor"] == f"y{ax}"   # a longer one runs into the next panel
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
    assert fig.layout.xaxis.title.text == "τ"
    assert fig.layout.yaxis.title.text == "probability"
    cleared = figures.layout._layout(fig, "t", "", "")
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


# ------------------------------------------------------------------------------------------------
# The slide style (issue 24, item 2)
# ------------------------------------------------------------------------------------------------

#: Machado, Oliveira and Fernandes (2009), "A physiologically-based model for simulation of color
#: vision deficiency", severity 1.0: linear-RGB matrices for protanopia, deuteranopia, tritanopia.
MACHADO = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}


def _lab(hex_color: str, matrix) -> np.ndarray:
    """CIELAB (D65) of ``hex_color`` as seen through ``matrix`` (applied to linear sRGB)."""
    srgb = np.array([int(hex_color[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    linear = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    linear = np.clip(np.asarray(matrix) @ linear, 0, 1)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ linear
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > 0.008856, np.cbrt(t), 7.787 * t + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _closest_pair(colours, matrix) -> float:
    labs = [_lab(c, matrix) for c in colours]
    return min(float(np.linalg.norm(a - b)) for i, a in enumerate(labs) for b in labs[i + 1:])


def _hue(hex_color: str) -> float:
    """The CIELAB hue angle (degrees) of ``hex_color`` with normal vision."""
    _, a, b = _lab(hex_color, np.eye(3))
    return float(np.degrees(np.arctan2(b, a)) % 360)


def test_rule_colours_are_the_palette_and_stay_apart_for_colour_blind_eyes():
    """Every registered rule's colour is one of ``RULE_PALETTE``, each its own (or its engine's), and with normal vision
    and under each simulated dichromacy no two are closer than 13 (CIELAB ΔE; about 2.3 is a
    just-noticeable difference).  The colours before Tol's palette fail it: under deuteranopia
    Traversal's teal and OTV's magenta were 1.1 apart."""
    from core.rules.registry import REGISTRY
    colours = sorted({cls.color for cls in REGISTRY.values()})           # an engine's rules share one
    owners = {cls.engine or cls.name for cls in REGISTRY.values()}
    assert len(colours) == len(owners) and set(colours) <= set(figures.RULE_PALETTE)
    for name, matrix in {"normal vision": np.eye(3), **MACHADO}.items():
        assert _closest_pair(colours, matrix) >= 13, name
    before = ["#7f7f7f", "#1f77b4", "#2ca02c", "#bcbd22", "#d62728", "#9467bd", "#ff7f0e", "#00897b",
              "#c51b7d", "#5e35b1", "#111111"]
    assert _closest_pair(before, MACHADO["deuteranopia"]) < 2.3


def test_the_reserve_for_rules_of_ones_own_stays_apart_from_every_registered_colour():
    """``USER_PALETTE``: no registered rule's colour, and with normal vision and under each simulated
    dichromacy at least ΔE 17 from every registered colour and from each other (the registered ones
    keep 13 between them); lightness 30-65, readable on white; ``USER_SYMBOLS`` no rule's or bound's."""
    from core.rules.registry import RULES
    registered = sorted({cls.color for cls in RULES})
    assert not set(figures.USER_PALETTE) & set(registered)
    for name, matrix in {"normal vision": np.eye(3), **MACHADO}.items():
        assert _closest_pair(registered + list(figures.USER_PALETTE), matrix) >= 13, name
        for c in figures.USER_PALETTE:
            others = [o for o in registered + list(figures.USER_PALETTE) if o != c]
            assert min(float(np.linalg.norm(_lab(c, matrix) - _lab(o, matrix))) for o in others) >= 17, (name, c)
    assert all(30 <= _lab(c, np.eye(3))[0] <= 65 for c in figures.USER_PALETTE)
    used = set(figures.SYMBOLS) | set(figures.BOUND_SYMBOLS.values()) | {figures.UNKNOWN_STYLE[1]}
    assert len(set(figures.USER_SYMBOLS)) == len(figures.USER_SYMBOLS) and not set(figures.USER_SYMBOLS) & used


def test_the_rules_drawn_together_differ_in_hue_family():
    """Sweeps' default three (BV, RBV, SpecTr-GBV), and the pairs that are often drawn together (RBV
    and Traversal, which often coincide; BV and Best-of-K+BV; SpecTr and SpecTr-GBV), are at least
    60° apart in CIELAB hue, not shades of one hue: Tol's muted colours gave BV indigo (hue 305°),
    RBV purple (333°) and SpecTr-GBV rose (13°), all purple-pink, 28° and 40° apart."""
    def apart(a, b):
        d = abs(_hue(figures.color(a)) - _hue(figures.color(b)))
        return min(d, 360 - d)
    for a, b in [("bv", "rbv"), ("bv", "spectr_gbv"), ("rbv", "spectr_gbv"), ("rbv", "traversal"),
                 ("bv", "best_of_k_bv"), ("spectr", "spectr_gbv")]:
        assert apart(a, b) >= 60, (a, b, apart(a, b))
    old = {"bv": "#332288", "rbv": "#aa4499", "spectr_gbv": "#cc6677"}
    hues = sorted(_hue(c) for c in old.values())
    assert min(hues[1] - hues[0], hues[2] - hues[1], 360 - hues[2] + hues[0]) < 60


def test_every_rule_has_its_own_marker_and_every_bound_its_own_open_one():
    from core.rules.registry import REGISTRY
    marks = [figures.symbol(m) for m in REGISTRY]
    assert len(set(marks)) == len(marks) == len(REGISTRY)
    bounds = [figures.BOUND_SYMBOLS[k] for k in figures.BOUND_STYLE]
    assert len(set(bounds)) == len(bounds) and all(b.endswith("-open") for b in bounds)
    assert not set(bounds) & set(marks)
    curves = {m: [(1, 1.0 + i / 10), (2, 1.1 + i / 10)] for i, m in enumerate(REGISTRY)}
    fig = figures.tau_vs_K(curves, {k: [(1, 2.0 + j / 10), (2, 2.1 + j / 10)] for j, k in enumerate(figures.BOUND_STYLE)})
    drawn = [t.marker.symbol for t in fig.data]
    assert len(drawn) == len(set(drawn)) == len(REGISTRY) + len(figures.BOUND_STYLE)


def _every_figure():
    """One figure of each kind ``figures`` builds, from small made-up numbers."""
    import pandas as pd

    from core.analysis.toy_drafts import draw_block
    from core.rules.registry import get_verifier
    from toy_models.presets import PRESETS

    pr = PRESETS["binary-toy"]
    block = draw_block(pr.draft.with_temperature(1.0), pr.target.with_temperature(1.0), 2, pr.L, 0)
    verdict = get_verifier("bv").verify(block, np.random.default_rng(0))
    sweep = pd.DataFrame({"method": ["bv"] * 3, "K": [1, 2, 3], "mean": [1.5, 1.6, 1.7], "lo": [1.2, 1.3, np.nan],
                          "hi": [1.8, 1.9, np.nan], "n": [2, 2, 1]})
    return [
        figures.expected_tau_chart([{"method": "sd", "expected_accepted": 1.1, "fidelity_tv": 0.0}], {"lp_optimum": 1.2}),
        figures.expected_tau_chart([{"method": "sd", "expected_accepted": 0.5, "fidelity_tv": 0.0},
                                    {"method": "typical", "expected_accepted": 2.0, "fidelity_tv": 0.1}], {"lp_optimum": 1.2}),
        figures.claim_values({"spectr_gbv": 0.4, "claimed_cic": 1.4}, "t", "E[τ]"),
        figures.tau_vs_K({"bv": [(1, 1.0), (2, 1.2)]}, {"acausal": [(1, 1.3), (2, 1.4)]}, current_K=2),
        figures.coupling_heatmap([((0,), (1,))], [1.0], [{((0,), 1): 1.0}]),
        figures.tau_histograms({"sd": [0.5, 0.5]}, {}, 10),
        figures.draft_tree(block, verdict.trace, accepted=verdict.accepted, extra=verdict.extra),
        figures.residual_bars(np.array([0.5, 0.5]), np.array([0.3, 0.7]), np.array([0.0, 1.0]), 1, "∅", False),
        figures.compare_methods_bar([{"method": "bv", "tau": 1, "expected_tau_given_drafts": 1.2}]),
        figures.claim_values({"spectr_gbv": 1.3, "claimed_cic": 1.4}, "t", "E[τ]"),
        figures.scaling_plot([2, 4, 8], [1e-5, 2e-5, 4e-5], 1.0, "spectr_gbv"),
        figures.acceptance_per_position({"bv": [0.8, 0.5]}),
        figures.time_split({"bv": {"draft": 1.0, "target": 2.0}}),
        figures.sweep_lines(sweep, "K", "mean", "lo", "hi", runs="n"),
        figures.score_boxes(pd.DataFrame({"method": ["bv", "sd"], "K": [2, 2], "s": [0.9, 0.8]}), "K", "s", "E/LP",
                            ["bv", "sd"]),
        figures.rule_scatter([0.9, 0.8], [0.95, 0.7], "sd", "bv", "E/LP", ["a", "b"], 1e-9),
    ]


def test_every_figure_has_the_slide_style_from_one_template():
    """One template, registered once, on every figure: fonts readable on a 1280×720 slide (at least
    14 px for ticks and the legend, 16 px for axis titles), and bar labels dropped rather than shrunk
    below 12 px (hover then gives the value)."""
    import plotly.io as pio
    template = pio.templates["explorer"]
    assert template.to_plotly_json() == figures.TEMPLATE.to_plotly_json()
    layout = template.layout
    assert layout.font.size >= 16 and layout.title.font.size >= 18 and layout.legend.font.size >= 14
    for axis in (layout.xaxis, layout.yaxis):
        assert axis.tickfont.size >= 14 and axis.title.font.size >= 16
    assert (layout.uniformtext.mode, layout.uniformtext.minsize) == ("hide", figures.MIN_LABEL_SIZE)
    assert figures.SLIDE == (1280, 720)
    for fig in _every_figure():
        assert fig.layout.template.layout.font.size == layout.font.size, fig.layout.title.text
        assert fig.layout.template.layout.xaxis.tickfont.size == layout.xaxis.tickfont.size
        # no figure sets a font of its own smaller than the template's smallest (13 px: the tree's labels)
        sizes = [t.textfont.size for t in fig.data if getattr(t, "textfont", None) is not None and t.textfont.size]
        assert all(s >= 13 for s in sizes), (fig.layout.title.text, sizes)


def _binary_toy_curves(methods, Ks=(1, 2, 3, 4), L=2):
    from core.analysis.exact import exact_analysis
    from core.rules.registry import get_verifier
    from toy_models.presets import PRESETS

    pr = PRESETS["binary-toy"]
    p, q = pr.draft.with_temperature(1.0), pr.target.with_temperature(1.0)
    return {m: [(K, exact_analysis(get_verifier(m), p, q, K, L).expected_accepted) for K in Ks] for m in methods}


def test_rbv_and_traversal_coincide_on_the_binary_toy_and_the_legend_says_so():
    """On the binary toy (L = 2) RBV and Traversal have the same E[τ] at every K (to about 4e-16): the
    legend says so for each, and Traversal, drawn over RBV, is dashed so that RBV's colour shows.
    BV meets them at K = 1 only, so it stays as it is; so do the others."""
    curves = _binary_toy_curves(["bv", "rbv", "traversal", "otv"])
    rbv, trav = (np.array([v for _, v in curves[m]]) for m in ("rbv", "traversal"))
    assert np.max(np.abs(rbv - trav)) <= 1e-12 and rbv[1] == pytest.approx(1.419753086419753, abs=1e-12)
    fig = figures.tau_vs_K(curves, {})
    assert figures.identical_groups(fig) == [[1, 2]]
    names = [t.name for t in fig.data]
    assert names == ["BV", "RBV = Traversal here", "Traversal, same as RBV", "OTV"]
    assert fig.data[1].line.dash is None and fig.data[2].line.dash == "dash"
    assert fig.data[1].line.color == figures.color("rbv") and fig.data[2].line.color == figures.color("traversal")


def test_series_that_differ_anywhere_or_lie_on_other_axes_are_not_marked():
    fig = figures.tau_vs_K({"rbv": [(1, 1.0), (2, 1.5)], "traversal": [(1, 1.0), (2, 1.5 + 1e-9)],
                            "otv": [(1, 1.0), (2, 1.5 + 1e-13)], "bv": [(1, 1.0), (3, 1.5)]}, {})
    assert figures.identical_groups(fig) == [[0, 2]]                 # 1e-9 apart is a difference
    assert [t.name for t in fig.data] == ["RBV = OTV here", "Traversal", "OTV, same as RBV", "BV"]
    empty = figures.rule_scatter([0.5, 0.6], [0.7, 0.8], "sd", "bv", "E/LP", ["a", "b"], 1e-9)
    assert figures.identical_groups(empty) == []                     # two empty groups are not "identical"


def test_close_values_are_dots_and_values_far_apart_are_bars_from_zero():
    """A bar's length is its value: the binary toy's SD 10/9 and BV 11/9 (with the LP optimum 11/9 and
    the acausal bound 4/3) are close, so they are dots on an axis that spans them, which no longer
    needs to start at 0; 0.5 against 1.5 are bars from 0.  Each value is written under its dot or at
    the foot of its bar, hover gives it to six places."""
    rows = [{"method": "sd", "expected_accepted": 10 / 9, "fidelity_tv": 0.0},
            {"method": "bv", "expected_accepted": 11 / 9, "fidelity_tv": 0.0}]
    fig = figures.expected_tau_chart(rows, {"lp_optimum": 11 / 9, "acausal": 12 / 9})
    dots = [t for t in fig.data if t.type == "scatter" and t.showlegend is False]
    assert not [t for t in fig.data if t.type == "bar"]
    assert [(t.x[0], t.y[0], t.text[0]) for t in dots] == [("SD", 10 / 9, "1.1111"), ("BV", 11 / 9, "1.2222")]
    low, top = fig.layout.yaxis.range
    assert 0 < low < 10 / 9 and top > 12 / 9 and (1 / 9) / (top - low) > 0.25     # the gap is a quarter of the axis
    assert "E[τ] = %{y:.6f}" in dots[0].hovertemplate
    far = figures.expected_tau_chart([{"method": "sd", "expected_accepted": 0.5, "fidelity_tv": 0.0},
                                      {"method": "bv", "expected_accepted": 1.5, "fidelity_tv": 0.0}], {})
    bars = [t for t in far.data if t.type == "bar"]
    assert [(t.x[0], t.y[0]) for t in bars] == [("SD", 0.5), ("BV", 1.5)] and bars[0].insidetextanchor == "start"
    assert far.layout.yaxis.range[0] == 0.0
    assert figures.close([10 / 9, 11 / 9]) and not figures.close([0.5, 1.5]) and not figures.close([0.0, 1.0])


def test_lossy_rules_are_drawn_apart_on_their_own_axis():
    """At T = 0.3 on the binary toy Typical's E[τ] (about 2) is four times the lossless rules': in one
    panel it squashed them into the bottom fifth.  A rule measured lossy is drawn in a panel of its
    own at the right, titled so, on its own axis; the bounds stay with the lossless rules."""
    rows = [{"method": "sd", "expected_accepted": 0.21, "fidelity_tv": 0.0},
            {"method": "traversal", "expected_accepted": 0.37, "fidelity_tv": 1e-16},
            {"method": "typical", "expected_accepted": 2.0, "fidelity_tv": 0.2}]
    fig = figures.expected_tau_chart(rows, {"lp_optimum": 0.38})
    by_name = {t.name: t for t in fig.data}
    assert by_name["Typical"].xaxis == "x2" and by_name["Typical"].yaxis == "y2"
    assert by_name["SD"].xaxis in (None, "x") and by_name["Traversal"].xaxis in (None, "x")
    assert fig.layout.yaxis.range[1] < 0.5 and fig.layout.yaxis2.range[1] >= 2.0
    assert fig.layout.xaxis.domain[1] < fig.layout.xaxis2.domain[0]
    assert [a.text for a in fig.layout.annotations] == [figures.toy_lab.LOSSLESS_PANEL, figures.toy_lab.LOSSY_PANEL]
    lines = [t for t in fig.data if t.mode == "lines"]
    assert len(lines) == 1 and lines[0].xaxis in (None, "x") and list(lines[0].x) == ["SD", "Traversal"]
    assert "(not lossless)" in by_name["Typical"].hovertemplate
    alone = figures.expected_tau_chart(rows[:2], {"lp_optimum": 0.38})
    assert "xaxis2" not in alone.layout.to_plotly_json() and not alone.layout.annotations


def _value_axes(fig) -> list[tuple[str, list | None]]:
    """Each bar trace's value axis: (name, range as set, None where Plotly autoranges)."""
    out = []
    for t in fig.data:
        if t.type != "bar":
            continue
        horizontal = t.orientation == "h"
        ref = (t.xaxis if horizontal else t.yaxis) or ("x" if horizontal else "y")
        axis = fig.layout[ref[0] + "axis" + ref[1:]]
        out.append((t.name, None if axis.range is None else list(axis.range), axis.type, t.base))
    return out


def test_every_bar_of_every_figure_starts_at_zero():
    """A bar's length is its value: every bar chart's value axis holds 0 (or autoranges, which for bars
    starts at 0), and no bar has a base of its own.  The browser's check (``tests.chart_layout``) does
    the same on every page."""
    from tests.test_chart_layout import _run_figures
    for fig in _every_figure() + _run_figures():
        for name, span, kind, base in _value_axes(fig):
            assert base is None, (fig.layout.title.text, name)
            assert span is None or kind == "log" or min(span) <= 0 <= max(span), (fig.layout.title.text, name, span)


def test_the_acausal_bound_says_whether_it_is_attained():
    """No verifier attains the acausal bound in general; where the LP optimum equals it, the best
    lossless verifier does, and the legend says so instead of calling it unattainable."""
    rows = [{"method": "traversal", "expected_accepted": 1.5, "fidelity_tv": 0.0}]
    attained = figures.expected_tau_chart(rows, {"lp_optimum": 1.8532, "acausal": 1.8532})
    names = [t.name.replace("<br>", " ") for t in attained.data if t.mode == "lines"]
    assert "Acausal coupling bound (attained here)" in names[0] and "unattainable" not in " ".join(names)
    apart = figures.expected_tau_chart(rows, {"lp_optimum": 1.6, "acausal": 1.8})
    assert [t.name for t in apart.data if t.mode == "lines"][1] == "Acausal coupling bound (not attained here) = 1.8000"
    curve = figures.tau_vs_K({}, {"lp_optimum": [(1, 1.0), (2, 1.5)], "acausal": [(1, 1.0), (2, 1.6)]})
    assert any(t.name.startswith("Acausal coupling bound (not attained here)") for t in curve.data)


def test_a_band_is_a_filled_area_in_its_series_legend_group():
    """Issue 24, item 4: a confidence band is drawn as a filled area between its edges, no line and
    no markers (Plotly's default for a short trace, the stray dots), no hover, no legend entry, in the
    same legend group as its series, so that a click on the series hides the band too."""
    import pandas as pd
    df = pd.DataFrame({"method": ["bv"] * 4 + ["rbv"] * 4, "K": [1, 2, 3, 4] * 2,
                       "mean": [1.5, 1.6, 1.7, 1.8, 1.4, 1.5, 1.6, 1.7],
                       "lo": [1.2, 1.3, np.nan, 1.5, np.nan, np.nan, np.nan, np.nan],
                       "hi": [1.8, 1.9, np.nan, 2.1, np.nan, np.nan, np.nan, np.nan]})
    fig = figures.sweep_lines(df, "K", "mean", "lo", "hi")
    bands = [t for t in fig.data if t.showlegend is False]
    # BV: two stretches with an interval (K = 1-2, K = 4), each a lower and an upper edge; RBV: none
    assert [(list(t.x), list(t.y), t.fill) for t in bands] == [
        ([1, 2], [1.2, 1.3], None), ([1, 2], [1.8, 1.9], "tonexty"), ([4], [1.5], None), ([4], [2.1], "tonexty")]
    for t in bands:
        assert t.mode == "lines" and t.line.width == 0 and t.hoverinfo == "skip" and t.legendgroup == "bv"
    series = {t.name: t for t in fig.data if t.showlegend is not False}
    assert set(series) == {"BV", "RBV"} and series["BV"].legendgroup == "bv"
    for i, t in enumerate(fig.data):                                 # each upper edge right after its lower
        if t.fill == "tonexty":
            assert fig.data[i - 1].legendgroup == t.legendgroup and fig.data[i - 1].fill is None


def test_bounds_that_coincide_say_their_value_once():
    rows = [{"method": "bv", "expected_accepted": 11 / 9, "fidelity_tv": 0.0}]
    fig = figures.expected_tau_chart(rows, {"lp_optimum": 11 / 9, "acausal": 12 / 9, "greedy": 11 / 9})
    # a name over (706 − 50) / 9 = 72 characters wraps at its last space before them; the second of
    # the group names the first, not the whole group again
    assert [t.name for t in fig.data if t.type == "scatter" and t.mode == "lines"] == [
        "LP optimum (best lossless verifier) = Greedy relaxation (upper bound) =<br>1.2222 here",
        "Acausal coupling bound (not attained here) = 1.3333",
        "Greedy relaxation (upper bound), same as LP optimum (best lossless<br>verifier)"]


# ------------------------------------------------------------------------------------------------
# Every chart reads from the back row: layout properties on the figure objects
# ------------------------------------------------------------------------------------------------

def test_a_long_title_wraps_to_the_narrowest_chart_and_the_top_margin_makes_room():
    """A title wider than ``PAGE_WIDTH`` at the title's font (0.6 em a character, generous) is broken
    at spaces into lines that fit; the title hangs from the top of the figure (Plotly draws a title
    anchored at its bottom down into the plot, line by line), the top margin one title line taller
    for each line, and the figure too."""
    assert figures.wrap("a bb ccc dddd", 10 * 6, 6) == "a bb ccc<br>dddd"        # 10 characters a line
    assert figures.wrap("x" * 30 + " y", 60, 6) == "x" * 30 + "<br>y"           # a long word stands alone
    assert figures.wrap("one<br>two", 600, 6) == "one<br>two"
    long = ("Optimal lossless verifier: which output (accepted prefix s, extra y) to emit for each draft "
            "multiset")
    fig = figures.coupling_heatmap([((0,), (1,))], [1.0], [{((0,), 1): 1.0}])
    lines = fig.layout.title.text.split("<br>")
    assert " ".join(lines) == long and len(lines) == 2
    room = (figures.PAGE_WIDTH - 24) / (figures.TITLE_SIZE * 0.6)
    assert all(len(line) <= room for line in lines)
    assert (fig.layout.title.yref, fig.layout.title.y, fig.layout.title.yanchor) == ("container", 1.0, "top")
    short_one = figures.scaling_plot([2, 4], [1e-5, 2e-5], 1.0, "spectr_gbv")
    assert "<br>" not in short_one.layout.title.text
    assert fig.layout.margin.t - short_one.layout.margin.t == figures.layout._TITLE_LINE_PX


def test_a_legend_of_many_entries_goes_below_the_plot_and_the_figure_grows_by_its_rows():
    """The legend is horizontal at the bottom of the figure (container y = 0), under the x-axis
    title; its rows are counted as Plotly lays them out (one row when every entry fits, else a grid of
    the widest entry's width), the bottom margin and the figure grow by a row each, and the plot is
    never shorter than the legend.  Every rule and every bound, the widest entry
    "Acausal coupling bound (unattainable)" (37 characters: 37 · 9 + 50 = 383 px), in a plot area of
    800 − 94 = 706 px: one column, a row per entry."""
    from core.rules.registry import REGISTRY
    curves = {m: [(1, 1.0 + i / 10), (2, 1.1 + i / 10)] for i, m in enumerate(REGISTRY)}
    bounds = {k: [(1, 2.0 + j / 10), (2, 2.1 + j / 10)] for j, k in enumerate(figures.BOUND_STYLE)}
    fig = figures.tau_vs_K(curves, bounds)
    legend = fig.layout.legend
    assert (legend.orientation, legend.yref, legend.y, legend.yanchor, legend.x) == ("h", "container", 0.0, "bottom", 0.0)
    entries = len(REGISTRY) + len(figures.BOUND_STYLE)
    assert figures.legend_rows(fig) == entries
    assert fig.layout.margin.b == 70 + 26 * entries
    plot = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    assert plot >= 26 * entries
    two = figures.tau_vs_K({"bv": [(1, 1.0)], "sd": [(1, 0.9)]}, {})
    assert figures.legend_rows(two) == 1 and two.layout.margin.b == 70 + 26


def test_three_coinciding_bounds_wrap_their_legend_names_and_count_the_lines():
    """The binary toy at K = 3: the LP optimum, the acausal bound and the greedy relaxation coincide.
    The first name lists all three (about 120 characters: 120 · 9 + 50 px, wider than the
    800 − 94 = 706 px plot area, which cut them in the browser) and wraps at spaces into lines of at
    most (706 − 50) / 9 = 72 characters; the other two name the first only ("…, same as LP optimum
    …"), so the group is not repeated entry after entry."""
    fig = figures.expected_tau_chart([{"method": "traversal", "expected_accepted": 1.5, "fidelity_tv": 0.0}],
                                     {"lp_optimum": 1.62, "acausal": 1.62, "greedy": 1.62})
    names = [t.name for t in fig.data if t.mode == "lines"]
    assert len(names) == 3
    for name in names:
        lines = name.split("<br>")
        assert all(len(line) <= 72 for line in lines), name
    assert names[0].replace("<br>", " ") == ("LP optimum (best lossless verifier) = Acausal coupling bound "
                                             "(attained here) = Greedy relaxation (upper bound) = 1.6200 here")
    assert [n.replace("<br>", " ") for n in names[1:]] == [
        "Acausal coupling bound (attained here), same as LP optimum (best lossless verifier)",
        "Greedy relaxation (upper bound), same as LP optimum (best lossless verifier)"]
    assert [figures.own_name(n) for n in names] == ["LP optimum (best lossless verifier)",
                                                    "Acausal coupling bound (attained here)",
                                                    "Greedy relaxation (upper bound)"]
    assert figures.legend_rows(fig) == 6 and fig.layout.margin.b == 70 + 26 * 6


def _crossed_labels(fig) -> list[str]:
    """The draft tree's branch labels ("draft 3") that an edge runs through, in the chart's pixels at
    ``PAGE_WIDTH``: each label's box estimated (0.6 em a character, from its anchor on the side
    ``textposition`` names), each edge sampled along its length."""
    size = fig.layout
    width = figures.PAGE_WIDTH - size.margin.l - size.margin.r
    height = size.height - size.margin.t - size.margin.b
    (x_lo, x_hi), (y_lo, y_hi) = size.xaxis.range, size.yaxis.range

    def px(x, y):
        return (x - x_lo) / (x_hi - x_lo) * width, (y_hi - y) / (y_hi - y_lo) * height

    labels = next(t for t in fig.data if t.name == "drafts on each branch")
    font = labels.textfont.size
    edges = [t for t in fig.data if t.name in ("edges", "sampled edges", "accepted path")]
    crossed = []
    sides = labels.textposition if isinstance(labels.textposition, (list, tuple)) else [labels.textposition] * len(labels.x)
    for x, y, text, side in zip(labels.x, labels.y, labels.text, sides):
        if not text:
            continue
        ax, ay = px(x, y)
        w, h = 0.55 * font * len(text), 0.8 * font
        left = ax - w if "left" in side else ax if "right" in side else ax - w / 2
        top = ay - h - 2 if "top" in side else ay + 2 if "bottom" in side else ay - h / 2
        for t in edges:
            pts = list(zip(t.x, t.y))
            for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
                if None in (x0, y0, x1, y1):
                    continue
                for f in np.linspace(0, 1, 60):
                    ex, ey = px(x0 + f * (x1 - x0), y0 + f * (y1 - y0))
                    if left + 1 < ex < left + w - 1 and top + 1 < ey < top + h - 1:
                        crossed.append(text)
                        break
    return sorted(set(crossed))


@pytest.mark.parametrize("seed", [6, 0, 1, 2, 3])
def test_no_edge_runs_through_a_branch_label(seed):
    """The start page's tree (the several-drafts preset, draft seed 6): "draft 3" sat on the middle of
    its rising edge, and the thick green accepted path ran through it.  Each label now stands beside
    its edge, on the side the edge does not run through; so on other draws."""
    from core.analysis.toy_drafts import draw_block
    from core.rules.registry import get_verifier
    from toy_models.presets import PRESETS

    pr = PRESETS["several-drafts"]
    p, q = pr.draft.with_temperature(1.0), pr.target.with_temperature(1.0)
    block = draw_block(p, q, pr.K, pr.L, seed)
    verdict = get_verifier("rbv").verify(block, np.random.default_rng(1))
    fig = figures.draft_tree(block, verdict.trace, accepted=verdict.accepted, extra=verdict.extra, height=400)
    assert not _crossed_labels(fig)
