"""How fast each page answers in a real browser: first render, and a toy-lab slider change.

    python -m benchmarks.page_speed [--app-dir DIR] [--rounds 3] [--fresh 0] [--query Q] [--json OUT]

Starts ``streamlit run app.py`` from ``--app-dir`` (default: this checkout; another checkout, such
as an older commit in a git worktree, gives the "before" figures) and drives headless Chromium
($CHROMIUM, else Debian's /usr/bin/chromium) with Playwright (``benchmarks.browser``).

- **First render** of a page: from ``goto`` to the app idle
  (``[data-testid=stApp][data-test-script-state=notRunning]``), no element stale, and every Plotly
  chart on the page drawn, the condition holding for 0.3 s (a deep link can take two script runs).
  The first visit of each page in a fresh server (``cold``: imports, caches and, on the live decoder,
  the bundled pair's load) and then ``rounds`` visits in fresh sessions (``warm``, median reported).
- **Slider change**: on the toy laboratory at its default configuration, K moved by one step with
  the keyboard, timed to the end of the rerun it causes with every chart drawn again.
- **Fresh browser** (``--fresh N``): the first render of each page in N browsers started afresh
  (an empty profile: no cached scripts, no compiled code), the server warm, as for a reader who
  opens a shared link for the first time.  Measured after ``PREWARM_WAIT_S`` of quiet, in which the
  server's background imports (``pages.ui.prewarm``, paused while a script runs) finish.

``--query charts=interactive`` times the pages with their charts drawn by Plotly (the sidebar's
"Interactive charts"), against the default SVG drawn in the page.

Every condition is polled inside the page every 20 ms.  Figures, not assertions: the machine is
shared, so run it on an idle machine and compare before and after in one sitting.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from benchmarks.browser import ARGS, DEBIAN_CHROMIUM, WATCH_RUN, find_chromium, start_server, stop_server

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("", "toy_lab", "one_step", "live_decoder", "sweeps", "claims", "leaderboard")
VIEWPORT = {"width": 1400, "height": 2400}

#: True when the app is idle, nothing is stale, no element is still a placeholder and every Plotly
#: chart present is drawn.  Streamlit shows a skeleton (``stSkeleton``) where a chart will be until
#: Plotly's bundle has loaded, so without that check a page load counted as drawn before any chart.
DRAWN = """() => {
    const app = document.querySelector("[data-testid='stApp']");
    if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
    if (!document.querySelector("[data-testid='stMain'] h1")) return false;
    if (document.querySelector("[data-stale='true'], [data-testid='stSkeleton']")) return false;
    return Array.from(document.querySelectorAll('.js-plotly-plot')).every(g => g.querySelector('.main-svg') && g.data);
}"""


def wait_drawn(page, timeout_s: float) -> None:
    """Wait until DRAWN holds, and still holds 0.3 s later."""
    while True:
        page.wait_for_function(DRAWN, polling=20, timeout=timeout_s * 1000)
        page.wait_for_timeout(300)
        if page.evaluate(DRAWN):
            return


def first_render(page, url: str, timeout_s: float) -> float:
    page.goto("about:blank")
    start = time.perf_counter()
    page.goto(url)
    wait_drawn(page, timeout_s)
    return time.perf_counter() - start - 0.3


def slider_change(page, key: str, timeout_s: float, retry_s: float = 15) -> float:
    """Press ``key`` on the K slider and time the rerun.  A press that starts no run within
    ``retry_s`` (the page can swallow one while it is busy) is pressed again, and the clock restarts."""
    thumb = page.locator('[data-testid="stSidebar"] input[type="range"][aria-label="Drafts per iteration K"]')
    while True:
        thumb.focus()
        page.evaluate(WATCH_RUN)
        start = time.perf_counter()
        thumb.press(key)
        try:
            page.wait_for_function("() => window.__sawRun", polling=20, timeout=retry_s * 1000)
            break
        except PlaywrightTimeout:
            print(f"  no rerun {retry_s:.0f} s after {key}: pressing again", flush=True)
    wait_drawn(page, timeout_s)
    return time.perf_counter() - start - 0.3


#: Seconds of quiet, before the fresh-browser visits, for the server's background imports to end.
PREWARM_WAIT_S = 25


def fresh_render(pw, chromium: str, url: str, timeout_s: float) -> float:
    """The first render of ``url`` in a browser started afresh, then closed."""
    browser = pw.chromium.launch(executable_path=chromium, args=ARGS)
    try:
        return first_render(browser.new_page(viewport=VIEWPORT), url, timeout_s)
    finally:
        browser.close()


def measure(app_dir: Path, rounds: int, pages: tuple[str, ...], fresh: int = 0, timeout_s: float = 300,
            query: str = "") -> dict:
    from playwright.sync_api import sync_playwright

    chromium = find_chromium(os.environ, [DEBIAN_CHROMIUM])
    with tempfile.TemporaryFile("w+") as log, sync_playwright() as pw:
        proc, url = start_server(app_dir, log)
        suffix = f"?{query}" if query else ""
        try:
            browser = pw.chromium.launch(executable_path=chromium, args=ARGS)
            page = browser.new_page(viewport=VIEWPORT)
            out: dict = {"pages": {}, "load_average": list(os.getloadavg())}
            for path in pages:
                cold = first_render(page, f"{url}/{path}{suffix}", timeout_s)
                warm = [first_render(page, f"{url}/{path}{suffix}", timeout_s) for _ in range(rounds)]
                out["pages"][path or "start"] = {"cold_s": round(cold, 3), "warm_s": [round(w, 3) for w in warm],
                                                 "warm_median_s": round(statistics.median(warm), 3)}
                print(f"{path or 'start':13s} cold {cold:6.2f} s   warm median {statistics.median(warm):5.2f} s",
                      flush=True)
            first_render(page, f"{url}/toy_lab{suffix}", timeout_s)
            moves = [slider_change(page, key, timeout_s) for key in ("ArrowRight", "ArrowLeft") * rounds]
            out["toy_lab_slider_s"] = [round(m, 3) for m in moves]
            out["toy_lab_slider_median_s"] = round(statistics.median(moves), 3)
            print(f"toy_lab K slider change: median {statistics.median(moves):.2f} s ({len(moves)} moves)")
            browser.close()
            if fresh:
                time.sleep(PREWARM_WAIT_S)
                for path in pages:
                    runs = [fresh_render(pw, chromium, f"{url}/{path}{suffix}", timeout_s) for _ in range(fresh)]
                    out["pages"][path or "start"]["fresh_browser_s"] = [round(r, 3) for r in runs]
                    print(f"{path or 'start':13s} fresh browser: " + ", ".join(f"{r:.2f}" for r in runs) + " s",
                          flush=True)
            out["load_average"] += list(os.getloadavg())
        finally:
            stop_server(proc)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--app-dir", type=Path, default=ROOT, help="the checkout whose app.py to run")
    ap.add_argument("--rounds", type=int, default=3, help="warm visits per page, and slider moves each way")
    ap.add_argument("--pages", nargs="*", default=list(PAGES), help="URL paths ('' is the start page)")
    ap.add_argument("--fresh", type=int, default=0, metavar="N",
                    help="also time each page's first render in N browsers started afresh")
    ap.add_argument("--query", default="", help="added to every page's address, e.g. charts=interactive")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args(argv)
    # A SIGTERM (``timeout``, a CI job ending) unwinds like Ctrl-C, so ``measure`` stops the server it
    # started; by default the process would end at once and leave the server running, orphaned.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    pages = tuple(p for p in args.pages if p == "" or (args.app_dir / "pages" / f"{p}.py").exists())
    out = measure(args.app_dir.resolve(), args.rounds, pages, args.fresh, query=args.query)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
