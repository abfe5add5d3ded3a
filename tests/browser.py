"""What the browser tests share: Playwright driving a Chromium ($CHROMIUM, else Debian's
/usr/bin/chromium, else Playwright's own download) against `streamlit run app.py` on 127.0.0.1, the
fixtures that start them (module-scoped: one server and one browser per test file) and the helpers
that wait.  Screenshots are kept under artifacts/screenshots/.

Waiting: never a fixed sleep.  After an action a test waits for the element the action should
produce (``expect`` polls until it shows), then for the app's own state,
``[data-testid=stApp][data-test-script-state=notRunning]``: the script run is over."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks.browser import ARGS, DEBIAN_CHROMIUM, WATCH_RUN, find_chromium, start_server, stop_server

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # the browser tests skip (the ``playwright`` fixture); the discovery test still runs
    sync_playwright = expect = PlaywrightTimeout = None

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "artifacts" / "screenshots"
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
PROBLEM = "[data-testid='stException'], [data-testid='stAlertContentError']"
SLOW = 300          # seconds: loading or running a real model under a loaded CPU


@pytest.fixture(scope="module")
def playwright():
    if sync_playwright is None:
        pytest.skip("playwright is not installed: pip install playwright")
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def chromium(playwright) -> str:
    """The browser to drive; skips the browser tests when none is found."""
    path = find_chromium(os.environ, [DEBIAN_CHROMIUM, playwright.chromium.executable_path])
    if path is None:
        pytest.skip("no Chromium found: set CHROMIUM=/path/to/chromium or apt-get install chromium")
    return path


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    """The server's results root (``EXPLORER_RESULTS_ROOT``): a folder of the test's own, not the
    checkout's results/."""
    path = tmp_path_factory.mktemp("results").resolve()
    before = os.environ.get("EXPLORER_RESULTS_ROOT")
    os.environ["EXPLORER_RESULTS_ROOT"] = str(path)
    yield path
    if before is None:
        del os.environ["EXPLORER_RESULTS_ROOT"]
    else:
        os.environ["EXPLORER_RESULTS_ROOT"] = before


@pytest.fixture(scope="module")
def server(chromium, results_dir, tmp_path_factory):
    # Under pytest's own temporary folders (kept for the last three runs, then removed), not
    # /tmp: a log and a browser profile per run would otherwise pile up there.
    with open(tmp_path_factory.mktemp("server") / "streamlit.log", "w+") as log:
        proc, url = start_server(ROOT, log, timeout_s=60)
        try:
            yield url
        finally:
            stop_server(proc)


@pytest.fixture(scope="module")
def browser_page(playwright, chromium, tmp_path_factory):
    SHOTS.mkdir(parents=True, exist_ok=True)
    ctx = playwright.chromium.launch_persistent_context(
        tmp_path_factory.mktemp("chromium-profile"), executable_path=chromium, headless=True,
        args=ARGS, viewport={"width": 1400, "height": 2400})
    yield ctx.new_page()
    ctx.close()


def settle(page, charts: int = 0, timeout: float = 120) -> None:
    """Wait until the app says its script run is over and no element is left stale, and then
    until at least ``charts`` Plotly charts are drawn.  Only safe where a run is known to have
    started (after ``goto``, or once an element of the new run has shown): before that the app
    still says notRunning."""
    ms = timeout * 1000
    expect(page.locator(IDLE)).to_have_count(1, timeout=ms)
    expect(page.locator("[data-stale='true']")).to_have_count(0, timeout=ms)
    if charts:
        page.wait_for_function(
            "(n) => Array.from(document.querySelectorAll('.js-plotly-plot'))"
            ".filter(g => g.querySelector('.main-svg') && g.data).length >= n", arg=charts, timeout=ms)


#: The page's text, main and sidebar: what a rerun's results change.
PAGE_TEXT = """() => ["stMain", "stSidebar"].map(
    id => (document.querySelector(`[data-testid='${id}']`) || {}).innerText || "").join("\\n")"""


def rerun(page, action, timeout: float = 120, quick_s: float = 10) -> None:
    """Do ``action`` (an input that makes the app rerun its script), then wait until that rerun is
    over.  A MutationObserver records the script state's changes, so a rerun too quick to be seen by
    polling still counts, and a ``settle`` right after the action cannot pass before the rerun starts.
    A rerun quicker than one frame of the page leaves no 'running' state at all (React draws only the
    last state it was given): if none shows within ``quick_s``, the page's text having changed, the app
    idle, is the evidence that the rerun came and went."""
    page.evaluate(WATCH_RUN)
    before = page.evaluate(PAGE_TEXT)
    action()
    try:
        page.wait_for_function("() => window.__sawRun", timeout=quick_s * 1000)
    except PlaywrightTimeout:
        page.wait_for_function(f"(before) => window.__sawRun || ({PAGE_TEXT})() !== before",
                               arg=before, timeout=(timeout - quick_s) * 1000)
    settle(page, timeout=timeout)


