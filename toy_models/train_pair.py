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
3. export in Hugging Face format to ``<out>/draft`` and ``<out>/target`` (``config.json``,
   ``model.safetensors`` stored in float16 to keep the repository small, ``tokenizer.json``); the
   config says float32, so ``from_pretrained(directory)`` loads float32 weights by default.
   ``<out>/training.json`` records the configurations, steps, and validation losses.

Run it in the background, one process per model (each checkpoints and resumes; ``--threads 1``
leaves the other core free)::

    nohup python -m toy_models.train_pair --out toy_models/pystdlib --threads 1 --only draft \
        --draft-steps 600 --eval-every 100 > draft.log 2>&1 &
    nohup python -m toy_models.train_pair --out toy_models/pystdlib --threads 1 --only target \
        --target-steps 1100 --target-batch 8 --target-lr 2e-3 --eval-every 50 > target.log 2>&1 &

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


def train_one(kind: str, args, tokenizer, train: np.ndarray, val: np.ndarray, log) -> dict:
    """Train (or resume) one model; returns its record for training.json."""
    import torch
    from transformers import LlamaForCausalLM

    steps = args.draft_steps if kind == "draft" else args.target_steps
    lr = args.draft_lr if kind == "draft" else args.target_lr
    ckpt_dir = Path(args.out) / "checkpoints"
    ckpt = ckpt_dir / f"{kind}.pt"
    eot = tokenizer.convert_tokens_to_ids(EOT)
    torch.manual_seed(args.seed + (0 if kind == "draft" else 1))
    model = LlamaForCausalLM(make_config(kind, len(tokenizer), eot))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.1)
    step, history = 0, []
    if ckpt.exists():
        state = torch.load(ckpt, weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step, history = state["step"], state["history"]
        log(f"{kind}: resumed at step {step}")
    n_params = sum(p.numel() for p in model.parameters())
    log(f"{kind}: {n_params/1e6:.2f}M parameters, {steps} steps, lr {lr}")
    warmup = max(1, steps // 20)

    def lr_at(s):
        if s < warmup:
            return lr * (s + 1) / warmup
        frac = (s - warmup) / max(1, steps - warmup)
        return lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, frac))))

    model.train()
    t0 = time.time()
    while step < steps:
        rng = np.random.default_rng([args.seed, 7 if kind == "draft" else 11, step])
        batch = args.batch if kind == "draft" or args.target_batch is None else args.target_batch
        starts = rng.integers(0, len(train) - args.seq_len - 1, size=batch)
        x = torch.as_tensor(np.stack([train[s:s + args.seq_len + 1] for s in starts]),
                            dtype=torch.long)
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        logits = model(input_ids=x[:, :-1], use_cache=False).logits
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        if step % 25 == 0:
            log(f"{kind} step {step}/{steps} loss {float(loss.detach()):.4f} "
                f"({(time.time() - t0) / 25:.2f}s/step)")
            t0 = time.time()
        if step % args.eval_every == 0 or step == steps:
            vl = evaluate(model, val, args.seq_len)
            history.append({"step": step, "val_loss": vl, "train_loss": float(loss.detach())})
            log(f"{kind} step {step} val_loss {vl:.4f}")
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step,
                        "history": history}, ckpt)
            export(model, tokenizer, Path(args.out) / kind)
            t0 = time.time()
    return {"config": {k: v for k, v in (DRAFT_CONFIG if kind == "draft" else TARGET_CONFIG).items()},
            "parameters": n_params, "steps": steps, "lr": lr,
            "batch": args.batch if kind == "draft" or args.target_batch is None else args.target_batch,
            "seq_len": args.seq_len, "history": history,
            "final_val_loss": history[-1]["val_loss"] if history else None}


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
    ap.add_argument("--eval-every", type=int, default=200)
    ap.add_argument("--only", choices=["draft", "target"], default=None)
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
    log("done")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
