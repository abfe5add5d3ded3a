"""The server's background imports (``pages.ui.prewarm``): paced by the server's script runs, never a
deadlock, and enough for the pages that do not need the decoder."""
from __future__ import annotations

import subprocess
import sys
import threading
import time
import types
import uuid
from pathlib import Path

import pytest

from pages.ui import prewarm

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def modules(tmp_path, monkeypatch):
    """Three fresh modules on ``sys.path``: ``pw_outer`` imports ``pw_inner``; ``pw_other`` is alone.
    The names carry the test's id so no two tests share a module."""
    tag = uuid.uuid4().hex[:8]
    names = {k: f"pw_{k}_{tag}" for k in ("outer", "inner", "other")}
    (tmp_path / f"{names['inner']}.py").write_text("VALUE = 1\n")
    (tmp_path / f"{names['outer']}.py").write_text(f"import {names['inner']}\nVALUE = 3\n")
    (tmp_path / f"{names['other']}.py").write_text("VALUE = 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield names
    for name in names.values():
        sys.modules.pop(name, None)


def done(name: str) -> bool:
    """Module ``name`` is imported: its body has run (a module is in sys.modules while it runs)."""
    return hasattr(sys.modules.get(name), "VALUE")


def wait_until(condition, timeout_s: float = 10.0) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def test_nothing_is_imported_while_a_script_runs_and_everything_once_the_server_is_quiet(modules):
    activity = prewarm.Activity()
    with activity.script():
        thread = prewarm.Prewarm([modules["other"], modules["outer"]], activity=activity,
                                 wanted=threading.Event(), quiet_s=0.3).start()
        time.sleep(0.6)
        assert not any(done(name) for name in modules.values())
    t_end = time.monotonic()
    time.sleep(0.1)
    assert not done(modules["other"])                   # quiet for 0.1 s of the 0.3 it waits for
    thread.join(10)
    assert not thread.is_alive() and time.monotonic() - t_end >= 0.3
    assert all(done(name) for name in modules.values())


def test_a_module_that_cannot_be_imported_does_not_stop_the_rest(modules):
    """An optional library missing here (CI's fresh environment has no orjson) is the page's to report."""
    activity = prewarm.Activity()
    thread = prewarm.Prewarm([f"{modules['inner']}_missing", modules["other"]], activity=activity,
                             wanted=threading.Event(), quiet_s=0.0).start()
    thread.join(10)
    assert done(modules["other"])


def test_a_page_that_wants_the_imports_ends_the_wait(modules):
    activity, wanted = prewarm.Activity(), threading.Event()
    with activity.script():
        thread = prewarm.Prewarm([modules["other"]], activity=activity, wanted=wanted, quiet_s=60).start()
        time.sleep(0.3)
        assert not done(modules["other"])
        wanted.set()
        thread.join(10)
        assert done(modules["other"])                   # while the script still runs


def test_a_thread_that_needs_a_module_the_paused_thread_holds_is_not_deadlocked(modules):
    """The thread pauses before ``pw_outer``'s body, holding its module lock; a script then imports
    pw_outer.  Unnoticed, the script would wait for the lock and the thread for the script to end."""
    activity = prewarm.Activity()
    outer, inner = modules["outer"], modules["inner"]
    with activity.script():
        thread = prewarm.Prewarm([outer], activity=activity, wanted=threading.Event(), quiet_s=60).start()
        assert wait_until(lambda: outer in sys.modules)  # its body is about to run: the thread waits
        time.sleep(0.3)
        assert not done(outer) and not done(inner)
        script = threading.Thread(target=__import__, args=(outer,), daemon=True)
        script.start()
        script.join(10)
        assert not script.is_alive(), "deadlock: the script waits for a module the paused thread holds"
        assert done(outer) and done(inner)
        thread.join(10)
        assert not thread.is_alive()


def test_where_python_does_not_say_who_waits_the_thread_never_waits(modules, monkeypatch):
    monkeypatch.setattr(prewarm, "bootstrap", types.SimpleNamespace(_blocking_on=object()))  # unreadable
    assert prewarm._waiters_of(threading.get_ident()) is None
    activity = prewarm.Activity()
    with activity.script():
        thread = prewarm.Prewarm([modules["other"]], activity=activity, wanted=threading.Event(), quiet_s=60).start()
        thread.join(10)
        assert done(modules["other"])


def test_the_app_imports_are_all_the_other_pages_import():
    """In a fresh process: the start page, then ``APP_IMPORTS``, then each page that does not need the
    decoder; each page's first run then imports only a few small modules (without them: 836 on the
    toy laboratory, about 1 s)."""
    code = (
        "import importlib, sys\n"
        "from streamlit.testing.v1 import AppTest\n"
        "from pages.ui import prewarm\n"
        "prewarm.QUIET_S = 1e9\n"                      # the server's own thread never imports here
        "at = AppTest.from_file('app.py', default_timeout=300).run()\n"
        "for name in prewarm.APP_IMPORTS: importlib.import_module(name)\n"
        "for page in ('toy_lab', 'one_step', 'claims', 'leaderboard'):\n"
        "    before = set(sys.modules)\n"
        "    at.switch_page(f'pages/{page}.py').run()\n"
        "    assert not at.exception, [e.value for e in at.exception]\n"
        "    print('NEW', page, sorted(set(sys.modules) - before))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=str(ROOT), capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    new = {line.split()[1]: eval(line.split(" ", 2)[2]) for line in out.stdout.splitlines() if line.startswith("NEW")}
    assert set(new) == {"toy_lab", "one_step", "claims", "leaderboard"}
    for page, names in new.items():
        assert len(names) < 12, (page, names)
        assert not any(n.split(".")[0] in {"pandas", "scipy", "pyarrow", "torch", "transformers"} for n in names), \
            (page, names)


def test_a_spawned_worker_re_running_the_main_module_imports_nothing():
    """multiprocessing's "spawn" (the Dask cluster's workers, started while a page runs) re-runs the
    parent's main module as ``__mp_main__``: app.py routes nothing there and starts no import thread,
    which would otherwise import torch in every worker."""
    code = ("import runpy, threading, time\n"
            "runpy.run_path('app.py', run_name='__mp_main__')\n"
            "time.sleep(0.5)\n"
            "print('THREADS', sorted(t.name for t in threading.enumerate()))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=str(ROOT), capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "THREADS ['MainThread']" in out.stdout, out.stdout + out.stderr[-2000:]
