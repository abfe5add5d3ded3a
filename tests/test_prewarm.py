"""The server's background imports (``pages.ui.prewarm``): paced by the server's script runs, never
overlapping one (no script sees a module half-built), and enough for the pages that do not need the
decoder."""
from __future__ import annotations

import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from pages.ui import prewarm

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def modules(tmp_path, monkeypatch):
    """Fresh modules on ``sys.path``: ``pw_outer`` imports ``pw_inner``; ``pw_other`` is alone;
    ``pw_slow`` sets ``HALF``, sleeps 0.5 s, then sets ``VALUE``.
    The names carry the test's id so no two tests share a module."""
    tag = uuid.uuid4().hex[:8]
    names = {k: f"pw_{k}_{tag}" for k in ("outer", "inner", "other")}
    (tmp_path / f"{names['inner']}.py").write_text("VALUE = 1\n")
    (tmp_path / f"{names['outer']}.py").write_text(f"import {names['inner']}\nVALUE = 3\n")
    (tmp_path / f"{names['other']}.py").write_text("VALUE = 2\n")
    names["slow"] = f"pw_slow_{tag}"
    (tmp_path / f"{names['slow']}.py").write_text("import time\nHALF = 1\ntime.sleep(0.5)\nVALUE = 4\n")
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
    assert all(done(modules[k]) for k in ("other", "outer", "inner"))


def test_a_module_that_cannot_be_imported_does_not_stop_the_rest(modules):
    """An optional library missing here (CI's fresh environment has no orjson) is the page's to report."""
    activity = prewarm.Activity()
    thread = prewarm.Prewarm([f"{modules['inner']}_missing", modules["other"]], activity=activity,
                             wanted=threading.Event(), quiet_s=0.0).start()
    thread.join(10)
    assert done(modules["other"])


def test_each_import_freezes_what_is_alive_so_the_collection_after_every_script_skips_it(modules, tmp_path):
    """Streamlit collects every generation after every script run; what the thread imports (objects
    that live as long as the server) is frozen, so those collections skip it.  An object alive
    before an import is moved out of the collector's generations into the permanent one."""
    import gc
    (tmp_path / f"{modules['other']}.py").write_text("TABLE = [[i] for i in range(5000)]\nVALUE = 2\n")
    gc.unfreeze()
    try:
        thread = prewarm.Prewarm([modules["other"]], activity=prewarm.Activity(), wanted=threading.Event(),
                                 quiet_s=0.0).start()
        thread.join(10)
        assert done(modules["other"])
        table = sys.modules[modules["other"]].TABLE
        frozen = gc.get_freeze_count()
        assert frozen >= 5001                        # the module's 5,001 lists among them
        assert not any(o is table for o in gc.get_objects(generation=2))
    finally:
        gc.unfreeze()                                # leave pytest's collector as it was


def test_a_page_that_wants_the_imports_drops_the_quiet_period_but_not_the_exclusion(modules):
    activity, wanted = prewarm.Activity(), threading.Event()
    with activity.script():
        thread = prewarm.Prewarm([modules["other"]], activity=activity, wanted=wanted, quiet_s=60).start()
        wanted.set()
        time.sleep(0.3)
        assert not done(modules["other"])               # a script runs: never beside it
    thread.join(10)                                     # at once, not 60 s later
    assert not thread.is_alive() and done(modules["other"])


def test_a_script_that_starts_during_an_import_waits_until_the_module_is_whole(modules):
    """The leaderboard on a fresh server failed with "partially initialized module 'torch' has no
    attribute 'Tensor'": scipy reads ``sys.modules["torch"]``, which an import in progress had put
    there half-run.  A script now starts only once the module is whole."""
    activity, slow = prewarm.Activity(), modules["slow"]
    thread = prewarm.Prewarm([slow], activity=activity, wanted=threading.Event(), quiet_s=0.0).start()
    assert wait_until(lambda: hasattr(sys.modules.get(slow), "HALF"), timeout_s=10)   # its body is running
    with activity.script():
        assert done(slow)
    thread.join(10)
    assert not thread.is_alive()


