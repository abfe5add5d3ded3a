"""Bounds on E[τ] for K i.i.d. drafts of length L, and for token trees of any shape and law:
closed forms (numpy) apart from the LPs (scipy).

- ``core.bounds.sizes``: limits, LP sizes priced before they are built, multiset enumeration;
- ``core.bounds.closed_form``: the single-token optimum (sorted min-cut), claimed E_CIC, the greedy
  relaxation;
- ``core.bounds.node_lp``: the optimal lossless-verifier LP in node form, one inequality per
  antichain of the prefix tree, for K i.i.d. chains and every token tree and law, certified
  (``core.bounds.coverage``: the drafted tree's coverage; ``core.bounds.antichains``: the exact
  separation; ``core.bounds.certify``: exact-arithmetic certificates);
- ``core.bounds.lp``: the same LP in its per-set form, whose plan ``lp_optimal`` samples (and the
  own-law LP of a token tree), the acausal coupling bound, the single-token LP, solved by
  scipy/HiGHS;
- ``core.bounds.sequoia``: Sequoia's dynamic programme, the best tree of a node budget under
  positional acceptance (numpy; import it from its module).

The names of all of them are importable from here.  The LP names are resolved on first use (PEP 562
``__getattr__``), so ``core.bounds`` and its closed forms never import scipy (about 2.5 s) unless an
LP is asked for.
"""
from core.bounds.closed_form import (claimed_cic, greedy_relaxation, lcp_matrix, single_token_bound,
                                     single_token_optimum, topk_tree_value)
from core.bounds.sizes import (NODE_LIMIT, PATH_LIMIT, SIZE_LIMIT, WORK_LIMIT, BoundsTooLarge, LPSize,
                               check_node_size, check_size, check_tree_size, enumerate_multisets, lp_size,
                               multiset_probabilities, node_lp_seconds, num_multisets, one_minus_pow,
                               prefix_nodes, tree_lp_size)

_LP_NAMES = ("LPFailed", "OptimalPlan", "optimal_lp", "optimal_tree_lp", "acausal_bound", "single_token_lp")
_NODE_NAMES = ("NodeOptimum", "NotConverged", "lp_optimum", "tree_lp_optimum")

__all__ = ["claimed_cic", "greedy_relaxation", "lcp_matrix", "single_token_bound", "single_token_optimum",
           "topk_tree_value", "PATH_LIMIT", "SIZE_LIMIT", "WORK_LIMIT", "BoundsTooLarge", "LPSize",
           "check_size", "check_tree_size", "enumerate_multisets", "lp_size", "multiset_probabilities",
           "num_multisets", "one_minus_pow", "tree_lp_size", "NODE_LIMIT", "check_node_size",
           "node_lp_seconds", "prefix_nodes", *_LP_NAMES, *_NODE_NAMES]


def __getattr__(name: str):
    if name in _LP_NAMES:
        from core.bounds import lp
        return getattr(lp, name)
    if name in _NODE_NAMES:
        from core.bounds import node_lp
        return getattr(node_lp, name)
    raise AttributeError(f"module 'core.bounds' has no attribute {name!r}")
