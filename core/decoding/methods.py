"""Which verification rules the real decoder runs: read from each rule's own metadata.

A rule with ``needs_models`` is built from the toy models themselves (``lp_optimal`` solves an LP
over their whole distributions), so it cannot verify drafts from a real language model.
"""
from __future__ import annotations

from core.errors import DecodingError
from core.rules.registry import ALIASES, REGISTRY, chains_rules


def decoder_methods() -> list[str]:
    """The registered rules, in display order, less those that need toy models and those that run on
    their engine's token trees only (``Verifier.runs_on`` without K i.i.d. chains: the decoder's
    comparisons start from K i.i.d. chains)."""
    return [m for m in chains_rules() if not REGISTRY[m].needs_models]


def check_method(method: str) -> None:
    """Raise ``DecodingError`` unless the real decoder can run ``method`` (a rule's name, or an
    alias such as ``rrs``)."""
    if ALIASES.get(method, method) not in REGISTRY:
        raise DecodingError(f"unknown method {method!r}; choose one of {', '.join(decoder_methods())} "
                            f"(or {', '.join(ALIASES)})")
    if REGISTRY[ALIASES.get(method, method)].needs_models:
        raise DecodingError(f"method {method!r} needs toy models (it is built from their whole "
                            "distributions) and is not available in the real decoder")
