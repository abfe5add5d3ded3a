"""Distil the SmolLM2 draft p (``core/decoding/smollm2.py``: three Llama layers on the target's embedding
and on the target's output head restricted to the most frequent ids) from the target q,
SmolLM2-135M-Instruct, on the Python standard library's own .py files.

Corpus: every ``.py`` file under ``sysconfig.get_paths()["stdlib"]`` (site-packages excluded), split
by crc32(relative path) % 50 (the held-out split, 1 in 50 files, is never trained on; the benchmark
draws its prompts from it).  Steps, all seeded (each shard of windows from ``(seed, shard)``):

1. ``prepare``: tokenize both splits with the target's tokenizer; keep the ``--n-keep`` most frequent
   token ids of the training split (ties by id; the EOS id always kept) as the draft's output
   vocabulary.  Writes ``<ckpt>/corpus.npz``.
2. ``teacher``: the target labels windows of ``--seq`` tokens.  Shard i (``--windows`` windows) stores
   the token ids and the target's top ``--topk`` log-probabilities over the kept ids at T = 1
   (log-softmax over the kept ids).  An evaluation shard from the held-out split stores the
   target's kept logits and its full-vocabulary log-normalisers at T = 1 and T = 0.7, so that the
   exact single-token acceptance Σ_x min(p_T(x), q_T(x)) (= 1 − TV) at T = 0.7 can be computed.
3. ``train``: AdamW on the draft's layers, final norm and head bias (embedding and head rows frozen,
   layers initialised from target layers ``--init-layers``, more inserted while training by
   ``--grow``), loss = cross-entropy of the draft's
   kept-vocabulary distribution against the teacher's stored top-k probabilities (= KL(q‖p) up to a
   constant; from the pass given in ``--distill-T`` on, both at T = 0.7, the teacher renormalised
   over its top-k), plus, from the pass given in ``--tv``, w · (1 − Σ min(p, q)) over the top-k
   (``distill_loss``), batches of ``--batch`` windows.  Pass order: shard 0, 1, 2, ...; after each new
   shard i > 0, r_i replay passes over shards drawn uniformly from 0..i-1 (seeded; r_i from
   ``--replays``).  The learning rate warms up linearly over ``--warmup`` steps and is then
   piecewise constant by pass (``--lr``).  Nothing depends on the total, so a run stopped after P
   passes (``--passes P``) is a prefix of any longer run.  Every pass ends with a resumable
   checkpoint in ``<ckpt>/`` (git-ignored); every ``--eval-every`` passes the held-out acceptance
   is measured and the draft is exported to ``toy_models/smollm2_draft/`` (float16 weights +
   config.json with the figures).
4. ``export``: measure and export the latest checkpoint.

``<ckpt>`` is ``toy_models/smollm2_draft/checkpoints/``.  ``teacher`` and ``train`` can run at the
same time (``train`` waits for each shard file).  The defaults of ``--lr``, ``--replays``,
``--distill-T``, ``--tv`` and ``--grow`` are the schedule of the run that made the committed draft;
how that schedule was chosen, session by session, is in ``docs/smollm2.md``.  The run::

    python -m core.training.smollm2_draft prepare
    nohup python -m core.training.smollm2_draft teacher --shards 318 > toy_models/smollm2_draft/checkpoints/teacher.log 2>&1 &
    nohup python -m core.training.smollm2_draft train --shards 400 --passes 1112 > toy_models/smollm2_draft/checkpoints/train.log 2>&1 &
    python -m core.training.smollm2_draft export

The committed weights are that run after 1112 passes.  A pass order depends only on ``--shards``
through its prefix, so ``--shards 400`` replays the earlier sessions' passes (run with
``--shards 120``) exactly.  ``all`` runs prepare, teacher and train one after the other.  The result depends only on the
arguments and the seed, not on timing (up to floating-point nondeterminism of the CPU kernels).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

from toy_models.corpus import corpus_files, read_texts
from core.decoding.smollm2 import DRAFT_DIR, build_draft, load_target, save_draft

CKPT = DRAFT_DIR / "checkpoints"


def log(msg: str) -> None:
    print(time.strftime("%H:%M:%S"), msg, flush=True)


# ---------------------------------------------------------------------------------------------
# 1. prepare
# ---------------------------------------------------------------------------------------------

def encode_files(tokenizer, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """All files' token ids concatenated (int32) and the start offset of each file (n + 1)."""
    ids = tokenizer(texts, add_special_tokens=False)["input_ids"]
    offsets = np.cumsum([0] + [len(x) for x in ids]).astype(np.int64)
    flat = np.fromiter((t for x in ids for t in x), dtype=np.int32, count=int(offsets[-1]))
    return flat, offsets


