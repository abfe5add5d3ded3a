"""The explorer's one figure style: the template, the palettes, and each rule's colour, marker and legend name."""
from __future__ import annotations

import plotly.graph_objects as go
import plotly.io as pio

from core.rules.registry import RULES, is_user_rule, user_rules
from pages.ui.text import short as rule_short


# ------------------------------------------------------------------------------------------------
# The style: one template, colours, markers and names
# ------------------------------------------------------------------------------------------------

#: The slide every chart is laid out for (px): an export is this wide (``image``), and the fonts
#: below stay readable at this size, from the back of a lecture room.
SLIDE = (1280, 720)
#: Font sizes (px): the body and hover text, tick labels, the legend, axis titles, the figure's title.
FONT_SIZE, TICK_SIZE, LEGEND_SIZE, AXIS_TITLE_SIZE, TITLE_SIZE = 16, 15, 15, 17, 20
#: A value label smaller than this is not drawn (``uniformtext``): hover gives the value instead.
MIN_LABEL_SIZE = 12

#: Paul Tol's "muted" scheme (https://personal.sron.nl/~pault/, "Colour schemes"): nine colours that
#: stay distinct with every common colour-vision deficiency; the figures that draw no rule (draft
#: laws, budgets) take their colours from it.
TOL_MUTED = ("#cc6677", "#332288", "#ddcc77", "#117733", "#88ccee", "#882255", "#44aa99", "#999933", "#aa4499")
#: Okabe and Ito's colour-blind-safe scheme ("Color Universal Design", 2008) without its yellow, too
#: pale on white: black, orange, sky blue, bluish green, blue, vermillion, reddish purple.
OKABE_ITO = ("#000000", "#e69f00", "#56b4e9", "#009e73", "#0072b2", "#d55e00", "#cc79a7")
#: The rules' palette: Okabe and Ito's seven, five of Tol's muted colours (wine, olive, indigo,
#: sand, green), violet, lavender and dark brown for the released ports, and five for the serving
#: engines' (mauve TensorRT-LLM, pink SGLang, dark green llama.cpp, magenta vLLM, pure blue
#: transformers: the five a greedy search of a 16-step RGB grid of lightness 25-70 found at ΔE ≥ 13
#: from all the others and ≥ 17 from ``USER_PALETTE``; a sixth fails that).  The rules of one
#: engine (``Verifier.engine``) share its colour and differ by marker; vllm-ascend, vLLM's Ascend
#: plugin, takes vLLM's and FlashInfer, whose sampling kernels SGLang's speculative kernel is
#: derived from, SGLang's.  Every rule's ``color`` (``core/rules/*.py``) is one of these, each its
#: own or its engine's.  Any two
#: stay at least ΔE 13 apart (CIELAB) with normal vision and with each simulated dichromacy
#: (``tests/test_figures.py``), and the rules most often drawn together differ in hue family, not
#: only in shade: BV blue, RBV bluish green, SpecTr-GBV vermillion (Sweeps' default three), RBV
#: against Traversal (green against reddish purple: they often coincide), BV against Best-of-K+BV
#: (blue against orange).
RULE_PALETTE = OKABE_ITO + ("#882255", "#999933", "#332288", "#ddcc77", "#117733", "#9922ff", "#8877ee", "#442200",
                           "#995588", "#335533", "#dd00bb", "#0000ff", "#ff7799")
#: The reserve for rules loaded from outside the project (``core.rules.registry.user_rules``), in
#: load order: colours of lightness 30-65 (CIELAB, readable on white) chosen greedily to stay
#: farthest from every colour of ``RULE_PALETTE`` and from each other, at least ΔE 17 with normal
#: vision and each simulated dichromacy (``tests/test_figures.py``), so that a researcher's rule is
#: never drawn like a registered one.  A rule's own ``color`` is not used for that reason.
USER_PALETTE = ("#ff1166", "#663377", "#aa1100", "#6611bb")

# White, with light grid lines (plotly_white's look).  Layout only: a template built on plotly_white
# itself carries defaults for every trace type, and building it imported about 140 more modules on
# the start page's first run (0.3 s) and put 10 kB more into every chart sent to the browser.
_AXIS = dict(gridcolor="#e5e9f0", linecolor="#c9ced6", zerolinecolor="#c9ced6", zerolinewidth=2, ticks="",
             automargin=True, title=dict(font=dict(size=AXIS_TITLE_SIZE), standoff=12), tickfont=dict(size=TICK_SIZE))
TEMPLATE = go.layout.Template(layout=dict(
    paper_bgcolor="white", plot_bgcolor="white", hovermode="closest",
    font=dict(family="Open Sans, Arial, sans-serif", size=FONT_SIZE, color="#222222"),
    title=dict(font=dict(size=TITLE_SIZE)),
    legend=dict(font=dict(size=LEGEND_SIZE)),
    hoverlabel=dict(font=dict(size=FONT_SIZE - 2), align="left"),
    colorway=list(TOL_MUTED),
    uniformtext=dict(minsize=MIN_LABEL_SIZE, mode="hide"),
    xaxis=_AXIS, yaxis=_AXIS,
))
#: Registered once, by name: every figure of ``figures`` uses it (``_layout``); so can a notebook.
pio.templates["explorer"] = TEMPLATE

