"""Importing this module registers every verification rule (see ``core.verifier.REGISTRY``)."""
from . import token_level, block, spectr, specinfer, spectr_gbv, rbv, best_of_k  # noqa: F401

try:  # the LP-optimal verifier needs scipy; it is toy-model only
    from . import lp_optimal  # noqa: F401
except ImportError:  # pragma: no cover - written alongside
    pass
