"""Sequoia's tree for a real pair: positional acceptance, the best tree per budget, predicted
against measured E[τ] (docs/decoder.md, "Sequoia's tree on a real pair").

    python -m benchmarks.tree_shape --pair smollm2 [--T 0.7] [--budgets 4-32] [--depth 6] \\
        [--decode-budgets 4,8,16,32] [--prompts 6] [--new-tokens 64] [--out-dir DIR] [--json FILE]

1. **Positional acceptance.**  â_k = the mean over positions of q(x_k | context), x_k the draft's
   k-th ranked token (``core.bench.acceptance``): for a ``topk`` tree verified by ``rrs`` the rank-k
   child of an accepted node is accepted with exactly that probability, context by context.  Its
   standard error is over windows.  Two sets of contexts, both from held-out standard-library files
   no model was trained on, seeded apart from the prompts: ``generated`` (default for the trees),
   ``--windows`` held-out prompts of ``--prompt-tokens`` tokens followed by the target's own
   continuation of ``--window`` tokens at T, the positions of the continuation only: the decoder's
   contexts; and ``heldout``, ``--windows`` windows of held-out text of the same length.
2. **Best trees.**  For every budget n of ``--budgets``, ``core.bounds.sequoia.best_tree`` on
   â_1..â_n (a node has at most n children) gives the tree of n nodes and depth ≤ ``--depth``
   that maximises the model's E[τ] = F − 1, with a 95% bootstrap interval over windows.  Each tree
   is written as rank paths to ``--out-dir`` (``sequoia_<pair>_T<T>_n<n>.json``), which
   ``python -m core decode --tree-paths FILE`` reads.
3. **Measured.**  The trees of ``--decode-budgets`` decode ``--prompts`` held-out prompts of
   ``--prompt-tokens`` tokens with ``rrs`` at T (``--new-tokens`` each, seeded, interleaved prompt
   by prompt so that load hits all alike): E[τ] = accepted tokens / iterations, with a 95%
   t-interval over prompts, block efficiency, tokens/s and the verification's share.

Run it on a quiet machine for speeds; the E[τ] figures do not depend on load.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from core.analysis.intervals import bounded_t_interval
from core.bench.acceptance import PositionalAcceptance, positional_acceptance, target_continuations
from core.bench.heldout import heldout_windows
from core.decoding import SamplingConfig, SpeculativeDecoder
from core.decoding.plans import RankTreePlan


def _budgets(text: str) -> list[int]:
    """"4-32" or "4,8,16"."""
    if "-" in text:
        a, b = (int(x) for x in text.split("-"))
        return list(range(a, b + 1))
    return [int(x) for x in text.split(",") if x]


def measured(pair, plans: dict[int, RankTreePlan], prompts, T: float, new_tokens: int, seed: int,
             log=print) -> dict[int, dict]:
    """Each budget's tree decoding every prompt with rrs, interleaved: E[τ] with its interval."""
    decs = {n: SpeculativeDecoder(pair, "rrs", sampling=SamplingConfig(T), plan=plan, trace=False)
            for n, plan in plans.items()}
    raw = {n: [] for n in plans}
    for j, prompt in enumerate(prompts):
        for n, dec in decs.items():
            t0 = time.perf_counter()
            m = dec.generate(prompt, new_tokens, np.random.default_rng([seed, j])).metrics
            raw[n].append((m.accepted_tokens, m.iterations, m.tokens_generated, time.perf_counter() - t0,
                           m.time_verify_s))
        log(f"prompt {j + 1}/{len(prompts)} decoded by every tree")
    out = {}
    for n, runs in raw.items():
        acc, its, toks, secs, ver = (np.array(x, dtype=np.float64) for x in zip(*runs))
        per_prompt = acc / its
        lo, hi, _ = bounded_t_interval(per_prompt.mean(), per_prompt.std(ddof=1) if len(runs) > 1 else np.nan,
                                       len(runs), lower=0.0, upper=float(plans[n].L))
        out[n] = {"measured_tau": float(acc.sum() / its.sum()), "measured_tau_ci95": [lo, hi],
                  "measured_tau_per_prompt": per_prompt.tolist(), "iterations": int(its.sum()),
                  "block_efficiency": float((acc.sum() + its.sum()) / its.sum()),
                  "tokens_per_second": float(toks.sum() / secs.sum()),
                  "verify_fraction_of_wall": float(ver.sum() / secs.sum())}
    return out


def acceptances(pair, T: float, windows: int, prompt_tokens: int, length: int, ranks: int, seed: int,
                log=print) -> dict[str, PositionalAcceptance]:
    """â on the target's continuations of held-out prompts ("generated") and on held-out text of
    the same length ("heldout"), the last ``length`` positions of each window."""
    sampling = SamplingConfig(T)
    prompts = heldout_windows(pair.tokenizer, windows, prompt_tokens, seed + 101)
    generated = target_continuations(pair, prompts, length, sampling, seed)
    text = heldout_windows(pair.tokenizer, windows, prompt_tokens + length, seed + 202)
    out = {"generated": positional_acceptance(pair, generated, sampling, ranks, min_context=prompt_tokens),
           "heldout": positional_acceptance(pair, text, sampling, ranks, min_context=prompt_tokens)}
    for name, acc in out.items():
        log(f"positional acceptance ({name}) over {acc.positions} positions of {windows} windows: "
            f"a_1..a_6 = {np.round(acc.accept[:6], 4).tolist()}")
    return out


