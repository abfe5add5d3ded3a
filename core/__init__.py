"""Multi-draft block verification for speculative decoding: rules, exact analysis, bounds.

Notation follows ``shared/spec/verification.md``: p is the draft model, q the target.  This package
never imports streamlit or plotly; torch is imported only by the real decoder (``core.decoder``), so
that the exact laboratory starts quickly.
"""
from .tree import DraftBlock, Node
from .trace import Outcome, Test, Trace, Verdict
from .verifier import REGISTRY, Verifier, VerifierError, get_verifier, method_names

__all__ = ["DraftBlock", "Node", "Outcome", "Test", "Trace", "Verdict", "REGISTRY", "Verifier",
           "VerifierError", "get_verifier", "method_names"]
