"""The explorer for multi-draft block verification in speculative decoding.

Run with ``streamlit run app.py``.  This file is only the router: every page lives in ``pages/`` and
is defined once in ``pages/ui/routing.py``, every figure in ``pages/ui/figures.py``, every number
comes from ``core``.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:  # `streamlit run app.py` from elsewhere still finds core/ and pages/
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from pages.ui import errors, routing  # noqa: E402

st.set_page_config(page_title="Multi-draft block verification explorer", page_icon=":material/account_tree:",
                   layout="wide", initial_sidebar_state="expanded")
routing.keep_state()

page = st.navigation({
    "Learn": [routing.start(), routing.toy_lab(), routing.one_step()],
    "Real models": [routing.live_decoder(), routing.sweeps()],
    "Check the paper": [routing.claims(), routing.leaderboard()],
})
try:
    page.run()
except Exception as exc:  # noqa: BLE001 - last line of defence: never a traceback on the page
    errors.show(exc, "this page")
finally:
    # After the first page's script, and the thread waits a few seconds more: importing torch and
    # transformers takes about 4-10 s of CPU holding the interpreter's lock, which would slow the
    # first page a reader opens.
    routing.prewarm_decoder_imports()
