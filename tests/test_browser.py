"""End to end in a real browser: Playwright drives Debian's chromium (/usr/bin/chromium, no browser
download) against `streamlit run app.py` on 127.0.0.1.  Every page loads, shows no exception and
draws its charts; a slider change updates a figure; the live decoder generates on a tiny local pair.
Screenshots are kept under artifacts/screenshots/."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
SHOTS = ROOT / "artifacts" / "screenshots"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

if not Path(CHROMIUM).exists():
    pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium) to run the "
                "browser tests", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")
PlaywrightTimeout = sync_api.TimeoutError


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = _free_port()
    log = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1",
         "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                log.seek(0)
                raise RuntimeError(f"streamlit did not start: {log.read()[-2000:]}")
            time.sleep(0.3)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)   # the process group we started, and nothing else
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def browser_page():
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            tempfile.mkdtemp(prefix="chromium-profile-"), executable_path=CHROMIUM, headless=True,
            args=ARGS, viewport={"width": 1400, "height": 2400})
        page = ctx.new_page()
        yield page
        ctx.close()


def settle(page, charts: int = 0, timeout: float = 120) -> None:
    """Wait until the script run is over and at least ``charts`` Plotly charts are drawn."""
    page.wait_for_selector("h1", timeout=timeout * 1000)
    time.sleep(0.8)
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')",
                           timeout=timeout * 1000)
    if charts:
        page.wait_for_function(
            "(n) => Array.from(document.querySelectorAll('.js-plotly-plot'))"
            ".filter(g => g.querySelector('.main-svg') && g.data).length >= n", arg=charts, timeout=timeout * 1000)
    time.sleep(0.5)


def no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0
    assert "Traceback" not in page.inner_text("body")


def figure_data(page, title_part: str):
    return page.evaluate("""(part) => {
        for (const gd of document.querySelectorAll('.js-plotly-plot')) {
            const t = gd.layout && gd.layout.title && gd.layout.title.text || '';
            if (t.includes(part)) return gd.data.map(d => ({name: d.name, y: Array.from(d.y || [])}));
        }
        return null; }""", title_part)


def test_deep_link_first_goes_through_the_router(server, browser_page):
    """The first request of a fresh server is a deep link with a preset: the router still runs
    (its navigation, not a list of files), and the preset is applied."""
    page = browser_page
    page.goto(f"{server}/claims?preset=gbv-lossless")
    settle(page, 3)
    no_exception(page)
    nav = page.locator('[data-testid="stSidebarNav"]').inner_text()
    assert "Start here" in nav and "toy lab" not in nav
    assert "Is SpecTr-GBV lossless" in page.inner_text("body")


def wait_for_change(page, title_part: str, before, timeout: float = 60) -> None:
    """Wait until the y values of the figure titled like ``title_part`` differ from ``before``."""
    page.wait_for_function("""([part, old]) => {
        for (const gd of document.querySelectorAll('.js-plotly-plot')) {
            const t = gd.layout && gd.layout.title && gd.layout.title.text || '';
            if (!t.includes(part)) continue;
            const now = gd.data.map(d => Array.from(d.y || []));
            if (now.length !== old.length) return true;
            return now.some((ys, i) => ys.length !== old[i].length || ys.some((y, j) => y !== old[i][j]));
        }
        return false; }""", arg=[title_part, [d["y"] for d in before]], timeout=timeout * 1000)


PAGES = [("", "Speculative decoding", 1), ("toy_lab", "Toy laboratory", 4), ("one_step", "One iteration", 3),
         ("claims", "SpecTr-GBV", 3)]


@pytest.mark.parametrize("path,title,charts", PAGES)
def test_page_loads_and_draws(server, browser_page, path, title, charts):
    page = browser_page
    page.goto(f"{server}/{path}")
    settle(page, charts)
    no_exception(page)
    assert title in page.inner_text("h1")
    assert "Start here" in page.locator('[data-testid="stSidebarNav"]').inner_text()
    assert page.locator(".js-plotly-plot").count() >= charts
    page.screenshot(path=str(SHOTS / f"{path or 'start'}.png"), full_page=True)


def test_slider_updates_figure(server, browser_page):
    page = browser_page
    page.goto(f"{server}/toy_lab")
    settle(page, 4)
    before = figure_data(page, "Expected accepted tokens")
    assert before
    thumb = page.locator('[data-testid="stSidebar"] input[type="range"][aria-label="Drafts per iteration K"]')
    thumb.focus()
    thumb.press("ArrowRight")               # K: 2 -> 3
    wait_for_change(page, "Expected accepted tokens", before)
    settle(page, 4)
    after = figure_data(page, "Expected accepted tokens")
    spectr = lambda data: next(d["y"] for d in data if d["name"] == "SpecTr")  # noqa: E731
    assert spectr(after)[0] > spectr(before)[0]      # a third draft helps SpecTr
    no_exception(page)
    page.screenshot(path=str(SHOTS / "toy_lab_K3.png"), full_page=True)


def test_start_link_opens_preset(server, browser_page):
    page = browser_page
    page.goto(server)
    settle(page, 1)
    page.get_by_role("link", name="The binary toy of the block-verification paper").click()
    settle(page, 4)
    assert "Binary toy" in page.inner_text("body")
    bars = figure_data(page, "Expected accepted tokens")
    sd = next(d["y"][0] for d in bars if d["name"] == "SD")
    assert abs(sd - 10 / 9) < 1e-9
    no_exception(page)


def test_live_decoder_and_sweeps_pages(server, browser_page, tmp_path):
    from test_app import make_tiny_pair

    target, draft = make_tiny_pair(tmp_path / "pair")
    page = browser_page
    page.goto(f"{server}/live_decoder")
    settle(page, timeout=300)               # the bundled pair (if trained) loads first: seconds on a CPU
    no_exception(page)
    page.get_by_text("Local folders or hub names").first.click()
    settle(page)
    page.get_by_label("Target q (folder or hub name)").fill(target)
    page.get_by_label("Target q (folder or hub name)").press("Enter")
    settle(page)
    page.get_by_label("Draft p (folder or hub name)").fill(draft)
    page.get_by_label("Draft p (folder or hub name)").press("Enter")
    settle(page, timeout=300)
    page.get_by_text("Loaded: target").wait_for(timeout=300_000)
    page.get_by_label("New tokens").fill("24")
    page.get_by_label("New tokens").press("Enter")
    settle(page)
    page.get_by_role("button", name="Generate").click(timeout=120_000)
    settle(page, 3, timeout=300)
    no_exception(page)
    assert figure_data(page, "Iteration 1:") is not None
    assert page.locator("span[title*='accepted draft token'], span[title*='token']").count() > 0
    page.screenshot(path=str(SHOTS / "live_decoder.png"), full_page=True)

    page.locator('[data-testid="stSidebarNav"]').get_by_text("Sweeps").click()   # same session: same pair
    settle(page)
    no_exception(page)
    for label, value in (("Values of K (comma-separated)", "1, 2"), ("New tokens per run", "8"),
                         ("Seeds per prompt", "1")):
        page.get_by_label(label).fill(value)
        page.get_by_label(label).press("Enter")
        settle(page)
    prompts = page.get_by_label("Prompts (one per line; write \\n for a newline)")
    prompts.fill("def main():\\n")
    prompts.press("Control+Enter")
    settle(page)
    page.get_by_role("button", name="Run sweep").click()
    settle(page, 2, timeout=300)
    no_exception(page)
    assert figure_data(page, "Block efficiency against") is not None
    page.screenshot(path=str(SHOTS / "sweeps.png"), full_page=True)


def test_edit_table_updates_results(server, browser_page):
    """Edit one probability in the sidebar table: the exact E[τ] figure follows."""
    page = browser_page
    page.goto(f"{server}/toy_lab")
    settle(page, 4)
    page.locator('[data-testid="stSidebar"]').get_by_text("Edit p and q (table)").click()
    settle(page, 3)
    before = figure_data(page, "Expected accepted tokens")
    grid = page.locator('[data-testid="stSidebar"] [data-testid="stDataFrame"]')
    grid.wait_for(state="visible", timeout=30_000)
    # The grid is a canvas: a double click on a cell opens its overlay editor, an <input class=
    # "gdg-input">.  The edit goes through that element (fill, then Enter), and waits for it to
    # appear rather than typing blind: on a loaded machine the first click can land before the grid
    # is interactive (the cell is then selected but no editor opens), so it is retried.
    editor = page.locator(".gdg-input")
    for attempt in range(4):
        box = grid.bounding_box()
        page.mouse.dblclick(box["x"] + 140, box["y"] + 55)     # a cell of the p (draft) column
        try:
            editor.first.wait_for(state="visible", timeout=5_000 * (attempt + 1))
            editor.first.fill("0.9")
            editor.first.press("Enter")
            wait_for_change(page, "Expected accepted tokens", before, timeout=25)
            break
        except PlaywrightTimeout:
            if attempt == 3:
                page.screenshot(path=str(SHOTS / "edit_table_failed.png"), full_page=True)
                raise
            page.keyboard.press("Escape")
            settle(page, 2)
    settle(page, 3)
    no_exception(page)
    assert figure_data(page, "Expected accepted tokens") != before
