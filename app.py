"""The explorer for multi-draft block verification in speculative decoding.

Run with ``streamlit run app.py``.  This file is only the router: every page lives in ``pages/`` and
is defined once in ``pages/ui/routing.py``, every figure in ``pages/ui/figures/``, every number
comes from ``core``.  It is also the server (``st.App``, at the end), so that the server's start-up
can import what the first page needs.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:  # `streamlit run app.py` from elsewhere still finds core/ and pages/
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from core.rules.registry import LOAD_ERRORS  # noqa: E402
from pages.ui import error_boundary, prewarm, routing  # noqa: E402
from pages.ui.text import escape_markdown  # noqa: E402


def main() -> None:
    st.set_page_config(page_title="Multi-draft block verification explorer", page_icon=":material/account_tree:",
                       layout="wide", initial_sidebar_state="expanded")
    routing.keep_state()
    page = st.navigation({
        "Learn": [routing.start(), routing.toy_lab(), routing.draft_trees(), routing.one_step()],
        "Real models": [routing.live_decoder(), routing.sweeps()],
        "Check the paper": [routing.claims(), routing.leaderboard()],
    })
    if LOAD_ERRORS:   # a rule EXPLORER_RULES names was refused: one sentence, and every page goes on
        st.sidebar.error(escape_markdown(LOAD_ERRORS[0]))
    if routing.needs_decoder(page):
        prewarm.want()
    try:
        with prewarm.ACTIVITY.script():
            page.run()
    except Exception as exc:  # noqa: BLE001 - last line of defence: never a traceback on the page
        error_boundary.show(exc, "this page")
    finally:
        # Once per process: import what the other pages need, each module once no script is running
        # (pages.ui.prewarm), so that neither that import nor the first page to need it is slowed.
        prewarm.start()


if __name__ == "app":
    # `streamlit run app.py` finds this ``st.App`` and imports this file as the module ``app`` to
    # serve it: the server, whose start-up (``prewarm.lifespan``) imports what the first page needs
    # before it answers; each reader's script run then runs this file as ``__main__``, below.
    app = st.App(__file__, lifespan=prewarm.lifespan)
elif __name__ != "__mp_main__":
    # A process started by multiprocessing's "spawn" (the Dask cluster's workers, started while a page
    # runs) re-runs the parent's main module under that name: there is no app to route there, and no
    # reader whose pages need importing.
    main()
