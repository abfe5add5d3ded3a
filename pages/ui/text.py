"""Small formatting helpers shared by the pages: numbers, and methods by the metadata of their rule
class (``core.rules.registry.REGISTRY``)."""
from __future__ import annotations

import math

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
