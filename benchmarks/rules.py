"""Every lossless rule against the optimal-verifier LP on seeded random toy instances.

    python -m benchmarks.rules --n 200 --seed 0 --json FILE

Instances: V ∈ {2, 3, 4}, K ∈ {2, 3, 4}, L ∈ {1, 2, 3} with V^(K·L) ≤ 4096, families iid, markov
and table in turn, the draft near the target (mix ∈ [0.05, 0.3]) or far from it (mix ∈ [0.7, 1])
in turn, Dirichlet concentration α ∈ {0.3, 1, 3}.  For each lossless rule (every registered rule
that is lossless by theory, less ``lp_optimal``, whose value is the denominator): the mean and the
minimum over instances of E[τ]/LP (and its mean over near and far instances apart), the mean of E[τ]/L with p = q on the same targets (LP = L
there), and how often it is the best rule on an instance (ties within 1e-9 count for every tied
rule).  Exact laws (``core.analysis.exact``), not samples.  Figures, not assertions.

``td_optimal`` also reports the range [min, max] of E[τ] over the top-down rules whose node plans
are all acceptance-optimal (``core.bounds.top_down``); the benchmark counts the instances where the
range is wide and where td_optimal's value is above its max (the best top-down rule then gives up
acceptance somewhere).
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

import toy_models as tm
from core.analysis.exact import exact_analysis
from core.bounds.node_lp import lp_optimum
from core.rules.registry import REGISTRY, make_verifier

FAMILIES = ("iid", "markov", "table")
TIE = 1e-9


def lossless_rules() -> list[str]:
    """The registered lossless rules, in display order, less the LP itself."""
    return [name for name, cls in REGISTRY.items() if cls.lossless_by_theory and name != "lp_optimal"]


def instances(n: int, seed: int) -> list[dict]:
    """n seeded instance descriptions (kind, V, K, L, α, mix, model seed)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        V, K, L = int(rng.integers(2, 5)), int(rng.integers(2, 5)), int(rng.integers(1, 4))
        if V ** (K * L) > 4096:
            continue
        near = len(out) % 2 == 0
        out.append({"kind": FAMILIES[(len(out) // 2) % 3], "V": V, "K": K, "L": L,
                    "alpha": float(rng.choice([0.3, 1.0, 3.0])),
                    "mix": float(rng.uniform(0.05, 0.3) if near else rng.uniform(0.7, 1.0)),
                    "near": near, "seed": int(rng.integers(1 << 30))})
    return out


def exact(name: str, draft, target, K: int, L: int):
    verifier = make_verifier(name, draft=draft, target=target, K=K, L=L)
    return exact_analysis(verifier, draft, target, K, L)


def measure(inst: dict, rules: list[str]) -> dict:
    """E[τ] of every rule and the LP on one instance, and E[τ] with the draft set to the target;
    the fields a rule adds to its exact summary (td_optimal's range) under "extras"."""
    draft, target = tm.random_pair(inst["kind"], inst["V"], alpha=inst["alpha"], mix=inst["mix"],
                                   seed=inst["seed"], depth=inst["L"])
    K, L = inst["K"], inst["L"]
    results = {name: exact(name, draft, target, K, L) for name in rules}
    return {**inst, "lp": lp_optimum(draft, target, K, L).value,
            "tau": {name: r.expected_accepted for name, r in results.items()},
            "extras": {name: r.extras for name, r in results.items() if r.extras},
            "tau_p_eq_q": {name: exact(name, target, target, K, L).expected_accepted for name in rules}}


def td_range_summary(rows: list[dict]) -> dict:
    """td_optimal against its range [min, max] over acceptance-optimal node plans: how often the
    range is wide, how wide, and how often td_optimal is at its max or above it."""
    rows = [r for r in rows if "td_optimal" in r["extras"]]
    lo, hi = np.array([r["extras"]["td_optimal"]["acceptance_optimal_range"] for r in rows]).T
    td = np.array([r["tau"]["td_optimal"] for r in rows])
    lp = np.array([r["lp"] for r in rows])
    width = hi - lo
    widest = int(np.argmax(width))
    return {"instances": len(rows), "wide": int((width > TIE).sum()),
            "mean_width": float(width.mean()), "mean_width_over_lp": float((width / lp).mean()),
            "max_width": float(width[widest]),
            "widest": {k: rows[widest][k] for k in ("kind", "V", "K", "L", "alpha", "mix", "seed")},
            "at_max": int((np.abs(td - hi) <= TIE).sum()), "above_max": int((td > hi + TIE).sum()),
            "below_max": int((td < hi - TIE).sum()), "max_gap_above": float((td - hi).max())}


def td_range_text(r: dict) -> str:
    w = r["widest"]
    return (f"td_optimal's range over acceptance-optimal plans: wide (> {TIE:g}) on {r['wide']} of "
            f"{r['instances']} instances, mean width {r['mean_width']:.4f} ({r['mean_width_over_lp']:.2%} "
            f"of the LP), widest {r['max_width']:.4f} ({w['kind']}, V={w['V']}, K={w['K']}, L={w['L']}, "
            f"seed {w['seed']}); td_optimal at the max on {r['at_max']}, above it on "
            f"{r['above_max']}, below it on {r['below_max']} (largest excess {r['max_gap_above']:.2e})")


def summarize(rows: list[dict], rules: list[str]) -> dict[str, dict]:
    """Per rule: mean and min of E[τ]/LP, mean of E[τ]/L at p = q, and wins (best on an instance)."""
    ratio = np.array([[row["tau"][name] / row["lp"] for name in rules] for row in rows])
    same = np.array([[row["tau_p_eq_q"][name] / row["L"] for name in rules] for row in rows])
    taus = np.array([[row["tau"][name] for name in rules] for row in rows])
    best = taus >= taus.max(axis=1, keepdims=True) - TIE
    near = np.array([row["near"] for row in rows])
    return {name: {"mean_ratio": float(ratio[:, i].mean()), "min_ratio": float(ratio[:, i].min()),
                   "mean_ratio_near": float(ratio[near, i].mean()),
                   "mean_ratio_far": float(ratio[~near, i].mean()),
                   "mean_p_eq_q": float(same[:, i].mean()), "wins": int(best[:, i].sum())}
            for i, name in enumerate(rules)}


def table(summary: dict[str, dict], n: int) -> str:
    lines = ["| rule | mean E[τ]/LP | min E[τ]/LP | mean, p near q | mean, p far from q "
             "| mean E[τ]/L at p = q | best on (of %d) |" % n, "|---|---|---|---|---|---|---|"]
    for name, s in sorted(summary.items(), key=lambda kv: -kv[1]["mean_ratio"]):
        lines.append(f"| `{name}` | {s['mean_ratio']:.4f} | {s['min_ratio']:.4f} | "
                     f"{s['mean_ratio_near']:.4f} | {s['mean_ratio_far']:.4f} | "
                     f"{s['mean_p_eq_q']:.4f} | {s['wins']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="number of instances")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="FILE", help="also write every instance and the summary here")
    args = parser.parse_args(argv)
    rules = lossless_rules()
    start = time.perf_counter()
    rows = [measure(inst, rules) for inst in instances(args.n, args.seed)]
    summary = summarize(rows, rules)
    td = td_range_summary(rows) if "td_optimal" in rules else None
    seconds = time.perf_counter() - start
    print(table(summary, len(rows)))
    if td is not None:
        print("\n" + td_range_text(td))
    print(f"\n{len(rows)} instances in {seconds:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": len(rows), "seed": args.seed, "seconds": seconds, "rules": rules,
                       "summary": summary, "td_optimal_range": td, "instances": rows}, f, indent=1)


if __name__ == "__main__":
    main()
