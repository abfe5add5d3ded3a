"""How fast each page answers in a real browser, against the floor: a bare Streamlit page with one
Plotly chart, measured side by side in the same run.

    python -m benchmarks.page_speed [--app LABEL=DIR ...] [--repeats 2] [--rounds 3] [--fresh 3]
                                    [--pages P ...] [--json OUT]

Each app (``--app``, repeatable; default: this checkout, labelled ``this``; another checkout, such
as an older commit in a git worktree, gives "before" figures) and the floor are measured in turn,
``--repeats`` times, alternated (floor, app 1, app 2, …, floor, app 1, …), so that a machine that
slows down during the run slows every one of them alike.  Each measurement starts its own
``streamlit run app.py`` (a fresh server) and drives headless Chromium ($CHROMIUM, else Debian's
/usr/bin/chromium) with Playwright (``benchmarks.browser``):

- **Tour** (one browser started afresh, the pages in turn, as a reader clicks through a fresh
  server): ``cold`` is each page's first render.  The first page's is the *cold first render*: a
  fresh server and a browser that has never seen the app, like the floor's own first visit.  Then
  ``rounds`` more visits of the page in fresh sessions (``warm``, median reported), once the server
  is quiet (``wait_quiet``: under 5% of a core for a second, its start-up work done).  On the first
  page, ``rounds`` visits right after the cold one come first (``startup``): reloads while the
  server still imports in the background what the other pages need (``pages/ui/prewarm.py``), each
  of which can wait for one import step.
- **Slider change**: on the toy laboratory at its default configuration, K moved by one step with
  the keyboard, timed to the end of the rerun it causes with every chart drawn again (``rounds``
  moves each way).
- **Fresh browser** (``--fresh N``): each page's first render in N browsers started afresh (empty
  profile: no cached scripts, no compiled code), the server warm, as for a reader who opens a shared
  link for the first time.  Measured once the server is quiet.

A *first render* runs from ``goto`` to the app idle (``[data-testid=stApp][data-test-script-state=
notRunning]``), no element stale, no placeholder left (``stSkeleton``) and every Plotly chart on the
page drawn, the condition holding for 0.3 s (a deep link can take two script runs).  Every condition
is polled inside the page every 20 ms.

The summary puts each figure beside the floor's from the same repeat and checks the goals (docs/app.md):
a cold first render within ``COLD_GOAL``× the floor's, a warm render and a slider change within
``WARM_GOAL_S``.  Figures, not assertions: the machine is shared, so run it on an idle machine.
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
PAGES = ("", "toy_lab", "draft_trees", "one_step", "live_decoder", "sweeps", "claims", "leaderboard")
VIEWPORT = {"width": 1400, "height": 2400}
#: The goals: a cold first render within this many times the floor's; warm renders and a slider
#: change within this many seconds (on the idle 2-core machine).
COLD_GOAL, WARM_GOAL_S = 1.3, 1.5
#: Where there is no /proc to watch the server's CPU time: seconds to wait for its start-up work to end.
QUIET_S = 25

#: The floor: a bare Streamlit page, a title and one Plotly chart, nothing else (no config, no theme).
FLOOR_APP = '''import plotly.graph_objects as go
import streamlit as st

st.title("The floor: Streamlit and one Plotly chart")
st.plotly_chart(go.Figure(go.Bar(x=["a", "b", "c"], y=[1, 3, 2])))
'''

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


def cpu_seconds(pid: int) -> float | None:
    """The CPU time of process ``pid`` so far (user + system, from /proc), or None where there is no /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_quiet(pid: int, window_s: float = 1.0, busy: float = 0.05, timeout_s: float = 120) -> float:
    """Wait until the server ``pid`` has used under ``busy`` of a core over ``window_s``: its start-up
    work (the background imports, ``pages.ui.prewarm``) done.  Returns the seconds waited; without
    /proc it waits ``QUIET_S``."""
    start = time.perf_counter()
    before = cpu_seconds(pid)
    if before is None:
        time.sleep(QUIET_S)
        return QUIET_S
    while time.perf_counter() - start < timeout_s:
        time.sleep(window_s)
        now = cpu_seconds(pid)
        if now is None or now - before < busy * window_s:
            break
        before = now
    return time.perf_counter() - start


def fresh_render(pw, chromium: str, url: str, timeout_s: float) -> float:
    """The first render of ``url`` in a browser started afresh, then closed."""
    browser = pw.chromium.launch(executable_path=chromium, args=ARGS)
    try:
        return first_render(browser.new_page(viewport=VIEWPORT), url, timeout_s)
    finally:
        browser.close()


