"""The GPU check: one short run on the bundled pair that writes one JSON file.

For each dtype (float16 and bfloat16 on a GPU):

1. **Tree attention.**  Whether each model takes it (``tree_attention_support``: a model that
   cannot falls back to one row per draft, and says why), and how far the target's logits at the
   nodes of a branching draft tree, scored in one row with the tree mask, lie from the same tree
   scored in rows (largest difference, and at how many nodes the argmax differs).
2. **Greedy equality, every rule, with tree attention.**  At T = 0 every rule whose
   ``greedy_is_target`` holds is greedy decoding of the target, so its tokens must equal the
   target's own greedy tokens (``AutoregressiveDecoder``); the others are reported with
   ``expected`` false.  The first position where they part is recorded: in half
   precision, a tree row and a one-token pass can round apart, and a tie between two logits then
   decides differently.  That is reported, not hidden.
3. **The decoder benchmark** (``core.bench.decoding.run_bench``) at K ∈ {1, 4}, L = 4, T = 0.7:
   every rule against autoregressive decoding and Hugging Face's generate and assisted generation,
   measured side by side in the same run.
4. **Every shape and law**: greedy equality, as in 2, of rrs and traversal on chains
   4 × 4 drafted by wor, topk and greedy, the static tree (2, 2, 1, 1) by every law, a rank-path
   tree and EAGLE-2's dynamic tree (16 nodes, depth 4).
5. **The tree suite** (``python -m core bench --suite trees``: AR, single chains, 4 × 4 chains, the
   static tree by every law, the dynamic tree, Sequoia's tree; T = 0.7 and 0; held-out prompts of
   64 and 700 tokens), with each iteration's time split, block efficiency with its interval,
   tokens/s, speedup and KV-cache bytes; on the bundled pair in both dtypes, and on the SmolLM2
   pair in bfloat16 when its GGUF package is installed and time is left.

Each part after the first dtype's checks runs only while the run is under its time budget
(``--budget-s``, 420 s: the shell script stops everything at 480 s), and a part skipped for time is
named in the JSON (``skipped``), never silently missing.

``--dry-run`` runs the same code on a CPU with tiny sizes (float32 and bfloat16, 8 tokens, one
prompt), so that the tests exercise it; its figures mean nothing.  Run it through
``benchmarks/gpu_check.sh``, which bounds it in time.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

PROMPT = "def read_lines(path):\n    with open(path) as f:\n"


def _compare(dec, reference: list[int], max_new_tokens: int) -> dict:
    """Decode ``PROMPT`` greedily with ``dec``; where its tokens part from ``reference``."""
    tokens = dec.generate(PROMPT, max_new_tokens, 0).tokens
    parted = next((i for i, (a, b) in enumerate(zip(tokens, reference)) if a != b), None)
    if parted is None and len(tokens) != len(reference):
        parted = min(len(tokens), len(reference))
    return {"equal": parted is None, "first_difference": parted, "tokens": len(tokens),
            "attention": dec.attention}


def greedy_equality(pair, methods, K: int, L: int, max_new_tokens: int) -> dict:
    """Per rule: do its T = 0 tokens equal the target's greedy tokens, and where do they part?"""
    from core.decoding import AutoregressiveDecoder, SamplingConfig, SpeculativeDecoder
    from core.rules.registry import REGISTRY

    greedy = SamplingConfig(0.0)
    reference = AutoregressiveDecoder(pair, greedy).generate(PROMPT, max_new_tokens, 0).tokens
    out = {}
    for m in methods:
        k = 1 if REGISTRY[m].single_draft else K
        dec = SpeculativeDecoder(pair, m, k, L, greedy, trace=False)
        out[m] = {"K": k, "L": L, "expected": REGISTRY[m].greedy_is_target,
                  **_compare(dec, reference, max_new_tokens)}
    return out


def tree_plans(L: int = 4) -> list:
    """Every shape and law of part 4 (module docstring)."""
    from core.data.laws import LAWS
    from core.decoding.plans import DynamicPlan, RankTreePlan, StaticPlan
    return ([StaticPlan.chains(4, L, law) for law in LAWS.values() if law.distinct]
            + [StaticPlan.tree((2, 2) + (1,) * (L - 2), law) for law in LAWS.values()]
            + [RankTreePlan(((1,), (2,), (3,), (1, 1), (1, 2), (2, 1), (1, 1, 1), (1, 1, 1, 1))),
               DynamicPlan(16, L, 4)])


def greedy_equality_trees(pair, max_new_tokens: int) -> dict:
    """Part 4: per draft plan and verifier (rrs, traversal), greedy equality as in part 2."""
    from core.decoding import AutoregressiveDecoder, SamplingConfig, SpeculativeDecoder

    greedy = SamplingConfig(0.0)
    reference = AutoregressiveDecoder(pair, greedy).generate(PROMPT, max_new_tokens, 0).tokens
    return {f"{m} {plan.label}": _compare(SpeculativeDecoder(pair, m, sampling=greedy, plan=plan, trace=False),
                                          reference, max_new_tokens)
            for plan in tree_plans() for m in ("rrs", "traversal")}


