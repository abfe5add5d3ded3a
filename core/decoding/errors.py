"""The decoder's one error: bad decoder arguments or an impossible generation."""
from __future__ import annotations

from core.errors import ExplorerError


class DecodingError(ExplorerError, ValueError):
    """Bad decoder arguments or an impossible generation; the message is one sentence."""
