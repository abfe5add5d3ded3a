"""The optimal-verifier LP in node form (``core.bounds.node_lp``): one inequality per antichain.

Every expected number comes from somewhere else: the contract's exact test vectors, the per-set
LP of ``core.bounds.lp`` (a different formulation, solved by another HiGHS call), brute force over
every antichain of small prefix trees with the coverage read off the enumerated draft law
(``core.data.drafting.node_set_law``), and exact rational certificates.
"""
from __future__ import annotations

import itertools
import json
from fractions import Fraction

import numpy as np
import pytest

from core.bounds import BoundsTooLarge, NotConverged, lp_optimum, optimal_lp, optimal_tree_lp, tree_lp_optimum
from core.bounds.antichains import antichain_of, hulls, violations
from core.bounds.certify import certify_node_lp, certify_tree_lp
from core.bounds.coverage import prefix_tree
from core.bounds.node_lp import CUT_TOLERANCE, feasible_point
from core.bounds.sizes import NODE_LIMIT, check_node_size, prefix_nodes
from core.cli import main as cli_main
from core.data.drafting import node_set_law
from core.data.laws import IID_LAW, LAWS, get_law
from core.data.shapes import Shape
from toy_models import PRESETS, random_pair

TOL = 1e-9
BIN, TRI = PRESETS["binary-toy"], PRESETS["three-token-toy"]


def frac(x: float) -> str:
    return str(Fraction(x).limit_denominator(100_000))


# ------------------------------------------------------------------------------------------------
# The contract's exact values
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("K, expected", [(1, "11/9"), (2, "131/81"), (3, "1351/729"), (4, "12671/6561")])
def test_binary_toy_chains(K, expected):
    result = lp_optimum(BIN.draft, BIN.target, K, 2)
    assert frac(result.value) == expected
    assert result.lower <= result.upper < result.lower + 1e-12
    cert = certify_node_lp(BIN.draft, BIN.target, Shape.chains_of(K, 2), IID_LAW, result)
    assert str(cert.exact) == expected and cert.primal == cert.dual


# trees.md §5: the lp column, every shape and law
TREE_VECTORS = [
    (BIN, "chains", (2, 2), {"iid": "131/81", "wor": "17/9", "topk": "17/9", "greedy": "17/9"}),
    (BIN, "tree", (2, 1), {"iid": "131/81", "wor": "17/9", "topk": "4/3", "greedy": "17/9"}),
    (BIN, "tree", (2, 2), {"iid": "1271/729", "wor": "2", "topk": "2", "greedy": "2"}),
    (TRI, "chains", (2, 2), {"iid": "1861/1296", "wor": "701/432", "topk": "1", "greedy": "3/2"}),
    (TRI, "tree", (2, 1), {"iid": "1861/1296", "wor": "701/432", "topk": "7/12", "greedy": "3/2"}),
    (TRI, "tree", (3, 1), {"iid": "953/576", "wor": "17/9", "topk": "7/6", "greedy": "17/9"}),
    (TRI, "tree", (2, 2), {"iid": "72331/46656", "wor": "259/144", "topk": "3/4", "greedy": "29/18"}),
    (TRI, "tree", (1, 3), {"iid": "559/432", "wor": "4/3", "topk": "1/3", "greedy": "4/3"}),
    (TRI, "chains", (3, 2), {"iid": "953/576"}),
]


@pytest.mark.parametrize("preset, kind, b, law, expected",
                         [(p, k, b, law, v) for p, k, b, vals in TREE_VECTORS for law, v in vals.items()])
def test_contract_tree_vectors(preset, kind, b, law, expected):
    shape = Shape.chains_of(b[0], len(b)) if kind == "chains" else Shape.tree(b)
    result = tree_lp_optimum(preset.draft, preset.target, shape, law)
    assert frac(result.value) == expected
    cert = certify_tree_lp(preset.draft, preset.target, shape, law, solved=result)
    assert cert.certified and str(cert.exact) == expected


# ------------------------------------------------------------------------------------------------
# Against the per-set LP, both ways, on seeded families
# ------------------------------------------------------------------------------------------------

CHAINS = [(kind, V, K, L, seed) for kind in ("iid", "markov", "table") for (V, K, L) in
          ((2, 2, 2), (2, 3, 3), (3, 2, 2), (3, 3, 2), (2, 2, 4), (4, 2, 2), (3, 2, 3), (2, 5, 2), (5, 3, 1))
          for seed in (0, 1)]


