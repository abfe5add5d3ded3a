"""Train the bundled draft/target pair on the Python standard library's own source files.

The corpus is every ``.py`` file under ``sysconfig.get_paths()["stdlib"]`` (``site-packages``
excluded), found at run time, so every machine with Python has it and it is never committed.  Files
are split by a hash of their relative path: about 1 in 50 goes to the held-out validation split.

Steps, all seeded:

1. a byte-level BPE tokenizer (``tokenizers`` library) trained on the training split, saved as a
   ``PreTrainedTokenizerFast`` (``tokenizer.json``); both models share it, token 0 is
   ``<|endoftext|>`` (BOS = EOS = PAD), and it separates documents;
2. the draft, a one-layer Llama of width 128 (0.74 M parameters, cheap), then the target, an
   eight-layer Llama of width 256 (7.5 M parameters, about 11x the draft's one-token forward cost on
   one CPU thread), each trained from scratch with AdamW on random windows of the token stream, with
   periodic validation and resumable checkpoints in ``<out>/checkpoints/`` (git-ignored);
3. the draft again, by distillation from the exported target (``--only distill``): KL(q‖p) at
   T = 1 on random training windows, starting from the first stage's checkpoint; it raises the
   pair's acceptance 1 − TV, which is what speculative decoding pays for (``distill_draft``);
4. export in Hugging Face format to ``<out>/draft`` and ``<out>/target`` (``config.json``,
   ``model.safetensors`` stored in float16 to keep the repository small, ``tokenizer.json``); the
   config says float32, so ``from_pretrained(directory)`` loads float32 weights by default.
   ``<out>/training.json`` records the configurations, steps, and validation losses.

Run it in the background, one process per model (each checkpoints and resumes; ``--threads 1``
leaves the other core free)::

    nohup python -m toy_models.train_pair --out toy_models/pystdlib --threads 1 --only draft \
        --draft-steps 600 --eval-every 100 > draft.log 2>&1 &
    nohup python -m toy_models.train_pair --out toy_models/pystdlib --threads 1 --only target \
        --target-steps 1100 --target-batch 8 --target-lr 2e-3 --eval-every 50 > target.log 2>&1 &
    # when both are done:
    nohup python -m toy_models.train_pair --out toy_models/pystdlib --threads 1 --only distill \
        --distill-steps 1200 --distill-lr 1e-3 --eval-every 100 > distill.log 2>&1 &

The export step runs again at every validation, so a usable pair exists long before the end.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import sysconfig
import time
from pathlib import Path

import numpy as np

from toy_models.corpus import corpus_files, read_texts

EOT = "<|endoftext|>"

DRAFT_CONFIG = dict(hidden_size=128, num_hidden_layers=1, num_attention_heads=4,
                    num_key_value_heads=4, intermediate_size=384)
TARGET_CONFIG = dict(hidden_size=256, num_hidden_layers=8, num_attention_heads=4,
                     num_key_value_heads=4, intermediate_size=704)


def train_tokenizer(texts: list[str], vocab_size: int, out_dir: Path):
    """Byte-level BPE with one special token; returns a transformers PreTrainedTokenizerFast."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[EOT],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=EOT, eos_token=EOT,
                                   pad_token=EOT, unk_token=None)
    fast.model_max_length = 1024
    fast.save_pretrained(out_dir)
    return fast


def encode_stream(tokenizer, texts: list[str]) -> np.ndarray:
    """All documents as one int32 token stream, each followed by <|endoftext|>."""
    eot = tokenizer.convert_tokens_to_ids(EOT)
    ids = tokenizer(texts, add_special_tokens=False)["input_ids"]
    out = []
    for doc in ids:
        out.extend(doc)
        out.append(eot)
    return np.asarray(out, dtype=np.int32)


def make_config(kind: str, vocab_size: int, eot: int):
    from transformers import LlamaConfig
    arch = DRAFT_CONFIG if kind == "draft" else TARGET_CONFIG
    cfg = LlamaConfig(vocab_size=vocab_size, max_position_embeddings=1024, rms_norm_eps=1e-5,
                      tie_word_embeddings=True, bos_token_id=eot, eos_token_id=eot,
                      pad_token_id=eot, **arch)
    return cfg


