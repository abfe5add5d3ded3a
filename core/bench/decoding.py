"""Benchmark of the real decoder: block efficiency and wall-clock speed over a grid of K, L and T.

Every number is measured in one run, side by side: for each temperature every configuration runs
on the first prompt, then every one on the second, and so on (interleaved, so that a change of the
machine's load hits them all alike): the target's own autoregressive decoding (our loop, the same
sampling code), the reference for ``speedup_vs_autoregressive``; every (method, K, L) of the grid;
and Hugging Face ``generate`` without and with ``assistant_model`` (assisted generation, constant L
and HF's default schedule) on the same pair, prompts and token budget.  Each configuration
generates ``max_new_tokens`` new tokens for each prompt (sample j seeded (seed, j)); block
efficiency is Σ(τ+1) / iterations and tokens per second is Σ tokens / Σ wall time over the
prompts.

With ``contexts`` (e.g. 64 and 700) the prompts are instead windows of that many tokens of held-out
code (``core.bench.heldout``), one set per length, and each row also reports where an iteration's
time goes (draft: the draft's forward passes, sampling and transfer; target: the target's forward
pass and transfer; verify; cache: rolling both KV caches back; other), the seconds per iteration,
and the peak KV-cache bytes.  At T = 0 the K i.i.d. chains are identical and merge into one, so
with ``contexts`` the K > 1 rows run at T = 0 too: they measure what the merged tree costs.

``goals`` compares the results with the project's targets: multi-draft block efficiency at K = 4 over
single-draft SD at the same L and T (≥ 1.25), the best lossless method over autoregressive decoding
(≥ 1.3x), our K = 1 SD over HF assisted generation at the same L and T (≥ 1), verification's share
of an iteration's time (< 10%), and for token trees a K = 4 iteration's time over SD's at the same L, T
and context (≤ 1.5 at 512 tokens and more, ≤ 1.3 below) and its KV-cache bytes over SD's (the
cache must not grow with K).
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from core.analysis.intervals import bounded_t_interval, standard_error
from core.data.laws import LAWS
from core.data.shapes import Shape
from core.bench.heldout import heldout_windows
from core.decoding import AutoregressiveDecoder, SamplingConfig, SpeculativeDecoder, decoder_methods, synchronize
from core.decoding.pairs import ModelPair
from core.decoding.plans import DraftPlan, DynamicPlan, RankTreePlan, StaticPlan
from core.rules.registry import get_verifier

PROMPTS = [
    "import os\nimport sys\n\n\ndef main(",
    "class Config:\n    \"\"\"A configuration object.\"\"\"\n\n    def __init__(self, ",
    "def read_lines(path):\n    with open(path) as f:\n",
    "    for i in range(len(self.",
    "# Copyright 2001 Python Software Foundation\n\"\"\"Utilities for ",
    "if __name__ == \"__main__\":\n",
]


@dataclass(frozen=True)
class BenchConfig:
    methods: tuple[str, ...]
    Ks: tuple[int, ...]
    Ls: tuple[int, ...]
    temperatures: tuple[float, ...]
    max_new_tokens: int
    prompts: int
    seed: int = 0
    hf: bool = True
    contexts: tuple[int, ...] = ()      # prompt lengths in tokens (held-out code); () = PROMPTS
    #: (method, draft plan) rows run beside the (method, K, L) grid: static trees, rank-path trees,
    #: dynamic trees, chains drafted by another law (core.decoding.plans)
    plans: tuple[tuple[str, DraftPlan], ...] = ()
    #: budgets of Sequoia's best tree (core.bench.acceptance), rebuilt at each temperature from the
    #: positional acceptance measured on held-out windows, depth ≤ ``sequoia_depth``, run with rrs
    sequoia: tuple[int, ...] = ()
    sequoia_depth: int = 6
    sequoia_prompts: int = 16           # held-out prompts whose target continuations give a_k

    @classmethod
    def default(cls, quick: bool = False) -> "BenchConfig":
        if quick:
            return cls(("sd", "bv", "specinfer"), (1, 2), (3,), (0.0, 1.0), 24, 2)
        return cls(tuple(decoder_methods()), (1, 2, 4), (3, 5), (0.0, 0.7, 1.0), 96, 6)

    @classmethod
    def trees(cls, L: int = 4, budget: int = 16) -> "BenchConfig":
        """The token-tree side-by-side run (docs/decoder.md, "Every shape and law"): autoregressive
        decoding; single chains (SD, BV: K = 1); K = 4 i.i.d. chains (traversal, OTV, best-of-K);
        the static tree (2, 2, 1, …) of depth L by every law, with rrs and traversal; EAGLE-2's
        dynamic tree of ``budget`` nodes and depth L (width 4), with rrs and traversal; Sequoia's
        best tree of ``budget`` nodes, with rrs; at T = 0.7 and 0, at contexts of 64 and 700
        tokens."""
        tree = Shape.tree((2, 2) + (1,) * (L - 2))
        plans = tuple((m, StaticPlan(tree, law)) for law in LAWS.values()
                      for m in ("rrs", "traversal"))
        plans += tuple((m, DynamicPlan(budget, L, 4)) for m in ("rrs", "traversal"))
        return cls(("sd", "bv", "traversal", "otv", "best_of_k_bv"), (1, 4), (L,), (0.7, 0.0), 64, 6,
                   hf=False, contexts=(64, 700), plans=plans, sequoia=(budget,))

    def with_overrides(self, **kw) -> "BenchConfig":
        kw = {k: (tuple(v) if isinstance(v, list) else v) for k, v in kw.items() if v is not None}
        return replace(self, **kw)


def _grid(cfg: BenchConfig):
    """(method, plan, T) rows: K i.i.d. chains K×L for every (method, K, L) of the grid, then
    ``cfg.plans``.  At T = 0 every rule is greedy decoding of the target, so only K = 1 rows of
    single-draft rules run (with ``contexts``, K > 1 rows too: module docstring; the plans always
    run: their trees differ at T = 0); K = 1 rows of multi-draft rules are skipped (each reduces to
    a single-draft rule)."""
    for T in cfg.temperatures:
        for L in cfg.Ls:
            for K in cfg.Ks:
                for m in cfg.methods:
                    single = get_verifier(m).single_draft
                    if single and K > 1:
                        continue
                    if not single and K == 1:
                        continue
                    if T == 0 and K > 1 and not cfg.contexts:
                        continue
                    yield m, StaticPlan.chains(K, L), T
        for m, plan in cfg.plans:
            yield m, plan, T


def _interleaved(runs: dict, n_prompts: int) -> dict:
    """Run every configuration of ``runs`` (key -> run(j)) on prompt 0, then every one on prompt 1,
    and so on, so that a change of the machine's load hits them all alike; each one's summary."""
    raw: dict = {key: [] for key in runs}
    for j in range(n_prompts):
        for key, run in runs.items():
            t0 = time.perf_counter()
            out = run(j)
            raw[key].append((time.perf_counter() - t0, *out))
    return {key: _summary(results) for key, results in raw.items()}


def _summary(results: list[tuple[float, int, int, int, dict]]) -> dict:
    """One configuration over the prompts, from (wall seconds, tokens, iterations, accepted,
    extra) per prompt."""
    tokens = iterations = accepted = 0
    wall = 0.0
    split = dict(draft=0.0, target=0.0, verify=0.0, cache=0.0, other=0.0)
    per_pos, per_prompt, per_iteration, peak_bytes, attention = [], [], [], 0, None
    for seconds, n_tok, n_it, n_acc, extra in results:
        wall += seconds
        tokens += n_tok
        iterations += n_it
        accepted += n_acc
        if n_it:
            per_prompt.append((n_acc + n_it) / n_it)
            per_iteration.append(sum(extra.get(k, 0.0) for k in split) / n_it)
        for k in split:
            split[k] += extra.get(k, 0.0)
        if "per_pos" in extra:
            per_pos.append((n_it, extra["per_pos"]))
        peak_bytes = max(peak_bytes, extra.get("peak_cache_bytes", 0))
        attention = extra.get("attention", attention)
    out = {"tokens": tokens, "iterations": iterations, "wall_s": wall,
           "tokens_per_second": tokens / wall if wall > 0 else 0.0,
           "block_efficiency": (accepted + iterations) / iterations if iterations else None}
    if per_prompt and iterations:
        # the noise of block efficiency from the choice of prompts and seeds: std / √n over prompts
        # (rows share prompts and seeds, so compare two rows prompt by prompt)
        out["block_efficiency_per_prompt"] = per_prompt
        out["block_efficiency_se"] = standard_error(per_prompt)
        if len(per_prompt) > 1:
            lo, hi, _ = bounded_t_interval(np.mean(per_prompt), np.std(per_prompt, ddof=1), len(per_prompt),
                                           lower=1.0)
            out["block_efficiency_ci95"] = [lo, hi]
    loop = sum(split.values())
    if loop > 0:
        out["time_split"] = {k: v / loop for k, v in split.items()}
        out["verify_fraction"] = split["verify"] / loop
    if loop > 0 and iterations:
        out["seconds_per_iteration"] = loop / iterations
        out["seconds_per_iteration_per_prompt"] = per_iteration
        out["iteration_ms"] = {k: 1e3 * v / iterations for k, v in split.items()}
    if peak_bytes:
        out["peak_cache_bytes"] = peak_bytes
    if attention is not None:
        out["attention"] = attention
    if per_pos:
        n = sum(w for w, _ in per_pos)
        out["acceptance_per_position"] = [sum(w * a[i] for w, a in per_pos) / n
                                          for i in range(len(per_pos[0][1]))]
    return out


def _ours(decoder, prompts, max_new, seed):
    def run(j):
        g = decoder.generate(prompts[j], max_new, np.random.default_rng([seed, j]))
        m = g.metrics
        extra = dict(draft=m.time_draft_s, target=m.time_target_s, verify=m.time_verify_s,
                     cache=m.time_cache_s, other=m.time_other_s, peak_cache_bytes=m.peak_cache_bytes)
        if m.K:                         # a speculative decoder (the autoregressive one has K = 0)
            extra.update(per_pos=m.acceptance_per_position, attention=m.attention)
        return m.tokens_generated, m.iterations, m.accepted_tokens, extra
    return run


def _hf(pair: ModelPair, prompts, max_new, seed, T, assistant: bool, L: int | None):
    """HF generate on the target, optionally with the draft as assistant model (assisted
    generation: SD at T > 0, greedy matching at T = 0).  No top-k/top-p: plain temperature."""
    from transformers import GenerationConfig

    def run(j):
        prompt = prompts[j]
        ids = torch.tensor([pair.encode(prompt) if isinstance(prompt, str) else list(prompt)], device=pair.device)
        torch.manual_seed(seed * 1000 + j)
        kw = dict(max_new_tokens=max_new, do_sample=T > 0, top_k=None, top_p=None,
                  pad_token_id=pair.tokenizer.pad_token_id if pair.tokenizer.pad_token_id is not None
                  else min(pair.eos_ids), eos_token_id=sorted(pair.eos_ids) or None)
        if T > 0:
            kw["temperature"] = T
        extra = {}
        gen_cfg = pair.draft.generation_config
        saved = {k: getattr(gen_cfg, k, None) for k in
                 ("num_assistant_tokens", "num_assistant_tokens_schedule", "assistant_confidence_threshold")}
        if assistant:
            extra["assistant_model"] = pair.draft
            if L is not None:       # constant L, no early stop on the draft's confidence
                gen_cfg.num_assistant_tokens = L
                gen_cfg.num_assistant_tokens_schedule = "constant"
                gen_cfg.assistant_confidence_threshold = 0.0
            else:                   # HF's defaults, reset at every call
                gen_cfg.num_assistant_tokens_schedule = "heuristic_transient"
        try:
            with torch.inference_mode():
                out = pair.target.generate(ids, attention_mask=torch.ones_like(ids),
                                           generation_config=GenerationConfig(**kw), **extra)
        finally:
            for k, v in saved.items():
                setattr(gen_cfg, k, v)
        n = int(out.shape[1] - ids.shape[1])
        return n, 0, 0, {}
    return run


def forward_seconds(model, device, vocab_size: int, tokens: int = 1, rows: int = 1, context: int = 64,
                    repeats: int = 30) -> float:
    """Seconds per forward pass that feeds ``rows`` × ``tokens`` new tokens after a KV cache of
    ``context`` tokens per row (random ids, seeded), best of three means of ``repeats`` passes."""
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(0, vocab_size, (1, context), generator=gen).expand(rows, -1).to(device)
    new = torch.randint(0, vocab_size, (rows, tokens), generator=gen).to(device)
    best = float("inf")
    with torch.inference_mode():
        cache = model(input_ids=ids, use_cache=True).past_key_values
        for _ in range(3):
            t0 = time.perf_counter()
            for _ in range(repeats):
                model(input_ids=new, past_key_values=cache, use_cache=True)
                cache.crop(-tokens)
            synchronize(torch.device(device))
            best = min(best, (time.perf_counter() - t0) / repeats)
    return best


def forward_costs(pair: ModelPair, context: int = 64, repeats: int = 30) -> dict:
    """Seconds per single-token forward pass with a KV cache of ``context`` tokens, per model."""
    out = {f"{role}_forward_s": forward_seconds(model, pair.device, pair.vocab_size, context=context,
                                                repeats=repeats)
           for role, model in (("target", pair.target), ("draft", pair.draft))}
    out["cost_ratio"] = out["target_forward_s"] / out["draft_forward_s"]
    return out


def pair_acceptance(pair: ModelPair, prompts, n_tokens: int = 64, seed: int = 0) -> float:
    """Mean over positions of 1 − TV(p, q) = Σ_x min(p(x), q(x)) at T = 1, along target samples."""
    from core.decoding import next_token_probs
    vals = []
    ar = AutoregressiveDecoder(pair, SamplingConfig(1.0))
    with torch.inference_mode():
        for j, prompt in enumerate(prompts):
            g = ar.generate(prompt, n_tokens, np.random.default_rng([seed, 99, j]))
            seq = torch.tensor([g.prompt_ids + g.tokens], device=pair.device)
            n0 = len(g.prompt_ids)
            pq = [next_token_probs(m(input_ids=seq).logits[0, n0 - 1:-1], pair.vocab_size,
                                   SamplingConfig(1.0)) for m in (pair.draft, pair.target)]
            vals.extend(np.minimum(pq[0], pq[1]).sum(axis=1).tolist())
    return float(np.mean(vals))


def prompt_sets(pair: ModelPair, cfg: BenchConfig) -> list[tuple[int | None, list]]:
    """(context, prompts) for each prompt set: the built-in ``PROMPTS`` (context None) or, for
    each length in ``cfg.contexts``, ``cfg.prompts`` windows of that many held-out tokens."""
    if not cfg.contexts:
        return [(None, (PROMPTS * cfg.prompts)[: cfg.prompts])]
    return [(n, heldout_windows(pair.tokenizer, cfg.prompts, n, cfg.seed)) for n in cfg.contexts]


def run_bench(pair: ModelPair, cfg: BenchConfig, progress: Callable[[str], None] | None = None) -> dict:
    say = progress or (lambda msg: None)
    sets = prompt_sets(pair, cfg)
    started = time.time()
    # warm-up (first calls allocate)
    SpeculativeDecoder(pair, "sd", 2, 2, SamplingConfig(1.0), trace=False).generate(PROMPTS[0], 8, 0)
    AutoregressiveDecoder(pair, SamplingConfig(1.0)).generate(PROMPTS[0], 8, 0)

    info = {"threads": torch.get_num_threads(), "device": str(pair.device), "dtype": str(pair.dtype),
            "target": pair.target_name, "draft": pair.draft_name, "prompts": cfg.prompts,
            "contexts": list(cfg.contexts), "max_new_tokens": cfg.max_new_tokens, "seed": cfg.seed}
    if hasattr(os, "getloadavg"):
        info["load_average_at_start"] = os.getloadavg()[0]
    record = Path(pair.target_name).parent / "training.json"
    if record.is_file():                    # a pair trained by toy_models/train_pair.py
        rec = json.loads(record.read_text())
        info["val_loss"] = {k: rec[k].get("final_val_loss") for k in ("draft", "target") if k in rec}
        if "draft_distillation" in rec:     # the exported draft is the distilled one
            info["val_loss"]["draft"] = rec["draft_distillation"].get("final_val_loss")
    info.update(forward_costs(pair))
    say(f"forward cost: target {info['target_forward_s']*1e3:.2f} ms, draft "
        f"{info['draft_forward_s']*1e3:.2f} ms, ratio {info['cost_ratio']:.1f}")
    info["mean_acceptance_T1"] = pair_acceptance(pair, PROMPTS[:2], 48, cfg.seed)
    say(f"mean single-token acceptance 1 - TV at T=1: {info['mean_acceptance_T1']:.3f}")

    rows, baselines = [], []
    grid = list(_grid(cfg))
    sequoia = sequoia_plans(pair, cfg, say)
    if sequoia:
        info["sequoia"] = {str(T): v["info"] for T, v in sequoia.items()}
    for context, prompts in sets:
        where = "" if context is None else f" context={context}"
        for T in cfg.temperatures:
            sampling = SamplingConfig(T)
            runs = {("autoregressive", None): _ours(AutoregressiveDecoder(pair, sampling), prompts,
                                                    cfg.max_new_tokens, cfg.seed)}
            for m, plan, T_ in grid + [("rrs", p, T) for p in sequoia.get(T, {}).get("plans", ())]:
                if T_ == T:
                    runs[("spec", m, plan)] = _ours(SpeculativeDecoder(pair, m, sampling=sampling, plan=plan,
                                                                       trace=False),
                                                    prompts, cfg.max_new_tokens, cfg.seed)
            if cfg.hf:
                for name, assisted, L in [("hf_generate", False, None)] + \
                        [("hf_assisted", True, L) for L in cfg.Ls] + [("hf_assisted_default", True, None)]:
                    runs[(name, L)] = _hf(pair, prompts, cfg.max_new_tokens, cfg.seed, T, assisted, L)
            say(f"T={T}{where}: {len(runs)} configurations, interleaved over {len(prompts)} prompts")
            results = _interleaved(runs, len(prompts))
            ar_tps = results[("autoregressive", None)]["tokens_per_second"]
            for key, r in results.items():
                if key[0] == "spec":
                    _, m, plan = key
                    K, L = plan.K, plan.L
                    rows.append({"method": m, "K": K, "L": L, "temperature": T, "context": context,
                                 "draft": plan.label, "plan": plan.describe(), "budget": plan.budget,
                                 "iid_chains": bool(plan.iid_chains),
                                 "single_chain": isinstance(plan, StaticPlan) and plan.shape.leaves == 1,
                                 "lossless": bool(get_verifier(m).lossless_by_theory), **r,
                                 "speedup_vs_autoregressive": r["tokens_per_second"] / ar_tps})
                    say(f"{m:>13} {plan.label} T={T}{where}: BE {r['block_efficiency']:.3f}, "
                        f"{r['tokens_per_second']:.1f} tok/s, "
                        f"{1e3 * r.get('seconds_per_iteration', 0):.1f} ms/iteration, "
                        f"verify {r.get('verify_fraction', 0):.1%}")
                else:
                    name, L = key
                    b = {"name": name, "temperature": T, "context": context, "L": L,
                         "tokens_per_second": r["tokens_per_second"],
                         "speedup_vs_autoregressive": r["tokens_per_second"] / ar_tps}
                    if name == "autoregressive":
                        b["peak_cache_bytes"] = r.get("peak_cache_bytes")
                    baselines.append(b)
                    say(f"{name} L={L} T={T}{where}: {r['tokens_per_second']:.1f} tok/s")
    if hasattr(os, "getloadavg"):
        info["load_average_at_end"] = os.getloadavg()[0]
    return {"info": info, "rows": rows, "baselines": baselines, "goals": goals(rows, baselines),
            "elapsed_s": time.time() - started}


#: A K = 4, L = 4 iteration over SD's (same L, T, context), at most this much; contexts of
#: at least ``LONG_CONTEXT`` tokens take the first bound, shorter ones the second.
ITERATION_RATIO_GOAL = (1.5, 1.3)
LONG_CONTEXT = 512
#: The best tree of at most ``TREE_BUDGET`` drafted tokens against the best single chain
#: (tokens/s, ≥ the first) and against autoregressive decoding (≥ the second), per T and context.
TREE_GOAL = (1.15, 1.8)
TREE_BUDGET = 16


def sequoia_plans(pair: ModelPair, cfg: BenchConfig, say: Callable[[str], None]) -> dict:
    """For each temperature, the positional acceptance measured on the target's own continuations
    (48 tokens) of ``cfg.sequoia_prompts`` held-out prompts of 64 tokens, seeded apart from the
    benchmark's prompts, and
    Sequoia's best tree for each budget of ``cfg.sequoia`` (``core.bench.acceptance``):
    {T: {"plans": [...], "info": {...}}}."""
    if not cfg.sequoia:
        return {}
    from core.bench.acceptance import positional_acceptance, target_continuations
    prompts = heldout_windows(pair.tokenizer, cfg.sequoia_prompts, 64, cfg.seed + 101)
    out = {}
    for T in cfg.temperatures:
        windows = target_continuations(pair, prompts, 48, SamplingConfig(T), cfg.seed)
        acc = positional_acceptance(pair, windows, SamplingConfig(T), ranks=max(cfg.sequoia), min_context=64)
        plans, trees = [], []
        for n in cfg.sequoia:
            tree = acc.best_tree(n, cfg.sequoia_depth)
            plans.append(RankTreePlan(tree.paths))
            value, lo, hi = acc.predicted(tree.paths, resamples=500, seed=cfg.seed)
            trees.append({"budget": n, "depth": plans[-1].L, "paths": [list(p) for p in tree.paths],
                          "predicted_tau": value, "predicted_tau_ci95": [lo, hi]})
            say(f"T={T}: Sequoia's tree for {n} nodes has depth {plans[-1].L}, predicted E[τ] "
                f"{value:.2f} ({lo:.2f}-{hi:.2f}); a_1..4 = {np.round(acc.accept[:4], 3).tolist()}")
        out[T] = {"plans": plans, "info": {"acceptance": acc.to_dict(), "trees": trees}}
    return out


def goals(rows: list[dict], baselines: list[dict]) -> dict:
    """The benchmark's targets, evaluated on this run (None where the grid lacks the rows): the best
    multi-draft rule's block efficiency at K = 4 over SD's (≥ 1.25), the best lossless speed-up over
    autoregressive decoding (≥ 1.3), and SD at K = 1 against transformers' assisted generation
    (≥ 1.0); rows are compared within one prompt set (``context``)."""
    out: dict = {}
    by = {(r["method"], r["K"], r["L"], r["temperature"], r.get("context")): r for r in rows
          if r.get("iid_chains", True)}
    ratios = []
    for (m, K, L, T, c), r in by.items():
        sd = by.get(("sd", 1, L, T, c))
        if K == 4 and T > 0 and sd and not get_verifier(m).single_draft:
            ratios.append({"method": m, "L": L, "temperature": T, "context": c,
                           "ratio": r["block_efficiency"] / sd["block_efficiency"]})
    best = max(ratios, key=lambda d: d["ratio"]) if ratios else None
    out["multi_draft_be_over_sd_at_K4"] = {"target": 1.25, "best": best, "all": ratios,
                                           "met": bool(best and best["ratio"] >= 1.25)}
    lossless = [r for r in rows if r["lossless"] and "speedup_vs_autoregressive" in r]
    best = max(lossless, key=lambda r: r["speedup_vs_autoregressive"]) if lossless else None
    out["best_lossless_speedup"] = {
        "target": 1.3, "met": bool(best and best["speedup_vs_autoregressive"] >= 1.3),
        "best": None if best is None else {k: best.get(k) for k in ("method", "K", "L", "temperature", "context",
                                                                    "speedup_vs_autoregressive")}}
    per_T = {}
    for r in lossless:
        T = r["temperature"]
        if T not in per_T or r["speedup_vs_autoregressive"] > per_T[T]["speedup_vs_autoregressive"]:
            per_T[T] = {k: r.get(k) for k in ("method", "K", "L", "context", "speedup_vs_autoregressive")}
    out["best_lossless_speedup"]["per_temperature"] = {str(T): v for T, v in per_T.items()}
    cmp = []
    for b in baselines:
        if b["name"] == "hf_assisted" and b["L"] is not None:
            sd = by.get(("sd", 1, b["L"], b["temperature"], b.get("context")))
            if sd:
                cmp.append({"L": b["L"], "temperature": b["temperature"], "context": b.get("context"),
                            "ratio": sd["tokens_per_second"] / b["tokens_per_second"]})
    out["sd_k1_over_hf_assisted"] = {"target": 1.0, "all": cmp,
                                     "met": bool(cmp) and all(c["ratio"] >= 1.0 for c in cmp)}
    fr = [r["verify_fraction"] for r in rows if "verify_fraction" in r]
    out["verify_fraction"] = {"target": 0.10, "max": max(fr) if fr else None,
                              "median": float(np.median(fr)) if fr else None,
                              "met": bool(fr) and max(fr) < 0.10}
    cost, memory = [], []
    for (m, K, L, T, c), r in by.items():
        sd = by.get(("sd", 1, L, T, c))
        if K == 4 and L == 4 and sd and "seconds_per_iteration" in r and "seconds_per_iteration" in sd:
            bound = ITERATION_RATIO_GOAL[0 if (c or 0) >= LONG_CONTEXT else 1]
            ratio = r["seconds_per_iteration"] / sd["seconds_per_iteration"]
            # prompt by prompt (interleaved runs, so under the same load): the spread of the ratio
            paired = sorted(a / b for a, b in zip(r["seconds_per_iteration_per_prompt"],
                                                  sd["seconds_per_iteration_per_prompt"]))
            cost.append({"method": m, "temperature": T, "context": c, "ratio": ratio, "target": bound,
                         "met": ratio <= bound, "per_prompt_ratios": paired})
            if r.get("peak_cache_bytes") and sd.get("peak_cache_bytes"):
                memory.append({"method": m, "temperature": T, "context": c,
                               "ratio": r["peak_cache_bytes"] / sd["peak_cache_bytes"]})
    out["iteration_time_over_sd_K4_L4"] = {"all": cost, "met": bool(cost) and all(d["met"] for d in cost)}
    out["kv_cache_bytes_over_sd_K4_L4"] = {"all": memory, "max": max((d["ratio"] for d in memory), default=None)}
    out["best_tree"] = best_tree_goal(rows, baselines)
    return out


def best_tree_goal(rows: list[dict], baselines: list[dict]) -> dict:
    """Per (T, context): the fastest multi-draft configuration of at most ``TREE_BUDGET`` drafted
    tokens (any shape: chains of K > 1, a static, rank-path or dynamic tree) over the fastest single
    chain (K = 1) and over autoregressive decoding, in tokens/s (goals: ≥ 1.15 and ≥ 1.8 on
    SmolLM2 at T = 0.7)."""
    out = []
    for T, c in sorted({(r["temperature"], r.get("context")) for r in rows}, key=str):
        here = [r for r in rows if r["temperature"] == T and r.get("context") == c and r["lossless"]]
        trees = [r for r in here if not r.get("single_chain", r["K"] == 1) and r.get("budget", 0) <= TREE_BUDGET]
        singles = [r for r in here if r.get("single_chain", r["K"] == 1)]
        ar = next((b for b in baselines if b["name"] == "autoregressive" and b["temperature"] == T
                   and b.get("context") == c), None)
        if not trees or not singles or ar is None:
            continue
        tree = max(trees, key=lambda r: r["tokens_per_second"])
        single = max(singles, key=lambda r: r["tokens_per_second"])
        over_single = tree["tokens_per_second"] / single["tokens_per_second"]
        over_ar = tree["tokens_per_second"] / ar["tokens_per_second"]
        out.append({"temperature": T, "context": c, "tree": f"{tree['method']} {tree.get('draft')}",
                    "single_chain": f"{single['method']} {single.get('draft')}",
                    "over_single_chain": over_single, "over_autoregressive": over_ar,
                    "met": over_single >= TREE_GOAL[0] and over_ar >= TREE_GOAL[1]})
    return {"targets": {"over_single_chain": TREE_GOAL[0], "over_autoregressive": TREE_GOAL[1],
                        "budget_at_most": TREE_BUDGET}, "all": out}


def format_table(result: dict) -> str:
    """The rows as text: each configuration's draft, block efficiency ± SE, speed, verification's
    share and, with contexts, its iteration's time split and KV-cache bytes."""
    head = f"{'method':>13} {'draft':<44} {'T':>4} {'ctx':>5} {'BE':>6} {'± SE':>5} {'tok/s':>7} " \
           f"{'x AR':>5} {'verify':>6}"
    lines = [head]
    for r in result["rows"]:
        se = r.get("block_efficiency_se")
        lines.append(f"{r['method']:>13} {r.get('draft', ''):<44} {r['temperature']:>4} {str(r.get('context')):>5} "
                     f"{r['block_efficiency'] or 0:6.3f} {se if se is not None else float('nan'):5.2f} "
                     f"{r['tokens_per_second']:7.1f} {r['speedup_vs_autoregressive']:5.2f} "
                     f"{100 * r.get('verify_fraction', 0):5.1f}%")
    if any("iteration_ms" in r for r in result["rows"]):
        lines += ["", "per iteration, ms: draft / target / verify / cache / other = total; peak KV cache"]
        for r in result["rows"]:
            ms = r.get("iteration_ms")
            if ms:
                lines.append(f"{r['method']:>13} {r.get('draft', '')} T={r['temperature']} "
                             f"context={r.get('context')}: " + " / ".join(f"{ms[k]:.2f}" for k in ms)
                             + f" = {sum(ms.values()):.2f} ms; {r.get('peak_cache_bytes', 0) / 2**20:.2f} MiB"
                             + f" ({r.get('attention')})")
    lines.append("")
    for b in result["baselines"]:
        lines.append(f"{b['name']:>20} T={b['temperature']} context={b.get('context')} L={b.get('L')}: "
                     f"{b['tokens_per_second']:.1f} tok/s")
    lines.append("")
    lines.append(json.dumps(result["goals"], indent=1, default=str))
    return "\n".join(lines)