@__import__("torch").inference_mode()
def tree_vs_rows(pair) -> dict:
    """The target's logits at every node of a branching tree of 4 drafts of length 4, one row with
    tree attention against one row per draft: largest absolute difference, nodes whose argmax
    differs, and each model's tree attention support (None: on)."""
    import torch

    from core.decoding.cached_lm import RowsLM, TreeLM
    from core.decoding.device_tree import DraftTree
    from core.decoding.tree_attention import tree_attention_support

    support = {role: tree_attention_support(model, pair.device, f"{role} model")
               for role, model in (("draft", pair.draft), ("target", pair.target))}
    context = pair.encode(PROMPT)
    drafts = torch.tensor([[10, 20, 30, 40], [10, 20, 31, 41], [10, 21, 32, 42], [11, 22, 33, 43]])
    tree = DraftTree(17, pair.vocab_size, pair.device, chains=(4, 4))
    chain = torch.zeros(4, dtype=torch.long, device=pair.device)
    for d in range(4):
        chain = tree.add_draws(chain, drafts[:, d].to(pair.device))
    scored = []
    for layout in (TreeLM, RowsLM):
        lm = layout(pair.target, pair.device)
        lm.prefill(context)
        scored.append(lm.score(context, tree).float())
    V = pair.vocab_size
    return {"support": support, "nodes": tree.size,
            "max_abs_logit_difference": float((scored[0][:, :V] - scored[1][:, :V]).abs().max()),
            "argmax_differs_at": int((scored[0][:, :V].argmax(-1) != scored[1][:, :V].argmax(-1)).sum())}


def run(dry_run: bool, out: Path, budget_s: float = 420.0) -> dict:
    import torch

    from core.bench.decoding import BenchConfig, run_bench
    from core.decoding import decoder_methods, bundled_pair

    started = time.perf_counter()
    skipped: list[str] = []

    def time_left(part: str, needs_s: float) -> bool:
        """Whether ``part`` (about ``needs_s`` seconds) still fits the budget; else it is named."""
        if time.perf_counter() - started + needs_s <= budget_s:
            return True
        skipped.append(part)
        return False

    cuda = torch.cuda.is_available() and not dry_run
    device = "cuda" if cuda else "cpu"
    if not cuda:            # like every benchmark on a CPU: one thread (core.decoding.threads says why)
        torch.set_num_threads(1)
    dtypes = ("float16", "bfloat16") if cuda else ("float32", "bfloat16")
    methods = decoder_methods()
    report: dict = {"dry_run": dry_run, "device": device,
                    "gpu": torch.cuda.get_device_name(0) if cuda else None,
                    "torch": torch.__version__, "python": platform.python_version(),
                    "methods": methods, "results": {}}
    tokens, prompts = (8, 1) if dry_run else (64, 4)
    suite = BenchConfig.trees().with_overrides(max_new_tokens=tokens, prompts=prompts,
                                               sequoia_prompts=2 if dry_run else 8)
    if dry_run:
        suite = suite.with_overrides(contexts=(64,))
    for dtype in dtypes:
        pair = bundled_pair(device=device, dtype=dtype)
        say = lambda msg: print(f"[{dtype}] {msg}", file=sys.stderr)  # noqa: E731
        entry: dict = {"tree_attention": tree_vs_rows(pair),
                       "greedy_equality": greedy_equality(pair, methods, K=4, L=4,
                                                          max_new_tokens=2 * tokens),
                       "greedy_equality_trees": greedy_equality_trees(pair, 2 * tokens)}
        if time_left(f"bench {dtype}", 60):
            cfg = BenchConfig(methods=tuple(methods), Ks=(1, 4), Ls=(4,), temperatures=(0.7,),
                              max_new_tokens=tokens, prompts=prompts, seed=0, hf=True)
            entry["bench"] = run_bench(pair, cfg, progress=say)
        if time_left(f"tree suite {dtype}", 90):
            entry["trees"] = run_bench(pair, suite, progress=say)
        report["results"][dtype] = entry
        del pair
        if cuda:
            torch.cuda.empty_cache()
    if cuda and time_left("tree suite smollm2 bfloat16", 150):
        from core.errors import PairError
        try:
            pair = bundled_pair("smollm2", device=device, dtype="bfloat16")
        except PairError as exc:            # the GGUF package is not installed there
            skipped.append(f"tree suite smollm2 bfloat16 ({exc})")
        else:
            say = lambda msg: print(f"[smollm2] {msg}", file=sys.stderr)  # noqa: E731
            report["smollm2"] = {"greedy_equality_trees": greedy_equality_trees(pair, 32),
                                 "trees": run_bench(pair, suite.with_overrides(prompts=3), progress=say)}
    report["skipped"] = skipped
    report["elapsed_s"] = time.perf_counter() - started
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1))
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gpu_check", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("artifacts/gpu_check.json"), help="the JSON file to write")
    parser.add_argument("--dry-run", action="store_true", help="tiny sizes on a CPU (for the tests)")
    parser.add_argument("--budget-s", type=float, default=420.0,
                        help="start no part that would end past this many seconds (default 420)")
    args = parser.parse_args(argv)
    report = run(args.dry_run, args.out, args.budget_s)
    for dtype, entry in report["results"].items():
        unequal = [m for m, g in entry["greedy_equality"].items() if g["expected"] and not g["equal"]]
        unequal += [m for m, g in entry["greedy_equality_trees"].items() if not g["equal"]]
        tree = entry["tree_attention"]
        cost = entry["trees"]["goals"]["iteration_time_over_sd_K4_L4"]["all"] if "trees" in entry else []
        print(f"{dtype}: tree attention {tree['support']}, tree against rows: largest logit difference "
              f"{tree['max_abs_logit_difference']:.3g}, argmax differs at {tree['argmax_differs_at']} of "
              f"{tree['nodes']} nodes; greedy equality "
              f"{'every rule, shape and law' if not unequal else 'fails for ' + ', '.join(unequal)}; "
              f"tree suite {len(entry['trees']['rows']) if 'trees' in entry else 0} rows; K = 4 iteration "
              "over SD's: " + ", ".join(f"{c['method']} T={c['temperature']} context {c['context']}: "
                                        f"{c['ratio']:.2f}" for c in cost))
    if report["skipped"]:
        print("skipped for time or missing files: " + "; ".join(report["skipped"]))
    print(f"wrote {args.out} in {report['elapsed_s']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