def evaluate(model, val: np.ndarray, seq_len: int, n_windows: int = 48) -> float:
    """Mean next-token cross-entropy (nats) over fixed, evenly spaced validation windows."""
    import torch
    starts = np.linspace(0, len(val) - seq_len - 2, n_windows).astype(np.int64)
    model.eval()
    total = 0.0
    with torch.no_grad():
        for i in range(0, n_windows, 8):
            x = torch.as_tensor(np.stack([val[s:s + seq_len + 1] for s in starts[i:i + 8]]),
                                dtype=torch.long)
            logits = model(input_ids=x[:, :-1], use_cache=False).logits.float()
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                     x[:, 1:].reshape(-1))
            total += float(loss) * len(starts[i:i + 8])
    model.train()
    return total / n_windows


def evaluate_acceptance(draft, target, val: np.ndarray, seq_len: int, n_windows: int = 48) -> float:
    """Mean single-token acceptance 1 − TV(p, q) = Σ_x min(p(x), q(x)) at T = 1, over every position
    of the same validation windows as ``evaluate`` (teacher-forced on the held-out text)."""
    import torch
    starts = np.linspace(0, len(val) - seq_len - 2, n_windows).astype(np.int64)
    draft.eval()
    total = 0.0
    with torch.no_grad():
        for i in range(0, n_windows, 8):
            x = torch.as_tensor(np.stack([val[s:s + seq_len] for s in starts[i:i + 8]]),
                                dtype=torch.long)
            p = torch.softmax(draft(input_ids=x, use_cache=False).logits.double(), dim=-1)
            q = torch.softmax(target(input_ids=x, use_cache=False).logits.double(), dim=-1)
            total += float(torch.minimum(p, q).sum(-1).mean()) * len(starts[i:i + 8])
    draft.train()
    return total / n_windows


def export(model, tokenizer, out_dir: Path) -> None:
    """Save in HF format: float16 safetensors, config dtype float32, and the tokenizer."""
    import copy
    import torch
    out_dir.mkdir(parents=True, exist_ok=True)
    half = copy.deepcopy(model).to(torch.float16)
    half.config.dtype = "float32"
    half.save_pretrained(out_dir, safe_serialization=True)
    cfg = json.loads((out_dir / "config.json").read_text())
    cfg["dtype"] = "float32"
    cfg.pop("torch_dtype", None)
    (out_dir / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    tokenizer.save_pretrained(out_dir)


def cosine_lr(step: int, steps: int, lr: float) -> float:
    """Linear warm-up over the first 5% of steps, then cosine decay from lr to lr/10."""
    warmup = max(1, steps // 20)
    if step < warmup:
        return lr * (step + 1) / warmup
    frac = (step - warmup) / max(1, steps - warmup)
    return lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, frac))))


def new_model(kind: str, tokenizer, lr: float, ckpt: Path, log):
    """(model, AdamW optimizer, step, history), resumed from ``ckpt`` when it exists."""
    import torch
    from transformers import LlamaForCausalLM
    model = LlamaForCausalLM(make_config(kind, len(tokenizer), tokenizer.convert_tokens_to_ids(EOT)))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.1)
    step, history = 0, []
    if ckpt.exists():
        state = torch.load(ckpt, weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step, history = state["step"], state["history"]
        log(f"{ckpt.stem}: resumed at step {step}")
    return model, opt, step, history


def optimize(name: str, model, opt, step: int, history: list, *, steps: int, lr: float,
             batch_loss, validate, eval_every: int, ckpt: Path, export_to, log) -> None:
    """The loop both stages share: AdamW under ``cosine_lr``, gradients clipped at norm 1, a log
    line every 25 steps; every ``eval_every`` steps and at the end, ``validate()`` (a dict of
    figures) joins ``history`` with the step and the last training loss, then a resumable
    checkpoint and an export.  ``batch_loss(step)`` returns the loss of that step's batch."""
    import torch
    model.train()
    t0 = time.time()
    while step < steps:
        for g in opt.param_groups:
            g["lr"] = cosine_lr(step, steps, lr)
        loss = batch_loss(step)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        if step % 25 == 0:
            log(f"{name} step {step}/{steps} loss {float(loss.detach()):.4f} "
                f"({(time.time() - t0) / 25:.2f}s/step)")
            t0 = time.time()
        if step % eval_every == 0 or step == steps:
            figures = validate()
            history.append({"step": step, **figures, "train_loss": float(loss.detach())})
            log(f"{name} step {step} " + " ".join(f"{k} {v:.4f}" for k, v in figures.items()))
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step,
                        "history": history}, ckpt)
            export_to(model)
            model.train()
            t0 = time.time()


