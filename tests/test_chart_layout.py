"""Every chart reads from the back row: each chart of each page (every tab of the toy laboratory,
the step page with its walk revealed, the Draft trees page with its budget chart) is drawn in a real
browser at 1280×720 and checked by ``tests.chart_layout.check_chart_layout`` (no text leaves its
chart's box or its plot area, no two titles overlap, no legend is taller than its plot or cuts an
entry), and so is its slide-sized export (``check_export_layout``: the figure laid out again at
``figures.SLIDE``'s width by the plotly.js Kaleido exports with).

The Leaderboard's charts are checked on a tiny sweep of every default rule, opened from the
results root.  The live decoder's and Sweeps' charts show only after a run of real models: their
chart functions are checked here the same way, on figures of their largest cases (every registered
rule at once), in the exporter's page at the width a 1280-px window gives a chart and at the
export's."""
from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks.browser import ARGS
from core.rules.registry import REGISTRY
from pages.ui import figures
from tests.chart_layout import check_chart_layout, check_export_layout, figure_problems, open_export_page
from tests.browser import SHOTS, chromium, no_exception, playwright, results_dir, server, settle  # noqa: F401

#: A 1280×720 window: a lecture room's projector.
WINDOW = {"width": 1280, "height": 720}

#: Every registered rule, as the toy laboratory's ``methods`` parameter takes them.
EVERY_RULE = ",".join(REGISTRY)

#: (address, charts drawn): every page and tab that draws charts without a model run.
VIEWS = [
    ("", 1),
    ("toy_lab?section=methods", 1),
    ("toy_lab?section=drafts", 1),
    ("toy_lab?section=coupling", 1),
    ("toy_lab?section=monte-carlo", 1),
    ("toy_lab?preset=binary-toy&section=drafts", 1),
    (f"toy_lab?preset=binary-toy&methods={EVERY_RULE}&section=methods", 1),
    (f"toy_lab?preset=binary-toy&methods={EVERY_RULE}&section=drafts", 1),
    (f"toy_lab?preset=binary-toy&methods={EVERY_RULE}&section=monte-carlo", 1),
    ("toy_lab?preset=binary-toy&kmax=64&section=drafts", 1),
    ("toy_lab?preset=binary-toy&K=2&methods=sd,bv,rbv,typical,hsd,spectr_gbv&section=loss", 1),
    ("one_step?shown=99", 3),
    ("one_step?shape=tree&b=2,2&law=topk&shown=99", 3),
    ("claims?tab=live", 3),
    ("draft_trees?preset=binary-toy&chart_max=8", 2),
    ("draft_trees?preset=binary-toy&shape=tree&b=2,2&law=topk&chart_max=7", 2),
]


