"""The error boundary: any exception becomes one sentence on the page, never a traceback.

An error of the library's family (``core.errors.USER_ERRORS``) is a message for the user and is shown
as it is; anything else is unexpected (a bug) and is shown as one sentence that names its type.
"""
from __future__ import annotations

import contextlib

import streamlit as st

from core.errors import USER_ERRORS
from pages.ui.text import escape_markdown


def one_sentence(exc: BaseException) -> str:
    """The first line of the exception's message (its type name when empty), capitalised and ended
    with a full stop."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    text = text[0].upper() + text[1:] if text else text
    return text if text.endswith((".", "!", "?")) else text + "."


def explain(exc: BaseException, what: str) -> str:
    """The sentence to show for an exception raised while computing ``what``."""
    if isinstance(exc, USER_ERRORS):
        return one_sentence(exc)
    if isinstance(exc, MemoryError):
        return f"Not enough memory to compute {what}; lower V, K or L."
    cause = type(exc).__name__ + (f": {one_sentence(exc).rstrip('.!?')}" if str(exc).strip() else "")
    return f"Computing {what} failed unexpectedly ({cause})."


def show(exc: BaseException, what: str, prefix: str = "") -> None:
    """``explain(exc, what)`` as an error box, as plain text: a message that quotes code (``__init__``,
    ``_name_``) is never read as Markdown."""
    st.error(escape_markdown(f"{prefix}{explain(exc, what)}"))


@contextlib.contextmanager
def guard(what: str = "this section"):
    """Run a section; any exception becomes one st.error sentence and the page goes on."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - the boundary is the point
        show(exc, what)