def windows(stream: np.ndarray, seed: int, stage: int, step: int, batch: int, seq_len: int,
            shifted: bool):
    """The step's batch: ``batch`` windows of ``seq_len`` tokens (+ 1 when ``shifted``, for
    next-token targets) at seeded random offsets in [0, len − seq_len − 1)."""
    import torch
    rng = np.random.default_rng([seed, stage, step])
    starts = rng.integers(0, len(stream) - seq_len - 1, size=batch)
    n = seq_len + int(shifted)
    return torch.as_tensor(np.stack([stream[s:s + n] for s in starts]), dtype=torch.long)


def train_one(kind: str, args, tokenizer, train: np.ndarray, val: np.ndarray, log) -> dict:
    """Train (or resume) one model by next-token cross-entropy; returns its record for
    training.json."""
    import torch

    steps = args.draft_steps if kind == "draft" else args.target_steps
    lr = args.draft_lr if kind == "draft" else args.target_lr
    batch = args.batch if kind == "draft" or args.target_batch is None else args.target_batch
    torch.manual_seed(args.seed + (0 if kind == "draft" else 1))
    ckpt = Path(args.out) / "checkpoints" / f"{kind}.pt"
    model, opt, step, history = new_model(kind, tokenizer, lr, ckpt, log)
    n_params = sum(p.numel() for p in model.parameters())
    log(f"{kind}: {n_params/1e6:.2f}M parameters, {steps} steps, lr {lr}")

    def batch_loss(step: int):
        x = windows(train, args.seed, 7 if kind == "draft" else 11, step, batch, args.seq_len, True)
        logits = model(input_ids=x[:, :-1], use_cache=False).logits
        return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 x[:, 1:].reshape(-1))

    optimize(kind, model, opt, step, history, steps=steps, lr=lr, batch_loss=batch_loss,
             validate=lambda: {"val_loss": evaluate(model, val, args.seq_len)},
             eval_every=args.eval_every, ckpt=ckpt,
             export_to=lambda m: export(m, tokenizer, Path(args.out) / kind), log=log)
    return {"config": dict(DRAFT_CONFIG if kind == "draft" else TARGET_CONFIG),
            "parameters": n_params, "steps": steps, "lr": lr, "batch": batch,
            "seq_len": args.seq_len, "history": history,
            "final_val_loss": history[-1]["val_loss"] if history else None}


