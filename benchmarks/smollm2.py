"""Benchmark of the offline SmolLM2 pair (core/decoding/smollm2.py): draft quality and decoding speed.

    python -m benchmarks.smollm2 [--prompts 4] [--new-tokens 48] [--L 4] [--K 4] [--json out.json]

All figures come from one run, seeded, on held-out code (standard-library files the draft never saw,
``toy_models.corpus.corpus_files``).

1. **Acceptance.**  On ``--windows`` held-out windows of ``--window`` tokens, both models score every
   position; per position the single-token acceptance 1 − TV(p_T, q_T) = Σ_x min(p_T(x), q_T(x)) is
   computed exactly over the full vocabulary (``core.decoding.next_token_probs``, float64) at
   T = 0.7 (the goal) and T = 1, plus greedy agreement (argmax p = argmax q), and the standard
   error of the T = 0.7 mean over windows.  The same is reported
   for the untrained draft (target layers 0 and 29 on the same head: the layer-skip baseline).
2. **Speed and block efficiency.**  ``--prompts`` held-out prompts of ``--prompt-tokens`` tokens;
   for each prompt, in turn, the target's autoregressive decoding and every configuration
   (K = 1 SD and BV at L = ``--L``; every rule in ``--multi`` at K = ``--K``, L = ``--L``; and the
   ``--extra`` configurations: other block lengths, K = 2) generate ``--new-tokens`` tokens at T = ``--T``
   (seed (seed, prompt)), so all are measured side by side under the same machine load.
   Tokens/s = Σ tokens / Σ wall seconds (prefill included); speedup = tokens/s over the
   autoregressive tokens/s; block efficiency = Σ(τ + 1) / iterations; an iteration's cost in
   autoregressive steps = seconds per iteration / seconds per autoregressive token, so speedup =
   block efficiency / that cost.  Before that, single forward passes are timed (target fed 1,
   L + 1 and K·(L + 1) tokens, draft fed 1 and K; ``core.bench.decoding.forward_seconds``) to show where an
   iteration's cost comes from.  ``mean_root_acceptance`` is
   the exact 1 − TV at the root of every iteration (one draft; ``DecodeMetrics``).  The decoders keep
   no traces while timed, as a user's generation would not.
3. **Goals** (docs/smollm2.md): acceptance at T = 0.7 ≥ 0.6; the best lossless method ≥ 1.4x
   autoregressive; multi-draft block efficiency at K ≥ 1.2x single-draft SD at the same L.

The machine is shared: wall-clock figures are ratios measured side by side, not absolute speeds.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from core.analysis.intervals import standard_error
from core.bench.decoding import forward_seconds
from core.bench.heldout import heldout_windows
from core.decoding import AutoregressiveDecoder, SamplingConfig, SpeculativeDecoder, next_token_probs
from core.rules.registry import get_verifier


@torch.inference_mode()
def acceptance(pair, draft, windows: list[list[int]]) -> dict:
    """Mean over all positions of Σ_x min(p_T, q_T) at T = 0.7 and 1, and greedy agreement; with
    the standard error of the T = 0.7 mean over windows (positions within a window are correlated,
    windows are drawn independently: SE = std of the window means / √windows)."""
    V = pair.vocab_size
    acc = {0.7: [], 1.0: []}
    agree = []
    per_window = []
    for w in windows:
        ids = torch.tensor([w], device=pair.device)
        lq = pair.target(input_ids=ids, use_cache=False).logits[0]
        lp = draft(input_ids=ids, use_cache=False).logits[0]
        for T in acc:
            q = next_token_probs(lq, V, SamplingConfig(T))
            p = next_token_probs(lp, V, SamplingConfig(T))
            acc[T].extend(np.minimum(p, q).sum(-1).tolist())
        per_window.append(float(np.mean(acc[0.7][-len(w):])))
        agree.extend((lp[:, :V].argmax(-1) == lq[:, :V].argmax(-1)).tolist())
    return {"acceptance_T0.7": float(np.mean(acc[0.7])), "acceptance_T0.7_se": standard_error(per_window),
            "acceptance_T1": float(np.mean(acc[1.0])),
            "greedy_agreement": float(np.mean(agree)), "positions": len(agree)}


def speed(pair, prompts: list[list[int]], configs: list[tuple[str, int, int]], new_tokens: int,
          T: float, seed: int, log=print) -> list[dict]:
    """Autoregressive and each (method, K, L) on every prompt in turn; sums per configuration."""
    sampling = SamplingConfig(T)
    decs = {("autoregressive", 0, 0): AutoregressiveDecoder(pair, sampling)}
    for m, K, L in configs:
        decs[(m, K, L)] = SpeculativeDecoder(pair, m, K, L, sampling, trace=False)   # as timed: no traces
    sums = {key: dict(tokens=0, seconds=0.0, iterations=0, accepted=0, verify_s=0.0, draft_s=0.0,
                      target_s=0.0, root_acc=0.0, per_prompt=[]) for key in decs}
    for j, prompt in enumerate(prompts):
        for key, dec in decs.items():
            t0 = time.perf_counter()
            g = dec.generate(prompt, new_tokens, seed=np.random.default_rng([seed, j]))
            dt = time.perf_counter() - t0
            s = sums[key]
            s["tokens"] += len(g.tokens)
            s["seconds"] += dt
            s["iterations"] += g.metrics.iterations
            s["accepted"] += g.metrics.accepted_tokens
            s["verify_s"] += g.metrics.time_verify_s
            s["draft_s"] += g.metrics.time_draft_s
            s["target_s"] += g.metrics.time_target_s
            s["root_acc"] += g.metrics.mean_root_acceptance * g.metrics.iterations
            s["per_prompt"].append(g.metrics.block_efficiency)
        log(f"prompt {j + 1}/{len(prompts)} done")
    ar = sums[("autoregressive", 0, 0)]
    ar_tps = ar["tokens"] / ar["seconds"]
    rows = []
    for (m, K, L), s in sums.items():
        tps = s["tokens"] / s["seconds"]
        row = {"method": m, "K": K, "L": L, "tokens": s["tokens"], "seconds": s["seconds"],
               "seconds_per_target_call": s["seconds"] / max(s["iterations"], 1) if m != "autoregressive"
               else s["seconds"] / s["tokens"],
               "tokens_per_second": tps, "speedup_vs_autoregressive": tps / ar_tps}
        if m != "autoregressive":
            row.update(block_efficiency=(s["accepted"] + s["iterations"]) / s["iterations"],
                       block_efficiency_per_prompt=s["per_prompt"],
                       block_efficiency_se=standard_error(s["per_prompt"]),
                       verify_fraction=s["verify_s"] / s["seconds"],
                       draft_fraction=s["draft_s"] / s["seconds"],
                       target_fraction=s["target_s"] / s["seconds"],
                       seconds_per_iteration=s["seconds"] / s["iterations"],
                       iteration_cost_in_ar_steps=(s["seconds"] / s["iterations"]) / (ar["seconds"] / ar["tokens"]),
                       mean_root_acceptance=s["root_acc"] / s["iterations"],
                       lossless=bool(get_verifier(m).lossless_by_theory))
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--windows", type=int, default=96)
    ap.add_argument("--window", type=int, default=128)
    ap.add_argument("--prompts", type=int, default=4)
    ap.add_argument("--prompt-tokens", type=int, default=48)
    ap.add_argument("--new-tokens", type=int, default=48)
    ap.add_argument("--L", type=int, default=4)
    ap.add_argument("--K", type=int, default=4)
    ap.add_argument("--T", type=float, default=0.7)
    ap.add_argument("--multi", default="specinfer,spectr,rbv,best_of_k_bv,traversal,otv",
                    help="multi-draft rules run at K")
    ap.add_argument("--extra", default="sd:1:3,bv:1:3,sd:1:5,bv:1:5,rbv:2:3,rbv:2:4,specinfer:2:4,best_of_k_bv:2:4,"
                    "traversal:2:4,otv:2:4",
                    help="more configurations method:K:L (other block lengths; K = 2 costs less than K = 4 on a CPU)")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads (default 1, as every benchmark: docs/decoder.md#threads; the "
                         "figures of docs/smollm2.md's speed table used 2 on an idle machine)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-baseline", action="store_true", help="skip the untrained layer-skip draft")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    from core.decoding.smollm2 import build_draft, load_smollm2_pair

    def log(msg):
        print(time.strftime("%H:%M:%S"), msg, flush=True)

    pair = load_smollm2_pair(device="cpu")
    tok = pair.tokenizer
    out = {"args": vars(args), "draft": {
        "layers": pair.draft.config.num_hidden_layers, "kept_ids": int(len(pair.draft.kept_ids)),
        "stored_parameters": int(sum(v.numel() for v in pair.draft.trainable_state().values())),
        "per_token_macs_ratio_target_over_draft": None}, "torch_threads": torch.get_num_threads()}
    # Per-token multiply-accumulates of the weight matrices (embedding lookups excluded).
    t_macs = sum(p.numel() for n, p in pair.target.named_parameters() if "embed_tokens" not in n and "norm" not in n)
    t_macs += pair.target.get_output_embeddings().weight.numel()
    d_macs = sum(p.numel() for n, p in pair.draft.model.layers.named_parameters() if "norm" not in n)
    d_macs += pair.draft.head_weight.numel()
    out["draft"]["per_token_macs_ratio_target_over_draft"] = t_macs / d_macs

    # What one iteration costs in target steps: the target fed 1, L + 1, K·L + 1 (the largest tree of
    # K chains, in one row with tree attention) and K·(L + 1) tokens (the fallback's K rows), the
    # draft fed 1 and K, each after a 64-token cache, relative to one autoregressive target step.
    one = forward_seconds(pair.target, pair.device, pair.vocab_size)
    out["forward_cost_in_target_steps"] = {"target_step_s": one} | {
        f"{role} {rows}x{n}": forward_seconds(model, pair.device, pair.vocab_size, n, rows) / one
        for role, model, rows, n in (("target", pair.target, 1, args.L + 1),
                                     ("target", pair.target, 1, args.K * args.L + 1),
                                     ("target", pair.target, args.K, args.L + 1),
                                     ("draft", pair.draft, 1, 1), ("draft", pair.draft, 1, args.K),
                                     ("draft", pair.draft, args.K, 1))}
    log(f"forward costs: {out['forward_cost_in_target_steps']}")

    windows = heldout_windows(tok, args.windows, args.window, args.seed)
    out["acceptance"] = acceptance(pair, pair.draft, windows)
    log(f"acceptance (trained draft): {out['acceptance']}")
    if not args.no_baseline:
        base = build_draft(pair.target, pair.draft.kept_ids, 2, init_layers=[0, pair.target.config.num_hidden_layers - 1])
        base.eval()
        out["acceptance_untrained_layer_skip"] = acceptance(pair, base, windows)
        log(f"acceptance (untrained layer skip): {out['acceptance_untrained_layer_skip']}")
        del base

    prompts = [w[:args.prompt_tokens] for w in heldout_windows(tok, args.prompts, args.prompt_tokens + 1,
                                                                args.seed + 1)]
    configs = [("sd", 1, args.L), ("bv", 1, args.L)]
    configs += [(m, args.K, args.L) for m in args.multi.split(",") if m]
    for spec in filter(None, args.extra.split(",")):
        m, K, L = spec.split(":")
        configs.append((m, int(K), int(L)))
    rows = speed(pair, prompts, configs, args.new_tokens, args.T, args.seed, log)
    out["speed"] = rows
    spec_rows = [r for r in rows if r["method"] != "autoregressive"]
    best = max((r for r in spec_rows if r["lossless"]), key=lambda r: r["speedup_vs_autoregressive"])
    sd = next(r for r in spec_rows if r["method"] == "sd" and r["K"] == 1 and r["L"] == args.L)
    multi = [r for r in spec_rows if r["K"] == args.K and r["L"] == args.L and r["K"] > 1 and r["lossless"]]
    best_multi = max(multi, key=lambda r: r["block_efficiency"]) if multi else None
    out["goals"] = {
        "acceptance_T0.7": {"value": out["acceptance"]["acceptance_T0.7"], "goal": 0.6,
                            "met": out["acceptance"]["acceptance_T0.7"] >= 0.6},
        "best_lossless_speedup": {"value": best["speedup_vs_autoregressive"], "goal": 1.4,
                                  "met": best["speedup_vs_autoregressive"] >= 1.4,
                                  "config": f"{best['method']} K={best['K']} L={best['L']}"},
        "multi_over_single_block_efficiency": None if best_multi is None else {
            "value": best_multi["block_efficiency"] / sd["block_efficiency"], "goal": 1.2,
            "met": best_multi["block_efficiency"] / sd["block_efficiency"] >= 1.2,
            "config": f"{best_multi['method']} K={best_multi['K']} vs sd K=1, L={args.L}"},
    }
    print(f"\n{'method':14s} {'K':>2s} {'L':>2s} {'tok/s':>7s} {'speedup':>8s} {'BE':>6s} {'± SE':>5s} "
          f"{'1-TV root':>9s} {'draft%':>7s} {'target%':>8s} {'verify%':>8s}")
    for r in rows:
        print(f"{r['method']:14s} {r['K']:2d} {r['L']:2d} {r['tokens_per_second']:7.2f} "
              f"{r['speedup_vs_autoregressive']:7.2f}x "
              + (f"{r['block_efficiency']:6.2f} {r['block_efficiency_se']:5.2f} {r['mean_root_acceptance']:9.3f} "
                 f"{100 * r['draft_fraction']:6.1f}% "
                 f"{100 * r['target_fraction']:7.1f}% {100 * r['verify_fraction']:7.1f}%"
                 if "block_efficiency" in r else ""))
    print("goals:", json.dumps(out["goals"], indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return out


if __name__ == "__main__":
    main()