def prepare(args) -> None:
    from transformers import AutoTokenizer
    from core.decoding.smollm2 import gguf_path

    path = gguf_path()
    tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    train_files, held_files = corpus_files()
    log(f"{len(train_files)} train files, {len(held_files)} held-out files")
    tr, tr_off = encode_files(tok, read_texts(train_files))
    he, he_off = encode_files(tok, read_texts(held_files))
    counts = np.bincount(tr, minlength=len(tok))
    order = np.lexsort((np.arange(len(counts)), -counts))        # by count desc, then id
    kept = list(order[:args.n_keep])
    if tok.eos_token_id is not None and tok.eos_token_id not in kept:
        kept[-1] = tok.eos_token_id
    kept = np.sort(np.array(kept, dtype=np.int64))
    coverage = counts[kept].sum() / counts.sum()
    he_cov = np.isin(he, kept).mean()
    log(f"train tokens {len(tr)}, held-out tokens {len(he)}; the {len(kept)} kept ids cover "
        f"{coverage:.4f} of training tokens and {he_cov:.4f} of held-out tokens")
    CKPT.mkdir(parents=True, exist_ok=True)
    np.savez(CKPT / "corpus.npz", train=tr, train_off=tr_off, held=he, held_off=he_off, kept=kept,
             coverage=np.array([coverage, he_cov]))


def load_corpus():
    z = np.load(CKPT / "corpus.npz")
    return {k: z[k] for k in z.files}


def sample_windows(tokens: np.ndarray, offsets: np.ndarray, n: int, seq: int,
                   rng: np.random.Generator) -> np.ndarray:
    """``n`` windows of ``seq`` tokens inside single files: a file drawn with probability ∝ its
    number of window starts, then a start (the file's beginning with probability 0.15, else
    uniform)."""
    lens = np.diff(offsets)
    starts = np.maximum(lens - seq + 1, 0).astype(np.float64)
    prob = starts / starts.sum()
    out = np.zeros((n, seq), dtype=np.int64)
    for i in range(n):
        f = int(rng.choice(len(lens), p=prob))
        off = 0 if rng.random() < 0.15 else int(rng.integers(0, starts[f]))
        a = int(offsets[f]) + off
        out[i] = tokens[a:a + seq]
    return out


# ---------------------------------------------------------------------------------------------
# 2. teacher
# ---------------------------------------------------------------------------------------------

def shard_path(i: int) -> Path:
    return CKPT / f"shard_{i:04d}.pt"


EVAL_PATH = CKPT / "eval.pt"


