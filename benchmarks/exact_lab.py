"""Timing of the exact laboratory: every method's exact analysis and the optimal-verifier LP.

    python -m benchmarks.exact_lab [--json]

Reports wall-clock seconds per method on seeded Markov toy pairs for every (V, K, L) with
V^(K·L) ≤ 4096 on a grid, and the V = 3, K = 3, L = 3 total.  Figures, not assertions: the machine
is shared and noisy, so no unit test times anything.
"""
from __future__ import annotations

import argparse
import json
import time

import toy_models as tm
from core.bounds import lp_optimum
from core.analysis.exact import exact_analysis
from core.rules.registry import make_verifier, method_names

GRID = [(4, 1, 6), (8, 1, 4), (16, 1, 3), (64, 1, 2), (2, 1, 12), (2, 2, 6), (2, 3, 4), (2, 4, 3),
        (2, 6, 2), (4, 2, 3), (4, 3, 2), (4, 6, 1), (8, 2, 2), (16, 3, 1), (3, 3, 3)]


def time_config(V: int, K: int, L: int) -> dict:
    draft, target = tm.random_pair("markov", V, alpha=0.8, mix=0.5, seed=V * 100 + K * 10 + L)
    row = {"V": V, "K": K, "L": L, "seconds": {}}
    for name in method_names():
        start = time.perf_counter()
        verifier = make_verifier(name, draft=draft, target=target, K=K, L=L)
        exact_analysis(verifier, draft, target, K, L)
        row["seconds"][name] = time.perf_counter() - start
    start = time.perf_counter()
    lp_optimum(draft, target, K, L)
    row["seconds"]["LP"] = time.perf_counter() - start
    row["total"] = sum(row["seconds"].values())
    row["max"] = max(row["seconds"].values())
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [time_config(*cfg) for cfg in GRID]
    if args.json:
        print(json.dumps({"rows": rows}))
        return
    names = list(rows[0]["seconds"])
    print("V  K  L  V^(KL)  " + "  ".join(f"{n[:12]:>12s}" for n in names) + "   max   total")
    for r in rows:
        print(f"{r['V']:<2d} {r['K']:<2d} {r['L']:<2d} {r['V'] ** (r['K'] * r['L']):>6d}  "
              + "  ".join(f"{r['seconds'][n]:12.3f}" for n in names) + f"  {r['max']:.3f}  {r['total']:.3f}")


if __name__ == "__main__":
    main()
