"""Import what the pages need while the reader is idle, so that no page waits for it and none is slowed by it.

A fresh server has imported only what the start page needs.  The other pages need pandas, pyarrow,
scipy, plotly and our analysis modules (``APP_IMPORTS``, about 1 s of CPU here), and the real-model
pages torch and transformers (``DECODER_IMPORTS``, 4-10 s).  Imported by the first page that needs
them, they slow that page's first render by as much.  Imported by a background thread at a fixed
time, they held the interpreter's lock while the reader's next page ran and while the browser fetched
that page's scripts from this same server: the toy laboratory, opened from the start page, took
10 s to draw instead of about 5 (docs/app.md, "Page speed").

So a background thread imports them one module at a time, each once the server is idle
(``Activity``): no script running in any session, and ``QUIET_S`` seconds since the last one ended,
for the browser fetches the scripts that page needs.  **An import and a script run never overlap**: a
script that starts while the thread imports a module waits, at its start, until that module is
imported (``Activity.script``).  Two reasons:

- An import puts its module in ``sys.modules`` before the module's body has run.  Code that reads
  ``sys.modules`` instead of importing sees it half-built: scipy's array-API helpers look up
  ``sys.modules["torch"].Tensor``, and a fresh server's leaderboard, opened while torch was being
  imported, failed with "partially initialized module 'torch' has no attribute 'Tensor'".
- A script sharing the interpreter with an import is slowed by as much.

The thread never waits halfway through an import, so it holds no module lock while a script runs,
and nothing can deadlock on one.  The lists go in steps of at most about 1.7 s here (torch's own
2.5 s excepted): a script that starts just then waits at most that long.  ``want()`` (a page that
needs the decoder runs) drops the quiet period, never the exclusion.
"""
from __future__ import annotations

import contextlib
import gc
import importlib
import sys
import threading
import time
from typing import AsyncIterator, Callable, Iterable, Iterator

import streamlit as st

__all__ = ["APP_IMPORTS", "DECODER_IMPORTS", "FIRST_PAGE_IMPORTS", "QUIET_S", "ACTIVITY", "Activity", "Prewarm",
           "lifespan", "want", "start"]

#: What the toy, claims and leaderboard pages import on their first run beyond the start page's
#: (``tests/test_prewarm.py`` checks that it is enough).
APP_IMPORTS = (
    "pandas", "pyarrow.pandas_compat", "pyarrow.parquet", "pyarrow.dataset", "scipy.optimize", "plotly.io._json",
    "streamlit.elements.plotly_chart", "streamlit.emojis",
    "pages.ui.cached", "pages.ui.charts", "pages.ui.figures", "pages.ui.toy_config",
    "core.bounds.lp", "core.claims.spectr_gbv", "core.claims.registry", "core.analysis.intervals",
    "core.sweep.engine", "core.sweep.summary",
)

#: What the real-model pages import: torch and transformers' model and tokenizer machinery, about
#: 10-25 s on a fresh 2-core machine (docs/decoder.md, "Loading"), in steps of at most about 1.7 s
#: (torch's own 2.5 s excepted; 7.3 s in all, idle, one after the other).  The transformers steps
#: are imported under the model loads' lock (``_load_lock``).
TORCH_IMPORTS = ("torch", "sympy", "torch._dynamo", "torch.distributed.tensor", "pages.ui.pair_picker",
                 "pages.ui.generation")
TRANSFORMERS_IMPORTS = ("transformers", "transformers.activations", "transformers.models.auto.modeling_auto",
                        "transformers.models.llama.modeling_llama", "transformers.models.auto.tokenization_auto")
DECODER_IMPORTS = TORCH_IMPORTS + TRANSFORMERS_IMPORTS

#: Seconds of no script running before the thread imports its next module.  Within about a second of
#: a script's last message the browser has fetched that page's scripts from this server (Plotly's is
#: 4.7 MB); after that the thread shares the cores with the browser's drawing, not the interpreter's
#: lock with a script or the file server.  3 s was tried first: a reader who clicks on at once then
#: never leaves the thread time, and the live decoder imported torch itself, 9.3 s cold (docs/app.md).
QUIET_S = 1.0
POLL_S = 0.05