@torch.inference_mode()
def teacher(args) -> None:
    torch.manual_seed(args.seed)
    corpus = load_corpus()
    kept = torch.as_tensor(corpus["kept"])
    target, _ = load_target("cpu", torch.float32)
    W = target.get_output_embeddings().weight
    Wk = W[kept].contiguous()
    if not EVAL_PATH.exists():
        rng = np.random.default_rng([args.seed, 10**6])
        ids = torch.as_tensor(sample_windows(corpus["held"], corpus["held_off"], args.eval_windows,
                                             args.eval_seq, rng))
        kl, l1, l07 = [], [], []
        for b in range(0, len(ids), args.batch):
            h = target.model(input_ids=ids[b:b + args.batch], use_cache=False).last_hidden_state
            full = torch.nn.functional.linear(h, W)
            kl.append(full[..., kept].to(torch.float16))
            l1.append(torch.logsumexp(full, -1))
            l07.append(torch.logsumexp(full / 0.7, -1))
        torch.save({"ids": ids, "kept_logits": torch.cat(kl), "lse1": torch.cat(l1),
                    "lse07": torch.cat(l07)}, str(EVAL_PATH) + ".tmp")
        Path(str(EVAL_PATH) + ".tmp").replace(EVAL_PATH)
        log(f"eval shard: {tuple(ids.shape)}")
    for i in range(args.shards):
        if shard_path(i).exists():
            continue
        t0 = time.time()
        rng = np.random.default_rng([args.seed, i])
        ids = torch.as_tensor(sample_windows(corpus["train"], corpus["train_off"], args.windows,
                                             args.seq, rng))
        vals, idx = [], []
        for b in range(0, len(ids), args.batch):
            h = target.model(input_ids=ids[b:b + args.batch], use_cache=False).last_hidden_state
            lp = torch.log_softmax(torch.nn.functional.linear(h, Wk), -1)
            v, j = torch.topk(lp, args.topk, dim=-1)
            vals.append(v.to(torch.float16))
            idx.append(j.to(torch.int16))
        tmp = Path(str(shard_path(i)) + ".tmp")
        torch.save({"ids": ids, "vals": torch.cat(vals), "idx": torch.cat(idx)}, tmp)
        tmp.replace(shard_path(i))
        log(f"shard {i}: {ids.numel()} tokens in {time.time() - t0:.0f}s, top-{args.topk} mass "
            f"{torch.cat(vals).float().exp().sum(-1).mean():.4f}")


# ---------------------------------------------------------------------------------------------
# 3. train
# ---------------------------------------------------------------------------------------------

@torch.no_grad()
def evaluate(draft, ev: dict, T: float = 0.7, batch: int = 8) -> dict:
    """Mean over held-out positions of Σ_x min(p_T(x), q_T(x)) (exact: q_T's normaliser is over the
    full vocabulary, p_T is 0 outside the kept ids), the target's T-mass on the kept ids, and the
    mean KL(q‖p) at T = 1 restricted to the kept ids (q renormalised there)."""
    accs, masses, kls = [], [], []
    for b in range(0, len(ev["ids"]), batch):
        kp, _ = draft.kept_logits(input_ids=ev["ids"][b:b + batch], use_cache=False)
        kq = ev["kept_logits"][b:b + batch].float()
        q = torch.exp(kq / T - ev["lse07"][b:b + batch, :, None])
        p = torch.softmax(kp.float() / T, -1)
        accs.append(torch.minimum(p, q).sum(-1).flatten())
        masses.append(q.sum(-1).flatten())
        lq = torch.log_softmax(kq, -1)
        kls.append((lq.exp() * (lq - torch.log_softmax(kp.float(), -1))).sum(-1).flatten())
    return {"acceptance_T0.7": float(torch.cat(accs).mean()), "target_mass_on_kept_T0.7":
            float(torch.cat(masses).mean()), "kl_T1": float(torch.cat(kls).mean())}


def distill_loss(kept_logits: torch.Tensor, top_vals: torch.Tensor, top_idx: torch.Tensor, T: float,
                 w_tv: float = 0.0) -> torch.Tensor:
    """Mean over positions of  −Σ_j q_j log p(i_j)  +  w_tv · (1 − Σ_j min(p(i_j), q_j)).

    p = softmax(kept_logits / T) over the kept ids; (i_j, log q_j) are the teacher's stored top-k
    kept ids and T = 1 log-probabilities (``top_idx``, ``top_vals``).  At T = 1, q_j = exp(top_vals)
    (the top-k hold ~93% of the mass); at T ≠ 1 the teacher is renormalised over its top-k,
    q = softmax(top_vals / T).  The first term is KL(q‖p) up to a constant.  The second is the
    single-token rejection probability 1 − Σ_x min(p(x), q(x)) = TV(p, q) restricted to the top-k
    (outside them q is taken as 0, so p's mass there never counts as overlap): the acceptance
    itself, which speculative decoding rewards (DistillSpec, Zhou et al. 2023, distils with TV
    among other divergences for this reason).
    """
    logp = torch.log_softmax(kept_logits.float() / T, -1)
    if T == 1:
        tq = top_vals.float().exp()
    else:
        tq = torch.softmax(top_vals.float() / T, -1)
    lpk = logp.gather(-1, top_idx.long())
    loss = -(tq * lpk).sum(-1).mean()
    if w_tv:
        loss = loss + w_tv * (1 - torch.minimum(lpk.exp(), tq).sum(-1)).mean()
    return loss


