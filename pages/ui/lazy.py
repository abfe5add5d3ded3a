"""Content a reader has to ask for: an expander whose body is computed and drawn only while open.

A closed ``st.expander`` still renders everything inside it, and some elements are dear to a browser:
a code block loads Streamlit's syntax highlighter, a 1.5 MB script that no chart needs (the "Copy
this configuration" and "Reproduce" boxes: 0.5-1 s of a fresh browser's first render, docs/app.md),
and a chart costs a full Plotly draw each time its figure changes (the live decoder's draft tree,
redrawn after every generation).  Behind ``expander`` they cost nothing until the reader opens the
box, which reruns the page (``on_change="rerun"``) with ``.open`` true.
"""
from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

__all__ = ["expander"]


def expander(label: str, key: str) -> DeltaGenerator | None:
    """The expander ``label`` (its open state under ``key``), or None while it is closed: draw its
    content with ``if (box := lazy.expander(...)) is not None: with box: ...``."""
    box = st.expander(label, key=key, on_change="rerun")
    return box if box.open else None
