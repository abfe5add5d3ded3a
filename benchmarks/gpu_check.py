"""The GPU check: one short run on the bundled pair that writes one JSON file.

For each dtype (float16 and bfloat16 on a GPU):

1. **Tree attention.**  Whether each model takes it (``tree_attention_support``: a model that
   cannot falls back to one row per draft, and says why), and how far the target's logits at the
   nodes of a branching draft tree, scored in one row with the tree mask, lie from the same tree
   scored in rows (largest difference, and at how many nodes the argmax differs).
2. **Greedy equality, every rule, with tree attention.**  At T = 0 every lossless rule is greedy
   decoding of the target, so its tokens must equal the target's own greedy tokens
   (``AutoregressiveDecoder``).  The first position where they part is recorded: in half
   precision, a tree row and a one-token pass can round apart, and a tie between two logits then
   decides differently.  That is reported, not hidden.
3. **The decoder benchmark** (``core.bench.decoding.run_bench``) at K ∈ {1, 4}, L = 4, T = 0.7:
   every rule against autoregressive decoding and Hugging Face's generate and assisted generation,
   measured side by side in the same run.
4. **Long contexts** (issue 27): SD K = 1 and the 4 x 4 chains (traversal, OTV) on held-out prompts
   of 64 and 700 tokens at T = 0.7 and T = 0, with each iteration's time split, its cost over SD's
   and the peak KV-cache bytes.

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
        tokens = dec.generate(PROMPT, max_new_tokens, 0).tokens
        parted = next((i for i, (a, b) in enumerate(zip(tokens, reference)) if a != b), None)
        if parted is None and len(tokens) != len(reference):
            parted = min(len(tokens), len(reference))
        out[m] = {"K": k, "L": L, "equal": parted is None, "first_difference": parted,
                  "tokens": len(tokens), "attention": dec.attention}
    return out


@__import__("torch").inference_mode()
def tree_vs_rows(pair) -> dict:
    """The target's logits at every node of a branching tree of 4 drafts of length 4, one row with
    tree attention against one row per draft: largest absolute difference, nodes whose argmax
    differs, and each model's tree attention support (None: on)."""
    import torch

    from core.decoding.cached_lm import RowsLM, TreeLM
    from core.decoding.token_tree import DraftTree
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


def run(dry_run: bool, out: Path) -> dict:
    import torch

    from core.bench.decoding import BenchConfig, run_bench
    from core.decoding import decoder_methods, toy_pair

    started = time.perf_counter()
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
    tokens, prompts = (8, 1) if dry_run else (96, 6)
    for dtype in dtypes:
        pair = toy_pair(device=device, dtype=dtype)
        say = lambda msg: print(f"[{dtype}] {msg}", file=sys.stderr)  # noqa: E731
        entry: dict = {"tree_attention": tree_vs_rows(pair),
                       "greedy_equality": greedy_equality(pair, methods, K=4, L=4,
                                                          max_new_tokens=2 * tokens)}
        cfg = BenchConfig(methods=tuple(methods), Ks=(1, 4), Ls=(4,), temperatures=(0.7,),
                          max_new_tokens=tokens, prompts=prompts, seed=0, hf=True)
        entry["bench"] = run_bench(pair, cfg, progress=say)
        long = BenchConfig(methods=("sd", "traversal", "otv"), Ks=(1, 4), Ls=(4,), temperatures=(0.7, 0.0),
                           max_new_tokens=tokens, prompts=min(prompts, 4), seed=0, hf=False,
                           contexts=(64, 700))
        entry["contexts"] = run_bench(pair, long, progress=say)
        report["results"][dtype] = entry
        del pair
        if cuda:
            torch.cuda.empty_cache()
    report["elapsed_s"] = time.perf_counter() - started
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1))
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gpu_check", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("artifacts/gpu_check.json"), help="the JSON file to write")
    parser.add_argument("--dry-run", action="store_true", help="tiny sizes on a CPU (for the tests)")
    args = parser.parse_args(argv)
    report = run(args.dry_run, args.out)
    for dtype, entry in report["results"].items():
        unequal = [m for m, g in entry["greedy_equality"].items() if not g["equal"]]
        tree = entry["tree_attention"]
        cost = entry["contexts"]["goals"]["iteration_time_over_sd_K4_L4"]["all"]
        print(f"{dtype}: tree attention {tree['support']}, tree against rows: largest logit difference "
              f"{tree['max_abs_logit_difference']:.3g}, argmax differs at {tree['argmax_differs_at']} of "
              f"{tree['nodes']} nodes; greedy equality "
              f"{'every rule' if not unequal else 'fails for ' + ', '.join(unequal)}; "
              f"benchmark {len(entry['bench']['rows'])} rows; K = 4 iteration over SD's: "
              + ", ".join(f"{c['method']} T={c['temperature']} context {c['context']}: {c['ratio']:.2f}"
                          for c in cost))
    print(f"wrote {args.out} in {report['elapsed_s']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
