"""The rules by name: adding a rule is one module in ``core/rules/`` and one line in ``RULES``.

Every rule class carries its own metadata (``core.rules.base.Verifier``); the registry only lists
them, in the order pages, tables and the command line show them.  Importing this module imports the
rule modules, which need numpy alone: ``lp_optimal`` imports the LP solver (scipy) only when it is
instantiated.
"""
from __future__ import annotations

from core.rules.base import Verifier, VerifierError
from core.rules.best_of_k import BestOfKBV
from core.rules.block import BV
from core.rules.lp_optimal import LPOptimal
from core.rules.otv import OTV
from core.rules.rbv import RBV
from core.rules.specinfer import SpecInfer
from core.rules.spectr import SpecTr
from core.rules.spectr_gbv import SpecTrGBV
from core.rules.td_optimal import TDOptimal
from core.rules.token_level import SD
from core.rules.traversal import Traversal

#: Every rule, in display order.  One line per rule.
RULES: tuple[type[Verifier], ...] = (
    SD,
    BV,
    SpecTr,
    SpecInfer,
    SpecTrGBV,
    RBV,
    BestOfKBV,
    Traversal,
    OTV,
    TDOptimal,
    LPOptimal,
)

REGISTRY: dict[str, type[Verifier]] = {cls.name: cls for cls in RULES}


def get_verifier(name: str, **context) -> Verifier:
    """Instantiate a rule by name.  Model-dependent rules (``lp_optimal``) take their context
    (toy models, K, L) as keyword arguments."""
    try:
        cls = REGISTRY[name]
    except KeyError:
        raise VerifierError(f"unknown method {name!r}; choose one of {', '.join(sorted(REGISTRY))}") from None
    return cls(**context)


def make_verifier(name: str, draft=None, target=None, K: int | None = None,
                  L: int | None = None) -> Verifier:
    """Instantiate a rule by name, handing the toy models to the rules that need them."""
    cls = REGISTRY.get(name)
    if cls is not None and cls.needs_models:
        return get_verifier(name, draft=draft, target=target, K=K, L=L)
    return get_verifier(name)


def method_names() -> list[str]:
    """The registered rules' names, in display order."""
    return list(REGISTRY)
