"""The decoding layer's errors, importable without torch (the command line checks its arguments
with them before loading anything heavy)."""
from __future__ import annotations

from core.errors import ExplorerError


class DecodingError(ExplorerError, ValueError):
    """Bad decoder arguments or an impossible generation; the message is one sentence."""


class PairError(ExplorerError, ValueError):
    """A model pair cannot be loaded or used together; the message is one sentence."""
