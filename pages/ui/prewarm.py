"""Import what the pages need while the reader is idle, so that no page waits for it and none is slowed by it.

A fresh server has imported only what the start page needs.  The other pages need pandas, pyarrow,
scipy, plotly and our analysis modules (``APP_IMPORTS``, about 1 s of CPU here), and the real-model
pages torch and transformers (``DECODER_IMPORTS``, 4-10 s).  Imported by the first page that needs
them, they slow that page's first render by as much.  Imported by a background thread at a fixed
time, they held the interpreter's lock while the reader's next page ran and while the browser fetched
that page's scripts from this same server: the toy laboratory, opened from the start page, took
10 s to draw instead of about 5 (docs/app.md, "Page speed").

So a background thread imports them one module at a time, and before each module it waits until the
server is idle (``Activity``): no script running in any session, and ``QUIET_S`` seconds since the
last one ended, for the browser fetches the scripts that page needs.  The wait is an audit hook
(``_audit``) that delays only that thread, just before a module's body runs.  Two things end a wait
at once:

- ``want()``: a page that needs the decoder is running, so the imports are needed now;
- another thread blocked on a module lock the thread holds (it was paused halfway through importing
  a package that thread now imports too); CPython records who waits for which lock in
  ``importlib._bootstrap._blocking_on`` (PRIVATE, read on 3.11 to 3.13).  Where that cannot be
  read, the thread never waits: never a deadlock, only the old, unpaced import.

While the thread waits inside a package (torch, say), that package is in ``sys.modules`` half-run.
Importing it from another thread is safe (that thread waits for the lock, as above); code that reads
``sys.modules`` instead of importing would see it half-built.  Of the libraries the pages use, only
scipy's array-API checks do, and only with ``SCIPY_ARRAY_API=1`` (checked on scipy 1.17).
"""
from __future__ import annotations

import contextlib
import importlib
import importlib._bootstrap as bootstrap  # PRIVATE: see _waiters_of
import sys
import threading
import time
from typing import Callable, Iterable, Iterator

import streamlit as st

__all__ = ["APP_IMPORTS", "DECODER_IMPORTS", "QUIET_S", "ACTIVITY", "Activity", "Prewarm", "want", "start"]

#: What the toy, claims and leaderboard pages import on their first run beyond the start page's
#: (``tests/test_prewarm.py`` checks that it is enough).
APP_IMPORTS = (
    "pandas", "pyarrow.pandas_compat", "pyarrow.parquet", "pyarrow.dataset", "scipy.optimize", "plotly.io._json",
    "streamlit.elements.plotly_chart", "streamlit.emojis",
    "pages.ui.cached", "pages.ui.charts", "pages.ui.figures", "pages.ui.toy_config",
    "core.bounds.lp", "core.analysis.claims", "core.analysis.intervals", "core.sweep.engine", "core.sweep.summary",
)

#: What the real-model pages import: torch and transformers' model and tokenizer machinery, about
#: 10-25 s on a fresh 2-core machine (docs/decoder.md, "Loading").  The first is the module that
#: loads the pairs; the others are imported under its load lock.
DECODER_IMPORTS = ("pages.ui.pair_picker", "transformers.models.auto.modeling_auto",
                   "transformers.models.llama.modeling_llama", "transformers.models.auto.tokenization_auto")

#: Seconds of no script running before the thread imports its next module.  Within about a second of
#: a script's last message the browser has fetched that page's scripts from this server (Plotly's is
#: 4.7 MB); after that the thread shares the cores with the browser's drawing, not the interpreter's
#: lock with a script or the file server.  3 s was tried first: a reader who clicks on at once then
#: never leaves the thread time, and the live decoder imported torch itself, 9.3 s cold (docs/app.md).
QUIET_S = 1.0
POLL_S = 0.05


class Activity:
    """The script runs in progress in this server process, every session together, and when the last ended."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._last_end = time.monotonic()

    @contextlib.contextmanager
    def script(self) -> Iterator[None]:
        """Count a script run while the block runs (a rerun or a stop leaves it too)."""
        with self._lock:
            self._running += 1
        try:
            yield
        finally:
            with self._lock:
                self._running -= 1
                self._last_end = time.monotonic()

    def idle_s(self) -> float:
        """Seconds since the last script run ended; 0 while one runs."""
        with self._lock:
            return 0.0 if self._running else time.monotonic() - self._last_end


#: The server's script runs (``app.py`` counts every page's).
ACTIVITY = Activity()
_WANTED = threading.Event()


def want() -> None:
    """A page that needs the decoder's imports is running: import them at full speed from now on."""
    _WANTED.set()


