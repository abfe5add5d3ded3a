"""The real speculative decoder (core.decoding) over Hugging Face model pairs.

Two pairs: a tiny random Llama pair built here (vocabulary 8, float64, milliseconds per call) for the
statistical and cache tests, and the bundled pair (toy_models/pystdlib, loaded in float64 so that
batched and one-token forward passes agree far below any argmax gap) for greedy equality.  Torch runs
on one thread in this module (restored afterwards).  No test times anything.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from core.decoding import (AutoregressiveDecoder, DecodingError, SamplingConfig, SpeculativeDecoder,
                           decoder_methods, next_token_probs)
from core.decoding.pairs import PairError, pair_from_models, tokenizer_mismatch
from core.decoding.plans import DynamicPlan, RankTreePlan, StaticPlan
from core.decoding.presets import BUNDLED_PAIRS, bundled_pair
from core.rules.registry import get_verifier

ROOT = Path(__file__).resolve().parents[1]
HAVE_TOY = (BUNDLED_PAIRS["toy"] / "target" / "config.json").exists() and \
    (BUNDLED_PAIRS["toy"] / "draft" / "config.json").exists()
needs_toy = pytest.mark.skipif(not HAVE_TOY, reason="the bundled pair is not trained yet "
                               "(python -m toy_models.train_pair)")
LOSSLESS = [m for m in decoder_methods() if get_verifier(m).lossless_by_theory]
#: The rules whose greedy decoding is the target's (the static ensemble's is not: it verifies against
#: the mixture w·q + (1 − w)·p, and at T = 0 still passes a wrong token with probability 1 − w).
GREEDY = [m for m in decoder_methods() if get_verifier(m).greedy_is_target]


pytestmark = pytest.mark.usefixtures("one_torch_thread")


# ---------------------------------------------------------------------------------------------
# A tiny pair built in the test
# ---------------------------------------------------------------------------------------------

def tiny_tokenizer(V: int = 8, eos: int = 0, swap: tuple[int, int] | None = None):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    names = ["<eos>"] + [f"t{i}" for i in range(1, V)]
    if swap:
        a, b = swap
        names[a], names[b] = names[b], names[a]
    tok = Tokenizer(models.WordLevel({n: i for i, n in enumerate(names)}, unk_token=names[0]))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=names[eos], bos_token=names[0],
                                   pad_token=names[0])


def tiny_model(V: int, d: int, layers: int, seed: int, scale: float, pad: int = 0):
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=V + pad, hidden_size=d, num_hidden_layers=layers,
                      num_attention_heads=2, num_key_value_heads=2, intermediate_size=2 * d,
                      max_position_embeddings=512, tie_word_embeddings=False,
                      bos_token_id=0, eos_token_id=0, pad_token_id=0)
    model = LlamaForCausalLM(cfg)
    with torch.no_grad():
        model.lm_head.weight.mul_(scale)
    return model.to(torch.float64).eval()


@pytest.fixture(scope="module")
def tiny():
    """Target: 2 layers, logits padded by 3 beyond the tokenizer.  Draft: the target's weights with
    a perturbed output layer (single-token acceptance well inside (0, 1))."""
    V = 8
    target = tiny_model(V, 32, 2, seed=1, scale=6.0, pad=3)
    draft = tiny_model(V, 32, 2, seed=1, scale=6.0, pad=3)
    g = torch.Generator().manual_seed(7)
    with torch.no_grad():
        draft.lm_head.weight.add_(0.15 * torch.randn(draft.lm_head.weight.shape, generator=g,
                                                     dtype=torch.float64))
    return pair_from_models(target, draft, tiny_tokenizer(V))


TINY_PROMPT = "t2 t4 t1"


def exact_two_token_law(pair, prompt: str, sampling: SamplingConfig) -> np.ndarray:
    """q(y1, y2 | prompt) for all y1, y2 (V × V), from the target alone."""
    ids = pair.encode(prompt)
    V = pair.vocab_size
    with torch.inference_mode():
        first = next_token_probs(pair.target(input_ids=torch.tensor([ids])).logits[0, -1], V, sampling)
        rows = torch.tensor([ids + [y] for y in range(V)])
        second = next_token_probs(pair.target(input_ids=rows).logits[:, -1], V, sampling)
    return first[:, None] * second


class MemoLM(torch.nn.Module):
    """A causal LM whose cache-free forward is memoized: a pure function of the input ids (and,
    with ``tree=True``, of the tree attention mask and position ids, passed on to the model), so
    the sampling tests run thousands of generations on the same numbers in seconds.  With
    ``tree=False`` it drops the mask and positions, as a model without tree attention would: the
    decoder's probe sees that and scores the drafts in rows."""

    def __init__(self, model, tree: bool):
        super().__init__()
        self.inner = model
        self.tree = tree
        self.config = model.config
        self.generation_config = model.generation_config
        self.memo: dict[tuple, torch.Tensor] = {}

    def get_output_embeddings(self):
        return self.inner.get_output_embeddings()

    def forward(self, input_ids, use_cache=False, attention_mask=None, position_ids=None, **kw):
        assert not use_cache
        from types import SimpleNamespace
        if self.tree and attention_mask is not None:
            key = (tuple(input_ids[0].tolist()), tuple(position_ids[0].tolist()),
                   (attention_mask == 0).numpy().tobytes())
            if key not in self.memo:
                self.memo[key] = self.inner(input_ids=input_ids, attention_mask=attention_mask,
                                            position_ids=position_ids, use_cache=False).logits
            return SimpleNamespace(logits=self.memo[key])
        rows = [tuple(r) for r in input_ids.tolist()]
        todo = [r for r in dict.fromkeys(rows) if r not in self.memo]
        if todo:
            logits = self.inner(input_ids=torch.tensor(todo), use_cache=False).logits
            self.memo.update(zip(todo, logits))
        return SimpleNamespace(logits=torch.stack([self.memo[r] for r in rows]))


_MEMO_PAIRS: dict = {}


def two_token_counts(pair, method: str, K: int, L: int, n: int, seed: int, tree: bool = True) -> np.ndarray:
    """Counts of the first two generated tokens over n seeded generations (sample j seeded
    (seed, j)), through the decoder without a cache (its forward passes memoized), with tree
    attention or (``tree=False``) in rows."""
    V = pair.vocab_size
    key = (id(pair), tree)
    if key not in _MEMO_PAIRS:      # one memo per pair and layout, shared by the tests of this module
        _MEMO_PAIRS[key] = pair_from_models(MemoLM(pair.target, tree), MemoLM(pair.draft, tree),
                                            pair.tokenizer, device="cpu", dtype=torch.float64)
    memo = _MEMO_PAIRS[key]
    dec = SpeculativeDecoder(memo, method, K, L, SamplingConfig(1.0), trace=False, use_cache=False)
    assert dec.attention == ("tree attention" if tree else "rows")
    counts = np.zeros((V, V))
    for j in range(n):
        g = dec.generate(TINY_PROMPT, 2, np.random.default_rng([seed, j]))
        if len(g.tokens) == 2:
            counts[g.tokens[0], g.tokens[1]] += 1
        else:                       # EOS first: its own bin, as in the exact law
            counts[g.tokens[0], 0] += 1
    return counts