def distill_draft(args, tokenizer, train: np.ndarray, val: np.ndarray, log) -> dict:
    """Continue the cross-entropy-trained draft by distillation from the exported target.

    Loss: KL(q ‖ p) = Σ_x q(x) (log q(x) − log p(x)) per position, q the target's and p the draft's
    next-token law at T = 1, on random training windows.  Minimising the forward KL pulls p towards
    q everywhere q has mass, which is what raises Σ_x min(p, q), the acceptance rate of token-level
    speculative sampling (Leviathan et al. 2023, §3.5); DistillSpec (Zhou et al. 2024) reports
    forward KL among the best divergences for this purpose.  Starts from ``checkpoints/draft.pt``
    (the first stage), checkpoints to ``checkpoints/distill.pt`` and exports to ``<out>/draft``.
    """
    import torch
    from transformers import LlamaForCausalLM

    out = Path(args.out)
    ckpt = out / "checkpoints" / "distill.pt"
    teacher = LlamaForCausalLM.from_pretrained(out / "target", dtype=torch.float32).eval()
    for prm in teacher.parameters():
        prm.requires_grad_(False)
    model, opt, step, history = new_model("draft", tokenizer, args.distill_lr, ckpt, log)

    def validate() -> dict:
        return {"val_loss": evaluate(model, val, args.seq_len),
                "acceptance": evaluate_acceptance(model, teacher, val, args.seq_len)}

    if not history:
        first = out / "checkpoints" / "draft.pt"
        if not first.exists():
            raise SystemExit(f"distillation starts from the first stage's {first}; "
                             "run --only draft first")
        model.load_state_dict(torch.load(first, weights_only=False)["model"])
        figures = validate()
        history.append({"step": 0, **figures})
        log("distill step 0 " + " ".join(f"{k} {v:.4f}" for k, v in figures.items()))
    log(f"distill: {args.distill_steps} steps, lr {args.distill_lr}, batch {args.batch}")

    def batch_loss(step: int):
        x = windows(train, args.seed, 13, step, args.batch, args.seq_len, False)
        with torch.no_grad():
            log_q = torch.log_softmax(teacher(input_ids=x, use_cache=False).logits, dim=-1)
        log_p = torch.log_softmax(model(input_ids=x, use_cache=False).logits, dim=-1)
        vocab = log_p.shape[-1]
        return torch.nn.functional.kl_div(log_p.reshape(-1, vocab), log_q.reshape(-1, vocab),
                                          log_target=True, reduction="batchmean")

    optimize("distill", model, opt, step, history, steps=args.distill_steps, lr=args.distill_lr,
             batch_loss=batch_loss, validate=validate, eval_every=args.eval_every, ckpt=ckpt,
             export_to=lambda m: export(m, tokenizer, out / "draft"), log=log)
    return {"loss": "KL(q || p) at T = 1 against the exported target (train_loss is that KL)",
            "steps": args.distill_steps, "lr": args.distill_lr, "batch": args.batch,
            "seq_len": args.seq_len, "history": history,
            "final_val_loss": history[-1]["val_loss"],
            "final_acceptance": history[-1]["acceptance"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="toy_models/pystdlib")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--vocab-size", type=int, default=4096)
    ap.add_argument("--seq-len", type=int, default=256)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--target-batch", type=int, default=None, help="batch for the target (default --batch)")
    ap.add_argument("--draft-steps", type=int, default=1500)
    ap.add_argument("--target-steps", type=int, default=2400)
    ap.add_argument("--draft-lr", type=float, default=3e-3)
    ap.add_argument("--target-lr", type=float, default=1e-3)
    ap.add_argument("--distill-steps", type=int, default=0,
                    help="steps of the third stage, distilling the draft from the target (0: skip)")
    ap.add_argument("--distill-lr", type=float, default=1e-3)
    ap.add_argument("--eval-every", type=int, default=200)
    ap.add_argument("--only", choices=["draft", "target", "distill"], default=None)
    args = ap.parse_args(argv)

    import torch
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    logf = open(out / "checkpoints" / "train.log", "a")

    def log(msg):
        line = f"{time.strftime('%H:%M:%S')} {msg}"
        print(line, flush=True)
        logf.write(line + "\n")
        logf.flush()

    from transformers import PreTrainedTokenizerFast
    train_files, val_files = corpus_files()
    tok_dir = out / "checkpoints" / "tokenizer"
    stream_path = out / "checkpoints" / "streams.npz"
    if (tok_dir / "tokenizer.json").exists() and stream_path.exists():
        tokenizer = PreTrainedTokenizerFast.from_pretrained(tok_dir)
        z = np.load(stream_path)
        train, val = z["train"], z["val"]
    else:
        log(f"corpus: {len(train_files)} train files, {len(val_files)} validation files "
            f"from {sysconfig.get_paths()['stdlib']}")
        train_texts, val_texts = read_texts(train_files), read_texts(val_files)
        tokenizer = train_tokenizer(train_texts, args.vocab_size, tok_dir)
        train, val = encode_stream(tokenizer, train_texts), encode_stream(tokenizer, val_texts)
        np.savez(stream_path, train=train, val=val)
    log(f"tokens: {len(train)} train, {len(val)} validation, vocabulary {len(tokenizer)}")

    record_path = out / "training.json"

    def save_record(**entries):
        # re-read first: the draft and the target may train in two processes at once
        record = json.loads(record_path.read_text()) if record_path.exists() else {}
        record.update(entries)
        record_path.write_text(json.dumps(record, indent=2) + "\n")

    save_record(**{"corpus": "Python standard library .py files (sysconfig stdlib), "
                             "validation = crc32(relative path) % 50 == 0",
                   "python": sys.version.split()[0], "train_tokens": int(len(train)),
                   "val_tokens": int(len(val)), "vocab_size": len(tokenizer), "seed": args.seed,
                   f"command_{args.only or 'both'}": "python -m toy_models.train_pair " + " ".join(argv or sys.argv[1:])})
    for kind in ("draft", "target"):
        if args.only and kind != args.only:
            continue
        save_record(**{kind: train_one(kind, args, tokenizer, train, val, log)})
    if args.only == "distill" or (args.only is None and args.distill_steps > 0):
        save_record(draft_distillation=distill_draft(args, tokenizer, train, val, log))
    log("done")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