#: The one series that is not a rule: the target model decoding alone (the speedup baseline).
#: Every rule's colour and short name are its own class attributes (``core.rules.base.Verifier``).
_BASELINE = {"autoregressive": ("#444444", "Target alone")}

#: One marker per series, in the registry's order, so that lines tell the rules apart without colour
#: too (a print in black and white, a projector that washes colours out).
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "triangle-down", "cross", "x", "star", "pentagon",
           "hexagon", "star-triangle-up", "hourglass", "triangle-left", "star-diamond", "bowtie", "triangle-right",
           "diamond-tall", "star-triangle-down", "circle-x", "square-cross", "octagon", "hexagon2", "triangle-ne",
           "diamond-x", "circle-cross")
#: The markers of the rules loaded from outside the project, in load order (with ``USER_PALETTE``).
USER_SYMBOLS = ("hexagram", "star-square", "diamond-wide", "square-x")
#: A name that is no series here (a results file's rule that is not loaded): grey, a dotted circle.
UNKNOWN_STYLE = ("#777777", "circle-dot")

#: Bounds: (legend name, colour, dash): greys, so that colour always means a rule; the dash tells
#: them apart.
BOUND_STYLE: dict[str, tuple[str, str, str]] = {
    "lp_optimum": ("LP optimum (best lossless verifier)", "#000000", "solid"),
    "acausal": ("Acausal coupling bound", "#555555", "dash"),
    "claimed_cic": ("Claimed E_CIC (SpecTr-GBV paper)", "#555555", "dot"),
    "greedy": ("Greedy relaxation (upper bound)", "#888888", "dashdot"),
}
#: Two values of a bound are the same value within this (far below what a chart shows).
_SAME = 1e-9


def bound_name(key: str, values, lp=None) -> str:
    """The bound's legend name (``BOUND_STYLE``), saying for the acausal bound what is true of it on
    the chart's values: no verifier attains it in general, but where it equals the LP optimum
    (``lp``: the LP optimum's values at the same points) the best lossless verifier attains it, and
    the name says "(attained here)", else "(not attained here)".  ``values`` and ``lp``: a number or
    a sequence of numbers (None where not computed)."""
    name = BOUND_STYLE[key][0]
    if key != "acausal" or lp is None:
        return name
    values = list(values) if isinstance(values, (list, tuple)) else [values]
    lp = list(lp) if isinstance(lp, (list, tuple)) else [lp]
    pairs = [(a, b) for a, b in zip(values, lp) if a is not None and b is not None]
    if not pairs:
        return name
    return name + (" (attained here)" if all(abs(a - b) <= _SAME for a, b in pairs) else " (not attained here)")


#: Each bound's marker: open, so that a bound's point never reads as a rule's.
BOUND_SYMBOLS = {"lp_optimum": "diamond-open", "acausal": "square-open", "claimed_cic": "star-open",
                 "greedy": "triangle-down-open"}
#: Each bound's name where a line's worth of room is all there is (a metric's label).
BOUND_SHORT = {"lp_optimum": "LP optimum", "acausal": "Acausal bound", "claimed_cic": "Claimed E_CIC",
               "greedy": "Greedy relaxation"}

#: The draft tree's nodes: Okabe and Ito's bluish green and vermillion for accepted and rejected (a
#: pair that red-green colour blindness keeps apart; rejected nodes are crosses as well).
STATUS_COLORS = {
    "accepted": "#009e73", "passed": "#99d8c9", "rejected": "#d55e00", "untested": "#c7c7c7",
    "root": "#444444", "extra": "#ffbf00", "current": "#0072b2",
}

#: ``st.plotly_chart(fig, config=CHART_CONFIG)`` for every chart (``charts.draw``): the modebar's
#: camera button saves a PNG at three times the on-screen size (about 2,000 px wide: slide resolution).
CHART_CONFIG = {"toImageButtonOptions": {"format": "png", "scale": 3, "filename": "speculative-decoding"},
                "displaylogo": False}


def _user_index(method: str) -> int:
    return user_rules().index(method)


def color(method: str) -> str:
    """The method's colour, the same on every page: a registered rule's own, a rule from outside the
    project's from ``USER_PALETTE``, grey for a name that is no series here."""
    if method in _BASELINE:
        return _BASELINE[method][0]
    if is_user_rule(method):
        return USER_PALETTE[_user_index(method) % len(USER_PALETTE)]
    cls = next((c for c in RULES if c.name == method), None)
    return UNKNOWN_STYLE[0] if cls is None else cls.color


def short(method: str) -> str:
    """The method's legend name (``pages.ui.text.short``: "(your rule)" marks a rule of one's own)."""
    return _BASELINE[method][1] if method in _BASELINE else rule_short(method)


def symbol(method: str) -> str:
    """The method's marker, the same on every page (``SYMBOLS`` in the registry's order,
    ``USER_SYMBOLS`` for the rules from outside, ``UNKNOWN_STYLE``'s for an unknown name)."""
    if method in _BASELINE:
        return "circle-open"
    if is_user_rule(method):
        return USER_SYMBOLS[_user_index(method) % len(USER_SYMBOLS)]
    names = [c.name for c in RULES]
    return SYMBOLS[names.index(method) % len(SYMBOLS)] if method in names else UNKNOWN_STYLE[1]