def parse_replays(spec: str) -> list[tuple[int, int]]:
    """'0:1,7:2,10:3' -> [(0, 1), (7, 2), (10, 3)]: from shard 0 one replay, from 7 two, ..."""
    out = sorted((int(a), int(b)) for a, b in (part.split(":") for part in spec.split(",") if part))
    if not out or out[0][0] != 0:
        raise SystemExit("--replays must start at shard 0, e.g. 0:1,7:2")
    return out


def parse_lr(spec: str) -> list[tuple[int, float]]:
    """A piecewise-constant schedule by pass index: '5e-4' or '0:5e-4,24:1.5e-3' ->
    [(0, 5e-4), (24, 1.5e-3)] (learning rates, distillation temperatures)."""
    if ":" not in spec:
        return [(0, float(spec))]
    out = sorted((int(a), float(b)) for a, b in (part.split(":") for part in spec.split(",") if part))
    if out[0][0] != 0:
        raise SystemExit("a schedule must start at pass 0, e.g. 0:5e-4,24:1.5e-3")
    return out


def pass_order(shards: int, seed: int, replays: str = "0:1") -> list[int]:
    """Shard 0, 1, ...; after each new shard i > 0, r_i replay passes (``--replays``), each over a
    shard drawn uniformly from 0..i-1 (seeded)."""
    table = parse_replays(replays)
    rng = np.random.default_rng([seed, 7])
    order = []
    for i in range(shards):
        order.append(i)
        if i > 0:
            r = [b for a, b in table if a <= i][-1]
            for _ in range(r):
                order.append(int(rng.integers(0, i)))
    return order


def parse_grow(spec: str) -> list[tuple[int, int, int]]:
    """'816:1@15' -> [(816, 1, 15)]: at the start of pass 816 insert a layer at index 1, made from
    target layer 15 (``grow``).  An empty string: never."""
    out = []
    for part in filter(None, spec.split(",")):
        try:
            when, rest = part.split(":")
            at, source = rest.split("@")
            out.append((int(when), int(at), int(source)))
        except ValueError:
            raise SystemExit(f"--grow takes 'pass:index@target_layer,...', e.g. 816:1@15; got {part!r}") from None
    return sorted(out)


def grow(draft, target, at: int, source: int) -> None:
    """Insert a decoder layer into ``draft`` at index ``at``: target layer ``source``'s weights with
    both output projections (attention ``o_proj``, MLP ``down_proj``) zero.  The layer then adds
    nothing to the residual stream, so the draft's distribution is unchanged at the moment it grows
    (function-preserving growth, as in Net2Net, Chen et al. 2016); the gradients of the zero
    projections are not zero, so training starts using the layer at once."""
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer

    ref = draft.model.layers[0].mlp.up_proj.weight
    layer = LlamaDecoderLayer(draft.config, at)
    layer.load_state_dict(target.model.layers[source].state_dict())
    with torch.no_grad():
        layer.self_attn.o_proj.weight.zero_()
        layer.mlp.down_proj.weight.zero_()
    layer.to(device=ref.device, dtype=ref.dtype)
    draft.model.layers.insert(at, layer)
    for i, lyr in enumerate(draft.model.layers):   # each layer's index into the KV cache
        lyr.self_attn.layer_idx = i
    draft.config.num_hidden_layers = len(draft.model.layers)
    draft.model.config.num_hidden_layers = len(draft.model.layers)


def draft_before_pass(target, corpus, args, pos: int):
    """The draft's architecture at the start of pass ``pos``: built from ``--init-layers`` and grown
    by every ``--grow`` entry before ``pos`` (weights as built; a checkpoint's are loaded on top)."""
    init = [int(x) for x in args.init_layers.split(",")]
    draft = build_draft(target, corpus["kept"], len(init), init_layers=init)
    for when, at, source in parse_grow(args.grow):
        if when < pos:
            grow(draft, target, at, source)
    return draft


