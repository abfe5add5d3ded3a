"""Timing of the exact laboratory on token trees: rrs, traversal and lp_optimal for every draft law.

    python -m benchmarks.trees_lab [--json] [--quick]
    python -m benchmarks.trees_lab --orders       # iid: one round per draw against first appearance

For each V of the grid and each law, the shapes (chains K×L and static trees b with L ≤ 4, b_d ≤ 6)
whose drafted trees number between 1,024 and 4,096 (``tree_outcome_count``; for ``topk``, whose
tree is unique, the widest tree b = (min(V, 6), …)), and V^L ≤ 4,096 as for K i.i.d. drafts, are
timed on a seeded Markov pair: the slowest shape per (V, law,
rule) is reported with its seconds, the estimate the laboratory refuses by
(``estimated_seconds``), for lp_optimal the seconds of the LP solve apart, and how many shapes of
that (V, law) the laboratory refused up front (too large an LP).  Figures, not
assertions: the machine is shared and noisy, so no unit test times anything.  The goal: every
(shape, law, rule) within 1 s.
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
import time

import toy_models as tm
from core.analysis.exact import estimated_seconds, exact_analysis
from core.data.laws import IID_LAW, LAWS, TOPK_LAW, DraftLaw, is_iid_chains, tree_outcome_count
from core.data.shapes import Shape
from core.errors import USER_ERRORS
from core.rules.registry import make_verifier, resolve

GRID_V = (2, 3, 4, 8, 16, 64)
RULES = ("rrs", "traversal", "lp_optimal")


def shapes():
    for L in range(1, 5):
        for b in itertools.product(range(1, 7), repeat=L):
            yield Shape.tree(b)
    for K, L in itertools.product(range(1, 7), range(1, 7)):
        yield Shape.chains_of(K, L)


def configurations(quick: bool):
    for V in GRID_V[:3] if quick else GRID_V:
        for law in LAWS.values():
            for shape in shapes():
                if is_iid_chains(shape, law) or (law is not IID_LAW and max(shape.branching) > V):
                    continue
                n = tree_outcome_count(V, shape, law)
                if V ** shape.L > 4096:      # as for K i.i.d. drafts: the law lives on Ω^(L+1)
                    continue
                widest = not shape.chains and shape.branching == (min(V, 6),) * shape.L
                if (law is TOPK_LAW and widest) or 1024 <= n <= 4096:
                    yield V, shape, law, n


def time_one(V: int, shape: Shape, law: DraftLaw, rule: str) -> dict:
    """Seconds of make_verifier + exact_analysis (0 and ``refused`` when the laboratory refuses)."""
    draft, target = tm.random_pair("markov", V, alpha=0.8, mix=0.5, seed=V, depth=shape.L)
    row = {"V": V, "shape": shape.label, "law": law.name, "rule": rule,
           "outcomes": tree_outcome_count(V, shape, law), "seconds": 0.0, "solve": 0.0,
           "estimate": estimated_seconds(resolve(rule), V, shape=shape, law=law), "refused": False}
    start = time.perf_counter()
    try:
        verifier = make_verifier(rule, draft, target, shape=shape, law=law)
        row["solve"] = time.perf_counter() - start
        exact_analysis(verifier, draft, target, shape=shape, law=law)
    except USER_ERRORS:
        row["refused"] = True
    row["seconds"] = time.perf_counter() - start
    return row


SHAPES = [Shape.chains_of(2, 2), Shape.chains_of(3, 2), Shape.tree((2, 2)), Shape.tree((1, 3)),
          Shape.tree((3, 1)), Shape.tree((2, 1)), Shape.tree((1, 2)), Shape.tree((2,)), Shape.tree((3,)),
          Shape.tree((1, 1, 2))]


def compare_orders(n: int = 80, seed: int = 80) -> dict:
    """For ``iid``, E[τ] with one round per draw (S = p) against first appearance (S = p without the
    visited tokens), for rrs and traversal, on n seeded instances (V ≤ 3, budget ≤ 6; docs/maths.md,
    "traversal on token trees"): how often each order accepts more, by more than 1e-12."""
    import numpy as np

    from core.data.laws import depth_policies
    from core.rules.specinfer import rrs_output_law
    from core.rules.traversal_walk import traversal_output_law

    def tau(law):
        return sum((len(u) - 1) * m for u, m in law.items())

    rng = np.random.default_rng(seed)
    counts = {"rrs": [0, 0], "traversal": [0, 0]}          # [per draw more, first appearance more]
    for i in range(n):
        V, shape = int(rng.integers(2, 4)), SHAPES[i % len(SHAPES)]
        draft, target = tm.random_pair(("iid", "markov", "table")[i % 3], V,
                                       alpha=float(rng.choice([0.3, 1, 3])), mix=float(rng.uniform(0.1, 0.9)),
                                       seed=int(rng.integers(1 << 30)), depth=shape.L)
        per, first = (depth_policies(shape, IID_LAW, per_draw) for per_draw in (True, False))
        for rule, run in (("rrs", lambda pol: rrs_output_law(pol, draft, target, shape.branching)),
                          ("traversal", lambda pol: traversal_output_law(pol, draft, target, shape.K,
                                                                         shape.L, shape.branching))):
            a, b = tau(run(per)[0]), tau(run(first)[0])
            counts[rule][0] += a > b + 1e-12
            counts[rule][1] += b > a + 1e-12
    return {"instances": n, **{rule: {"per_draw_more": c[0], "first_appearance_more": c[1]}
                               for rule, c in counts.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help="V ≤ 4 only")
    parser.add_argument("--orders", action="store_true", help="compare the two exact iid orders instead")
    args = parser.parse_args()
    if args.orders:
        print(json.dumps(compare_orders()))
        return
    worst: dict[tuple, dict] = {}
    refused: dict[tuple, int] = {}
    for V, shape, law, _ in configurations(args.quick):
        for rule in RULES:
            row = time_one(V, shape, law, rule)
            if not args.json:
                print(f"  {V} {shape.label} {law.name} {rule}: {row['seconds']:.3f} s", file=sys.stderr, flush=True)
            key = (V, law, rule)
            refused[key] = refused.get(key, 0) + row["refused"]
            if key not in worst or row["seconds"] > worst[key]["seconds"]:
                worst[key] = row
    rows = [dict(row, refusals=refused[key]) for key, row in worst.items()]
    if args.json:
        print(json.dumps({"rows": rows}))
        return
    print(f"{'V':>3} {'law':7} {'rule':10} {'slowest shape':18} {'trees':>6} {'seconds':>8} "
          f"{'LP solve':>8} {'estimate':>8} {'refused':>7}")
    for r in rows:
        print(f"{r['V']:>3} {r['law']:7} {r['rule']:10} {r['shape']:18} {r['outcomes']:>6} "
              f"{r['seconds']:8.3f} {r['solve'] if r['rule'] == 'lp_optimal' else 0:8.3f} "
              f"{r['estimate']:8.3f} {r['refusals']:>7}")


if __name__ == "__main__":
    main()