def _waiters_of(tid: int) -> bool | None:
    """Whether another thread is blocked on a module lock that thread ``tid`` holds; None where
    this Python does not say.  PRIVATE API: ``_blocking_on`` maps a waiting thread to its lock
    (3.11) or holds weak references to lists of them (3.12, 3.13); each lock has an ``owner``."""
    try:
        table = bootstrap._blocking_on
        entries = list(table.values()) if isinstance(table, dict) else [ref() for ref in list(table.data.values())]
        locks = [lock for entry in entries if entry is not None
                 for lock in (entry if isinstance(entry, list) else [entry])]
        return any(lock.owner == tid for lock in locks)
    except Exception:  # noqa: BLE001 - another Python's layout: cannot tell
        return None


#: The paused threads' waits, by thread id: ``_audit`` runs the one of the thread it is called in.
_WAITS: dict[int, Callable[[], None]] = {}


def _audit(event: str, args: tuple) -> None:
    """An audit hook (``sys.addaudithook``): before a module's body runs in a thread of ``_WAITS``,
    that thread's wait.  The "exec" event comes with the code object about to run, a module's once
    its loader has it; the interpreter's global import lock is no longer held then (it is while a
    finder looks for the module), only the module locks of the modules being executed."""
    if _WAITS and event == "exec":
        wait = _WAITS.get(threading.get_ident())
        if wait is not None and getattr(args[0], "co_name", None) == "<module>":
            wait()


# Once per process, at import (an audit hook cannot be removed; with no thread waiting it costs a dict test)
sys.addaudithook(_audit)


class Prewarm:
    """Import ``modules`` in a daemon thread, each once ``activity`` has been idle ``quiet_s`` seconds
    (default ``QUIET_S``) or once ``wanted`` is set (see the module's docstring); ``locked`` are then
    imported holding ``lock()``."""

    def __init__(self, modules: Iterable[str], locked: Iterable[str] = (), lock: Callable[[], object] | None = None,
                 activity: Activity = ACTIVITY, wanted: threading.Event = _WANTED,
                 quiet_s: float | None = None) -> None:
        self.modules, self.locked, self.lock = tuple(modules), tuple(locked), lock
        self.activity, self.wanted, self.quiet_s = activity, wanted, quiet_s
        self.thread = threading.Thread(target=self._run, name="prewarm-imports", daemon=True)

    def ready(self) -> bool:
        quiet = QUIET_S if self.quiet_s is None else self.quiet_s
        if self.wanted.is_set() or self.activity.idle_s() >= quiet:
            return True
        return _waiters_of(self.thread.ident) is not False   # a blocked thread, or no way to tell

    def wait(self) -> None:
        while not self.ready():
            self.wanted.wait(POLL_S)

    def _run(self) -> None:
        _WAITS[threading.get_ident()] = self.wait
        try:
            for name in self.modules:
                _import(name)
            if self.locked:
                with self.lock():
                    for name in self.locked:
                        _import(name)
        finally:
            del _WAITS[threading.get_ident()]

    def start(self) -> threading.Thread:
        self.thread.start()
        return self.thread


def _import(name: str) -> None:
    """Import ``name``; a module that cannot be imported is left to the page that needs it, which
    says why in one sentence, and the thread goes on with the next."""
    try:
        importlib.import_module(name)
    except ImportError:
        pass


def _load_lock():
    """The real-model pages' load lock: transformers resolves its names lazily, and two threads doing
    so at once can fail ("Cannot import name 'AutoModelForCausalLM' from 'transformers'"), so a model
    load and this thread never import from transformers at the same time."""
    picker = sys.modules.get(DECODER_IMPORTS[0])
    return picker.LOADS.lock if picker is not None else contextlib.nullcontext()   # no torch: nothing to load


@st.cache_resource(show_spinner=False)
def start() -> threading.Thread:
    """The server's prewarm thread (``APP_IMPORTS``, then ``DECODER_IMPORTS``), started once per process."""
    return Prewarm(APP_IMPORTS + DECODER_IMPORTS[:1], DECODER_IMPORTS[1:], _load_lock).start()
