"""A lecture as a test: the ten links of docs/app.md's "A lecture in ten links", each pasted into one
fresh browser at a lecture hall's 1280×720 in the order a lecturer would show them, the K slider
moved by hand on the way and the live decoder's Generate clicked; then the class's questions, one
link each ("The class's questions, one link each"), each page's answer read off it.  At every step:
no refusal (no error, no banner saying a value was refused or cannot be used), no exception, and
every chart on the page passing ``tests.chart_layout.check_chart_layout`` in the page and in its
slide-sized export.  Nothing is prepared: the server's results root is an empty folder, as on a
fresh checkout (the leaderboard link opens the example sweep shipped with the app).

Waiting: never a fixed sleep (``tests.browser``: the app's own idle state, then the wanted element)."""
from __future__ import annotations

import re
import time
from urllib.parse import parse_qsl, urlparse

import pytest

from tests.browser import (ARGS, PROBLEM, SHOTS, SLOW, chromium, expect, no_exception, outcome,  # noqa: F401
                           playwright, rerun, results_dir, server, settle)
from tests.chart_layout import check_chart_layout

#: The lecture, in order: (what it shows, the link, the charts it draws), word for word as in
#: docs/app.md.
LECTURE = [
    ("the start page", "/", 1),
    ("the binary toy at K = 2", "/toy_lab?preset=binary-toy&K=2", 1),
    ("the K slider moved to 3", "/toy_lab?preset=binary-toy&K=3", 1),
    ("one iteration on a greedy tree", "/one_step?preset=binary-toy&shape=tree&b=2,1&law=greedy&method=specinfer"
     "&draft_seed=1&coin_seed=4&shown=0", 1),
    ("its walk revealed", "/one_step?preset=binary-toy&shape=tree&b=2,1&law=greedy&method=specinfer"
     "&draft_seed=1&coin_seed=4&shown=99", 3),
    ("Draft trees on that tree", "/draft_trees?preset=binary-toy&shape=tree&b=2,1&law=greedy&chart_max=8", 2),
    ("the live decoder on a static tree", "/live_decoder?pair=bundled&shape=tree&b=2,2,1&law=iid"
     "&method=traversal&T=0.4&seed=1", 2),
    ("the live decoder on the dynamic tree", "/live_decoder?pair=bundled&shape=dynamic&budget=16&L=4&width=4"
     "&method=traversal&T=0.4&seed=1", 2),
    ("the claims page", "/claims", 0),
    ("a leaderboard", "/leaderboard?source=example&rule=traversal", 3),
]

#: The class's questions: (the question, the link, the charts it draws, a text its answer shows),
#: word for word as in docs/app.md.
QUESTIONS = [
    ("Why do several drafts help?", "/toy_lab?preset=several-drafts&section=drafts", 1,
     "Non-decreasing in K on this configuration"),
    ("Block against token-level verification?", "/toy_lab?preset=binary-toy&K=1&methods=sd,bv,lp_optimal", 1, "11/9"),
    ("Is SpecTr-GBV lossless?", "/claims?preset=gbv-lossless&tab=live", 3, "total-variation distance 0.0646"),
    ("Which recent claims fail?", "/claims?show=fails", 0, "claims fail here"),
    ("A token tree against chains at an equal budget?",
     "/draft_trees?preset=binary-toy&shape=tree&b=1,3&law=iid&chart_max=8", 2,
     "the i.i.d.-chains optimum at the same budget"),
    ("What does temperature do?", "/toy_lab?preset=binary-toy&K=2&section=temperature", 1, "Largest E[τ]:"),
    ("Does it really speed up?", "/live_decoder?pair=bundled&shape=dynamic&budget=16&L=4&width=4&method=traversal"
     "&T=0.4&seed=1&compare=traversal&drafts=above&baseline=1", 2, "Same prompt, seed and T for every run"),
]

#: A banner that refuses: a value of a link no control offers, or a configuration that cannot run.
REFUSAL = re.compile(r"refus|cannot|not a value this page offers", re.IGNORECASE)


def _section(title: str) -> str:
    from tests.browser import ROOT

    docs = (ROOT / "docs" / "app.md").read_text()
    section = docs[docs.index(title):]
    return section[:section.index("\n## ", 1)]


def test_the_lecture_has_ten_links_each_in_the_docs():
    assert len(LECTURE) == 10
    assert [link for _, link, _ in LECTURE] == re.findall(r"^\d+\. `([^`]+)`", _section("## A lecture in ten links"),
                                                         re.MULTILINE)