class Activity:
    """The script runs in progress in this server process, every session together, and when the last
    ended; and the one import that may run between them (``when_idle``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()          # guards the counts
        self._importing = threading.Lock()     # held while ``when_idle`` runs its work
        self._running = 0
        self._last_end = time.monotonic()

    @contextlib.contextmanager
    def script(self) -> Iterator[None]:
        """Count a script run while the block runs (a rerun or a stop leaves it too); it starts once
        the work of ``when_idle`` in progress, if any, is done."""
        # Counted first, so that no new work starts; then wait for the work in progress.  Counted
        # only once the lock was had, a script lost the lock to the thread's next step, and to the
        # next: a toy laboratory waited for every step of torch and transformers, 10.6 s cold.
        with self._lock:
            self._running += 1
        try:
            with self._importing:
                pass
            yield
        finally:
            with self._lock:
                self._running -= 1
                self._last_end = time.monotonic()

    def when_idle(self, work: Callable[[], bool], quiet_s: float, wanted: threading.Event) -> None:
        """Call ``work()`` once no script runs and none has for ``quiet_s`` seconds (none running is
        enough once ``wanted`` is set), keeping scripts from starting until it returns; until it
        returns True, then try again.  ``work`` must not wait for a script."""
        while True:
            with self._importing:
                with self._lock:
                    running, ended = self._running, self._last_end
                if not running and (wanted.is_set() or time.monotonic() - ended >= quiet_s) and work():
                    return
            if wanted.is_set():
                time.sleep(POLL_S)
            else:
                wanted.wait(POLL_S)


#: The server's script runs (``app.py`` counts every page's).
ACTIVITY = Activity()
_WANTED = threading.Event()


def want() -> None:
    """A page that needs the decoder's imports is running: from now on the thread imports whenever no
    script runs, without the quiet period."""
    _WANTED.set()


class Prewarm:
    """Import ``modules`` in a daemon thread, then ``locked`` each holding ``lock()`` (taken without
    waiting: held elsewhere, the module is tried again later), one module per ``Activity.when_idle``
    of ``activity`` (see the module's docstring)."""

    def __init__(self, modules: Iterable[str], locked: Iterable[str] = (), lock: Callable[[], object] | None = None,
                 activity: Activity = ACTIVITY, wanted: threading.Event = _WANTED,
                 quiet_s: float | None = None) -> None:
        self.modules, self.locked, self.lock = tuple(modules), tuple(locked), lock
        self.activity, self.wanted, self.quiet_s = activity, wanted, quiet_s
        self.thread = threading.Thread(target=self._run, name="prewarm-imports", daemon=True)

    def _step(self, work: Callable[[], bool]) -> None:
        self.activity.when_idle(work, QUIET_S if self.quiet_s is None else self.quiet_s, self.wanted)

    def _run(self) -> None:
        for name in self.modules:
            self._step(lambda name=name: _import(name))
        for name in self.locked:
            self._step(lambda name=name: _import_holding(self.lock(), name))

    def start(self) -> threading.Thread:
        self.thread.start()
        return self.thread


def _import(name: str) -> bool:
    """Import ``name``, then freeze the garbage collector's view of everything alive (``gc.freeze``);
    a module that cannot be imported (missing, or failing) is left to the page that needs it, which
    says why in one sentence, and the thread goes on with the next.  True: done.

    Why freeze: Streamlit collects every generation after every script run (``runner.postScriptGC``),
    and a full collection walks every object the server holds.  With torch and transformers imported
    that is about 460,000 objects and 0.23 s here (0.075 s with the toy pages' imports alone), paid by
    every page view and every slider move.  Frozen objects (the modules just imported: they live as
    long as the server) are skipped by every later collection, which then walks only what the
    sessions made since; so the collection stays, at next to no cost.  Freezing is a constant-time
    move of the collector's lists, done here, where no script runs (``Activity.when_idle``) and the
    last one ended with a full collection, so next to no garbage is frozen with the modules."""
    try:
        importlib.import_module(name)
    except Exception:  # noqa: BLE001 - the page that imports it reports it
        pass
    gc.freeze()
    return True


def _import_holding(lock, name: str) -> bool:
    """``_import(name)`` holding ``lock`` when it is free now; False when it is not (a model is loading:
    waiting for it here would keep every script waiting too)."""
    if not lock.acquire(blocking=False):
        return False
    try:
        return _import(name)
    finally:
        lock.release()


def _load_lock():
    """The real-model pages' load lock: transformers resolves its names lazily, and two threads doing
    so at once can fail ("Cannot import name 'AutoModelForCausalLM' from 'transformers'"), so a model
    load and this thread never import from transformers at the same time."""
    picker = sys.modules.get("pages.ui.pair_picker")
    # no torch, no picker: no model loads to keep apart from, so a lock nobody else holds
    return picker.LOADS.lock if picker is not None else threading.Lock()


#: What the first page a reader opens (the start page) imports beyond the router's own imports:
#: imported before the server answers its first request (``lifespan``), not by that page's first
#: script run, where it delayed the page's chart, and with it the browser's fetch of Plotly's script,
#: by about 0.15 s here (docs/app.md, "Page speed").  ``tests/test_prewarm.py`` checks that it is
#: enough.
FIRST_PAGE_IMPORTS = ("core.rules.registry", "pages.ui.cached", "pages.ui.charts", "pages.ui.figures",
                      "pages.ui.lazy", "pages.ui.text", "toy_models")


@contextlib.asynccontextmanager
async def lifespan(_app) -> AsyncIterator[None]:
    """The server's start-up (``st.App``'s lifespan hook, ``app.py``): ``FIRST_PAGE_IMPORTS``, each
    then frozen (``_import``), before the server accepts a connection."""
    for name in FIRST_PAGE_IMPORTS:
        _import(name)
    yield


@st.cache_resource(show_spinner=False)
def start() -> threading.Thread:
    """The server's prewarm thread (``APP_IMPORTS``, then ``DECODER_IMPORTS``), started once per process."""
    return Prewarm(APP_IMPORTS + TORCH_IMPORTS, TRANSFORMERS_IMPORTS, _load_lock).start()
