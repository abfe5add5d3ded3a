"""The LP optimum in node form against the per-set LP, side by side in one run.

    python -m benchmarks.node_lp [--per-set-seconds 600] [--json]

Each instance is a seeded random Markov pair (p and q drawn independently, Dirichlet(1): the draft
knows nothing of the target, the hardest family), solved in its own process so that its peak
memory is its own: the node form (``core.bounds.lp_optimum``) always, the per-set form
(``core.bounds.optimal_lp``, its size limits lifted) where its multisets number at most
``PER_SET_MULTISETS`` and within ``--per-set-seconds``.  Figures, not assertions: the machine is
shared and noisy, so no unit test times anything (docs/exact_lab.md has the table).
"""
from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time

#: The instances: the issue's table, in its order.
INSTANCES = ((3, 4, 3), (2, 4, 5), (4, 4, 3), (4, 64, 3), (3, 8, 4), (8, 8, 3))
#: The per-set form is attempted up to this many draft multisets (V = 2, K = 4, L = 5 has 52,360).
PER_SET_MULTISETS = 60_000

_CHILD = r"""
import json, resource, sys, time
import toy_models as tm
V, K, L, form = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
draft, target = tm.random_pair("markov", V, alpha=1.0, mix=1.0, seed=1000 * V + 10 * K + L)
from core import bounds
bounds.optimal_lp, bounds.lp_optimum             # imports before the clock
start = time.perf_counter()
if form == "node":
    r = bounds.lp_optimum(draft, target, K, L)
    out = {"value": r.value, "lower": r.lower, "upper": r.upper, "rounds": r.rounds, "rows": r.rows_added,
           "method": r.method, "nodes": r.tree.N}
else:
    r = bounds.optimal_lp(draft, target, K, L, limit=10**12, work_limit=10**15)
    out = {"value": r.value}
out["seconds"] = time.perf_counter() - start
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def run(V: int, K: int, L: int, form: str, timeout: float) -> dict:
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, str(V), str(K), str(L), form],
                              capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return {"not_run": f"over {timeout:.0f} s"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-set-seconds", type=float, default=600.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    for V, K, L in INSTANCES:
        sets = math.comb(V ** L + K - 1, K)
        node = run(V, K, L, "node", 600.0)
        per_set = (run(V, K, L, "per_set", args.per_set_seconds) if sets <= PER_SET_MULTISETS
                   else {"not_run": f"{sets:,} multisets"})
        row = {"V": V, "K": K, "L": L, "multisets": sets, "node": node, "per_set": per_set}
        if "value" in per_set:
            row["difference"] = abs(node["value"] - per_set["value"])
        rows.append(row)
        if not args.json:
            ps = (f"{per_set['seconds']:8.2f} s {per_set['peak_mb']:6.0f} MB" if "seconds" in per_set
                  else f"not run: {per_set['not_run']}")
            print(f"V={V} K={K:<3d} L={L}  N={node['nodes']:<4d} node {node['seconds']:6.2f} s "
                  f"{node['peak_mb']:5.0f} MB ({node['rounds']} rounds, {node['rows']} {node['method']})"
                  f"  value {node['value']:.12f}  per-set {ps}"
                  + (f"  |Δ| {row['difference']:.1e}" if "difference" in row else ""), flush=True)
    if args.json:
        print(json.dumps({"rows": rows, "when": time.strftime("%Y-%m-%d")}))


if __name__ == "__main__":
    main()