@pytest.fixture(scope="module")
def window(playwright, chromium, tmp_path_factory):  # noqa: F811 - the fixtures of tests.browser
    """A page of a 1280×720 window, and a second page of it that lays exports out (``open_export_page``)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    ctx = playwright.chromium.launch_persistent_context(
        tmp_path_factory.mktemp("chromium-slide"), executable_path=chromium, headless=True,
        args=ARGS, viewport=WINDOW)
    yield ctx.new_page(), open_export_page(ctx)
    ctx.close()


@pytest.mark.parametrize("address,charts", VIEWS)
def test_every_chart_of_every_page_fits_a_slide(server, window, address, charts):  # noqa: F811
    page, export = window
    page.goto(f"{server}/{address}")
    settle(page, charts, timeout=300)
    no_exception(page)
    assert check_chart_layout(page, address or "start") >= charts
    assert check_export_layout(page, export, address or "start") >= charts
    name = address.replace(EVERY_RULE, "every").replace("?", "_").replace("&", "_").replace("=", "-")
    name = name.replace(",", "-") or "start"
    page.screenshot(path=str(SHOTS / f"layout_{name}.png"), full_page=True)


def test_the_leaderboards_charts_fit_a_slide(server, window, results_dir):  # noqa: F811
    """The Leaderboard on a tiny sweep of every lossless rule that runs on chains (V = 2, K = 2,
    L = 1 and 2, two instances each), opened from the results root: its box plots and its scatter."""
    import re

    from playwright.sync_api import expect

    from core.sweep.config import SweepConfig, default_methods
    from core.sweep.engine import run_sweep
    from core.sweep.store import ResultsStore
    from tests.browser import outcome, rerun

    config = SweepConfig(("iid",), (2,), (2,), (1, 2), 2, tuple(default_methods()), bounds=("lp",), seed=7)
    if not (results_dir / "layout.parquet").exists():
        run_sweep(config, ResultsStore(results_dir / "layout.parquet", config))
    page, export = window
    page.goto(f"{server}/leaderboard")
    settle(page)
    rerun(page, lambda: page.get_by_test_id("stRadioGroup").get_by_text("Open a results folder").click())
    box = page.get_by_label(re.compile(r"^Results folder under "))
    box.fill("layout.parquet")
    box.press("Enter")
    settle(page)
    rerun(page, page.get_by_test_id("stBaseButton-primary").filter(has_text=re.compile(r"^Open$")).click)
    outcome(page, page.get_by_text("Results read from layout.parquet."), charts=3)
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    assert check_chart_layout(page, "leaderboard") >= 3
    assert check_export_layout(page, export, "leaderboard") >= 3


def _run_figures():
    """The charts the live decoder, Sweeps and the Leaderboard draw after a run, each with every
    registered rule (their largest legends), and the toy laboratory's with every rule and bound."""
    import pandas as pd

    rules = list(REGISTRY)
    Ks = range(1, 9)
    sweep = pd.DataFrame([{"method": m, "K": K, "mean": 1.5 + 0.05 * i + 0.1 * K, "lo": 1.2 + 0.1 * K,
                           "hi": 2.0 + 0.1 * K, "n": 3, "exact_given_drafts": 1.45 + 0.05 * i + 0.1 * K}
                          for i, m in enumerate(rules) for K in Ks])
    boxes = pd.DataFrame([{"method": m, "K": K, "s": 0.9 - 0.01 * i} for i, m in enumerate(rules) for K in (2, 4)])
    gains = pd.DataFrame([{"budget": n, "law": law, "gain": 1.0 + 0.01 * n, "family": "toy", "V": 4, "L": 2,
                           "index": 0, "shape": "chains 2×2"} for n in (4, 6, 8) for law in ("iid", "wor", "topk", "greedy")])
    runs = {m: [0.9, 0.7, 0.5, 0.3] for m in rules}
    return [
        figures.tau_vs_K({m: [(K, 1 + 0.03 * i + 0.1 * K) for K in Ks] for i, m in enumerate(rules)},
                         {b: [(K, 2 + 0.02 * j + 0.1 * K) for K in Ks] for j, b in enumerate(figures.BOUND_STYLE)}, 2),
        figures.expected_tau_chart([{"method": m, "expected_accepted": 1.40 + 0.02 * i, "fidelity_tv": 0.0}
                                    for i, m in enumerate(rules)], {"lp_optimum": 1.62, "acausal": 1.7, "greedy": 1.8}),
        figures.expected_tau_chart([{"method": m, "expected_accepted": 0.4 + 0.1 * i, "fidelity_tv": 0.1 * (i % 3 == 0)}
                                    for i, m in enumerate(rules)], {"lp_optimum": 1.62, "acausal": 1.7, "greedy": 1.8}),
        figures.tau_histograms({m: [0.3, 0.3, 0.4] for m in rules},
                               {m: (np.array([0.3, 0.3, 0.4]),) * 3 for m in rules}, 100_000),
        figures.acceptance_per_position(runs),
        figures.acceptance_per_position({(m, d): [0.9, 0.5] for m in rules[:4] for d in ("chains 4×4, iid", "tree b = (4, 2), topk")}),
        figures.time_split({m: {"draft": 1.0, "target": 2.0, "verify": 0.1, "cache": 0.2, "other": 0.1} for m in rules}),
        figures.sweep_lines(sweep, "K", "mean", "lo", "hi", theory="exact_given_drafts",
                            title="Block efficiency against the number of drafts K", xlab="number of drafts K",
                            ylab="block efficiency", runs="n"),
        figures.score_boxes(boxes, "K", "s", "E[τ] / LP optimum", rules),
        figures.rule_scatter([0.9, 0.8], [0.95, 0.7], "spectr_gbv", "best_of_k_bv", "E[τ] / LP optimum",
                             ["a", "b"], 1e-9),
        figures.law_gain_boxes(gains, ["iid", "wor", "topk", "greedy"]),
        figures.compare_methods_bar([{"method": m, "tau": i % 3, "expected_tau_given_drafts": 1.2} for i, m in enumerate(rules)]),
    ]


#: The width of a chart in the main column of a 1280-px window with the sidebar open (measured: the
#: start page's chart), and the export's.
WIDTHS = (800, figures.SLIDE[0])


def test_the_run_pages_charts_fit_a_slide_with_every_rule(window):
    _, export = window
    problems = [p for fig in _run_figures() for w in WIDTHS
                for p in figure_problems(export, json.loads(fig.to_json()), w)]
    assert not problems, "; ".join(problems)
