"""A lecture as a test: the ten links of docs/app.md's "A lecture in ten links", each pasted into one
fresh browser at a lecture hall's 1280×720 in the order a lecturer would show them, the K slider
moved by hand on the way and the live decoder's Generate clicked.  At every step: no refusal (no
error, no banner saying a value was refused or cannot be used), no exception, and every chart on the
page passing ``tests.chart_layout.check_chart_layout`` in the page and in its slide-sized export.

Waiting: never a fixed sleep (``tests.browser``: the app's own idle state, then the wanted element)."""
from __future__ import annotations

import re
import time
from urllib.parse import parse_qsl, urlparse

import pytest

from tests.browser import (ARGS, PROBLEM, SHOTS, SLOW, chromium, expect, no_exception, outcome,  # noqa: F401
                           playwright, rerun, results_dir, server, settle, tiny_results)
from tests.chart_layout import check_chart_layout

#: The lecture, in order: (what it shows, the link, the charts it draws), word for word as in
#: docs/app.md; ``NAME`` stands for a results folder under the results root (here ``RESULTS``).
RESULTS = "tiny.parquet"
LECTURE = [
    ("the start page", "/", 1),
    ("the binary toy at K = 2", "/toy_lab?preset=binary-toy&K=2", 1),
    ("the K slider moved to 3", "/toy_lab?preset=binary-toy&K=3", 1),
    ("one iteration on a top-k tree", "/one_step?preset=binary-toy&shape=tree&b=2,2&law=topk&method=specinfer"
     "&draft_seed=0&coin_seed=0&shown=0", 1),
    ("its walk revealed", "/one_step?preset=binary-toy&shape=tree&b=2,2&law=topk&method=specinfer"
     "&draft_seed=0&coin_seed=0&shown=99", 3),
    ("Draft trees on that tree", "/draft_trees?preset=binary-toy&shape=tree&b=2,2&law=topk&chart_max=8", 2),
    ("the live decoder on a static tree", "/live_decoder?pair=bundled&shape=tree&b=2,2,1&law=iid"
     "&method=traversal&T=0.6", 2),
    ("the live decoder on the dynamic tree", "/live_decoder?pair=bundled&shape=dynamic&budget=16&L=4&width=4"
     "&method=traversal&T=0.6", 2),
    ("the claims page", "/claims", 3),
    ("a leaderboard", "/leaderboard?source=folder&path=NAME&rule=traversal", 3),
]

#: A banner that refuses: a value of a link no control offers, or a configuration that cannot run.
REFUSAL = re.compile(r"refus|cannot|not a value this page offers", re.IGNORECASE)


def test_the_lecture_has_ten_links_each_in_the_docs():
    from tests.browser import ROOT

    docs = (ROOT / "docs" / "app.md").read_text()
    section = docs[docs.index("## A lecture in ten links"):]
    section = section[:section.index("\n## ", 1)]
    assert len(LECTURE) == 10
    assert [link for _, link, _ in LECTURE] == re.findall(r"^\d+\. `([^`]+)`", section, re.MULTILINE)


def no_refusal(page, where: str) -> None:
    """No exception, no error and no banner that refuses."""
    no_exception(page)
    problems = page.locator(PROBLEM)
    assert problems.count() == 0, f"{where}: {problems.first.inner_text()}"
    refusals = [t for t in page.locator("[data-testid^='stAlertContent']").all_inner_texts() if REFUSAL.search(t)]
    assert not refusals, f"{where}: {refusals}"


def query(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlparse(url).query))


def test_a_lecture_in_ten_links(server, playwright, chromium, results_dir, tmp_path):  # noqa: F811
    assert tiny_results(results_dir) == RESULTS
    SHOTS.mkdir(parents=True, exist_ok=True)
    ctx = playwright.chromium.launch_persistent_context(
        tmp_path / "profile", executable_path=chromium, headless=True, args=ARGS,
        viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    seconds = {}
    try:
        for step, (what, link, charts) in enumerate(LECTURE, 1):
            start = time.perf_counter()
            page.goto(server + link.replace("NAME", RESULTS))
            generates = link.startswith("/live_decoder")          # its charts come after Generate
            settle(page, 0 if generates else charts, timeout=SLOW)
            main = page.get_by_test_id("stMain")
            if generates:
                generate = page.get_by_role("button", name="Generate")
                expect(generate).to_be_enabled(timeout=SLOW * 1000)
                no_refusal(page, what)
                generate.click()
                outcome(page, page.get_by_role("heading", name="How it went"), charts=charts)
                expect(main.get_by_text(re.compile(r"Traversal verified (b = \(2, 2, 1\)|dynamic tree of 16 nodes)"))
                       .first).to_be_visible()
            elif link.startswith("/leaderboard"):
                outcome(page, page.get_by_text(f"Results read from {RESULTS}."), charts=charts)
                expect(page.get_by_text(re.compile("lowest E/LP of Traversal, lowest first"))).to_be_visible()
            no_refusal(page, what)
            assert check_chart_layout(page, what, export=True) >= charts, what
            page.screenshot(path=str(SHOTS / f"lecture_{step:02d}.png"), full_page=True)
            if step == 2:        # the K slider, moved as a lecturer would: the address becomes link 3
                thumb = page.locator('[data-testid="stSidebar"] input[type="range"][aria-label="Drafts per iteration K"]')
                thumb.focus()
                rerun(page, lambda: thumb.press("ArrowRight"))
                page.wait_for_function("() => new URLSearchParams(location.search).get('K') === '3'",
                                       timeout=60_000)
                assert query(LECTURE[2][1]).items() <= query(page.url).items(), page.url
                settle(page, 1)
                no_refusal(page, "the K slider moved")
                check_chart_layout(page, "the K slider moved", export=True)
            seconds[what] = time.perf_counter() - start
    finally:
        ctx.close()
    print("lecture seconds per link:", {k: round(v, 1) for k, v in seconds.items()},
          "total", round(sum(seconds.values()), 1))
