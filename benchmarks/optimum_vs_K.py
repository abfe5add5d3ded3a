"""How many drafts are worth drafting: the LP optimum's E[τ] against K up to 64, beside RBV, OTV,
TD-optimal and Traversal where their exact laws are affordable.

    python -m benchmarks.optimum_vs_K [--json] [--rule-seconds 20]

Instances: the presets (their own L) and a seeded family, the sweeps' ``markov`` family at V = 3,
L = 3 (seed 0, indices 0..19: q from Dirichlet(1), p = (1 − m)·q + m·noise with m ~ U(0, 1);
``core.sweep.instances``).  For each, the optimum at every K of ``KS``; each rule at every K whose
exact law is estimated (``core.analysis.exact.estimated_seconds``) within ``--rule-seconds``.  Every
number is exact (the LP to 1e-9 with its bounds); the summary says at which K the optimum closes
90 % and 99 % of its gap from K = 1 to its limit as K grows (the mass q puts on the paths p can
draft: L where p has full support).  docs/findings.md reads the JSON this writes with --json.
"""
from __future__ import annotations

import argparse
import json

import toy_models as tm
from core.analysis.exact import estimated_seconds, exact_analysis
from core.bounds import lp_optimum
from core.data.levels import level_conditionals, level_joints
from core.rules.registry import REGISTRY
from core.sweep.config import InstanceKey
from core.sweep.instances import instance_models

KS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
RULES = ("rbv", "otv", "td_optimal", "traversal")
FAMILY = ("markov", 3, 3, 20)          # family, V, L, instances


def limit(draft, target, L: int) -> float:
    """The optimum as K → ∞: Σ q(u) over the nodes u, 1 ≤ |u| ≤ L, that p drafts with positive
    probability (every such node is then drafted almost surely, and W(u) ≤ q(u))."""
    p = level_joints(level_conditionals(draft, L - 1))
    q = level_joints(level_conditionals(target, L - 1))
    return float(sum(q[d][p[d] > 0].sum() for d in range(1, L + 1)))


def curve(name: str, draft, target, L: int, rule_seconds: float) -> dict:
    lp = {K: lp_optimum(draft, target, K, L).value for K in KS}
    top = limit(draft, target, L)
    rules = {}
    for rule in RULES:
        rules[rule] = {K: exact_analysis(rule, draft, target, K, L).expected_accepted for K in KS
                       if estimated_seconds(REGISTRY[rule], draft.V, K, L) <= rule_seconds}
    gap = top - lp[1]
    reach = {}
    for share in (0.9, 0.99):
        reach[str(share)] = next((K for K in KS if gap <= 0 or lp[K] - lp[1] >= share * gap - 1e-12), None)
    return {"instance": name, "V": draft.V, "L": L, "limit": top, "lp": lp, "rules": rules, "reach": reach}


def instances():
    for name, preset in tm.PRESETS.items():
        if name != "gbv-lossless":                       # the binary toy again
            yield name, preset.draft, preset.target, preset.L
    family, V, L, n = FAMILY
    for index in range(n):
        draft, target, _ = instance_models(InstanceKey(family, V, 1, L, index), 0)
        yield f"{family} V={V} L={L} #{index}", draft, target, L


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--rule-seconds", type=float, default=20.0)
    args = parser.parse_args()
    rows = [curve(name, d, t, L, args.rule_seconds) for name, d, t, L in instances()]
    if args.json:
        print(json.dumps({"Ks": KS, "rules": RULES, "family": FAMILY, "rows": rows}, indent=1))
        return
    for r in rows:
        print(f"{r['instance']:<22s} limit {r['limit']:.4f}  90% at K={r['reach']['0.9']}  "
              f"99% at K={r['reach']['0.99']}")
        print("   K:   " + " ".join(f"{K:>7d}" for K in KS))
        print("   lp:  " + " ".join(f"{r['lp'][K]:7.4f}" for K in KS))
        for rule in RULES:
            print(f"   {rule[:5]:<5s}" + " ".join(f"{r['rules'][rule][K]:7.4f}" if K in r["rules"][rule]
                                                 else "      ·" for K in KS))


if __name__ == "__main__":
    main()