def study(pair, acc: dict[str, PositionalAcceptance], prompts, T: float, budgets: list[int], depth: int,
          decode_budgets: list[int], new_tokens: int, seed: int, out_dir: Path | None = None,
          name: str = "pair", source: str = "generated", log=print) -> dict:
    """Steps 2-3 of the module docstring on a loaded pair, the trees built from ``acc[source]``;
    the JSON-ready result."""
    trees, plans = [], {}
    for n in budgets:
        tree = acc[source].best_tree(n, depth)
        value, lo, hi = acc[source].predicted(tree.paths, seed=seed)
        plan = RankTreePlan(tree.paths)
        entry = {"budget": n, "depth": plan.L, "root_children": plan.K,
                 "paths": [list(p) for p in tree.paths], "predicted_tau": value, "predicted_tau_ci95": [lo, hi]}
        for other, a in acc.items():
            if other != source:
                v, lo2, hi2 = a.predicted(tree.paths, seed=seed)
                entry[f"predicted_tau_{other}"], entry[f"predicted_tau_{other}_ci95"] = v, [lo2, hi2]
        if out_dir is not None:
            out_dir.mkdir(parents=True, exist_ok=True)
            file = out_dir / f"sequoia_{name}_T{T:g}_n{n}.json"
            file.write_text(json.dumps({"paths": entry["paths"], "budget": n, "temperature": T,
                                        "predicted_tau": value, "accept": acc[source].accept[:n].tolist()}))
            entry["file"] = str(file)
        trees.append(entry)
        if n in decode_budgets:
            plans[n] = plan
    for n, m in measured(pair, plans, prompts, T, new_tokens, seed, log).items():
        next(t for t in trees if t["budget"] == n).update(m)
    return {"temperature": T, "source": source, "acceptance": {k: a.to_dict() for k, a in acc.items()},
            "trees": trees}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.tree_shape", description=__doc__.splitlines()[0])
    ap.add_argument("--pair", choices=["toy", "smollm2"], default="smollm2")
    ap.add_argument("--T", type=float, default=0.7)
    ap.add_argument("--budgets", default="4-32", help="e.g. 4-32 or 4,8,16")
    ap.add_argument("--depth", type=int, default=6, help="the deepest tree the programme may build")
    ap.add_argument("--decode-budgets", default="4,8,16,32")
    ap.add_argument("--windows", type=int, default=32, help="prompts (and held-out windows) for a_k")
    ap.add_argument("--window", type=int, default=96, help="positions per window: the continuation's length")
    ap.add_argument("--source", choices=["generated", "heldout"], default="generated",
                    help="the contexts the trees are built from (both are measured and reported)")
    ap.add_argument("--prompts", type=int, default=6)
    ap.add_argument("--prompt-tokens", type=int, default=64)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1: docs/decoder.md#threads)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out-dir", type=Path, default=Path("artifacts/tree_shape"))
    ap.add_argument("--json", type=Path, help="write the results here")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    from core.decoding import bundled_pair

    def log(msg):
        print(time.strftime("%H:%M:%S"), msg, flush=True)

    pair = bundled_pair(args.pair, device="cpu")
    budgets, decode = _budgets(args.budgets), _budgets(args.decode_budgets)
    acc = acceptances(pair, args.T, args.windows, args.prompt_tokens, args.window, max(budgets), args.seed, log)
    prompts = heldout_windows(pair.tokenizer, args.prompts, args.prompt_tokens, args.seed)
    out = {"args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
           "torch_threads": torch.get_num_threads()}
    out.update(study(pair, acc, prompts, args.T, budgets, args.depth, decode, args.new_tokens, args.seed,
                     args.out_dir, args.pair, args.source, log))
    other = "heldout" if args.source == "generated" else "generated"
    print(f"\n{'n':>3} {'depth':>5} {'root':>4} {'predicted E[τ] (95%), ' + args.source:>32} "
          f"{other:>8} {'measured E[τ] (95%)':>24} {'BE':>5} {'tok/s':>7}")
    for t in out["trees"]:
        line = (f"{t['budget']:3d} {t['depth']:5d} {t['root_children']:4d} {t['predicted_tau']:16.3f} "
                f"({t['predicted_tau_ci95'][0]:.3f}-{t['predicted_tau_ci95'][1]:.3f}) "
                f"{t['predicted_tau_' + other]:8.3f}")
        if "measured_tau" in t:
            lo, hi = t["measured_tau_ci95"]
            line += (f" {t['measured_tau']:8.3f} ({lo:.3f}-{hi:.3f}) {t['block_efficiency']:5.2f} "
                     f"{t['tokens_per_second']:7.1f}")
        print(line)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
