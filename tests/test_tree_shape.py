"""Sequoia's tree on a real pair (benchmarks/tree_shape.py, core/bench/acceptance.py): the
positional-acceptance estimator and its prediction.

Two tiny Llama pairs built here, float64, one torch thread:

- a *context-independent* pair: every attention and MLP output projection is zero and every token
  has the same embedding, so each model gives the same logits at every position.  There the rank-k
  child of any accepted node is accepted with probability q(x_k) exactly, â_k must equal
  ``core.bounds.sequoia.positional_acceptance(p, q)``, and a topk tree decoded by rrs must accept
  F − 1 tokens on average (docs/maths.md, "Top-k trees");
- a context-dependent pair, on which the estimator must equal the plain per-position average.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from core.bench.acceptance import positional_acceptance, target_continuations
from core.bounds.sequoia import positional_acceptance as exact_acceptance, tree_value
from core.data.laws import rank
from core.decoding import SamplingConfig, SpeculativeDecoder, next_token_probs
from core.decoding.pairs import pair_from_models
from core.decoding.plans import RankTreePlan, parse_rank_paths

V = 12


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    names = [f"t{i}" for i in range(V)]
    tok = Tokenizer(models.WordLevel({n: i for i, n in enumerate(names)}, unk_token="t0"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="t0")


def llama(seed: int, scale: float = 1.0, logits: np.ndarray | None = None):
    """A one-layer Llama; with ``logits``, context-independent: every attention and MLP output
    projection zero, every token the same embedding, and the head set so that the one hidden
    state h gives exactly these logits (W = logits ⊗ h / |h|²)."""
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=V, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                      num_key_value_heads=2, intermediate_size=32, max_position_embeddings=512,
                      tie_word_embeddings=False, bos_token_id=0, eos_token_id=None)
    model = LlamaForCausalLM(cfg).to(torch.float64).eval()
    with torch.no_grad():
        model.lm_head.weight.mul_(scale)
        if logits is not None:
            for layer in model.model.layers:
                layer.self_attn.o_proj.weight.zero_()
                layer.mlp.down_proj.weight.zero_()
            model.model.embed_tokens.weight[:] = model.model.embed_tokens.weight[0]
            h = model.model(input_ids=torch.tensor([[0]])).last_hidden_state[0, 0]
            model.lm_head.weight[:] = torch.outer(torch.as_tensor(logits, dtype=torch.float64), h) / h.dot(h)
    return model


@pytest.fixture(scope="module")
def constant_pair():
    """q and p peaked, ranked differently past the first token (so trees branch and go deep)."""
    q = np.log([0.55, 0.2, 0.1, 0.05, 0.04, 0.02, 0.01, 0.01, 0.005, 0.005, 0.003, 0.002])
    p = np.log([0.45, 0.1, 0.25, 0.04, 0.05, 0.03, 0.03, 0.02, 0.01, 0.006, 0.002, 0.002])
    return pair_from_models(llama(1, logits=q), llama(2, logits=p), tokenizer())


@pytest.fixture(scope="module")
def tiny_pair():
    return pair_from_models(llama(1, 4.0), llama(3, 4.0), tokenizer())


def probs(model, ids, sampling):
    with torch.inference_mode():
        return next_token_probs(model(input_ids=torch.tensor([ids])).logits[0, -1], V, sampling)


@pytest.mark.parametrize("T", [1.0, 0.7])
def test_estimator_is_exact_on_a_context_independent_pair(constant_pair, T):
    """â_k = q(x_k), x_k the k-th token of p in rank order: Sequoia's exact positional acceptance
    of topk trees on a context-independent pair (core.bounds.sequoia)."""
    sampling = SamplingConfig(T)
    p, q = (probs(m, [3, 4], sampling) for m in (constant_pair.draft, constant_pair.target))
    windows = [[1, 5, 7, 2, 9, 3], [4, 4, 4, 4, 8]]
    acc = positional_acceptance(constant_pair, windows, sampling, ranks=V, min_context=2)
    np.testing.assert_allclose(acc.accept, exact_acceptance(p, q), rtol=0, atol=1e-12)
    assert acc.positions == 5 + 4 and acc.temperature == T
    np.testing.assert_allclose(acc.se, 0.0, atol=1e-12)            # every window says the same


def test_estimator_is_the_plain_average_over_positions(tiny_pair):
    """On a context-dependent pair, â_k is the average over windows' positions (≥ min_context
    tokens before) of q(k-th token in p's rank | context), each p and q from its own forward pass;
    weighted by positions; its SE is over window means."""
    sampling = SamplingConfig(0.8)
    windows = [[1, 5, 7, 2, 9, 3, 3], [4, 6, 4, 10, 8], [2, 2, 11]]
    acc = positional_acceptance(tiny_pair, windows, sampling, ranks=5, min_context=2)
    rows, means = [], []
    for w in windows:
        here = []
        for t in range(2, len(w) + 1):
            p, q = probs(tiny_pair.draft, w[:t], sampling), probs(tiny_pair.target, w[:t], sampling)
            here.append(q[rank(p)[:5]])
        rows += here
        means.append(np.mean(here, axis=0))
    np.testing.assert_allclose(acc.accept, np.mean(rows, axis=0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(acc.se, np.std(means, axis=0, ddof=1) / np.sqrt(3), rtol=1e-9)
    # T = 0: the ranking is the draft's T = 1 softmax, q is one-hot: â_1 is the greedy agreement
    greedy = positional_acceptance(tiny_pair, windows, SamplingConfig(0.0), ranks=3, min_context=2)
    agree = [float(np.argmax(probs(tiny_pair.draft, w[:t], SamplingConfig(1.0))) ==
                   np.argmax(probs(tiny_pair.target, w[:t], SamplingConfig(1.0))))
             for w in windows for t in range(2, len(w) + 1)]
    assert greedy.accept[0] == pytest.approx(np.mean(agree), abs=1e-12)
    assert greedy.accept.sum() <= 1 + 1e-12


def test_decoder_accepts_what_sequoia_predicts_on_a_context_independent_pair(constant_pair, tmp_path):
    """Sequoia's best tree of 8 nodes for â, decoded by rrs at T = 1: the mean accepted length per
    iteration is F − 1 (every iteration is independent here; 4 standard errors), and the tree's
    rank paths travel through a JSON file as ``--tree-paths`` reads them."""
    acc = positional_acceptance(constant_pair, [[1, 2, 3, 4, 5, 6]], SamplingConfig(1.0), ranks=8, min_context=1)
    tree = acc.best_tree(8, 4)
    predicted = tree_value(acc.accept, tree.paths) - 1
    assert predicted == pytest.approx(tree.expected_accepted)
    assert max(map(len, tree.paths)) >= 3 and sum(len(p) == 1 for p in tree.paths) >= 2   # deep and branching
    dec = SpeculativeDecoder(constant_pair, "rrs", sampling=SamplingConfig(1.0), plan=RankTreePlan(tree.paths))
    taus = [it.tau for seed in range(12) for it in dec.generate([1, 2], 120, seed).iterations]
    se = np.std(taus, ddof=1) / np.sqrt(len(taus))
    assert len(taus) > 300 and abs(np.mean(taus) - predicted) < 4 * se, (np.mean(taus), predicted, se)
    file = tmp_path / "tree.json"
    file.write_text(json.dumps({"paths": [list(p) for p in tree.paths]}))
    assert parse_rank_paths(str(file)).paths == tuple(sorted(tree.paths, key=lambda v: (len(v), v)))


def test_study_writes_trees_and_measures_them(tiny_pair, tmp_path):
    """benchmarks/tree_shape.py end to end on the tiny pair: a_k from the target's continuations
    and from held-out text, a tree per budget with its predicted E[τ] and interval, a JSON file
    per tree, and measured E[τ] with an interval for the decoded budgets."""
    from benchmarks.tree_shape import study
    from core.bench.acceptance import PositionalAcceptance
    prompts = [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 1]]
    sampling = SamplingConfig(0.9)
    continued = target_continuations(tiny_pair, prompts, 10, sampling, seed=0)
    assert all(c[:4] == p and len(c) == 14 for c, p in zip(continued, prompts))
    acc = {"generated": positional_acceptance(tiny_pair, continued, sampling, ranks=6, min_context=4),
           "heldout": positional_acceptance(tiny_pair, [[3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8]] * 2,
                                            sampling, ranks=6, min_context=4)}
    assert all(isinstance(a, PositionalAcceptance) for a in acc.values())
    out = study(tiny_pair, acc, prompts, 0.9, [3, 6], 3, [6], new_tokens=12, seed=0, out_dir=tmp_path,
                name="tiny", log=lambda m: None)
    assert [t["budget"] for t in out["trees"]] == [3, 6]
    for t in out["trees"]:
        lo, hi = t["predicted_tau_ci95"]
        assert lo <= t["predicted_tau"] <= hi and "predicted_tau_heldout" in t
        assert parse_rank_paths(t["file"]).paths == tuple(map(tuple, t["paths"]))
    six = out["trees"][1]
    assert six["iterations"] > 0 and 0 <= six["measured_tau"] <= six["depth"]
    assert len(six["measured_tau_per_prompt"]) == 3 and "measured_tau" not in out["trees"][0]