def chi_square_pvalue(counts: np.ndarray, law: np.ndarray) -> float:
    from scipy.stats import chisquare
    n = counts.sum()
    expected = (law * n).ravel()
    observed = counts.ravel()
    big = expected >= 5
    obs = np.append(observed[big], observed[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    if exp[-1] < 1e-12:
        obs, exp = obs[:-1], exp[:-1]
    return float(chisquare(obs, exp * obs.sum() / exp.sum()).pvalue)


def test_tiny_pair_is_a_useful_test_bed(tiny):
    """The draft differs from the target (so rejections happen) but not too much."""
    with torch.inference_mode():
        ids = torch.tensor([tiny.encode(TINY_PROMPT)])
        p = next_token_probs(tiny.draft(input_ids=ids).logits[0, -1], tiny.vocab_size, SamplingConfig())
        q = next_token_probs(tiny.target(input_ids=ids).logits[0, -1], tiny.vocab_size, SamplingConfig())
    assert p.shape == q.shape == (8,)          # padded logits sliced to the tokenizer
    acceptance = np.minimum(p, q).sum()
    assert 0.3 < acceptance < 0.97


# The law of the first two tokens: the eos-first event is folded into bin (eos, 0).
def _fold_eos(law: np.ndarray, eos: int = 0) -> np.ndarray:
    out = law.copy()
    out[eos, :] = 0.0
    out[eos, 0] = law[eos].sum()
    return out


@pytest.mark.parametrize("method", LOSSLESS)
def test_first_two_tokens_follow_target_law(tiny, method):
    """T = 1: the first two generated tokens are distributed as the target's exact two-token law
    (chi-square, 3000 seeded generations, K = 3 drafts of length 2, the drafts merged into one
    tree and scored with tree attention)."""
    law = _fold_eos(exact_two_token_law(tiny, TINY_PROMPT, SamplingConfig(1.0)))
    counts = two_token_counts(tiny, method, K=3, L=2, n=3000, seed=11)
    pvalue = chi_square_pvalue(counts, law)
    assert pvalue > 1e-3, f"{method}: chi-square p-value {pvalue:.2e}"


#: Every shape and law the decoder drafts beyond K i.i.d. chains, small enough for the tiny pair.
TREE_PLANS = {
    "chains-wor": StaticPlan.chains(3, 2, "wor"),
    "chains-topk": StaticPlan.chains(3, 2, "topk"),
    "chains-greedy": StaticPlan.chains(3, 2, "greedy"),
    "tree-iid": StaticPlan.tree((2, 2), "iid"),
    "tree-wor": StaticPlan.tree((2, 2), "wor"),
    "tree-topk": StaticPlan.tree((2, 2), "topk"),
    "tree-greedy": StaticPlan.tree((3, 2), "greedy"),
    "rank-tree": RankTreePlan(((1,), (2,), (1, 1), (1, 2), (2, 1))),
    "dynamic": DynamicPlan(5, 2, 3),
}


def two_token_counts_plan(pair, method: str, plan, n: int, seed: int) -> np.ndarray:
    """``two_token_counts`` for a draft plan (tree attention, memoized forward passes)."""
    V = pair.vocab_size
    key = (id(pair), True)
    if key not in _MEMO_PAIRS:
        _MEMO_PAIRS[key] = pair_from_models(MemoLM(pair.target, True), MemoLM(pair.draft, True),
                                            pair.tokenizer, device="cpu", dtype=torch.float64)
    dec = SpeculativeDecoder(_MEMO_PAIRS[key], method, sampling=SamplingConfig(1.0), plan=plan,
                             trace=False, use_cache=False)
    counts = np.zeros((V, V))
    for j in range(n):
        g = dec.generate(TINY_PROMPT, 2, np.random.default_rng([seed, j]))
        counts[g.tokens[0], g.tokens[1] if len(g.tokens) == 2 else 0] += 1
    return counts


@pytest.mark.parametrize("method", ["rrs", "traversal"])
@pytest.mark.parametrize("name", [n for n in TREE_PLANS if n not in ("chains-topk", "chains-greedy")])
def test_first_two_tokens_follow_target_law_every_shape_and_law(tiny, name, method):
    """T = 1: for every law on a static tree, chains drafted by a law at the root, a rank-path tree
    and the dynamic tree, verified by rrs and by traversal, the first two tokens follow the target's
    exact two-token law (chi-square, 1500 seeded generations; the trees have depth 2, so both
    tokens come from one iteration or from its correction and the next)."""
    law = _fold_eos(exact_two_token_law(tiny, TINY_PROMPT, SamplingConfig(1.0)))
    counts = two_token_counts_plan(tiny, method, TREE_PLANS[name], n=1500, seed=21)
    pvalue = chi_square_pvalue(counts, law)
    assert pvalue > 1e-3, f"{name}, {method}: chi-square p-value {pvalue:.2e}"
    # the test has power: the draft's own two-token law is rejected at this sample size
    draft_only = pair_from_models(tiny.draft, tiny.draft, tiny.tokenizer)
    assert chi_square_pvalue(counts, _fold_eos(exact_two_token_law(draft_only, TINY_PROMPT,
                                                                   SamplingConfig(1.0)))) < 1e-6


@pytest.mark.parametrize("name", list(TREE_PLANS))
def test_greedy_every_shape_and_law_tiny_pair(tiny, name):
    """T = 0: every shape and law, verified by rrs and by traversal, gives the target's greedy
    tokens; with and without traces the tokens are the same."""
    ref = AutoregressiveDecoder(tiny, SamplingConfig(0.0)).generate(TINY_PROMPT, 30, seed=0)
    for method in ("rrs", "traversal"):
        for trace in (True, False):
            g = SpeculativeDecoder(tiny, method, sampling=SamplingConfig(0.0), plan=TREE_PLANS[name],
                                   trace=trace).generate(TINY_PROMPT, 30, seed=9)
            assert g.tokens == ref.tokens, (name, method, trace)
            assert g.metrics.attention == "tree attention" and g.metrics.draft == TREE_PLANS[name].label


@pytest.mark.parametrize("name", list(TREE_PLANS))
def test_tree_plans_same_tokens_with_and_without_traces(tiny, name):
    """T = 1: the traces change nothing but the traces, for every shape and law."""
    for method in ("rrs", "traversal"):
        runs = [SpeculativeDecoder(tiny, method, sampling=SamplingConfig(1.0), plan=TREE_PLANS[name],
                                   trace=trace).generate(TINY_PROMPT, 40, seed=5) for trace in (True, False)]
        assert runs[0].tokens == runs[1].tokens
        assert runs[0].metrics.acceptance_per_position == runs[1].metrics.acceptance_per_position
        its = runs[0].iterations
        assert all(it.law == runs[0].metrics.law and it.draft == TREE_PLANS[name].label for it in its)
        for it in its:
            nodes = {tuple(n.node) for n in it.nodes}
            edges = it.edges()
            assert it.accepted in nodes and len(edges) == len(nodes) - 1
            assert all(e["parent"] in nodes and e["node"][:-1] == e["parent"] for e in edges)
            assert [e["node"] for e in edges if e["accepted"]] == [it.accepted[:d] for d in range(1, it.tau + 1)]
            assert it.cache_s >= 0 and it.draft_s > 0 and it.target_s > 0
            json.dumps(it.to_dict(str))


@pytest.mark.parametrize("method", ["specinfer", "traversal"])
def test_first_two_tokens_follow_target_law_in_rows(tiny, method):
    """The same in the fallback without tree attention: one row per draft."""
    law = _fold_eos(exact_two_token_law(tiny, TINY_PROMPT, SamplingConfig(1.0)))
    counts = two_token_counts(tiny, method, K=3, L=2, n=3000, seed=12, tree=False)
    pvalue = chi_square_pvalue(counts, law)
    assert pvalue > 1e-3, f"{method}: chi-square p-value {pvalue:.2e}"


def test_spectr_gbv_two_token_distance_is_measured(tiny, record_property):
    """SpecTr-GBV is not assumed lossless: record the measured distance to the target's law."""
    law = _fold_eos(exact_two_token_law(tiny, TINY_PROMPT, SamplingConfig(1.0)))
    counts = two_token_counts(tiny, "spectr_gbv", K=3, L=2, n=3000, seed=11)
    tv = 0.5 * float(np.abs(counts / counts.sum() - law).sum())
    pvalue = chi_square_pvalue(counts, law)
    record_property("spectr_gbv_two_token_tv", tv)
    record_property("spectr_gbv_two_token_chi2_pvalue", pvalue)
    print(f"spectr_gbv: TV to the target's two-token law {tv:.4f} (chi-square p = {pvalue:.2e})")
    assert 0.0 <= tv <= 1.0


@pytest.mark.parametrize("method", decoder_methods())
def test_cache_rollback_equals_recomputation(tiny, method):
    """A long seeded generation with KV caches (expanded, row-selected, cropped) equals the same
    generation recomputed from scratch at every step."""
    sampling = SamplingConfig(1.0)
    cached = SpeculativeDecoder(tiny, method, 3, 3, sampling).generate(TINY_PROMPT, 80, seed=4)
    fresh = SpeculativeDecoder(tiny, method, 3, 3, sampling, use_cache=False).generate(TINY_PROMPT, 80, seed=4)
    assert cached.tokens == fresh.tokens
    assert [it.tau for it in cached.iterations] == [it.tau for it in fresh.iterations]
    assert len(cached.tokens) >= 40 or cached.stop_reason == "eos"


def test_same_seed_replays_and_seeds_differ(tiny):
    dec = SpeculativeDecoder(tiny, "specinfer", 3, 3, SamplingConfig(1.0))
    a, b = dec.generate(TINY_PROMPT, 40, seed=3), dec.generate(TINY_PROMPT, 40, seed=3)
    assert a.tokens == b.tokens
    assert [it.drafts for it in a.iterations] == [it.drafts for it in b.iterations]
    others = [dec.generate(TINY_PROMPT, 40, seed=s).tokens for s in (4, 5, 6)]
    assert any(o != a.tokens for o in others)
    samples = dec.sample(TINY_PROMPT, 3, 10, seed=3)
    assert [g.tokens for g in samples] == [g.tokens for g in dec.sample(TINY_PROMPT, 3, 10, seed=3)]
    with pytest.raises(DecodingError, match="seed"):
        dec.generate(TINY_PROMPT, 5, seed=None)


@pytest.mark.parametrize("method", decoder_methods())
def test_keeping_traces_changes_nothing_but_the_traces(tiny, method):
    """Without traces a rule may skip trace-only work (best-of-K sorts only the rows BV's coins
    reach); the tokens, τ's and random stream must be the same as with full traces."""
    sampling = SamplingConfig(1.0)
    full = SpeculativeDecoder(tiny, method, 3, 4, sampling, trace=True)
    lean = SpeculativeDecoder(tiny, method, 3, 4, sampling, trace=False)
    a, b = full.generate(TINY_PROMPT, 60, seed=11), lean.generate(TINY_PROMPT, 60, seed=11)
    assert a.tokens == b.tokens
    assert a.metrics.acceptance_per_position == b.metrics.acceptance_per_position
    assert a.metrics.iterations == b.metrics.iterations


def test_best_of_k_lean_trace_has_h_where_coins_were_tossed():
    from core.rules.best_of_k import BestOfKBV
    from core.data.token_tree import TokenTree
    rng = np.random.default_rng(3)
    V = 6
    p_cond = {}
    q_cond = {}

    def cond(table, u):
        if u not in table:
            table[u] = rng.dirichlet(np.ones(V))
        return table[u]

    block = TokenTree.chains_from_models([(0, 1, 2, 3), (0, 1, 4, 5)], lambda u: cond(p_cond, u),
                                   lambda u: cond(q_cond, u))
    for seed in range(30):
        full, lean = BestOfKBV(), BestOfKBV()
        lean.complete_trace = False
        a, b = full.verify(block, seed), lean.verify(block, seed)
        assert (a.accepted, a.extra) == (b.accepted, b.extra)
        tested = {t.node for t in b.trace.tests}
        for node, values in b.trace.quantities.items():
            if node:
                assert ("h" in values) == (node in tested)
                assert values.items() <= a.trace.quantities[node].items()
        assert all("h" in a.trace.quantities[n] for n in a.trace.quantities if n)


def test_fast_ranking_is_the_stable_ranking_bit_for_bit():
    """Best-of-K and OTV rank by q/p with a default sort and fix the ties afterwards, skip the
    tokens the draft gives p = 0, and take best-of-K's p* on p > 0 only (decoder speed on SmolLM2's
    49152 ids, 40960 of them with p = 0); the ranking must be a stable sort's, to the bit, and p* the
    full computation's, to rounding."""
    from core.rules.selection import (SelectedPathLaw, _ratios, mass_above, rank_order,
                                     selected_mass)
    rng = np.random.default_rng(0)
    for trial in range(40):
        V = int(rng.integers(2, 3000))
        # float32-rounded logits: equal ratios; p = 0 on a random part of the vocabulary
        p = np.exp(np.round(rng.normal(size=V) * 3, 1)).astype(np.float64)
        q = np.exp(np.round(rng.normal(size=V) * 3, 1)).astype(np.float64)
        p[rng.random(V) < rng.random()] = 0.0
        p[rng.integers(V)] = 1.0
        p, q = p / p.sum(), q / q.sum()
        stable = np.argsort(-_ratios(p, q), kind="stable")
        assert np.array_equal(rank_order(p, q), stable)
        assert np.array_equal(rank_order(np.stack([p, q]), np.stack([q, p])),
                              np.argsort(-_ratios(np.stack([p, q]), np.stack([q, p])), axis=-1, kind="stable"))
        K = int(rng.integers(2, 5))
        path = tuple(int(t) for t in rng.choice(V, size=2, p=p))
        law = SelectedPathLaw(lambda u: p, lambda u: q, path, K)
        for i in range(2):
            # the full formula on every token: p* = (F_c^K − max(F_c − p(u)·p, 0)^K) / P*(u)
            F_child = law.F[i] - law.p_u[i] * mass_above(p, q)
            full = selected_mass(F_child, law.p_u[i] * p, K) / selected_mass(law.F[i], law.p_u[i], K)
            # the same formula on fewer tokens; bit-equality held on AVX2 machines, but AVX-512's
            # vectorised pow rounds some powers differently (seen: 1e-19 absolute, in cancellations)
            np.testing.assert_allclose(law[i], full, rtol=1e-12, atol=1e-16, err_msg=str((trial, i)))
            assert (law[i] >= 0).all() and abs(law[i].sum() - 1) < 1e-9


def test_greedy_tiny_pair_every_method(tiny):
    ref = AutoregressiveDecoder(tiny, SamplingConfig(0.0)).generate(TINY_PROMPT, 30, seed=0)
    for m in GREEDY:
        for K, L in ((1, 3), (3, 2)):
            g = SpeculativeDecoder(tiny, m, K, L, SamplingConfig(0.0)).generate(TINY_PROMPT, 30, seed=9)
            assert g.tokens == ref.tokens, (m, K, L)
            assert g.metrics.attention == "tree attention"


def test_traces_and_metrics(tiny):
    for method in ("sd", "bv", "spectr", "traversal", "otv"):
        K, L = 3, 3
        seen = []
        g = SpeculativeDecoder(tiny, method, K, L, SamplingConfig(1.0), keep_blocks=True).generate(
            TINY_PROMPT, 30, seed=3, on_iteration=seen.append)
        assert seen == g.iterations
        m = g.metrics
        assert m.iterations == m.target_calls == len(g.iterations)
        assert m.draft_calls == L * m.iterations
        assert m.block_efficiency == pytest.approx(1 + m.accepted_tokens / m.iterations)
        assert m.mean_accepted_length == m.block_efficiency
        assert m.acceptance_per_position == pytest.approx(
            [np.mean([it.tau >= i for it in g.iterations]) for i in range(1, L + 1)])
        # The root's 1 - TV, kept without traces, is the mean of the traced roots' and lies in (0, 1].
        assert m.mean_root_acceptance == pytest.approx(np.mean([it.acceptance_root for it in g.iterations]))
        assert 0 < m.mean_root_acceptance <= 1
        lean = SpeculativeDecoder(tiny, method, K, L, SamplingConfig(1.0), trace=False).generate(
            TINY_PROMPT, 30, seed=3)
        assert lean.iterations == [] and lean.metrics.mean_root_acceptance == m.mean_root_acceptance
        assert m.tokens_generated == len(g.tokens)
        assert len(g.tokens) == 30 or (g.stop_reason == "eos" and g.tokens[-1] in tiny.eos_ids)
        assert 0 <= m.verify_fraction < 1
        # each iteration's time split is its slice of the run's phases: summed, they are the metrics'
        for phase in ("draft", "target", "verify", "cache", "other"):
            assert sum(it.seconds[phase] for it in g.iterations) == pytest.approx(getattr(m, f"time_{phase}_s"))
        assert all(0 < it.iteration_s == pytest.approx(sum(it.seconds.values())) for it in g.iterations)
        for it in g.iterations:
            block = it.block
            assert it.tau == len(it.accepted) and it.accepted == tuple(it.accepted)
            if it.tau:
                assert list(it.accepted) == it.drafts[it.accepted_draft][:it.tau]
            assert it.residual_top and abs(sum(pr for _, pr in it.residual_top)) <= 1 + 1e-9
            # nodes shared by several drafts carry one p and one q
            assert len(block.q) == len(block.nodes()) and len(it.nodes) == len(block.nodes())
            root = it.nodes[0]
            assert root.node == () and root.multiplicity == K
            assert it.acceptance_root - 1e-12 <= it.alpha_star_root <= 1 + 1e-12
            if method in ("sd", "bv"):
                assert it.expected_tau is not None and 0 <= it.expected_tau <= L
            json.dumps(it.to_dict(str))
        # the p in each block is the distribution the drafts were drawn from: drafted tokens have p > 0
        for it in g.iterations:
            for k, row in enumerate(it.block.drafts):
                for i in range(L):
                    assert it.block.p[tuple(row[:i])][row[i]] > 0


@pytest.mark.parametrize("method", ["traversal", "otv"])
def test_traversal_traces_replay_the_walk(tiny, method):
    """A traversal rule's iteration trace carries its walk (``Trace.steps``): replayed against the
    block's p and q with the rule's own policy, the steps give every node's k, each visited child's
    S(c), T(c) and weight, each residual update (w', A, the top of T'), and the accepted prefix runs
    through exactly the visited children marked accepted.  Other rules log no steps."""
    from core.data.distributions import acceptance_ratio
    from core.decoding.verification import top_entries
    from core.rules.otv import ordered
    from core.rules.traversal import first_appearance
    from core.rules.traversal_walk import residual_update
    policy = {"traversal": first_appearance, "otv": ordered}[method]
    decoder = SpeculativeDecoder(tiny, method, 3, 3, SamplingConfig(1.0), keep_blocks=True)
    iterations = [it for seed in range(5, 9) for it in decoder.generate(TINY_PROMPT, 40, seed).iterations]
    visits = residuals = 0
    for it in iterations:
        block, steps = it.block, it.steps
        assert (steps[0]["node"], steps[0]["event"], steps[0]["w"], steps[0]["k"]) == ([], "enter", 1.0, 3.0)
        w, T, state, last = {}, {}, {}, {}
        for st in steps:
            b = tuple(st["node"])
            if st["event"] == "enter":
                w[b], T[b] = st["w"], block.q[b]
                state[b] = policy(block.p[b], T[b], w[b], block.multiplicity(b))
                assert {k: st[k] for k in state[b].describe()} == state[b].describe()
                assert st["k"] == state[b].k
            elif st["event"] == "visit":
                parent, c = b[:-1], b[-1]
                S = state[parent].law()
                assert (st["S"], st["T"]) == (S[c], T[parent][c])
                assert st["w"] == acceptance_ratio(w[parent] * T[parent][c], S[c])
                assert st["multiplicity"] == block.multiplicity(b)
                assert st["accepted"] == (it.accepted[:len(b)] == b)
                last[parent] = (c, int(st["multiplicity"]), S)
                visits += 1
            else:
                assert st["event"] == "residual"
                c, j, S = last[b]
                w[b], T[b], A = residual_update(w[b], T[b], S, not b)
                assert (st["w"], st["A"], st["vector_top"]) == (w[b], A, top_entries(T[b]))
                state[b] = state[b].after(c, j)
                residuals += 1
        accepted_visits = [tuple(st["node"]) for st in steps if st["event"] == "visit" and st["accepted"]]
        assert accepted_visits == [it.accepted[:i] for i in range(1, it.tau + 1)]
        json.dumps(it.to_dict(str))
    assert visits > len(iterations) and residuals > 0       # rejections happened and were logged
    plain = SpeculativeDecoder(tiny, "bv", 1, 3, SamplingConfig(1.0)).generate(TINY_PROMPT, 10, seed=5)
    assert all(it.steps == [] for it in plain.iterations)


def test_top_k_top_p_apply_to_both_models(tiny):
    logits = torch.tensor([[2.0, 1.0, 1.0, 0.0, -1.0]], dtype=torch.float64)
    full = torch.softmax(logits, -1).numpy()[0]
    assert next_token_probs(logits, 5, SamplingConfig(1.0)) == pytest.approx(full[None])
    k2 = next_token_probs(logits, 5, SamplingConfig(1.0, top_k=2))[0]
    assert (k2 > 0).tolist() == [True, True, True, False, False]       # tie at the 2nd value kept
    p = next_token_probs(logits, 5, SamplingConfig(1.0, top_p=0.6))[0]
    assert (p > 0).tolist() == [True, True, False, False, False]       # stable order on ties
    assert next_token_probs(logits, 4, SamplingConfig(0.0))[0].tolist() == [1.0, 0.0, 0.0, 0.0]
    half = next_token_probs(logits, 5, SamplingConfig(0.5))[0]
    assert half == pytest.approx(full ** 2 / (full ** 2).sum())
    g = SpeculativeDecoder(tiny, "rbv", 3, 2, SamplingConfig(1.0, top_k=2), keep_blocks=True).generate(
        TINY_PROMPT, 20, seed=1)
    for it in g.iterations:
        for vec in list(it.block.p.values()) + list(it.block.q.values()):
            assert (vec > 0).sum() <= 2 + 1          # two, or three on an exact tie
        assert all(it.block.p[tuple(r[:i])][r[i]] > 0 for r in it.block.drafts for i in range(2))


def test_stops_at_eos(tiny):
    ref = AutoregressiveDecoder(tiny, SamplingConfig(0.0)).generate(TINY_PROMPT, 30, seed=0)
    assert len(ref.tokens) == 30
    stop_token = ref.tokens[2]
    first = ref.tokens.index(stop_token)
    tok = tiny_tokenizer(8, eos=stop_token)
    pair = pair_from_models(tiny.target, tiny.draft, tok)
    assert stop_token in pair.eos_ids
    for m in ("sd", "specinfer"):
        g = SpeculativeDecoder(pair, m, 2, 4, SamplingConfig(0.0)).generate(TINY_PROMPT, 30, seed=0)
        assert g.stop_reason == "eos" and g.tokens == ref.tokens[:first + 1]


# ---------------------------------------------------------------------------------------------
# Tree attention: the merged draft tree in one row, the caches gathered, two transfers
# ---------------------------------------------------------------------------------------------

def chains_tree(drafts, V: int):
    """The merged tree of ``drafts`` (K, L), built as the proposer builds it."""
    from core.decoding.device_tree import DraftTree
    drafts = torch.as_tensor(drafts, dtype=torch.long)
    K, L = drafts.shape
    tree = DraftTree(1 + K * L, V, torch.device("cpu"), chains=(K, L))
    chain = torch.zeros(K, dtype=torch.long)
    for d in range(L):
        chain = tree.add_draws(chain, drafts[:, d])
    return tree


#: Three drafts sharing prefixes: (1 2 3), (1 2 4), (1 5 3).  Their tree, breadth first, tokens
#: sorted among siblings: 1 = (1); 2 = (1 2), 3 = (1 5); 4 = (1 2 3), 5 = (1 2 4), 6 = (1 5 3).
DRAFTS = [[1, 2, 3], [1, 2, 4], [1, 5, 3]]


def test_tree_of_chains_mask_and_positions():
    from core.decoding.device_tree import HostTree
    from core.decoding.tree_attention import tree_mask, tree_positions
    tree = chains_tree(DRAFTS, 8)
    assert tree.parents[:7].tolist() == [-1, 0, 1, 1, 2, 2, 3]
    assert tree.tokens[1:7].tolist() == [1, 2, 5, 3, 4, 3]
    assert tree.depth[:7].tolist() == [0, 1, 2, 2, 3, 3, 3]
    assert tree.levels == [(0, 1), (1, 2), (2, 4), (4, 7)]
    assert tree.chains.tolist() == [[1, 2, 4], [1, 2, 5], [1, 3, 6]]
    # 3 cached tokens, 2 pending context tokens, then the 6 nodes: who sees whom
    mask = tree_mask(tree, past=3, pending=2, lo=1, hi=7, dtype=torch.float64)
    assert mask.shape == (1, 1, 8, 11) and mask.dtype == torch.float64
    assert set(mask.unique().tolist()) == {0.0, torch.finfo(torch.float64).min}
    context = [1, 1, 1, 1, 0]
    assert (mask[0, 0] == 0).int().tolist() == [
        [1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0],              # pending token 1: causal
        [1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0],              # pending token 2
        context[:3] + [1, 1] + [1, 0, 0, 0, 0, 0],       # node 1 = (1)
        context[:3] + [1, 1] + [1, 1, 0, 0, 0, 0],       # node 2 = (1 2)
        context[:3] + [1, 1] + [1, 0, 1, 0, 0, 0],       # node 3 = (1 5): not its sibling
        context[:3] + [1, 1] + [1, 1, 0, 1, 0, 0],       # node 4 = (1 2 3)
        context[:3] + [1, 1] + [1, 1, 0, 0, 1, 0],       # node 5 = (1 2 4)
        context[:3] + [1, 1] + [1, 0, 1, 0, 0, 1]]       # node 6 = (1 5 3)
    assert tree_positions(tree, context=5, pending=2, lo=1, hi=7).tolist() == [[3, 4, 5, 6, 6, 7, 7, 7]]
    # a draft level after the root: nodes 2..3, every context token cached
    level = tree_mask(tree, past=5, pending=0, lo=2, hi=4, dtype=torch.float32)
    assert (level[0, 0] == 0).int().tolist() == [[1] * 5 + [1, 1, 0], [1] * 5 + [1, 0, 1]]
    assert tree_positions(tree, context=5, pending=0, lo=2, hi=4).tolist() == [[6, 6]]
    host = HostTree.build(tree, tree.parents[:7].numpy(), tree.tokens[:7].numpy(), tree.chains.numpy())
    assert host.prefixes == ((), (1,), (1, 2), (1, 5), (1, 2, 3), (1, 2, 4), (1, 5, 3))
    assert host.path((1, 2, 4)) == [1, 2, 5] and host.path(()) == []


@pytest.mark.parametrize("which", ["tiny", "toy64"])
@torch.inference_mode()
def test_tree_row_logits_equal_each_draft_scored_alone(which, request):
    """float64: the target's logits at every node of the merged tree, computed in ONE row with tree
    attention after a KV cache, equal (to 1e-9) the logits of each draft scored alone from scratch,
    and equal the fallback's K rows; the draft's level-by-level logits too."""
    from core.decoding.cached_lm import RowsLM, TreeLM
    pair = request.getfixturevalue(which)
    context = pair.encode(TINY_PROMPT if which == "tiny" else PY_PROMPT)
    n = len(context)
    drafts = [[t % pair.vocab_size for t in d] for d in DRAFTS] if which == "tiny" else \
        [[1000, 2000, 3000], [1000, 2000, 4000], [1000, 500, 3000]]
    tree = chains_tree(drafts, pair.vocab_size)
    for model in (pair.target, pair.draft):
        alone = {}
        for k, d in enumerate(drafts):
            logits = model(input_ids=torch.tensor([context + d]), use_cache=False).logits[0]
            for depth in range(len(d) + 1):
                node = 0 if depth == 0 else int(tree.chains[k, depth - 1])
                alone[node] = logits[n - 1 + depth]
        expected = torch.stack([alone[i] for i in range(tree.size)])
        outputs = []
        for layout in (TreeLM, RowsLM):
            lm = layout(model, pair.device)
            lm.prefill(context)
            scored = lm.score(context, tree)
            torch.testing.assert_close(scored, expected, rtol=0, atol=1e-9)
            lm.reset()
            lm.prefill(context)
            levels = [lm.root(context)] + [lm.level(context, tree, *tree.levels[d]) for d in (1, 2)]
            torch.testing.assert_close(torch.cat(levels), expected[:tree.levels[2][1]], rtol=0, atol=1e-9)
            outputs.append(scored)
        assert outputs[0].shape == (7, pair.target.config.vocab_size)


def recomputed_cache(model, ids):
    return model(input_ids=torch.tensor([ids]), use_cache=True).past_key_values


CACHE_PLANS = {"chains": ("traversal", StaticPlan.chains(4, 4)),
               "tree-wor": ("rrs", StaticPlan.tree((2, 2, 1), "wor")),
               "rank-tree": ("traversal", RankTreePlan(((1,), (2,), (3,), (1, 1), (1, 2), (2, 1), (1, 1, 1)))),
               "dynamic": ("rrs", DynamicPlan(8, 4, 3))}


@pytest.mark.parametrize("name", list(CACHE_PLANS))
def test_compacted_caches_equal_a_recomputation(tiny, monkeypatch, name):
    """After every iteration (K = 4 branching drafts, a static tree, a rank-path tree and a dynamic
    tree, at T = 1), each model's cache holds exactly the context's keys and values but its pending
    tokens: equal (1e-12, float64) to a fresh prefill of those tokens, whatever positions the
    accepted path's nodes were gathered from (the draft's from its own tree of fed nodes)."""
    from core.decoding.cached_lm import TreeLM
    paths = []
    keep = TreeLM.keep

    def spy(self, context_len, path, host):
        paths.append(list(path))
        return keep(self, context_len, path, host)

    monkeypatch.setattr(TreeLM, "keep", spy)
    method, plan = CACHE_PLANS[name]
    dec = SpeculativeDecoder(tiny, method, sampling=SamplingConfig(1.0), plan=plan)
    context = tiny.encode(TINY_PROMPT)
    checked = []

    def check(it):
        context.extend(list(it.accepted) + [it.extra])
        for lm in (dec.draft_lm, dec.target_lm):
            assert len(context) - lm.cached in ((1, 2) if lm is dec.draft_lm else (1,))
            fresh = recomputed_cache(lm.model, context[:lm.cached])
            assert len(lm.cache.layers) == len(fresh.layers)
            for mine, ref in zip(lm.cache.layers, fresh.layers):
                torch.testing.assert_close(mine.keys, ref.keys, rtol=0, atol=1e-12)
                torch.testing.assert_close(mine.values, ref.values, rtol=0, atol=1e-12)
        checked.append(it.tau)

    with torch.inference_mode():
        g = dec.generate(TINY_PROMPT, 40, seed=6, on_iteration=check)
    assert len(checked) == g.metrics.iterations and dec.attention == "tree attention"
    moved = [p for p in paths if p != list(range(1, len(p) + 1))]
    assert moved, "no accepted path needed its nodes moved: the gather was not exercised"


def test_two_transfers_per_iteration_and_no_other(tiny, monkeypatch):
    """Every device-to-host conversion of the decoder goes through ``transfer.to_host``, called
    twice an iteration (the draft's node vectors and tree, the target's node vectors), with and
    without traces; no tensor becomes a Python or NumPy value anywhere else in core/decoding."""
    import sys
    from torch.overrides import TorchFunctionMode
    from core.decoding import transfer

    calls = []
    to_host = transfer.to_host
    monkeypatch.setattr(transfer, "to_host", lambda *t: calls.append(len(t)) or to_host(*t))
    conversions = {"tolist", "item", "numpy", "cpu", "__int__", "__float__", "__bool__", "__index__",
                   "__array__", "__len__", "__iter__"}
    stray, seen = [], set()
    here = str(ROOT / "core" / "decoding")

    class Watch(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if getattr(func, "__name__", "") in conversions:
                where = sys._getframe(1).f_code.co_filename
                if where.endswith("transfer.py"):
                    seen.add(func.__name__)
                elif where.startswith(here):
                    stray.append((func.__name__, where, sys._getframe(1).f_lineno))
            return func(*args, **(kwargs or {}))

    for trace in (True, False):
        calls.clear()
        dec = SpeculativeDecoder(tiny, "specinfer", 3, 3, SamplingConfig(1.0), trace=trace)
        with Watch():
            g = dec.generate(TINY_PROMPT, 30, seed=2)
        assert len(calls) == 2 * g.metrics.iterations, (trace, len(calls), g.metrics.iterations)
        assert stray == [], stray
    assert "cpu" in seen and "numpy" in seen            # the watch sees the one place that converts
    assert calls[::2] == [6] * g.metrics.iterations        # p, parents, tokens, the draws (parents, tokens), chains: one copy
    for name, plan in TREE_PLANS.items():                   # every shape and law, T = 1 and T = 0
        for T in (1.0, 0.0):
            calls.clear()
            dec = SpeculativeDecoder(tiny, "rrs", sampling=SamplingConfig(T), plan=plan)
            with Watch():
                g = dec.generate(TINY_PROMPT, 20, seed=2)
            assert len(calls) == 2 * g.metrics.iterations, (name, T, len(calls), g.metrics.iterations)
            assert stray == [], (name, stray)
    calls.clear()
    AutoregressiveDecoder(tiny, SamplingConfig(1.0)).generate(TINY_PROMPT, 10, seed=2)
    assert len(calls) == 10


class NoTreeMask(torch.nn.Module):
    """A causal LM that ignores the attention mask and position ids it is given (as a model whose
    own code takes neither would): it cannot score a tree in one row."""

    def __init__(self, model):
        super().__init__()
        self.inner, self.config, self.generation_config = model, model.config, model.generation_config

    def get_output_embeddings(self):
        return self.inner.get_output_embeddings()

    def forward(self, input_ids, attention_mask=None, position_ids=None, **kw):
        return self.inner(input_ids=input_ids, **kw)


def test_fallback_to_rows_is_logged_and_decodes_the_same(tiny, caplog):
    """A model the probe refuses falls back to one row per draft, with one logged line per model;
    in float64 it gives the tree's tokens for the same seed, with a larger cache; and a model
    whose attention implementation takes no 4D mask is refused without running."""
    import logging
    from types import SimpleNamespace
    from core.decoding.tree_attention import tree_attention_support

    rows = pair_from_models(NoTreeMask(tiny.target), NoTreeMask(tiny.draft), tiny.tokenizer)
    sampling = SamplingConfig(1.0)
    with caplog.at_level(logging.WARNING, logger="core.decoding"):
        dec = SpeculativeDecoder(rows, "traversal", 4, 3, sampling)
        again = SpeculativeDecoder(rows, "specinfer", 4, 3, sampling)
    lines = [r.getMessage() for r in caplog.records if r.name == "core.decoding"]
    assert len(lines) == 2 and all("tree attention is off" in line and "NoTreeMask" in line for line in lines)
    assert {"draft model", "target model"} == {line.split("for the ")[1].split(" (")[0] for line in lines}
    assert dec.attention == again.attention == "rows"
    a = dec.generate(TINY_PROMPT, 40, seed=5)
    b = SpeculativeDecoder(tiny, "traversal", 4, 3, sampling).generate(TINY_PROMPT, 40, seed=5)
    c = SpeculativeDecoder(rows, "traversal", 4, 3, sampling, use_cache=False).generate(TINY_PROMPT, 40, seed=5)
    assert a.tokens == b.tokens == c.tokens and b.metrics.attention == "tree attention"
    assert a.metrics.peak_cache_bytes > b.metrics.peak_cache_bytes
    flash = torch.nn.Linear(1, 1)
    flash.config = SimpleNamespace(_attn_implementation="flash_attention_2")
    assert "'flash_attention_2' takes no 4D additive mask" in tree_attention_support(flash, torch.device("cpu"))


def per_position_bytes(model) -> int:
    cfg = model.config
    heads = getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    return 2 * cfg.num_hidden_layers * heads * head_dim * next(model.parameters()).element_size()


def test_cache_does_not_grow_with_K(tiny):
    """With tree attention both caches hold one row: at most the final context plus the K·L tree
    nodes of one iteration; the fallback repeats the context into each row."""
    prompt, new, L = tiny.encode(TINY_PROMPT), 30, 3
    per_position = per_position_bytes(tiny.target) + per_position_bytes(tiny.draft)
    rows = pair_from_models(NoTreeMask(tiny.target), NoTreeMask(tiny.draft), tiny.tokenizer)
    for seed in range(40):          # a seed whose generations run long (this pair often stops at EOS)
        gens = {K: SpeculativeDecoder(tiny, "specinfer", K, L, SamplingConfig(1.0)).generate(prompt, new, seed)
                for K in (1, 4)}
        if min(len(g.tokens) for g in gens.values()) >= 20:
            break
    for K, g in gens.items():
        # the last iteration started from c tokens, with context − L − 1 ≤ c ≤ context − 1; its
        # caches held c tokens and at most K·L tree nodes, in one row
        context = len(prompt) + g.metrics.iterations + g.metrics.accepted_tokens   # before truncation
        assert per_position * (context - L - 1) <= g.metrics.peak_cache_bytes <= per_position * (context - 1 + K * L)
    in_rows = SpeculativeDecoder(rows, "specinfer", 4, L, SamplingConfig(1.0)).generate(prompt, new, seed)
    assert in_rows.tokens == gens[4].tokens
    assert in_rows.metrics.peak_cache_bytes > 2 * gens[4].metrics.peak_cache_bytes
    # trees: the target's cache holds the context and at most the tree's nodes, the draft's the
    # context and the nodes it fed (every node of depth < L; a dynamic tree's expanded nodes)
    for plan, fed in ((StaticPlan.tree((2, 2, 1), "wor"), 6), (DynamicPlan(8, 3, 3), 6),
                      (RankTreePlan(((1,), (2,), (1, 1), (1, 1, 1))), 2)):
        g = SpeculativeDecoder(tiny, "rrs", sampling=SamplingConfig(1.0), plan=plan).generate(prompt, new, 3)
        context = len(prompt) + g.metrics.iterations + g.metrics.accepted_tokens
        bound = per_position_bytes(tiny.target) * (context - 1 + plan.budget) + \
            per_position_bytes(tiny.draft) * (context - 1 + fed)
        assert per_position * (context - plan.L - 1) <= g.metrics.peak_cache_bytes <= bound, plan.label


def test_sampling_on_the_device_draws_the_law():
    """``sample`` (inverse CDF with a torch.Generator) draws each row's law, never a token of
    probability 0, and the argmax of a one-hot row; a seed replays it."""
    from scipy.stats import chisquare
    from core.decoding.sampling import sample
    p = torch.tensor([0.0, 0.1, 0.0, 0.25, 0.65, 0.0], dtype=torch.float64)
    g = torch.Generator().manual_seed(3)
    draws = sample(p.expand(20000, -1), g)
    counts = torch.bincount(draws, minlength=6).numpy()
    assert counts[[0, 2, 5]].sum() == 0
    assert chisquare(counts[[1, 3, 4]], 20000 * p[[1, 3, 4]].numpy()).pvalue > 1e-3
    onehot = torch.zeros(3, 6, dtype=torch.float64)
    onehot[[0, 1, 2], [5, 0, 2]] = 1.0
    assert sample(onehot, g).tolist() == [5, 0, 2]
    again = sample(p.expand(50, -1), torch.Generator().manual_seed(3))
    assert again.tolist() == draws[:50].tolist()


# ---------------------------------------------------------------------------------------------
# Shapes and laws: the draws, the trees, the refusals
# ---------------------------------------------------------------------------------------------

def test_ranked_top_is_the_labs_rank_on_every_tie():
    """The device's top k (``draft_laws.ranked_top``) and the lab's O(V) ``top_ranked`` are the
    lab's rank (decreasing p, ties to the smaller id: a stable sort) cut at k, on rows full of
    ties (float32-rounded probabilities) and of zeros."""
    from core.data.laws import rank, top_ranked
    from core.decoding.draft_laws import ranked_top
    rng = np.random.default_rng(1)
    for trial in range(30):
        V = int(rng.integers(2, 400))
        P = np.round(rng.random((3, V)) * 8) / 8            # few distinct values: ties everywhere
        P[rng.random((3, V)) < 0.4] = 0.0
        P[:, 0] += 1e-3
        P /= P.sum(1, keepdims=True)
        for k in (1, 2, 5, min(V, 17), V):
            k = min(k, V)
            device = ranked_top(torch.tensor(P), k).numpy()
            for r in range(3):
                expected = rank(P[r])[:k]
                assert device[r].tolist() == expected.tolist() == list(top_ranked(P[r], k)), (trial, k)


def test_gumbel_top_k_draws_without_replacement_and_greedy_draws_the_rest():
    """wor's Gumbel-top-2 gives ordered pairs with P(a, b) = P(a)·P(b)/(1 − P(a)), never a token of
    probability 0; greedy's sampled draw follows P on Ω∖Top, renormalised, and comes first."""
    from scipy.stats import chisquare
    from core.data.laws import LAWS
    from core.decoding.draft_laws import DEVICE_DRAWERS, draw_on_device
    from core.decoding.sampling import sample
    P = torch.tensor([0.4, 0.0, 0.3, 0.2, 0.1], dtype=torch.float64)
    n = 20000
    g = torch.Generator().manual_seed(5)
    pairs = draw_on_device(LAWS["wor"], P.expand(n, -1), 2, g)
    assert (pairs[:, 0] != pairs[:, 1]).all() and not (pairs == 1).any()
    counts = torch.bincount(pairs[:, 0] * 5 + pairs[:, 1], minlength=25).numpy()
    p = P.numpy()
    law = np.array([p[a] * p[b] / (1 - p[a]) if a != b else 0.0 for a in range(5) for b in range(5)])
    live = law > 0
    assert counts[~live].sum() == 0 and chisquare(counts[live], n * law[live]).pvalue > 1e-3
    greedy = draw_on_device(LAWS["greedy"], P.expand(n, -1), 3, g)            # Top = (0, 2), then X ~ P′
    assert (greedy[:, 1:] == torch.tensor([0, 2])).all()
    x = torch.bincount(greedy[:, 0], minlength=5).numpy()
    assert x[[0, 1, 2]].sum() == 0 and chisquare(x[[3, 4]], n * np.array([2 / 3, 1 / 3])).pvalue > 1e-3
    assert draw_on_device(LAWS["topk"], P[None], 3, g).tolist() == [[0, 2, 3]]
    # iid: k draws per row, each row's k in a row, the same stream as one draw per repeated row
    iid = draw_on_device(LAWS["iid"], P.expand(2, -1), 3, torch.Generator().manual_seed(1))
    assert iid.shape == (2, 3) and not (iid == 1).any()
    assert iid.reshape(-1).tolist() == sample(P.expand(6, -1), torch.Generator().manual_seed(1)).tolist()
    assert all(law.device_drawer in DEVICE_DRAWERS for law in LAWS.values())   # every law draws on the device


def draft_probs(pair, context, prefix, sampling):
    """p(·|context·prefix) from the draft model alone, no cache (the reference)."""
    with torch.inference_mode():
        logits = pair.draft(input_ids=torch.tensor([list(context) + list(prefix)])).logits[0, -1]
    return next_token_probs(logits, pair.vocab_size, sampling)


def eagle2_tree(pair, context, plan, sampling) -> set:
    """EAGLE-2's dynamic tree written plainly from its description (arXiv 2406.16858 §4; EAGLE's
    ``topK_genrate``) with the draft alone: depth 1's candidates are the root's top ``width``,
    all expanded; each expanded node proposes its top ``width`` children, scored by cumulative
    log-probability; the ``width`` best candidates of a depth are expanded next; the ``budget``
    best candidates overall, ties in the order they were proposed, make the tree."""
    from core.data.laws import rank
    k = plan.width
    root = draft_probs(pair, context, (), sampling)
    level = [((int(t),), float(np.log(root[t]))) for t in rank(root)[:k]]
    candidates = list(level)
    for _ in range(2, plan.depth + 1):
        proposed = []
        for u, score in level:
            P = draft_probs(pair, context, u, sampling)
            proposed += [(u + (int(t),), score + float(np.log(P[t]))) for t in rank(P)[:k]]
        candidates += proposed
        level = sorted(proposed, key=lambda c: -c[1])[:k]           # Python's sort is stable
    best = sorted(candidates, key=lambda c: -c[1])[:plan.budget]
    return {u for u, score in best if np.isfinite(score)}


@pytest.mark.parametrize("T", [1.0, 0.0])
def test_dynamic_and_rank_trees_are_built_as_described(tiny, T):
    """Each iteration's dynamic tree is EAGLE-2's, written plainly from the draft's probabilities
    (``eagle2_tree``); a rank-path tree's nodes are each parent's children of those ranks; a static
    topk tree's nodes are each parent's top b; at T = 0 the trees rank by the draft's T = 1 softmax
    and wor draws the topk tree."""
    from core.data.laws import rank
    sampling = SamplingConfig(T)
    ranking = SamplingConfig(1.0) if T == 0 else sampling
    paths = ((1,), (2,), (3,), (1, 1), (1, 2), (3, 1), (1, 1, 1))
    checks = {"dynamic": DynamicPlan(7, 3, 3), "rank": RankTreePlan(paths),
              "topk": StaticPlan.tree((2, 2), "topk"), "wor": StaticPlan.tree((2, 2), "wor")}
    for name, plan in checks.items():
        g = SpeculativeDecoder(tiny, "rrs", sampling=sampling, plan=plan).generate(TINY_PROMPT, 24, seed=4)
        stream = g.prompt_ids + g.tokens
        for it in g.iterations[:4]:
            context = stream[:it.position]
            nodes = {tuple(n.node) for n in it.nodes if n.node}
            if name == "dynamic":
                assert nodes == eagle2_tree(tiny, context, plan, ranking)
                continue
            if name == "wor" and T > 0:
                continue                                            # random: its law is tested above
            if name == "rank":                                      # rank paths to tokens, parent first
                token_path = {(): ()}
                for path in paths:
                    parent = token_path[path[:-1]]
                    order = rank(draft_probs(tiny, context, parent, ranking))
                    token_path[path] = parent + (int(order[path[-1] - 1]),)
                assert nodes == {token_path[p] for p in paths}
                continue
            expected = {(int(t),) for t in rank(draft_probs(tiny, context, (), ranking))[:2]}
            expected |= {u + (int(t),) for u in expected for t in rank(draft_probs(tiny, context, u, ranking))[:2]}
            assert nodes == expected


def test_tree_plans_are_checked_before_any_model_runs(tiny):
    """Chain-only rules refuse other drafts in one sentence; a plan's arguments are checked."""
    from core.decoding.plans import draft_plan, parse_rank_paths
    cases = [
        (lambda: SpeculativeDecoder(tiny, "bv", sampling=SamplingConfig(1.0), plan=StaticPlan.tree((2, 2), "wor")),
         "bv is defined on K i.i.d. chains only, not on b = (2, 2), wor"),
        (lambda: SpeculativeDecoder(tiny, "otv", 4, 4, law="topk"), "otv is defined on K i.i.d. chains only"),
        (lambda: SpeculativeDecoder(tiny, "rrs", 2, 2, plan=DynamicPlan(4, 2, 2)), "not both"),
        (lambda: SpeculativeDecoder(tiny, "rrs", sampling=SamplingConfig(1.0, top_k=2),
                                    plan=StaticPlan.tree((3, 1), "wor")), "raise top-k"),
        (lambda: draft_plan(budget=8, law="wor"), "drafts by topk"),
        (lambda: draft_plan(tree="2,2", K=3), "give no --K or --L"),
        (lambda: draft_plan(tree="2,0"), "b_2 must be an integer ≥ 1"),
        (lambda: draft_plan(budget=40, L=2, K=3), "only 12 candidates"),
        (lambda: parse_rank_paths("1,1.2"), "no elder sibling 1.1"),
        (lambda: parse_rank_paths("2"), "no elder sibling 1"),
        (lambda: parse_rank_paths("1,2.1.1"), "no parent 2.1"),
        (lambda: parse_rank_paths("1,x"), "rank paths such as"),
        (lambda: draft_plan(law="nope"), "unknown draft law"),
    ]
    for fn, msg in cases:
        with pytest.raises(DecodingError) as info:
            fn()
        assert msg in str(info.value) and "\n" not in str(info.value), (msg, str(info.value))
    # a single chain drafted by wor is one i.i.d. draft: every rule takes it
    assert SpeculativeDecoder(tiny, "bv", 1, 3, law="wor").plan.iid_chains
    assert parse_rank_paths("1, 2, 1.1").paths == ((1,), (2,), (1, 1))


def test_default_threads_one_unless_idle_cores_measure_clearly_faster(tiny, monkeypatch):
    """The CLI's and the app's default thread count (core.decoding.threads): one thread when fewer
    than two cores are idle (without measuring anything); otherwise the fewest threads whose
    measured median is within the margin of the fastest."""
    from core.decoding import threads

    monkeypatch.setattr(threads.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert threads.idle_cores() == 1                        # ⌊2 − 0 − ½⌋: a 2-core machine keeps one
    monkeypatch.setattr(threads, "fastest_threads", lambda *a, **k: pytest.fail("measured"))
    assert threads.default_threads(tiny) == 1
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 16)
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (9.2, 0.0, 0.0))
    assert threads.idle_cores() == 6
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (15.9, 0.0, 0.0))
    assert threads.default_threads(tiny) == 1
    monkeypatch.undo()

    def fake_clock(cost):            # a pass "takes" cost[threads] seconds: two readings per pass
        now = [0.0]

        def clock():
            now[0] += cost[torch.get_num_threads()] / 2
            return now[0]
        return clock

    before = torch.get_num_threads()
    assert threads.fastest_threads(tiny, (1, 4), clock=fake_clock({1: 1.0, 4: 0.7})) == 4     # 1.43x
    assert threads.fastest_threads(tiny, (1, 4), clock=fake_clock({1: 1.0, 4: 0.81})) == 1    # 1.23x < 1.25
    assert threads.fastest_threads(tiny, (1, 4), clock=fake_clock({1: 1.0, 4: 0.79})) == 4    # 1.27x
    assert threads.fastest_threads(tiny, (1, 2, 4), clock=fake_clock({1: 1.0, 2: 0.5, 4: 0.45})) == 2
    assert torch.get_num_threads() == before


# ---------------------------------------------------------------------------------------------
# Bad pairs and bad arguments
# ---------------------------------------------------------------------------------------------

def test_bad_pairs_are_refused_with_the_reason(tiny):
    with pytest.raises(PairError, match="vocabulary has 8 tokens and the draft's 9"):
        pair_from_models(tiny.target, tiny.draft, tiny_tokenizer(8), draft_tokenizer=tiny_tokenizer(9))
    why = tokenizer_mismatch(tiny_tokenizer(8), tiny_tokenizer(8, swap=(2, 3)))
    assert why.startswith("the tokenizers differ: token 't2' has id 2 in the target and id 3")
    with pytest.raises(PairError, match="eos_token_id is 0 in the target and 3 in the draft"):
        pair_from_models(tiny.target, tiny.draft, tiny_tokenizer(8), draft_tokenizer=tiny_tokenizer(8, eos=3))
    small = tiny_model(6, 16, 1, seed=0, scale=1.0)
    with pytest.raises(PairError, match="draft model has 6 output logits, fewer than the tokenizer's 8"):
        pair_from_models(tiny.target, small, tiny_tokenizer(8))
    from core.decoding.pairs import load_pair
    with pytest.raises(PairError, match="not a model directory"):
        load_pair("/nonexistent/target", "/nonexistent/draft")


def test_bad_arguments_fail_clearly(tiny):
    cases = [
        (lambda: SpeculativeDecoder(tiny, "lp_optimal", 2, 2), "needs toy models"),
        (lambda: SpeculativeDecoder(tiny, "nope", 2, 2), "unknown method 'nope'"),
        (lambda: SpeculativeDecoder(tiny, "sd", 0, 2), "K must be a positive integer"),
        (lambda: SpeculativeDecoder(tiny, "sd", 1, 0), "L must be a positive integer"),
        (lambda: SamplingConfig(-1.0), "temperature must be a finite number"),
        (lambda: SamplingConfig(1.0, top_k=0), "top-k must be a positive integer"),
        (lambda: SamplingConfig(1.0, top_p=0.0), "top-p must be in"),
        (lambda: SpeculativeDecoder(tiny, "sd", 1, 2).generate("t1", 0, seed=0), "max_new_tokens"),
        (lambda: SpeculativeDecoder(tiny, "sd", 1, 2).generate("t1", 600, seed=0), "exceeds the models' 512"),
        (lambda: SpeculativeDecoder(tiny, "sd", 1, 2).generate([3, 99], 5, seed=0), "outside the vocabulary"),
    ]
    for fn, msg in cases:
        with pytest.raises((DecodingError, PairError)) as info:
            fn()
        assert msg in str(info.value) and "\n" not in str(info.value)


def test_cli_errors_are_one_line(capsys):
    from core.cli.decode import main
    for argv, msg in [
        (["decode", "--method", "sd"], "give --pair toy"),
        (["decode", "--pair", "toy", "--method", "lp_optimal"], "needs toy models"),
        (["decode", "--pair", "toy", "--method", "sd", "--K", "0"], "K must be between"),
        (["decode", "--pair", "nope", "--method", "sd"], "unknown bundled pair 'nope'"),
        (["decode", "--pair", "toy", "--target", "x", "--method", "sd"], "not both"),
        (["decode", "--target", "/nonexistent/t", "--draft", "/nonexistent/d", "--method", "sd"],
         "not a model directory"),
        (["bench", "--pair", "toy", "--methods", "sd,lp_optimal"], "needs toy models"),
        (["decode", "--pair", "toy", "--method", "sd", "--temperature", "-1"], "temperature"),
    ]:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and msg in err, (argv, err)


# ---------------------------------------------------------------------------------------------
# The bundled pair
# ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def toy64():
    if not HAVE_TOY:
        pytest.skip("the bundled pair is not trained yet (python -m toy_models.train_pair)")
    return bundled_pair(device="cpu", dtype="float64")


PY_PROMPT = "def read_lines(path):\n    with open(path) as f:\n"


@needs_toy
def test_bundled_pair_loads_like_a_hub_model():
    from transformers import AutoModelForCausalLM, AutoTokenizer
    for role in ("target", "draft"):
        d = BUNDLED_PAIRS["toy"] / role
        model = AutoModelForCausalLM.from_pretrained(d)
        assert model.dtype == torch.float32
        assert len(AutoTokenizer.from_pretrained(d)) == model.config.vocab_size
    size = sum((BUNDLED_PAIRS["toy"] / r / "model.safetensors").stat().st_size for r in ("target", "draft"))
    assert size < 40 * 2**20


@needs_toy
def test_bundled_greedy_equals_target_greedy_every_method(toy64):
    """T = 0: every method reproduces the target's own greedy decoding, token for token (and our
    autoregressive reference equals Hugging Face's greedy ``generate``)."""
    n = 32
    ref = AutoregressiveDecoder(toy64, SamplingConfig(0.0)).generate(PY_PROMPT, n, seed=0)
    ids = torch.tensor([toy64.encode(PY_PROMPT)])
    with torch.inference_mode():
        hf = toy64.target.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=n,
                                   do_sample=False, pad_token_id=0)
    assert ref.tokens == [int(t) for t in hf[0, ids.shape[1]:]][:len(ref.tokens)]
    for m in GREEDY:
        K = 1 if get_verifier(m).single_draft else 3
        g = SpeculativeDecoder(toy64, m, K, 4, SamplingConfig(0.0), trace=False).generate(PY_PROMPT, n, seed=1)
        assert g.tokens == ref.tokens, m
        assert g.metrics.attention == "tree attention"


