"""Bounds on E[τ] for K i.i.d. drafts of length L, and for token trees of any shape and law:
closed forms (numpy) apart from the LPs (scipy).

- ``core.bounds.sizes``: limits, LP sizes priced before they are built, multiset enumeration;
- ``core.bounds.closed_form``: the single-token optimum (sorted min-cut), claimed E_CIC, the greedy
  relaxation;
- ``core.bounds.lp``: the optimal lossless-verifier LP (and the own-law LP of a token tree), the
  acausal coupling bound, the single-token LP, solved by scipy/HiGHS;
- ``core.bounds.sequoia``: Sequoia's dynamic programme, the best tree of a node budget under
  positional acceptance (numpy; import it from its module).

The names of all three are importable from here.  The LP names are resolved on first use (PEP 562
``__getattr__``), so ``core.bounds`` and its closed forms never import scipy (about 2.5 s) unless an
LP is asked for.
"""
from core.bounds.closed_form import (claimed_cic, greedy_relaxation, lcp_matrix, single_token_bound,
                                     single_token_optimum, topk_tree_value)
from core.bounds.sizes import (PATH_LIMIT, SIZE_LIMIT, WORK_LIMIT, BoundsTooLarge, LPSize, check_size,
                               check_tree_size, enumerate_multisets, lp_size, multiset_probabilities,
                               num_multisets, one_minus_pow, tree_lp_size)

_LP_NAMES = ("LPFailed", "OptimalPlan", "optimal_lp", "optimal_tree_lp", "acausal_bound", "single_token_lp")

__all__ = ["claimed_cic", "greedy_relaxation", "lcp_matrix", "single_token_bound", "single_token_optimum",
           "topk_tree_value", "PATH_LIMIT", "SIZE_LIMIT", "WORK_LIMIT", "BoundsTooLarge", "LPSize",
           "check_size", "check_tree_size", "enumerate_multisets", "lp_size", "multiset_probabilities",
           "num_multisets", "one_minus_pow", "tree_lp_size", *_LP_NAMES]


def __getattr__(name: str):
    if name in _LP_NAMES:
        from core.bounds import lp
        return getattr(lp, name)
    raise AttributeError(f"module 'core.bounds' has no attribute {name!r}")
