"""Small formatting helpers shared by the pages: numbers, and methods by the metadata of their rule
class (``core.rules.registry.REGISTRY``)."""
from __future__ import annotations

import math
import re

from core.rules.registry import REGISTRY, method_names


def fmt(x, digits: int = 4) -> str:
    """``x`` with ``digits`` decimals; a dash for a missing or non-finite value."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return f"{x:.{digits}f}"


def all_methods() -> list[str]:
    """Every registered rule's name, in display order."""
    return list(method_names())


def label(method: str) -> str:
    """The rule's long name, for legends and tables."""
    return REGISTRY[method].label


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>~$|#])")


def escape_markdown(text: str) -> str:
    """``text`` with Markdown's special characters backslash-escaped, so that ``st.error`` and friends
    show it as written (``__init__`` stays ``__init__``, ``_x_`` is not italic)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)
