"""``python -m core decode ...`` and ``python -m core bench ...``: the real decoder from the shell.

``core.cli`` hands argv beginning with "decode" or "bench" to ``main`` here (imported lazily, so the
toy-model commands never import torch).  Every error is one line on stderr and exit status 2.  The
arguments are checked (``check_args``: the method, the pair's name or paths) before torch and
transformers are imported, so a typo is refused at once instead of after half a minute.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence


from core.cli.args import (LAW_METAVAR, CLIError, Parser, add_param_option, add_rule_option, int_range, law_arg,
                           load_rules, report_errors, rule_settings, temperature_arg)


def _top_p(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"top-p must be a number, got {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"top-p must be in (0, 1], got {text}")
    return value


def _list(parse):
    def parse_list(text: str):
        items = [t for t in text.split(",") if t.strip()]
        if not items:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {text!r}")
        return [parse(t.strip()) for t in items]
    return parse_list


def _add_pair(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pair", help="a bundled pair: toy or smollm2")
    p.add_argument("--target", metavar="PATH", help="target model: local directory or hub name")
    p.add_argument("--draft", metavar="PATH", help="draft model: local directory or hub name")
    p.add_argument("--device", help="cuda, mps or cpu (default: the first available)")
    p.add_argument("--dtype", choices=["float32", "float64", "float16", "bfloat16"],
                   help="model dtype (default float32 on CPU)")
    p.add_argument("--threads", type=int_range("threads", 1, 256),
                   help="torch CPU threads (default for decode: 1, or more when cores are idle and "
                        "measured clearly faster, core.decoding.threads; for bench: 1)")
    p.add_argument("--no-pack", action="store_true",
                   help="on a CPU, keep torch's own linear layers (default: large ones run through "
                        "oneDNN with packed weights, core.decoding.packed_linear)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m core", description="the real speculative decoder")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    dec = sub.add_parser("decode", help="speculative decoding over a Hugging Face model pair")
    _add_pair(dec)
    dec.add_argument("--method", required=True,
                     help="verification rule (sd, bv, spectr, ...; rrs = specinfer and traversal on any tree)")
    dec.add_argument("--K", type=int_range("K", 1, 64), default=None,
                     help="number of drafts (default 1); with --budget, the nodes expanded per depth (default 4)")
    dec.add_argument("--L", type=int_range("L", 1, 32), default=None,
                     help="draft length (default 4); with --budget, the tree's depth")
    dec.add_argument("--law", type=law_arg, metavar=LAW_METAVAR, default=None,
                     help="draft law (default iid): i.i.d. draws, without replacement (Gumbel-top-k), "
                          "the k most probable tokens, or the k - 1 most probable and one sampled")
    shape = dec.add_mutually_exclusive_group()
    shape.add_argument("--tree", metavar="B1,B2,...", help="a static token tree: a node of depth d gets "
                       "b_(d+1) draws by the law")
    shape.add_argument("--tree-paths", metavar="PATHS",
                       help="a topk tree of any shape as rank paths (1,2,1.1: the two best children of "
                            "the root and the best child of the first) or a .json file of them "
                            "(benchmarks/tree_shape.py writes Sequoia's best trees)")
    shape.add_argument("--budget", type=int_range("budget", 1, 512), default=None,
                       help="EAGLE-2's dynamic tree of this many nodes, depth --L, expanding --K nodes per depth")
    dec.add_argument("--temperature", type=temperature_arg, default=1.0)
    dec.add_argument("--top-k", type=int_range("top-k", 1), default=None)
    dec.add_argument("--top-p", type=_top_p, default=None)
    dec.add_argument("--seed", type=int, default=0)
    dec.add_argument("--max-new-tokens", type=int_range("max-new-tokens", 1), default=64)
    dec.add_argument("--prompt", default="")
    dec.add_argument("--num-samples", type=int_range("num-samples", 1), default=None,
                     help="also draw this many independent generations (sample j seeded (seed, j))")
    dec.add_argument("--trace", action="store_true", help="include the per-iteration traces")
    add_rule_option(dec)
    add_param_option(dec)
    dec.add_argument("--no-cache", action="store_true",
                     help="recompute every forward pass from scratch (reference; slow)")

    bench = sub.add_parser("bench", help="block efficiency and speed over a grid of K, L, T")
    _add_pair(bench)
    bench.add_argument("--methods", type=_list(str), default=None,
                       help="comma-separated methods (default: all but lp_optimal)")
    bench.add_argument("--K", dest="Ks", type=_list(int_range("K", 1, 64)), default=None)
    bench.add_argument("--L", dest="Ls", type=_list(int_range("L", 1, 32)), default=None)
    bench.add_argument("--temperatures", type=_list(temperature_arg), default=None)
    bench.add_argument("--max-new-tokens", type=int_range("max-new-tokens", 1), default=None)
    bench.add_argument("--prompts", type=int_range("prompts", 1), default=None,
                       help="how many prompts (of the built-in ones, or per context length)")
    bench.add_argument("--contexts", type=_list(int_range("contexts", 1, 100000)), default=None,
                       help="prompt lengths in tokens, e.g. 64,700: windows of held-out code instead of "
                            "the built-in prompts, with the time of an iteration split and the KV-cache bytes")
    bench.add_argument("--seed", type=int, default=0)
    add_rule_option(bench)
    bench.add_argument("--quick", action="store_true", help="a small grid (for smoke tests)")
    bench.add_argument("--no-hf", action="store_true", help="skip the Hugging Face generate baselines")
    bench.add_argument("--suite", choices=["trees"], default=None,
                       help="trees: the token-tree run, side by side: AR, single chains, 4x4 chains, a static "
                            "tree by every law, EAGLE-2's dynamic tree and Sequoia's tree (docs/decoder.md); "
                            "default T 0.7,0 and contexts 64,700")
    bench.add_argument("--budget", type=int_range("budget", 2, 64), default=16,
                       help="with --suite trees: the dynamic and Sequoia trees' nodes (default 16)")
    bench.add_argument("--sequoia-depth", type=int_range("sequoia-depth", 1, 16), default=None,
                       help="with --suite trees: the deepest Sequoia tree (default 6)")
    return parser


def check_args(args) -> None:
    """Refuse what can be refused without loading a model: unknown or toy-only methods, an unknown
    bundled pair, a path that is not a model directory (light modules only: no torch)."""
    from core.decoding.methods import check_method
    from core.decoding.presets import check_pair_name
    from core.decoding.sources import check_source
    load_rules(args)
    for m in ([args.method] if args.command == "decode" else (args.methods or [])):
        check_method(m)
    if args.command == "decode":
        from core.decoding.plans import check_plan, draft_plan
        args.plan = draft_plan(K=args.K, L=args.L, law=args.law, tree=args.tree, paths=args.tree_paths,
                               budget=args.budget)
        check_plan(args.method, args.plan)
    if args.pair and (args.target or args.draft):
        raise CLIError("give either --pair or --target and --draft, not both")
    if args.pair:
        check_pair_name(args.pair)
    elif not (args.target and args.draft):
        raise CLIError("give --pair toy (or smollm2), or both --target PATH and --draft PATH")
    else:
        check_source(args.target, "target")
        check_source(args.draft, "draft")


def _load(args):
    from core.decoding import load_pair, bundled_pair
    kwargs = dict(device=args.device, dtype=args.dtype, pack=not args.no_pack)
    if args.pair:
        return bundled_pair(args.pair, **kwargs)
    return load_pair(args.target, args.draft, **kwargs)


def cmd_decode(args) -> int:
    import torch

    from core.decoding import SamplingConfig, SpeculativeDecoder
    sampling = SamplingConfig(args.temperature, args.top_k, args.top_p)
    pair = _load(args)
    if args.threads is None:
        from core.decoding.threads import default_threads
        torch.set_num_threads(default_threads(pair))
    settings = rule_settings(args.param, [args.method], context={"temperature": args.temperature})[args.method]
    dec = SpeculativeDecoder(pair, args.method, sampling=sampling, plan=args.plan,
                             use_cache=not args.no_cache, trace=args.trace, params=settings)
    gen = dec.generate(args.prompt, args.max_new_tokens, args.seed)
    out = {"method": args.method, "K": dec.K, "L": dec.L, "draft": args.plan.describe(),
           "temperature": args.temperature,
           "top_k": args.top_k, "top_p": args.top_p, "seed": args.seed,
           "prompt_ids": gen.prompt_ids, "tokens": gen.tokens, "text": gen.text,
           "stop_reason": gen.stop_reason, "threads": torch.get_num_threads(), "metrics": gen.metrics.to_dict()}
    out.update({k: v for k, v in gen.metrics.to_dict().items() if k not in out})
    if args.trace:
        text = lambda t: pair.tokenizer.decode([t])  # noqa: E731
        out["iterations"] = [it.to_dict(text) for it in gen.iterations]
    if args.num_samples:
        samples = dec.sample(args.prompt, args.num_samples, args.max_new_tokens, args.seed)
        out["samples"] = [g.tokens for g in samples]
    if args.json:
        print(json.dumps(out))
    else:
        m = gen.metrics
        print(gen.text)
        print(f"-- {m.tokens_generated} tokens in {m.iterations} target calls, block efficiency "
              f"{m.block_efficiency:.3f}, {m.tokens_per_second:.1f} tokens/s "
              f"(draft {m.time_draft_s:.2f}s, target {m.time_target_s:.2f}s, verify {m.time_verify_s:.3f}s; "
              f"{m.attention}, {torch.get_num_threads()} torch thread(s); {m.draft}"
              f"{'' if m.law == args.plan.law.name else f' drafted by {m.law} at T = 0'})")
        if args.num_samples:
            for j, g in enumerate(out["samples"]):
                print(f"sample {j}: {g}")
    return 0


def cmd_bench(args) -> int:
    from core.bench.decoding import BenchConfig, format_table, run_bench
    from core.decoding import check_method
    if args.suite == "trees":       # the token-tree side-by-side run: its own methods, K, plans; no HF
        cfg = BenchConfig.trees(L=args.Ls[0] if args.Ls else 4, budget=args.budget)
        cfg = cfg.with_overrides(temperatures=args.temperatures, max_new_tokens=args.max_new_tokens,
                                 prompts=args.prompts, seed=args.seed, contexts=args.contexts,
                                 sequoia_depth=args.sequoia_depth)
    else:
        cfg = BenchConfig.default(quick=args.quick)
        cfg = cfg.with_overrides(methods=args.methods, Ks=args.Ks, Ls=args.Ls,
                                 temperatures=args.temperatures, max_new_tokens=args.max_new_tokens,
                                 prompts=args.prompts, seed=args.seed, hf=not args.no_hf,
                                 contexts=args.contexts)
    for m in cfg.methods:
        check_method(m)
    pair = _load(args)
    progress = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    result = run_bench(pair, cfg, progress=progress)
    if args.json:
        print(json.dumps(result))
    else:
        print(format_table(result))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)

    def run() -> int:
        args = build_parser().parse_args(argv)
        check_args(args)
        import torch
        from transformers.utils import logging as hf_logging
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        # one thread while loading, and then for bench; decode picks its own default once the pair
        # is loaded (core.decoding.threads: torch's default ran 16x slower on a busy machine)
        torch.set_num_threads(args.threads if args.threads is not None else 1)
        return {"decode": cmd_decode, "bench": cmd_bench}[args.command](args)

    return report_errors(run, "lower K, L or max-new-tokens")


if __name__ == "__main__":
    raise SystemExit(main())