def test_a_script_waits_for_one_import_not_for_the_ones_after_it(modules):
    """The thread goes from one module to the next at once once the server is quiet; a script that
    came during the first must start before the second."""
    activity, slow = prewarm.Activity(), modules["slow"]
    thread = prewarm.Prewarm([slow, modules["outer"]], activity=activity, wanted=threading.Event(),
                             quiet_s=0.0).start()
    assert wait_until(lambda: hasattr(sys.modules.get(slow), "HALF"), timeout_s=10)
    with activity.script():
        assert done(slow) and not done(modules["outer"])
        time.sleep(0.2)
        assert not done(modules["outer"])
    thread.join(10)
    assert not thread.is_alive() and done(modules["outer"])


def test_a_module_imported_under_a_held_lock_waits_for_it_without_holding_up_scripts(modules):
    """The transformers steps need the model loads' lock; while a load holds it, scripts still run
    and the thread tries again later."""
    activity, lock = prewarm.Activity(), threading.Lock()
    lock.acquire()
    thread = prewarm.Prewarm([modules["other"]], [modules["outer"]], lambda: lock, activity=activity,
                             wanted=threading.Event(), quiet_s=0.0).start()
    assert wait_until(lambda: done(modules["other"]))
    for _ in range(5):
        ran = threading.Event()

        def script():
            with activity.script():
                ran.set()
        runner = threading.Thread(target=script, daemon=True)
        runner.start()
        runner.join(2)
        assert ran.is_set() and not runner.is_alive()   # never blocked by the thread's wait for the lock
    assert not done(modules["outer"])
    lock.release()
    thread.join(10)
    assert not thread.is_alive() and done(modules["outer"]) and done(modules["inner"])


def in_a_fresh_process(code: str) -> str:
    """Run ``code`` in a fresh Python from the project's folder; its standard output, once it ended well."""
    out = subprocess.run([sys.executable, "-c", code], cwd=str(ROOT), capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


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
    stdout = in_a_fresh_process(code)
    new = {line.split()[1]: eval(line.split(" ", 2)[2]) for line in stdout.splitlines() if line.startswith("NEW")}
    assert set(new) == {"toy_lab", "one_step", "claims", "leaderboard"}
    for page, names in new.items():
        assert len(names) < 12, (page, names)
        assert not any(n.split(".")[0] in {"pandas", "scipy", "pyarrow", "torch", "transformers"} for n in names), \
            (page, names)


def test_the_server_start_up_imports_what_the_start_page_imports():
    """In a fresh process: what ``streamlit run app.py`` does before its first reader (import ``app``,
    the ``st.App``, and run its lifespan hook), then the start page's first run, which imports no
    module of this project, nor numpy (Plotly's own lazily loaded classes are left to the first
    figure: about 0.02 s)."""
    code = (
        "import asyncio, sys\n"
        "import app\n"
        "from pages.ui import prewarm\n"
        "async def up():\n"
        "    async with prewarm.lifespan(app.app):\n"
        "        pass\n"
        "asyncio.run(up())\n"
        "print('APP', type(app.app).__module__, type(app.app).__name__)\n"
        "prewarm.QUIET_S = 1e9\n"
        "from streamlit.testing.v1 import AppTest\n"
        "before = set(sys.modules)\n"
        "at = AppTest.from_file('app.py', default_timeout=300).run()\n"
        "assert not at.exception, [e.value for e in at.exception]\n"
        "assert at.title[0].value.startswith('Speculative decoding')\n"
        "print('NEW', sorted(set(sys.modules) - before))\n")
    stdout = in_a_fresh_process(code)
    assert "APP streamlit.web.server.starlette.starlette_app App" in stdout
    new = eval(next(line for line in stdout.splitlines() if line.startswith("NEW")).split(" ", 1)[1])
    ours = [n for n in new if n.split(".")[0] in {"core", "pages", "toy_models", "numpy"}]
    assert ours == [], ours


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