#: In-page conditions for timing (polled by the page itself, every few milliseconds).
HEADING_OR_PROBLEM = """([text, problem]) => !!document.querySelector(problem) ||
    Array.from(document.querySelectorAll('h1, h2, h3')).some(h => h.textContent.includes(text))"""
FINISHED = """([charts, problem]) => {
    if (document.querySelector(problem)) return true;
    if (!document.querySelector("%s") || document.querySelector("[data-stale='true']")) return false;
    return Array.from(document.querySelectorAll('.js-plotly-plot'))
        .filter(g => g.querySelector('.main-svg') && g.data).length >= charts; }""" % IDLE


def set_number(page, box, value: str, attempts: int = 3) -> None:
    """Type ``value`` into a number input, press Enter, and wait until the app holds it: the app idle,
    the box showing ``value`` and no longer saying "Press Enter to apply" (the input's own sign of
    typed text not yet committed).

    Whether a script run was seen is not the test.  A rerun can start and end within one frame when
    the browser is busy, so its script state never reaches the page; a retry then typed a value the
    app already held, which starts no run, and failed three times (seen under load).  What is
    retried is a press that committed nothing: a rerun already under way can redraw the input
    between the typing and the Enter, and the box then shows the old value again."""
    pending = box.locator("xpath=ancestor::*[@data-testid='stNumberInput'][1]").get_by_test_id(
        "InputInstructions").filter(has_text="Press Enter")
    for attempt in range(attempts + 1):
        if box.input_value() == value and pending.count() == 0:
            return
        if attempt == attempts:
            break
        # Emptied first: typing the text the box already holds, uncommitted, is no edit, and its
        # Enter commits nothing (seen in CI).
        box.fill("")
        box.fill(value)
        page.evaluate(WATCH_RUN)
        box.press("Enter")
        try:
            page.wait_for_function("() => window.__sawRun", polling=20, timeout=5000)
        except PlaywrightTimeout:
            pass                  # none seen: too quick to see, or none started; the check decides
        settle(page, timeout=SLOW)
    pytest.fail(f"typing {value!r} and Enter did not set the input, {attempts} times "
                f"(it shows {box.input_value()!r})")


def outcome(page, wanted, charts: int = 0, timeout: float = SLOW) -> None:
    """Wait until ``wanted`` shows, or an error or exception shows instead, and the run is over;
    fail with the page's error text in the second case."""
    problem = page.locator(PROBLEM)
    expect(wanted.or_(problem).first).to_be_visible(timeout=timeout * 1000)
    settle(page, timeout=timeout)
    if problem.count():
        page.screenshot(path=str(SHOTS / "failure.png"), full_page=True)
        pytest.fail(f"the page shows an error instead: {problem.first.inner_text()}")
    expect(wanted.first).to_be_visible()
    settle(page, charts, timeout=timeout)


def no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0
    assert "Traceback" not in page.inner_text("body")


@pytest.fixture
def fresh_browser(playwright, chromium, tmp_path):
    """Open a URL in a fresh browser: a new profile each time (no cookie, no storage, no Streamlit
    session), at a lecture hall's 1280×720, as a student opening a lecturer's link would."""
    contexts = []

    def open_url(url: str):
        ctx = playwright.chromium.launch_persistent_context(
            tmp_path / f"profile-{len(contexts)}", executable_path=chromium, headless=True, args=ARGS,
            viewport={"width": 1280, "height": 720})
        contexts.append(ctx)
        page = ctx.new_page()
        page.goto(url)
        return page

    yield open_url
    for ctx in contexts:
        ctx.close()


def tiny_results(results_dir: Path) -> str:
    """A tiny sweep (the iid family at V = 2, K = 2, L = 1 and 2, two instances each, RBV and Traversal, seed
    7) as ``tiny.parquet`` under the results root, written once, serially; returns its name there."""
    from core.sweep.config import SweepConfig
    from core.sweep.engine import run_sweep
    from core.sweep.store import ResultsStore

    config = SweepConfig(("iid",), (2,), (2,), (1, 2), 2, ("rbv", "traversal"), bounds=("lp",), seed=7)
    if not (results_dir / "tiny.parquet").exists():
        run_sweep(config, ResultsStore(results_dir / "tiny.parquet", config))
    return "tiny.parquet"


def tiny_results_and_a_secret(results_dir: Path, tmp_path: Path) -> Path:
    """The tiny sweep under the results root (``tiny_results``), and a folder outside the root holding
    a secret; returns that folder."""
    tiny_results(results_dir)
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "secret.txt").write_text("not for students")
    return outside
