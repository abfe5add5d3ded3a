"""The one error family of the library.

Every error the library raises on purpose (a bad input, a configuration too large, a model pair that
cannot be used) derives from ``ExplorerError``, and keeps ``ValueError`` (or ``RuntimeError``) as a
second base where callers already catch that.  ``toy_models`` is a leaf that imports nothing from
``core``, so its ``ToyModelError`` stands beside the family: ``USER_ERRORS`` is the tuple the app and
the command line catch to show one sentence (``core.cli.args.report_errors`` maps them to exit
status 2), never a traceback.
"""
from __future__ import annotations

from toy_models import ToyModelError


class ExplorerError(Exception):
    """Base class of every error ``core`` raises on purpose; its message is one sentence for the user."""


class InvalidInput(ExplorerError, ValueError):
    """An argument the caller can correct (a shape, a count, an unknown name); the message says how."""


class DecodingError(ExplorerError, ValueError):
    """Bad decoder arguments or an impossible generation (``core.decoding``); the message is one sentence."""


class PairError(ExplorerError, ValueError):
    """A model pair cannot be loaded or used together (``core.decoding``); the message is one sentence."""


#: What the app and the command line report as one sentence (anything else is a bug).
USER_ERRORS: tuple[type[Exception], ...] = (ExplorerError, ToyModelError)