def measure(pw, chromium: str, label: str, app_dir: Path, pages: tuple[str, ...], rounds: int, fresh: int,
            slider: bool, timeout_s: float = 300) -> dict:
    """One app in a fresh server: the tour, the slider (if ``slider``), the fresh-browser visits."""
    out: dict = {"pages": {}, "load_average": list(os.getloadavg())}
    with tempfile.TemporaryFile("w+") as log:
        proc, url = start_server(app_dir, log)
        try:
            browser = pw.chromium.launch(executable_path=chromium, args=ARGS)
            page = browser.new_page(viewport=VIEWPORT)
            for i, path in enumerate(pages):
                cold = first_render(page, f"{url}/{path}", timeout_s)
                row = out["pages"][path or "start"] = {"cold_s": round(cold, 3)}
                if i == 0:
                    # Reloads while the server still does its start-up work (the background imports),
                    # as a reader who reloads at once meets them: reported, not a warm render.
                    during = [first_render(page, f"{url}/{path}", timeout_s) for _ in range(rounds)]
                    row["startup_s"] = [round(w, 3) for w in during]
                    row["startup_median_s"] = round(statistics.median(during), 3)
                out.setdefault("quiet_wait_s", []).append(round(wait_quiet(proc.pid), 1))
                warm = [first_render(page, f"{url}/{path}", timeout_s) for _ in range(rounds)]
                row.update(warm_s=[round(w, 3) for w in warm], warm_median_s=round(statistics.median(warm), 3))
                print(f"{label:>8s} {path or 'start':13s} cold {cold:6.2f} s   warm median "
                      f"{statistics.median(warm):5.2f} s"
                      + (f"   during start-up {row['startup_median_s']:5.2f} s" if i == 0 else ""), flush=True)
            if slider:
                first_render(page, f"{url}/toy_lab", timeout_s)
                wait_quiet(proc.pid)
                moves = [slider_change(page, key, timeout_s) for key in ("ArrowRight", "ArrowLeft") * rounds]
                out["toy_lab_slider_s"] = [round(m, 3) for m in moves]
                out["toy_lab_slider_median_s"] = round(statistics.median(moves), 3)
                print(f"{label:>8s} toy_lab K slider change: median {statistics.median(moves):.2f} s "
                      f"({len(moves)} moves)", flush=True)
            browser.close()
            if fresh:
                wait_quiet(proc.pid)
                for path in pages:
                    runs = [fresh_render(pw, chromium, f"{url}/{path}", timeout_s) for _ in range(fresh)]
                    out["pages"][path or "start"]["fresh_browser_s"] = [round(r, 3) for r in runs]
                    print(f"{label:>8s} {path or 'start':13s} fresh browser: "
                          + ", ".join(f"{r:.2f}" for r in runs) + " s", flush=True)
        finally:
            stop_server(proc)
    out["load_average"] += list(os.getloadavg())
    return out


