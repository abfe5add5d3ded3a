"""The GPU check: one short run on the bundled pair that writes one JSON file.

For each dtype (float16 and bfloat16 on a GPU):

1. **Greedy equality, every rule.**  At T = 0 every lossless rule is greedy decoding of the target,
   so its tokens must equal the target's own greedy tokens (``AutoregressiveDecoder``).  The first
   position where they part is recorded: in half precision, K rows and one row can round apart, and
   a tie between two logits then decides differently.  That is reported, not hidden.
2. **The decoder benchmark** (``core.bench.decoding.run_bench``) at K ∈ {1, 4}, L = 4, T = 0.7:
   every rule against autoregressive decoding and Hugging Face's generate and assisted generation,
   measured side by side in the same run.

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
        tokens = SpeculativeDecoder(pair, m, k, L, greedy, trace=False).generate(PROMPT, max_new_tokens, 0).tokens
        parted = next((i for i, (a, b) in enumerate(zip(tokens, reference)) if a != b), None)
        if parted is None and len(tokens) != len(reference):
            parted = min(len(tokens), len(reference))
        out[m] = {"K": k, "L": L, "equal": parted is None, "first_difference": parted,
                  "tokens": len(tokens)}
    return out


def run(dry_run: bool, out: Path) -> dict:
    import torch

    from core.bench.decoding import BenchConfig, run_bench
    from core.decoding import decoder_methods, toy_pair

    started = time.perf_counter()
    cuda = torch.cuda.is_available() and not dry_run
    device = "cuda" if cuda else "cpu"
    dtypes = ("float16", "bfloat16") if cuda else ("float32", "bfloat16")
    methods = decoder_methods()
    report: dict = {"dry_run": dry_run, "device": device,
                    "gpu": torch.cuda.get_device_name(0) if cuda else None,
                    "torch": torch.__version__, "python": platform.python_version(),
                    "methods": methods, "results": {}}
    tokens, prompts = (8, 1) if dry_run else (96, 6)
    for dtype in dtypes:
        pair = toy_pair(device=device, dtype=dtype)
        entry: dict = {"greedy_equality": greedy_equality(pair, methods, K=4, L=4,
                                                          max_new_tokens=2 * tokens)}
        cfg = BenchConfig(methods=tuple(methods), Ks=(1, 4), Ls=(4,), temperatures=(0.7,),
                          max_new_tokens=tokens, prompts=prompts, seed=0, hf=True)
        entry["bench"] = run_bench(pair, cfg, progress=lambda msg: print(f"[{dtype}] {msg}", file=sys.stderr))
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
        print(f"{dtype}: greedy equality {'every rule' if not unequal else 'fails for ' + ', '.join(unequal)}; "
              f"benchmark {len(entry['bench']['rows'])} rows")
    print(f"wrote {args.out} in {report['elapsed_s']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
