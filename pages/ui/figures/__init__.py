"""Every Plotly figure of the explorer, in one package, in one slide-ready style.

The style is set here once: ``TEMPLATE`` (fonts sized for a 1280×720 slide, ``SLIDE``), which
``_layout`` gives every figure, so what the page shows is what an export shows.  One colour per
method on every page (``color``, read from the rule's own class, from a colour-blind-safe palette,
``RULE_PALETTE``) and one marker per method (``symbol``: every registered rule its own), one grey
line style and open marker per bound (``BOUND_STYLE``, ``BOUND_SYMBOLS``).  Every chart reads from the
back row: titles wrap (``wrap``), legends lie below the plot with the rows they need (``legend_rows``),
bars start at 0 and close values are dots on an axis that shows their gaps (``close``,
``value_range``), and an export is laid
out for its own width (``for_width``).  Series that coincide are said to (``identical_groups``): "RBV = Traversal here"
in the legend, the one drawn on top dashed, rather than one hidden under the other.
Functions take plain data (numbers, dicts, core result objects) and return ``go.Figure``; nothing here
computes an algorithm: the numbers come from ``core``.

The package, by subject: ``style`` (the template, palettes, each rule's colour, marker and name),
``layout`` (titles, legends, axes, series that coincide), ``export`` (SVG and PNG files, one at a
time), ``trees`` (the draft tree's drawing), and the charts of each page: ``toy_lab``, ``step``,
``laws``, ``claims``, ``runs`` (the decoder and the sweeps), ``leaderboard``.  Pages import the
module they draw with; this package's names are all of them, for a notebook or a benchmark.
"""
from __future__ import annotations

from pages.ui.figures.style import (  # noqa: F401
    AXIS_TITLE_SIZE, BOUND_SHORT, BOUND_STYLE, BOUND_SYMBOLS, CHART_CONFIG, FONT_SIZE, LEGEND_SIZE,
    MIN_LABEL_SIZE, OKABE_ITO, RULE_PALETTE, SLIDE, STATUS_COLORS, SYMBOLS, TEMPLATE, TICK_SIZE, TITLE_SIZE,
    TOL_MUTED, UNKNOWN_STYLE, USER_PALETTE, USER_SYMBOLS, bound_name, color, short, symbol)
from pages.ui.figures.layout import (  # noqa: F401
    CLOSE, PAGE_WIDTH, SAME_TOL, bar_range, close, for_width, identical_groups, legend_rows, mark_identical,
    own_name, value_range, wrap)
from pages.ui.figures.export import (  # noqa: F401
    BROWSERS, PNG_SCALE, export_browser, image)
from pages.ui.figures.trees import (  # noqa: F401
    draft_tree, token_tree, tokens_str)
from pages.ui.figures.toy_lab import (  # noqa: F401
    CURVE_AXES, LOSSY_MARK, coupling_heatmap, expected_tau_chart, gain_by_depth, tau_curves, tau_histograms, tau_vs_K)
from pages.ui.figures.step import (  # noqa: F401
    compare_methods_bar, residual_bars, round_bars, traversal_step)
from pages.ui.figures.laws import (  # noqa: F401
    BUDGET_BOUND_SYMBOLS, BUDGET_COLORS, LAW_STYLE, budget_curves, law_gain_boxes)
from pages.ui.figures.claims import (  # noqa: F401
    claim_values, scaling_plot)
from pages.ui.figures.runs import (  # noqa: F401
    DRAFT_PATTERNS, PHASE_COLORS, acceptance_per_position, band_traces, sweep_lines, time_split)
from pages.ui.figures.leaderboard import (  # noqa: F401
    rule_scatter, score_boxes)