@needs_toy
def test_bundled_greedy_every_shape_and_law(toy64):
    """T = 0 on the bundled pair (float64): chains and static trees drafted by every law, a
    rank-path tree and a dynamic tree, verified by rrs and by traversal, give the target's greedy
    tokens."""
    n = 32
    ref = AutoregressiveDecoder(toy64, SamplingConfig(0.0)).generate(PY_PROMPT, n, seed=0).tokens
    plans = [StaticPlan.chains(3, 4, law) for law in ("wor", "topk", "greedy")] + \
        [StaticPlan.tree(b, law) for b, law in (((2, 2, 1), "topk"), ((2, 2), "iid"), ((2, 2, 1), "wor"),
                                                ((3, 1, 1), "greedy"))] + \
        [RankTreePlan(((1,), (2,), (1, 1), (1, 2), (1, 1, 1), (1, 1, 1, 1))), DynamicPlan(10, 4, 3)]
    for plan in plans:
        for method in ("rrs", "traversal"):
            g = SpeculativeDecoder(toy64, method, sampling=SamplingConfig(0.0), plan=plan,
                                   trace=False).generate(PY_PROMPT, n, seed=1)
            assert g.tokens == ref, (plan.label, method)


@needs_toy
def test_cli_decodes_trees_and_refuses_chain_rules_on_them(capsys):
    """The issue's two commands: a topk tree verified by rrs at T = 0 gives the target's greedy
    tokens; 4 × 4 chains drafted by wor decode by traversal at T = 0.7.  A chain-only rule on
    another law is refused in one line before the pair loads."""
    from core.cli.decode import main
    common = ["--pair", "toy", "--max-new-tokens", "24", "--prompt", PY_PROMPT, "--json", "--threads", "1"]
    assert main(["decode", "--tree", "2,2,1", "--law", "topk", "--method", "rrs", "--temperature", "0"] + common) == 0
    tree = json.loads(capsys.readouterr().out)
    assert main(["decode", "--method", "sd", "--K", "1", "--L", "4", "--temperature", "0"] + common) == 0
    assert tree["tokens"] == json.loads(capsys.readouterr().out)["tokens"] and len(tree["tokens"]) == 24
    assert tree["draft"] == {"kind": "static", "shape": "tree", "branching": [2, 2, 1], "budget": 10,
                             "law": "topk", "label": "b = (2, 2, 1), topk"}
    assert main(["decode", "--K", "4", "--L", "4", "--law", "wor", "--method", "traversal",
                 "--temperature", "0.7"] + common) == 0
    wor = json.loads(capsys.readouterr().out)
    assert len(wor["tokens"]) == 24 and wor["law"] == "wor" and wor["mean_tree_nodes"] > 4
    for argv, msg in [(["--method", "bv", "--tree", "2,2", "--law", "wor"], "bv is defined on K i.i.d. chains only"),
                      (["--method", "rrs", "--budget", "8", "--law", "iid"], "drafts by topk"),
                      (["--method", "rrs", "--tree-paths", "1,1.2"], "no elder sibling"),
                      (["--method", "rrs", "--tree", "2,2", "--budget", "4"], "not allowed with argument")]:
        assert main(["decode", "--pair", "toy"] + argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and msg in err, (argv, err)
    # refused before torch is imported (the plan is checked with the arguments)
    code = ("import sys; from core.cli import main; rc = main(['decode', '--pair', 'toy', '--method', 'bv', "
            "'--tree', '2,2', '--law', 'wor']); print(rc, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["2", "False"] and "bv is defined on K i.i.d. chains only" in out.stderr


@needs_toy
def test_bundled_cache_rollback_long_generation(toy64):
    sampling = SamplingConfig(1.0)
    a = SpeculativeDecoder(toy64, "rbv", 3, 4, sampling, trace=False).generate(PY_PROMPT, 48, seed=8)
    b = SpeculativeDecoder(toy64, "rbv", 3, 4, sampling, trace=False, use_cache=False).generate(PY_PROMPT, 48, seed=8)
    assert a.tokens == b.tokens and len(a.tokens) > 0


@needs_toy
def test_cli_decode_json_with_samples():
    out = subprocess.run([sys.executable, "-m", "core", "decode", "--pair", "toy", "--method", "specinfer",
                          "--K", "2", "--L", "3", "--temperature", "1", "--seed", "5",
                          "--max-new-tokens", "12", "--prompt", "import os\n", "--num-samples", "2",
                          "--json", "--threads", "1"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert len(res["tokens"]) <= 12 and isinstance(res["text"], str)
    for key in ("block_efficiency", "target_calls", "tokens_per_second", "mean_accepted_length",
                "acceptance_per_position", "time_draft_s", "time_target_s", "time_verify_s"):
        assert key in res
    assert len(res["samples"]) == 2 and all(isinstance(t, int) for s in res["samples"] for t in s)
    assert res["threads"] == 1 and res["attention"] == "tree attention"


def test_forward_seconds_leaves_the_cache_as_it_found_it(tiny):
    """The benchmark's pass timer feeds rows × tokens after a cache and crops them off each time, so
    every timed pass sees the same context length: the model's cache never grows."""
    from core.bench.decoding import forward_seconds

    seen = []
    model = tiny.target
    original = model.forward

    def spy(*args, **kwargs):
        cache = kwargs.get("past_key_values")
        seen.append((kwargs["input_ids"].shape, None if cache is None else cache.get_seq_length()))
        return original(*args, **kwargs)

    model.forward = spy
    try:
        sec = forward_seconds(model, tiny.device, tiny.vocab_size, tokens=3, rows=2, context=5, repeats=2)
    finally:
        del model.forward
    assert sec > 0
    assert seen[0] == ((2, 5), None)                               # the cache is built once
    assert seen[1:] == [((2, 3), 5)] * 6                           # then 3 × 2 timed passes at length 5


@needs_toy
def test_packed_heads_decode_like_plain_ones():
    """On a CPU the loaders pack the large linear layers (here the two output heads) for oneDNN;
    ``pack=False`` and the CLI's ``--no-pack`` keep torch's.  Greedy decoding is the same."""
    from core.decoding.packed_linear import PackedLinear, can_pack

    packed, plain = bundled_pair(), bundled_pair(pack=False)
    assert isinstance(packed.target.lm_head, PackedLinear) == can_pack(torch.float32)
    assert isinstance(packed.draft.lm_head, PackedLinear) == can_pack(torch.float32)
    assert not any(isinstance(m, PackedLinear) for m in (*plain.target.modules(), *plain.draft.modules()))
    greedy = SamplingConfig(0.0)
    a = SpeculativeDecoder(packed, "sd", 1, 4, greedy, trace=False).generate(PY_PROMPT, 24, seed=0)
    b = SpeculativeDecoder(plain, "sd", 1, 4, greedy, trace=False).generate(PY_PROMPT, 24, seed=0)
    assert a.tokens == b.tokens and len(a.tokens) == 24
    out = subprocess.run([sys.executable, "-m", "core", "decode", "--pair", "toy", "--method", "sd",
                          "--K", "1", "--L", "4", "--temperature", "0", "--max-new-tokens", "24",
                          "--prompt", PY_PROMPT, "--json", "--threads", "1", "--no-pack"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["tokens"] == b.tokens


@pytest.mark.parametrize("name", ["chains-wor", "tree-iid", "rank-tree", "dynamic"])
def test_the_tree_rebuilt_from_a_trace_is_the_one_the_rule_read(tiny, name):
    """``traces.tree_from_trace`` rebuilds, from an iteration's record alone, the draws, the shape and
    the law of the tree the rule verified (``it.block``, kept by the decoder), p and q at each drafted
    token, and the rule's tests: a dynamic or rank-path tree as the smallest static tree containing it
    (``Shape.containing``, b_d = the most draws at a node of depth d − 1, as ``Proposal.shape``)."""
    from core.data.shapes import Shape
    from core.decoding.iteration_trace import tree_from_trace
    plan = TREE_PLANS[name]
    g = SpeculativeDecoder(tiny, "rrs", sampling=SamplingConfig(1.0), plan=plan, keep_blocks=True).generate(
        TINY_PROMPT, 12, 3)
    for it in g.iterations:
        block, trace = tree_from_trace(it, tiny.vocab_size, plan)
        kept = it.block
        assert (block.shape, block.law) == (kept.shape, kept.law)
        assert block.draws == {u: tuple(xs) for u, xs in kept.draws.items()}
        widest = {}
        for u, xs in kept.draws.items():                        # the definition, counted again here
            widest[len(u)] = max(widest.get(len(u), 0), len(xs))
        assert Shape.containing(kept.draws).branching == tuple(widest[d] for d in sorted(widest))
        for u, xs in kept.draws.items():
            for t in set(xs):
                assert block.p[u][t] == pytest.approx(kept.p[u][t], abs=1e-6)
                assert block.q[u][t] == pytest.approx(kept.q[u][t], abs=1e-6)
        assert [(t.node, t.passed) for t in trace.tests] == [(tuple(t["node"]), t["passed"]) for t in it.tests]