def test_the_class_questions_are_one_link_each_in_the_docs():
    """Why several drafts help; block against token-level verification; is SpecTr-GBV lossless; which
    recent claims fail; a token tree against chains at equal budget; what temperature does; does it
    really speed up: each one link, listed under the lecture's."""
    found = re.findall(r"^\d+\. \*([^*]+)\* `([^`]+)`", _section("## The class's questions, one link each"), re.MULTILINE)
    assert [(q, link) for q, link, _, _ in QUESTIONS] == found and len(found) == 7


def test_the_lecture_texts_read_as_python():
    """The live decoder's two links generate, on the bundled pair, text a class can read: no line
    said three times (T = 0.6 and seed 0 repeated "import unittest" four times on the dynamic tree)
    and every ``def`` line a name and its parameters (it wrote "def __path__ import_dir:").  The
    page generates exactly this (``pages.ui.generation.generate`` with the link's plan, T and seed,
    the page's default prompt and 32 tokens)."""
    torch = pytest.importorskip("torch")
    from collections import Counter

    from core.decoding import SamplingConfig, SpeculativeDecoder, bundled_pair
    from core.decoding.plans import draft_plan
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        pair = bundled_pair()
        for what, link, _ in LECTURE:
            if not link.startswith("/live_decoder"):
                continue
            q = dict(parse_qsl(urlparse(link).query))
            plan = draft_plan(tree=q["b"], law=q["law"]) if q["shape"] == "tree" else \
                draft_plan(budget=int(q["budget"]), L=int(q["L"]), K=int(q["width"]))
            gen = SpeculativeDecoder(pair, q["method"], sampling=SamplingConfig(float(q["T"])), plan=plan).generate(
                "import os\n\n\ndef main():\n", 32, int(q["seed"]))
            lines = [line.strip() for line in gen.text.splitlines()[:-1] if line.strip()]   # the last one is cut
            assert lines and max(Counter(lines).values()) <= 2, (what, gen.text)
            for line in lines:
                if line.startswith("def "):
                    assert re.fullmatch(r"def \w+\([^()]*\):", line), (what, line)
    finally:
        torch.set_num_threads(threads)


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
    assert not any(results_dir.iterdir())              # a fresh checkout: no results folder prepared
    SHOTS.mkdir(parents=True, exist_ok=True)
    ctx = playwright.chromium.launch_persistent_context(
        tmp_path / "profile", executable_path=chromium, headless=True, args=ARGS,
        viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    seconds = {}
    try:
        for step, (what, link, charts) in enumerate(LECTURE, 1):
            start = time.perf_counter()
            page.goto(server + link)
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
                outcome(page, page.get_by_text("Results read from the example sweep shipped with the app."),
                        charts=charts)
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


@pytest.mark.parametrize("question,link,charts,answer", QUESTIONS, ids=[q[0] for q in QUESTIONS])
def test_the_class_questions_in_one_link_each(server, playwright, chromium, results_dir, tmp_path,  # noqa: F811
                                              question, link, charts, answer):
    """Each question's link in a fresh browser (a new profile: a student opening it), nothing prepared:
    no refusal, no exception, its charts drawn and fitting, and the text its answer shows; the speedup
    link's Generate, then Compare, pressed, as the docs say."""
    assert not any(results_dir.iterdir())
    SHOTS.mkdir(parents=True, exist_ok=True)
    ctx = playwright.chromium.launch_persistent_context(
        tmp_path / "profile", executable_path=chromium, headless=True, args=ARGS,
        viewport={"width": 1280, "height": 720})
    try:
        page = ctx.new_page()
        page.goto(server + link)
        decoder = link.startswith("/live_decoder")
        settle(page, 0 if decoder else charts, timeout=SLOW)
        no_refusal(page, question)
        if decoder:
            generate = page.get_by_role("button", name="Generate")
            expect(generate).to_be_enabled(timeout=SLOW * 1000)
            generate.click()
            outcome(page, page.get_by_role("heading", name="How it went"), charts=2)
            compare = page.get_by_role("button", name="Compare")
            expect(compare).to_be_enabled(timeout=SLOW * 1000)
            rerun(page, compare.click, timeout=SLOW)
            outcome(page, page.get_by_text(answer), charts=2 + charts)
        main = page.get_by_test_id("stMain")
        expect(main.get_by_text(answer, exact=False).first).to_be_attached(timeout=60_000)
        no_refusal(page, question)
        assert check_chart_layout(page, question, export=True) >= charts, question
        page.screenshot(path=str(SHOTS / f"question_{QUESTIONS.index((question, link, charts, answer)) + 1}.png"),
                        full_page=True)
    finally:
        ctx.close()
