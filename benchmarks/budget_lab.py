"""The budget question's table, timed, and the LP certificates' success rate.

    python -m benchmarks.budget_lab [--presets binary-toy three-token-toy] [--L 2 3] [--budgets 4-16]
    python -m benchmarks.budget_lab --certify [--seeds 0 1]

Without ``--certify``: for each preset, depth L and budget n, the table of ``python -m core trees``
(``core.analysis.budget.budget_table``) with its estimate and its wall-clock seconds, how many
own-law LPs of the table were certified, and the tables the price check refuses (over
``TABLE_SECONDS``).  With ``--certify``: seeded random pairs whose probabilities are simple
fractions (iid or Markov, V = 2 or 3, each row a multinomial count over a denominator of 6 to 100),
on six shapes of 3 to 8 drafted tokens and every law; each certificate is compared with the
solver's value of ``optimal_tree_lp`` (to 1e-9), and every instance it does not certify is
listed with the reason and the smallest node-set probability.  Figures, not assertions: the
machine is shared and noisy, so no unit test times anything.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import toy_models as tm
from core.analysis.budget import TABLE_SECONDS, budget_shapes, budget_table, estimated_table_seconds
from core.bounds.certify import certify_tree_lp, exact_levels, exact_node_set_law
from core.bounds.lp import optimal_tree_lp
from core.data.laws import LAWS
from core.data.shapes import Shape
from core.errors import USER_ERRORS

CERTIFY_SHAPES = (Shape.chains_of(2, 2), Shape.tree((2, 2)), Shape.tree((2, 1, 1)), Shape.tree((1, 2)),
                  Shape.chains_of(3, 2), Shape.tree((2, 1, 2)))


def budgets(text: str) -> list[int]:
    first, _, last = text.partition("-")
    return list(range(int(first), int(last or first) + 1))


def timing(presets, depths, ns) -> None:
    print("preset  L  n  shapes  estimate (s)  wall (s)  LPs certified")
    for name in presets:
        toy = tm.PRESETS[name]
        for L in depths:
            for n in ns:
                if n < L:
                    continue
                est = estimated_table_seconds(toy.draft, toy.target, n, L)
                shapes = len(budget_shapes(n, L))
                if est > TABLE_SECONDS:
                    print(f"{name}  {L}  {n}  {shapes}  {est:.1f}  refused (over {TABLE_SECONDS:g} s)", flush=True)
                    continue
                start = time.perf_counter()
                table = budget_table(toy.draft, toy.target, n, L)
                wall = time.perf_counter() - start
                lps = [r.cells["lp"] for r in table.rows if r.refused is None]
                done = sum(c.certificate is not None and c.certificate.certified for c in lps)
                print(f"{name}  {L}  {n}  {shapes}  {est:.1f}  {wall:.1f}  {done}/{len(lps)}", flush=True)


def random_pair(rng: np.random.Generator):
    V = int(rng.integers(2, 4))
    kind = str(rng.choice(["iid", "markov"]))
    den = int(rng.choice([6, 12, 20, 60, 100]))

    def dist():
        while True:
            counts = rng.multinomial(den, rng.dirichlet(np.ones(V)))
            if (counts > 0).all():
                return counts / den

    def model():
        if kind == "iid":
            return tm.IIDModel(dist())
        return tm.MarkovModel(dist(), np.stack([dist() for _ in range(V)]))

    return f"{kind} V={V} denominator {den}", model(), model()


def certify(seeds) -> None:
    total = failed = 0
    for seed in seeds:
        rng = np.random.default_rng(seed)
        for _ in range(40):
            what, draft, target = random_pair(rng)
            for shape in CERTIFY_SHAPES:
                for law in LAWS.values():
                    try:
                        cert = certify_tree_lp(draft, target, shape, law)
                    except USER_ERRORS:
                        continue                       # the law does not exist there
                    total += 1
                    value = optimal_tree_lp(draft, target, shape, law).value
                    if cert.certified and abs(float(cert.exact) - value) < 1e-9:
                        continue
                    failed += 1
                    _, p_exact = exact_levels(draft, shape.L - 1)
                    low = min(exact_node_set_law(draft, shape, law, p_exact).values())
                    print(f"not certified: seed {seed}, {what}, {shape.label} {law.name}: {cert.reason} "
                          f"(smallest P(t) {float(low):.1e})", flush=True)
    print(f"{total} instances, {failed} not certified")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--certify", action="store_true", help="the certificates' success rate instead")
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    p.add_argument("--presets", nargs="+", default=["binary-toy", "three-token-toy"])
    p.add_argument("--L", nargs="+", type=int, default=[2, 3])
    p.add_argument("--budgets", type=budgets, default=budgets("4-16"))
    args = p.parse_args(argv)
    if args.certify:
        certify(args.seeds)
    else:
        timing(args.presets, args.L, args.budgets)
    return 0


if __name__ == "__main__":
    sys.exit(main())
