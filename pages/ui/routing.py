"""The app's pages, defined once, and what keeps a session whole across them.

Each page is one function returning its ``st.Page`` (source file, title, icon): ``app.py`` hands them
to ``st.navigation``, and ``st.page_link`` / ``st.switch_page`` take pages built by the same
functions, so a link can never disagree with the router.  They are functions, not module constants,
because an ``st.Page`` must be built inside a script run: without a ScriptRunContext (a bare import,
a unit test) Streamlit returns an empty object with no source, and ``st.navigation`` marks the page
it selects as runnable on the object itself, which a module constant would share between every
session of the server.
A Page built in another call matches the registered one, since Streamlit compares source and URL.

Every page's settings are also a link: ``read_link`` and ``write_link`` (below) keep them in the URL,
so that a refresh or a copied link opens the same view.

``router_guard`` relies on Streamlit's PRIVATE API (see its docstring).
"""
from __future__ import annotations

import runpy
from pathlib import Path
from typing import TYPE_CHECKING, Callable

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
    "lab_section", "lab_kmax", "lab_every", "lab_mc_n", "lab_mc_seed",
    # the token-tree pages' shape and law (Draft trees, one iteration)
    "tree_kind", "tree_b", "tree_law",
]


def start() -> StreamlitPage:
    return st.Page("pages/start.py", title="Start here", icon=":material/flag:", default=True)


def toy_lab() -> StreamlitPage:
    return st.Page("pages/toy_lab.py", title="Toy laboratory", icon=":material/science:")


def one_step() -> StreamlitPage:
    return st.Page("pages/one_step.py", title="One iteration, step by step", icon=":material/account_tree:")


def draft_trees() -> StreamlitPage:
    return st.Page("pages/draft_trees.py", title="Draft trees", icon=":material/park:")


def live_decoder() -> StreamlitPage:
    return st.Page("pages/live_decoder.py", title="Live decoder", icon=":material/bolt:")


def sweeps() -> StreamlitPage:
    return st.Page("pages/sweeps.py", title="Sweeps", icon=":material/show_chart:")


def needs_decoder(page: StreamlitPage) -> bool:
    """Whether ``page`` imports torch and transformers (the real-model pages).  False in a bare run
    (``python app.py``: no ScriptRunContext), whose pages are empty."""
    try:
        return page.url_path in {live_decoder().url_path, sweeps().url_path}
    except AttributeError:
        return False


def claims() -> StreamlitPage:
    return st.Page("pages/claims.py", title="Claims", icon=":material/gavel:")


def leaderboard() -> StreamlitPage:
    return st.Page("pages/leaderboard.py", title="Leaderboard", icon=":material/leaderboard:")


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


# ------------------------------------------------------------------------------------------------
# Links: every page keeps its settings in the URL, so that a refresh restores them and a copied link
# opens the same view in a fresh browser.

#: A page's link parameter: parameter → (session-state key of the widget it sets, parser of its
#: text, raising ValueError when the text is no value the widget offers).
LinkParams = dict[str, tuple[str, Callable[[str], object]]]
#: The session's own URL, as it last wrote it (``write_link``).
OWN_URL = "toy_url"
#: The URLs the session wrote lately, oldest first: ``read_link`` leaves each of them alone.  One is not
#: enough: a rerun the reader starts before the browser has shown the URL of the run before (a click
#: right after another) comes back with an older URL of the session's own, which is no link to apply.
WRITTEN = "url_written"
KEEP_WRITTEN = 32


def choice(options) -> Callable[[str], str]:
    """A link parser accepting one of ``options`` (or of what ``options()`` returns when the link is
    read: the rules, which a rule loaded later joins)."""
    def parse(text: str) -> str:
        if text not in (options() if callable(options) else options):
            raise ValueError(text)
        return text
    return parse


def number(kind: type, lo: float, hi: float) -> Callable[[str], float]:
    """A link parser for an int or float in [lo, hi] (the widget's range)."""
    def parse(text: str):
        value = kind(text)
        if not lo <= value <= hi:
            raise ValueError(text)
        return value
    return parse


def choices(options, kind: type = str) -> Callable[[str], list]:
    """A link parser for a comma-separated list of values of ``options`` (a multiselect; or of what
    ``options()`` returns when the link is read), each read as ``kind``; the empty text is the empty list."""
    def parse(text: str) -> list:
        values = [kind(v) for v in text.split(",") if v]
        if not set(values) <= set(options() if callable(options) else options):
            raise ValueError(text)
        return values
    return parse


def read_link(params: LinkParams) -> list[str]:
    """Apply the URL's values of ``params`` to the widgets' session state when the URL is new (a fresh
    page, a refresh, a copied link); a URL this session wrote itself (``write_link``) is left alone,
    since the widgets hold the same values or newer ones.  Returns one phrase per value it could not
    apply."""
    ss = st.session_state
    given = st.query_params.to_dict()
    if not is_new_link():
        return []
    ignored = []
    for param, (key, parse) in params.items():
        if param in given:
            try:
                ss[key] = parse(given[param])
            except ValueError:
                ignored.append(f"{param}={given[param]} is not a value this page offers")
    return ignored


def link_warning(ignored: list[str], instead: str = "the page shows its own settings instead") -> str | None:
    """The one banner naming what a link could not apply (``read_link``), or None."""
    if not ignored:
        return None
    return "This link's configuration was not applied in full: " + "; ".join(ignored) + f". {instead.capitalize()}."


def write_link(params: dict[str, str]) -> None:
    """Make ``params`` the URL (``st.query_params``), remembering it as this session's own."""
    if params != st.query_params.to_dict():
        st.query_params.from_dict(params)
    ss = st.session_state
    ss[OWN_URL] = params
    written = [w for w in ss.get(WRITTEN, []) if w != params]
    ss[WRITTEN] = [*written[-(KEEP_WRITTEN - 1):], dict(params)]


def is_new_link() -> bool:
    """Whether the URL holds parameters this session did not write lately (a link being opened)."""
    given = st.query_params.to_dict()
    return bool(given) and given != st.session_state.get(OWN_URL) and given not in st.session_state.get(WRITTEN, [])
