"""core.decoding.packed_linear: oneDNN-packed CPU linear layers compute what nn.Linear computes."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from core.decoding.packed_linear import PackedLinear, can_pack, pack_linears

needs_onednn = pytest.mark.skipif(not can_pack(torch.float32),
                                  reason="this CPU's oneDNN does not pack float32 weights")


@needs_onednn
@pytest.mark.parametrize("rows", [1, 2, 3, 4, 5, 20])
@pytest.mark.parametrize("bias", [False, True])
def test_packed_equals_linear(rows, bias, monkeypatch):
    torch.manual_seed(rows)
    lin = nn.Linear(96, 200, bias=bias)
    packed = PackedLinear(lin)
    assert packed._packed.is_mkldnn and packed.weight is lin.weight
    x = torch.randn(2, rows, 96)
    with torch.no_grad():
        want = lin(x)
        with monkeypatch.context() as m:             # the packed kernel, not the fallback, runs
            m.setattr(nn.functional, "linear", None)
            got = packed(x)
    assert got.shape == want.shape == (2, rows, 200)
    # float32 rounding only: the sums are reordered, not changed
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


@needs_onednn
def test_pack_linears_in_a_model():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                      tie_word_embeddings=True)
    model = LlamaForCausalLM(cfg).eval()
    keys = set(model.state_dict())
    ids = torch.randint(0, 64, (3, 7))
    with torch.no_grad():
        want = model(ids).logits
        assert pack_linears(model) == 0                  # every layer is under MIN_ELEMENTS
        # 2048 weights and more: gate, up, down (64 x 32) per layer and the head (64 x 32)
        assert pack_linears(model, min_elements=2048) == 2 * 3 + 1
        assert isinstance(model.model.layers[0].mlp.up_proj, PackedLinear)
        assert type(model.model.layers[0].self_attn.k_proj) is nn.Linear
        assert pack_linears(model, min_elements=1) == 2 * 4   # then q, k, v, o
        got = model(ids).logits
    assert all(isinstance(m, PackedLinear) for m in (model.lm_head, model.model.layers[1].mlp.down_proj))
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    # the parameters are the same tensors: state_dict and tied embeddings are untouched
    assert set(model.state_dict()) == keys
    assert model.lm_head.weight is model.model.embed_tokens.weight
    assert pack_linears(model) == 0                      # nothing left to pack


@needs_onednn
def test_fallbacks_use_the_plain_path():
    """Inputs needing gradients take ``F.linear``; float64 layers are left as they are."""
    torch.manual_seed(1)
    lin = nn.Linear(16, 8)
    packed = PackedLinear(lin)
    x = torch.randn(4, 16, requires_grad=True)
    packed(x).sum().backward()
    torch.testing.assert_close(x.grad, lin.weight.sum(0).expand(4, -1))
    assert lin.weight.grad is not None                   # the shared parameter learns
    double = nn.Sequential(nn.Linear(4, 4)).to(torch.float64)
    assert pack_linears(double) == 0 and type(double[0]) is nn.Linear


@needs_onednn
def test_an_in_place_weight_change_repacks():
    """``load_state_dict`` (an in-place copy) after packing: the packed copy follows, never stale."""
    torch.manual_seed(2)
    lin = nn.Linear(64, 32)
    packed = PackedLinear(lin)
    x = torch.randn(3, 64)
    new = {"weight": torch.randn(32, 64), "bias": torch.randn(32)}
    packed.load_state_dict(new)
    with torch.no_grad():
        torch.testing.assert_close(packed(x), x @ new["weight"].T + new["bias"], rtol=1e-5, atol=1e-5)