def trainable(draft) -> list[torch.nn.Parameter]:
    return [p for n, p in draft.named_parameters() if p.requires_grad and not n.startswith("model.embed_tokens")]


def adamw(params: list[torch.nn.Parameter], lr: float) -> torch.optim.AdamW:
    return torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.98), weight_decay=0.0)


def export(draft, args, order, pos, step, tokens_seen, rec, corpus) -> None:
    """Write the draft to ``toy_models/smollm2_draft/`` with the run's figures in config.json."""
    save_draft(draft, DRAFT_DIR, extra={"training": {
        "command": "python -m core.training.smollm2_draft {prepare,teacher,train} "
                   + " ".join(f"--{k.replace('_', '-')} {pos + 1 if k == 'passes' else v}"
                              for k, v in sorted(vars(args).items()) if k not in ("cmd", "fresh", "threads")),
        "passes": pos + 1, "shards_seen": max(order[:pos + 1]) + 1, "steps": step,
        "tokens": tokens_seen, "heldout": {k: v for k, v in rec.items()
                                           if k.startswith(("acceptance", "target_mass", "kl"))},
        "kept_coverage_train_heldout": [float(x) for x in corpus["coverage"]]}})


def export_checkpoint(args) -> None:
    """Export the latest training checkpoint (after measuring it on the evaluation shard)."""
    corpus = load_corpus()
    target, _ = load_target("cpu", torch.float32)
    st = torch.load(CKPT / "train_state.pt", weights_only=False)
    targs = argparse.Namespace(**{"grow": "", **st["args"]})
    draft = draft_before_pass(target, corpus, targs, st["pos"] + 1)
    draft.load_state_dict(st["draft"], strict=False)
    draft.eval()
    rec = dict(st["history"][-1])
    rec.update(evaluate(draft, torch.load(EVAL_PATH)))
    targs.passes = st["pos"] + 1
    order = pass_order(targs.shards, targs.seed, targs.replays)
    export(draft, targs, order, st["pos"], st["step"], rec["tokens"], rec, corpus)
    log(f"exported pass {st['pos']}: {rec}")


