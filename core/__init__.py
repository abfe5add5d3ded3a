"""Multi-draft block verification for speculative decoding: rules, exact analysis, bounds, decoding.

p is the draft model, q the target (``docs/maths.md``).  The sub-packages are the layers, each
importing only from those listed before it (``tests/test_imports.py`` enforces it):

==================  ==================================================================================
``core.errors``     the one error family (the decoder's errors included)
``core.data``       token trees (nodes, shapes, the draft laws' registry), what a rule returns
                    (verdicts and their traces), coins (seeded sampling and exact enumeration),
                    distributions
``core.bounds``     bounds on E[τ]: closed forms (numpy) apart from the LPs (scipy)
``core.rules``      the ``Verifier`` interface, one module per rule, the registry
``core.analysis``   exact laws, Monte Carlo, Algorithm 2 compensation, gain by depth, a mismatched draft law
``core.decoding``   real causal-LM pairs (torch, transformers): propose, score, verify, commit
``core.bench``      decoder benchmarks
``core.training``   the SmolLM2 draft's trainer
``core.sweep``      rule leaderboards over seeded families, on Dask
``core.claims``     claims from papers and trackers, by source, each with a computed verdict
``core.cli``        ``python -m core ...``
``core.__main__``   the entry point above the command line
==================  ==================================================================================

This package never imports streamlit or plotly.  ``import core`` and listing the rules
(``method_names()``) import numpy alone: neither scipy nor torch.
"""
from core.data.laws import LAWS, get_law
from core.data.shapes import Shape
from core.data.token_tree import TokenTree
from core.data.outcome import Outcome, Test, Trace, Verdict
from core.data.nodes import Node
from core.rules.registry import REGISTRY, Verifier, VerifierError, get_verifier, method_names

__all__ = ["Node", "Outcome", "Test", "Trace", "Verdict", "REGISTRY", "Verifier",
           "VerifierError", "get_verifier", "method_names", "LAWS", "Shape", "TokenTree", "get_law"]