@pytest.mark.parametrize("kind, V, K, L, seed", CHAINS)
def test_equals_per_set_lp_on_chains(kind, V, K, L, seed):
    draft, target = random_pair(kind, V, alpha=1.0, mix=[0.3, 1.0][seed], seed=seed * 7 + V, depth=L)
    per_set = optimal_lp(draft, target, K, L).value
    for method in ("tangents", "cuts"):
        node = lp_optimum(draft, target, K, L, method=method)
        # the node form's certified bracket holds the per-set optimum, and they agree to 1e-9
        assert node.lower - TOL <= per_set <= node.upper + TOL
        assert abs(node.value - per_set) <= TOL


TREES = [(V, b, law, seed) for V in (2, 3) for b in ((2, 1), (1, 2), (2, 2), (3, 1)) for law in LAWS
         for seed in (0, 1) if law == "iid" or max(b) <= V]


@pytest.mark.parametrize("V, b, law, seed", TREES)
def test_equals_per_set_lp_on_trees(V, b, law, seed):
    draft, target = random_pair("markov", V, alpha=1.0, mix=0.8, seed=100 + seed)
    shape = Shape.tree(b)
    per_set = optimal_tree_lp(draft, target, shape, law, general=True).value
    node = tree_lp_optimum(draft, target, shape, law)
    assert node.lower - TOL <= per_set <= node.upper + TOL
    assert abs(node.value - per_set) <= TOL


# ------------------------------------------------------------------------------------------------
# The coverage and the separation, against brute force over every antichain
# ------------------------------------------------------------------------------------------------

def antichains(tree, u: int = 0):
    """Every antichain of nodes below ``u`` (u excluded), as tuples."""
    options = []
    for c in tree.kids[u]:
        options.append([()] + [(c,)] + [a for a in antichains(tree, c) if a])
    for combo in itertools.product(*options):
        yield tuple(sorted(x for part in combo for x in part))


def drafted_coverage(draft, shape, law, tree):
    """g(A) = P(the drafted tree meets A) from the enumerated law of drafted node sets."""
    law_t = node_set_law(draft.cond, shape, get_law(law))
    paths = {}
    for u in range(1, tree.N):
        path, v = [], u
        while v > 0:
            path.append(int((v - tree.children(int(tree.parent[v])).start)))
            v = int(tree.parent[v])
        paths[u] = tuple(reversed(path))

    def g(A):
        return sum(pr for leaves, pr in law_t.items()
                   if any(leaf[:len(paths[a])] == paths[a] for leaf in leaves for a in A))
    return g


SEPARATION = [(Shape.chains_of(2, 2), "iid"), (Shape.chains_of(3, 3), "iid"), (Shape.tree((2, 2)), "iid"),
              (Shape.tree((2, 1)), "wor"), (Shape.tree((2, 2)), "wor"), (Shape.tree((1, 2)), "greedy"),
              (Shape.tree((2, 2)), "greedy"), (Shape.tree((2, 2)), "topk"), (Shape.chains_of(2, 2), "wor")]


@pytest.mark.parametrize("shape, law", SEPARATION)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_separation_is_exact(shape, law, seed):
    V = 2 if shape.L == 3 else 3
    if law != "iid" and max(shape.branching) > V:
        pytest.skip("the law needs more tokens")
    draft, target = random_pair("markov", V, alpha=1.0, mix=0.9, seed=seed)
    tree = prefix_tree(draft, target, shape, law)
    g = drafted_coverage(draft, shape, law, tree)
    rng = np.random.default_rng(seed)
    W = np.concatenate([[1.0], rng.uniform(0, 1, tree.N - 1) * tree.p_joint[1:] * 3])
    brute = max((sum(W[a] for a in A) - g(A), A) for A in antichains(tree))
    for A in [brute[1]] + [(u,) for u in range(1, tree.N)]:
        assert abs(tree.hit(A) - g(A)) <= 1e-12          # the miss recursion is the drafted law's
    hs = hulls(tree, W)
    v, i = violations(hs)[0]
    assert abs(v - brute[0]) <= 1e-12                      # the most violated antichain, exactly
    A = antichain_of(tree, hs, i)
    assert abs(sum(W[a] for a in A) - g(A) - brute[0]) <= 1e-12