def train(args) -> None:
    torch.manual_seed(args.seed)
    corpus = load_corpus()
    target, _ = load_target("cpu", torch.float32)
    for prm in target.parameters():
        prm.requires_grad_(False)
    ckpt = CKPT / "train_state.pt"
    st = torch.load(ckpt, weights_only=False) if ckpt.exists() and not args.fresh else None
    if st is not None and st["args"]["init_layers"] != args.init_layers:
        st = None
    start, step, history = (st["pos"] + 1, st["step"], st["history"]) if st is not None else (0, 0, [])
    draft = draft_before_pass(target, corpus, args, start)
    draft.train()
    params = trainable(draft)
    log(f"draft: {sum(p.numel() for p in params) / 1e6:.2f}M trainable parameters, "
        f"{len(corpus['kept'])} kept ids, {draft.config.num_hidden_layers} layers "
        f"(init from target layers {args.init_layers}, grown by {args.grow or 'nothing'})")
    lr_table = parse_lr(args.lr)
    dT_table = parse_lr(args.distill_T)
    tv_table = parse_lr(args.tv)
    opt = adamw(params, lr_table[0][1])
    grows = parse_grow(args.grow)
    order = pass_order(args.shards, args.seed, args.replays)
    if st is not None:
        draft.load_state_dict(st["draft"], strict=False)
        opt.load_state_dict(st["opt"])
        log(f"resumed at pass {start}, step {step}")
    while not EVAL_PATH.exists():
        time.sleep(5)
    ev = torch.load(EVAL_PATH)
    if start == 0:
        draft.eval()
        m = evaluate(draft, ev)
        draft.train()
        history.append({"pass": -1, "step": 0, "tokens": 0, **m})
        log(f"before training: {m}")
    tokens_seen = history[-1].get("tokens", 0) if history else 0
    last = len(order) if args.passes is None else min(len(order), args.passes)
    for pos in range(start, last):
        for when, at, source in grows:
            if when == pos:
                grow(draft, target, at, source)
                draft.train()
                # A new optimiser over the grown parameter list; the old parameters keep their moments.
                old = opt
                params = trainable(draft)
                opt = adamw(params, lr_table[0][1])
                for prm in params:
                    if prm in old.state:
                        opt.state[prm] = old.state[prm]
                log(f"pass {pos}: grew a layer at index {at} from target layer {source}; "
                    f"{draft.config.num_hidden_layers} layers, {sum(p.numel() for p in params) / 1e6:.2f}M parameters")
        i = order[pos]
        while not shard_path(i).exists():
            time.sleep(5)
        sh = torch.load(shard_path(i))
        t0, losses = time.time(), []
        for b in range(0, len(sh["ids"]), args.batch):
            lr = [v for a, v in lr_table if a <= pos][-1] * min(1.0, (step + 1) / args.warmup)
            for g in opt.param_groups:
                g["lr"] = lr
            kp, _ = draft.kept_logits(input_ids=sh["ids"][b:b + args.batch], use_cache=False)
            Td = [v for a, v in dT_table if a <= pos][-1]
            w_tv = [v for a, v in tv_table if a <= pos][-1]
            loss = distill_loss(kp, sh["vals"][b:b + args.batch], sh["idx"][b:b + args.batch], Td, w_tv)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            step += 1
            losses.append(float(loss.detach()))
            tokens_seen += sh["ids"][b:b + args.batch].numel()
        rec = {"pass": pos, "shard": i, "step": step, "tokens": tokens_seen, "loss": float(np.mean(losses))}
        if (pos + 1) % args.eval_every == 0 or pos == last - 1:
            draft.eval()
            rec.update(evaluate(draft, ev))
            draft.train()
            export(draft, args, order, pos, step, tokens_seen, rec, corpus)
        history.append(rec)
        st = {"draft": draft.trainable_state(),
              "opt": opt.state_dict(), "pos": pos, "step": step, "history": history, "args": vars(args)}
        torch.save(st, str(ckpt) + ".tmp")
        Path(str(ckpt) + ".tmp").replace(ckpt)
        log(f"{rec} ({time.time() - t0:.0f}s)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cmd", choices=["prepare", "teacher", "train", "all", "export"])
    ap.add_argument("--n-keep", type=int, default=8192)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--windows", type=int, default=64, help="windows per shard")
    ap.add_argument("--shards", type=int, default=60)
    ap.add_argument("--passes", type=int, default=None, help="stop training after this many passes")
    ap.add_argument("--topk", type=int, default=64)
    ap.add_argument("--eval-windows", type=int, default=24)
    ap.add_argument("--eval-seq", type=int, default=128)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--lr", default="0:5e-4,25:1.5e-3,90:5e-4,115:1.5e-4,140:6e-4,300:3e-4,380:1.5e-4,440:3e-4,"
                                    "700:1.5e-4,816:3e-4,960:1.5e-4,1080:7.5e-5",
                    help="AdamW learning rate, constant or piecewise by pass index 'pass:lr,...' (the "
                         "default is how the committed run was made)")
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--tv", default="0:0,495:20",
                    help="weight w of the acceptance term w·(1 − Σ min(p, q)) by pass, e.g. 0:0,492:5")
    ap.add_argument("--distill-T", default="0:1,42:0.7",
                    help="distillation temperature by pass 'pass:T,...': both distributions at T "
                         "(the goal is measured at T = 0.7)")
    ap.add_argument("--init-layers", default="0,29")
    ap.add_argument("--grow", default="816:1@15",
                    help="insert layers while training, 'pass:index@target_layer,...' (``grow``): the "
                         "default adds a third layer at index 1 from target layer 15 at pass 816")
    ap.add_argument("--replays", default="0:1,7:2,10:3",
                    help="replay passes after each new shard, by first shard: 'shard:replays,...' "
                         "(the default is how the committed run was made: the trainer kept up with "
                         "the teacher with more replays)")
    ap.add_argument("--eval-every", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--fresh", action="store_true", help="ignore an existing train checkpoint")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    CKPT.mkdir(parents=True, exist_ok=True)
    if args.cmd in ("prepare", "all"):
        prepare(args)
    if args.cmd in ("teacher", "all"):
        teacher(args)
    if args.cmd in ("train", "all"):
        train(args)
    if args.cmd == "export":
        export_checkpoint(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
