"""Driving the app in a real browser, shared by the browser tests and ``benchmarks.page_speed``:
find a Chromium, start and stop ``streamlit run app.py``, and see a script run start."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

DEBIAN_CHROMIUM = "/usr/bin/chromium"
#: Chromium's flags for a headless run that reaches nothing outside the machine.
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

#: Records in window.__sawRun that a script run started: a MutationObserver sees every change of
#: the app's script state, so a run too quick to be caught by polling still counts.
WATCH_RUN = """() => {
    const app = document.querySelector("[data-testid='stApp']");
    window.__sawRun = false;
    if (window.__runObserver) window.__runObserver.disconnect();
    window.__runObserver = new MutationObserver((records) => {
        for (const r of records)
            if (r.oldValue === 'running' || app.getAttribute('data-test-script-state') === 'running')
                window.__sawRun = true;
    });
    window.__runObserver.observe(app, {attributes: true, attributeOldValue: true,
                                       attributeFilter: ['data-test-script-state']});
}"""


def find_chromium(environ, fallbacks) -> str | None:
    """The first executable file among $CHROMIUM and then ``fallbacks``; None when there is none."""
    for candidate in (environ.get("CHROMIUM"), *fallbacks):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(app_dir: Path, log, timeout_s: float = 120) -> tuple[subprocess.Popen, str]:
    """``streamlit run app.py`` from ``app_dir`` on a free port of 127.0.0.1, in a process group of
    its own, output to ``log`` (a file open for reading and writing); returns (process, URL) once
    the health endpoint answers, or raises RuntimeError with the end of the log."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1",
         "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=app_dir, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + timeout_s
    while True:     # poll the health endpoint until the server answers
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            stop_server(proc)
            log.seek(0)
            raise RuntimeError(f"streamlit did not start: {log.read()[-2000:]}")
        time.sleep(0.2)


def stop_server(proc: subprocess.Popen) -> None:
    """End the server's process group (the one ``start_server`` made, and nothing else)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
