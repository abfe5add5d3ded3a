"""Importing this module registers every verification rule (see ``core.verifier.REGISTRY``)."""
from . import token_level, block, spectr, specinfer, spectr_gbv, rbv, best_of_k  # noqa: F401

from . import lp_optimal  # noqa: F401  (toy models only: it samples from the LP's plan)
