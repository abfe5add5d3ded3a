"""The app's pages, defined once, and what keeps a session whole across them.

Each page is one function returning its ``st.Page`` (source file, title, icon): ``app.py`` hands them
to ``st.navigation``, and ``st.page_link`` / ``st.switch_page`` take pages built by the same
functions, so a link can never disagree with the router.  They are functions, not module constants,
because an ``st.Page`` must be built inside a script run: without a ScriptRunContext (a bare import,
a unit test) Streamlit returns an empty object with no source, and ``st.navigation`` marks the page
it selects as runnable on the object itself, which a module constant would share between every
session of the server.
A Page built in another call matches the registered one, since Streamlit compares source and URL.

``router_guard`` relies on Streamlit's PRIVATE API (see its docstring).
"""
from __future__ import annotations

import importlib
import runpy
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import streamlit as st

if TYPE_CHECKING:  # the class st.Page returns; only its constructor, st.Page, is public
    from streamlit.navigation.page import StreamlitPage

#: The router, run by ``router_guard`` when Streamlit started a page without it.
APP = Path(__file__).resolve().parents[2] / "app.py"

#: Widget keys whose values survive a change of page (see ``keep_state``).
PERSISTENT_KEYS = [
    "toy_source", "toy_preset", "toy_kind", "toy_V", "toy_alpha", "toy_mix", "toy_seed", "toy_depth",
    "toy_K", "toy_L", "toy_T", "toy_methods", "toy_edit_V", "toy_normalize", "toy_json_p", "toy_json_q",
    "dec_source", "dec_target", "dec_draft",
    # the toy laboratory's tab and its tabs' own controls, which only the open tab renders
    "lab_section", "lab_kmax", "lab_mc_n", "lab_mc_seed",
]


def start() -> StreamlitPage:
    return st.Page("pages/start.py", title="Start here", icon=":material/flag:", default=True)


def toy_lab() -> StreamlitPage:
    return st.Page("pages/toy_lab.py", title="Toy laboratory", icon=":material/science:")


def one_step() -> StreamlitPage:
    return st.Page("pages/one_step.py", title="One iteration, step by step", icon=":material/account_tree:")


def live_decoder() -> StreamlitPage:
    return st.Page("pages/live_decoder.py", title="Live decoder", icon=":material/bolt:")


def sweeps() -> StreamlitPage:
    return st.Page("pages/sweeps.py", title="Sweeps", icon=":material/show_chart:")


def claims() -> StreamlitPage:
    return st.Page("pages/claims.py", title="SpecTr-GBV claims", icon=":material/gavel:")


def leaderboard() -> StreamlitPage:
    return st.Page("pages/leaderboard.py", title="Leaderboard", icon=":material/leaderboard:")


#: What the real-model pages import: torch and transformers' model and tokenizer machinery, about
#: 10-25 s on a fresh 2-core machine (docs/decoder.md, "Loading").  The first is the module that
#: loads the pairs; the others are imported under its load lock.
DECODER_IMPORTS = ("pages.ui.pair_picker", "transformers.models.auto.modeling_auto",
                   "transformers.models.llama.modeling_llama", "transformers.models.auto.tokenization_auto")

#: Seconds the prewarm thread waits before importing.  The imports take about 4-10 s of CPU holding
#: the interpreter's lock; started at once, they share the two cores with the browser's first load
#: of Streamlit's and Plotly's scripts and stall the server's replies, and the first page took about
#: 7 s to draw instead of about 5 (docs/app.md, "Page speed").
PREWARM_DELAY_S = 6.0


@st.cache_resource(show_spinner=False)
def prewarm_decoder_imports() -> threading.Thread:
    """Import the real decoder's libraries in a background thread, once per server process, so that
    they are loaded by the time a reader opens a real-model page.

    transformers resolves its names lazily, and two threads doing so at once can fail ("Cannot import
    name 'AutoModelForCausalLM' from 'transformers'").  So, once the loading module is imported,
    the rest is imported holding its load lock (``pair_picker.LOADS.lock``): a model load and this
    thread never import from transformers at the same time; whichever comes second waits.
    It starts ``PREWARM_DELAY_S`` after the first page's script, once that page is drawn; a reader
    who opens a real-model page sooner has the page import what it needs itself."""
    def run():
        time.sleep(PREWARM_DELAY_S)
        try:
            picker = importlib.import_module(DECODER_IMPORTS[0])
            with picker.LOADS.lock:
                for name in DECODER_IMPORTS[1:]:
                    importlib.import_module(name)
        except ImportError:  # the page that needs the module reports it, in one sentence
            pass
    thread = threading.Thread(target=run, name="prewarm-decoder-imports", daemon=True)
    thread.start()
    return thread


@st.cache_resource(show_spinner="Starting the local Dask cluster…")
def _sweep_client() -> tuple:
    from core.sweep.engine import open_client

    return (open_client(),)   # in a tuple: Streamlit refuses to cache an awaitable, and a Client is one


def sweep_client():
    """The embedded Dask cluster's client (``core.sweep.engine.open_client``: a ``LocalCluster`` of one
    single-threaded worker process per core), started once per server process and shared by every
    session and page that runs work on it; it is never closed on a rerun."""
    return _sweep_client()[0]


def keep_state() -> None:
    """Re-assign persistent widget keys so Streamlit does not drop them when a page without those
    widgets runs (the documented multipage pattern)."""
    for key in PERSISTENT_KEYS:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def router_guard() -> None:
    """Run the router when Streamlit started a page directly.  Uses Streamlit's PRIVATE API
    ``streamlit.runtime.pages_manager.PagesManager.uses_pages_directory`` (checked on 1.67).

    Why: with a ``pages/`` folder next to ``app.py``, a fresh server whose very first request is a
    deep link (e.g. ``/toy_lab?preset=binary-toy``) runs that page in Streamlit's old folder-based
    multipage mode, without ``app.py`` and its ``st.navigation`` (AppTest does the same on every
    run).  ``st.navigation`` switches that mode off when it runs; here we switch it off, run the
    router in this same script run (so widget events are kept), which runs this page again, and
    stop.  A no-op on every normal run.

    On a Streamlit version without that class or flag this does nothing: normal navigation is
    unaffected, but such a deep link shows the bare page without the router's sidebar."""
    # PRIVATE API: PagesManager and its class attribute are not public and may move or vanish.
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # pragma: no cover - other Streamlit versions
        return
    if getattr(PagesManager, "uses_pages_directory", False):
        PagesManager.uses_pages_directory = False
        runpy.run_path(str(APP), run_name="__main__")
        st.stop()
