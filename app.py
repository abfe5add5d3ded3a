"""The explorer for multi-draft block verification in speculative decoding.

Run with ``streamlit run app.py``.  This file is only the router: every page lives in ``pages/``,
every figure in ``figures.py``, every number comes from ``core``.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:  # `streamlit run app.py` from elsewhere still finds core/ and ui.py
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from pages.ui import legacy_ui as ui  # noqa: E402

st.set_page_config(page_title="Multi-draft block verification explorer", page_icon=":material/account_tree:",
                   layout="wide", initial_sidebar_state="expanded")
ui.keep_state()

pages = {
    "Learn": [
        st.Page(ui.PAGE_START, title="Start here", icon=":material/flag:", default=True),
        st.Page(ui.PAGE_LAB, title="Toy laboratory", icon=":material/science:"),
        st.Page(ui.PAGE_STEP, title="One iteration, step by step", icon=":material/account_tree:"),
    ],
    "Real models": [
        st.Page(ui.PAGE_DECODER, title="Live decoder", icon=":material/bolt:"),
        st.Page(ui.PAGE_SWEEPS, title="Sweeps", icon=":material/show_chart:"),
    ],
    "Check the paper": [
        st.Page(ui.PAGE_CLAIMS, title="SpecTr-GBV claims", icon=":material/gavel:"),
    ],
}
page = st.navigation(pages)
try:
    page.run()
except Exception as exc:  # noqa: BLE001 - last line of defence: never a traceback on the page
    st.error(ui.explain(exc, "this page"))