def summary(runs: list[dict], pages: tuple[str, ...]) -> list[str]:
    """Each app's figures beside the floor's of the same repeat, and the goals (``COLD_GOAL``,
    ``WARM_GOAL_S``), as lines of text; a goal is judged on the median over the repeats (one repeat
    can be slowed by anything else on the machine)."""
    lines = []
    floors = [r["floor"] for r in runs]
    floor_cold = [f["pages"]["start"]["cold_s"] for f in floors]
    floor_fresh = [statistics.median(f["pages"]["start"].get("fresh_browser_s", [float("nan")])) for f in floors]
    lines.append("floor cold " + ", ".join(f"{c:.2f}" for c in floor_cold) + " s; warm "
                 + ", ".join(f"{f['pages']['start']['warm_median_s']:.2f}" for f in floors) + " s"
                 + ("; fresh browser (median) " + ", ".join(f"{c:.2f}" for c in floor_fresh) + " s"
                    if "fresh_browser_s" in floors[0]["pages"]["start"] else ""))
    for label in [k for k in runs[0] if k != "floor"]:
        apps = [r[label] for r in runs]
        first = pages[0] or "start"
        ratios = [a["pages"][first]["cold_s"] / c for a, c in zip(apps, floor_cold)]
        lines.append(f"{label}: cold first render ({first}) / floor's: " + ", ".join(f"{x:.2f}" for x in ratios)
                     + f" (median {statistics.median(ratios):.2f})  goal <= {COLD_GOAL}: "
                     + ("met" if statistics.median(ratios) <= COLD_GOAL else "NOT met"))
        p = [a["pages"][first] for a in apps]
        if "startup_median_s" in p[0]:
            lines.append(f"  {first:13s} reloads during the server's start-up work (no goal): median "
                         + ", ".join(f"{x['startup_median_s']:.2f}" for x in p) + " s")
        for path in pages:
            if any((path or "start") not in a["pages"] for a in apps):
                lines.append(f"  {path or 'start':13s} not in this app")
                continue
            p = [a["pages"][path or "start"] for a in apps]
            row = (f"  {path or 'start':13s} cold " + ", ".join(f"{x['cold_s']:.2f}" for x in p)
                   + "; warm median " + ", ".join(f"{x['warm_median_s']:.2f}" for x in p))
            if "fresh_browser_s" in p[0]:
                fresh = [statistics.median(x["fresh_browser_s"]) for x in p]
                row += ("; fresh browser median " + ", ".join(f"{x:.2f}" for x in fresh) + " (x floor "
                        + ", ".join(f"{x / f:.2f}" for x, f in zip(fresh, floor_fresh)) + ")")
            lines.append(row)
        warm = [max(page["warm_median_s"] for page in x["pages"].values()) for x in apps]
        lines.append("  slowest page's warm median " + ", ".join(f"{w:.2f}" for w in warm) + f" s  goal <= "
                     f"{WARM_GOAL_S} s: {'met' if statistics.median(warm) <= WARM_GOAL_S else 'NOT met'}")
        if "toy_lab_slider_median_s" in apps[0]:
            slider = [a["toy_lab_slider_median_s"] for a in apps]
            lines.append("  K slider median " + ", ".join(f"{s:.2f}" for s in slider) + f" s  goal <= {WARM_GOAL_S} s: "
                         f"{'met' if statistics.median(slider) <= WARM_GOAL_S else 'NOT met'}")
    return lines


def main(argv: list[str] | None = None) -> None:
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--app", action="append", metavar="LABEL=DIR", default=[],
                    help="an app to measure (a checkout with app.py), repeatable; default: this=<this checkout>")
    ap.add_argument("--repeats", type=int, default=2, help="times each app and the floor are measured, alternated")
    ap.add_argument("--rounds", type=int, default=3, help="warm visits per page, and slider moves each way")
    ap.add_argument("--pages", nargs="*", default=list(PAGES), help="URL paths ('' is the start page)")
    ap.add_argument("--fresh", type=int, default=3, metavar="N",
                    help="also time each page's first render in N browsers started afresh (0: not)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args(argv)
    # A SIGTERM (``timeout``, a CI job ending) unwinds like Ctrl-C, so ``measure`` stops the server it
    # started; by default the process would end at once and leave the server running, orphaned.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    apps = dict(a.split("=", 1) for a in args.app) or {"this": str(ROOT)}
    apps = {label: Path(d).resolve() for label, d in apps.items()}
    pages = tuple(args.pages)
    own_pages = {}          # the pages each app has: an older checkout may lack a newer page
    for label, d in apps.items():
        if not (d / "app.py").exists():
            ap.error(f"{label}={d}: no app.py")
        own_pages[label] = tuple(p for p in pages if not p or (d / "pages" / f"{p}.py").exists())
        if missing := sorted(set(pages) - set(own_pages[label])):
            print(f"{label}: no page {', '.join(missing)}: not measured there", flush=True)
    chromium = find_chromium(os.environ, [DEBIAN_CHROMIUM])
    if chromium is None:
        ap.error("no Chromium: set CHROMIUM=/path/to/chromium or apt-get install chromium")
    runs = []
    with tempfile.TemporaryDirectory(prefix="page-speed-floor-") as floor_dir, sync_playwright() as pw:
        (Path(floor_dir) / "app.py").write_text(FLOOR_APP)
        for repeat in range(args.repeats):
            print(f"-- repeat {repeat + 1} of {args.repeats}", flush=True)
            run = {"floor": measure(pw, chromium, "floor", Path(floor_dir), ("",), args.rounds, args.fresh, False)}
            for label, d in apps.items():
                run[label] = measure(pw, chromium, label, d, own_pages[label], args.rounds, args.fresh,
                                     "toy_lab" in pages)
            runs.append(run)
    lines = summary(runs, pages)
    print("\n".join(["", "Summary (each figure beside the floor's of the same repeat):"] + lines))
    if args.json:
        args.json.write_text(json.dumps({"runs": runs, "summary": lines, "apps": {k: str(v) for k, v in apps.items()}},
                                        indent=1) + "\n")


if __name__ == "__main__":
    main()