def test_feasible_point_meets_every_antichain():
    draft, target = random_pair("markov", 3, alpha=1.0, mix=1.0, seed=5)
    shape = Shape.tree((2, 2))
    result = tree_lp_optimum(draft, target, shape, "iid")
    g = drafted_coverage(draft, shape, "iid", result.tree)
    W = result.W
    assert all(sum(W[a] for a in A) <= g(A) + 1e-15 for A in antichains(result.tree))
    child = np.arange(1, result.tree.N)
    assert np.all(W[child] <= result.tree.q_edge[child] * W[result.tree.parent[child]] + 1e-15)
    assert result.lower == pytest.approx(W[1:].sum(), abs=0)
    # perturbed upwards, the point is repaired back under every inequality
    repaired = feasible_point(result.tree, W * 1.2)
    assert all(sum(repaired[a] for a in A) <= g(A) + 1e-15 for A in antichains(result.tree))


# ------------------------------------------------------------------------------------------------
# Past the old frontier, bounds, refusals
# ------------------------------------------------------------------------------------------------

def test_many_drafts_cost_nothing():
    draft, target = random_pair("markov", 3, alpha=1.0, mix=1.0, seed=3)
    values = [lp_optimum(draft, target, K, 3).value for K in (1, 2, 4, 8, 16, 64)]
    assert all(b >= a - TOL for a, b in zip(values, values[1:]))     # more drafts never hurt
    assert values[0] == pytest.approx(optimal_lp(draft, target, 1, 3).value, abs=TOL)   # K = 1: BV
    assert values[-1] <= 3 + TOL


def test_unconverged_reports_bounds_not_a_value():
    draft, target = random_pair("markov", 4, alpha=1.0, mix=1.0, seed=443)
    result = lp_optimum(draft, target, 4, 3, method="cuts", max_rounds=2)
    assert not result.converged and result.lower < result.upper
    with pytest.raises(NotConverged) as err:
        result.value
    assert err.value.lower == result.lower and err.value.upper == result.upper
    assert "did not converge in 2 rounds: the optimum lies between" in str(err.value)
    full = lp_optimum(draft, target, 4, 3).value
    assert result.lower - TOL <= full <= result.upper + TOL


def test_size_refused_up_front():
    N = prefix_nodes(11, 3)
    assert N > NODE_LIMIT
    with pytest.raises(BoundsTooLarge, match=f"has {N:,} nodes .* it would take up to about"):
        check_node_size(11, Shape.chains_of(4, 3), IID_LAW)
    with pytest.raises(BoundsTooLarge, match="must combine up to"):
        check_node_size(6, Shape.tree((2, 2, 2)), get_law("wor"))


def test_not_rational_is_said_not_failed():
    draft, target = random_pair("markov", 3, alpha=1.0, mix=1.0, seed=3)
    cert = certify_tree_lp(draft, target, Shape.chains_of(2, 2), IID_LAW)
    assert not cert.certified and "no fraction of denominator" in cert.reason
    assert cert.value == pytest.approx(optimal_lp(draft, target, 2, 2).value, abs=TOL)


def test_cli_bound_lp(capsys, tmp_path):
    draft, target = random_pair("markov", 3, alpha=1.0, mix=1.0, seed=343)
    (tmp_path / "p.json").write_text(json.dumps(draft.to_json()))
    (tmp_path / "q.json").write_text(json.dumps(target.to_json()))
    assert cli_main(["bound", "--draft", str(tmp_path / "p.json"), "--target", str(tmp_path / "q.json"),
                     "--K", "4", "--L", "3", "--kind", "lp", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["converged"] and out["lower"] <= out["value"] <= out["upper"] <= out["lower"] + TOL
    assert out["nodes"] == 40 and out["certified"] is False and "no fraction" in out["not_certified_because"]
    assert out["value"] == pytest.approx(lp_optimum(draft, target, 4, 3).value, abs=1e-12)
    assert cli_main(["bound", "--preset", "binary-toy", "--K", "64", "--L", "2", "--kind", "lp", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["value_fraction"] == "2" and out["certified"]
    assert cli_main(["bound", "--preset", "binary-toy", "--K", "3", "--L", "2", "--kind", "lp"]) == 0
    assert "1351/729" in capsys.readouterr().out
    assert cli_main(["bound", "--preset", "binary-toy", "--K", "2000", "--L", "2", "--kind", "lp"]) == 2
    assert "K must be between 1 and 1024" in capsys.readouterr().err
