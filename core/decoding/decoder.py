"""Speculative decoding with K i.i.d. drafts of length L over a real pair of causal language models.

One iteration (spec §1), from a context c of n tokens:

1. **Propose** (``DraftProposer``): the draft model, with its KV cache expanded from one row to K,
   samples K drafts x^(1..K) ∈ Ω^L in one batch, autoregressively.  At each node s of the draft tree
   the draft distribution p(·|c·s) is computed once (drafts sharing s share it) and every draft
   passing through s samples its next token from exactly that vector.
2. **Score** (``TargetScorer``): the target runs once over the distinct drafts (one row each, with
   its cache expanded), giving q(·|c·s) at every node s, |s| ≤ L (bonus position included).
3. **Verify**: a ``core.rules.registry`` rule turns the ``DraftBlock`` into an accepted prefix s and an
   extra token y; the seeded generator that drew the drafts also drives the verifier.
4. **Commit**: c ← c·s·y; both caches keep the row of a draft through s and are cropped to the new
   context (the last token is fed at the next iteration), so nothing is ever recomputed.

Temperature, top-k and top-p (``SamplingConfig``) act identically on both models' logits
(``next_token_probs``, float64); T = 0 is one-hot argmax.  Logits are sliced to the tokenizer's size.
Every run takes a seed and replays exactly.  Per iteration an ``IterationTrace`` records the draft
tree with p and q, the verifier's tests and quantities, the residual, E[τ | drafts] where the rule
has a closed form, and the single-token optimum α* at the root (spec §6).  ``DecodeMetrics`` sums
a run up.  ``AutoregressiveDecoder`` is the reference: the target alone, one token per call, with
the same sampling code.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence

import numpy as np
import torch

from core.bounds import single_token_optimum
from core.data.coins import RandomCoins
from core.decoding.pairs import ModelPair
from core.data.tree import DraftBlock, Node
from core.rules.registry import Verifier, get_verifier, method_names

#: Rules that need toy models (they solve an LP over the whole vocabulary).
TOY_ONLY_METHODS = ("lp_optimal",)
#: Top entries kept for each distribution in a trace.
TRACE_TOP = 8


class DecodingError(ValueError):
    """Bad decoder arguments or an impossible generation; the message is one sentence."""


def decoder_methods() -> list[str]:
    """The verification rules the real decoder runs (all registered rules but the toy-only ones)."""
    return [m for m in method_names() if m not in TOY_ONLY_METHODS]


def check_method(method: str) -> None:
    """Raise ``DecodingError`` unless the real decoder can run ``method``."""
    if method in TOY_ONLY_METHODS:
        raise DecodingError(f"method {method!r} needs toy models (an LP over the whole vocabulary) "
                            "and is not available in the real decoder")
    if method not in decoder_methods():
        raise DecodingError(f"unknown method {method!r}; choose one of {', '.join(decoder_methods())}")


# ---------------------------------------------------------------------------------------------
# Sampling transforms
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SamplingConfig:
    """Temperature T (0 = greedy), optional top-k and top-p, applied identically to both models."""

    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None

    def __post_init__(self):
        T = self.temperature
        if not isinstance(T, (int, float)) or not np.isfinite(T) or T < 0:
            raise DecodingError(f"temperature must be a finite number ≥ 0, got {T}")
        if self.top_k is not None and (not isinstance(self.top_k, (int, np.integer)) or self.top_k < 1):
            raise DecodingError(f"top-k must be a positive integer, got {self.top_k}")
        if self.top_p is not None and not (0 < self.top_p <= 1):
            raise DecodingError(f"top-p must be in (0, 1], got {self.top_p}")


def next_token_probs(logits: torch.Tensor, vocab_size: int, sampling: SamplingConfig) -> np.ndarray:
    """Next-token distributions from logits (..., V'), float64 on the CPU, sliced to ``vocab_size``.

    T = 0: one-hot at the argmax (first maximum).  T > 0: softmax(logits / T) after keeping the
    ``top_k`` largest logits (ties at the k-th value kept) and then the smallest set of tokens, by
    probability descending, whose mass reaches ``top_p`` (the most likely token always kept).
    """
    x = logits[..., :vocab_size].detach().to("cpu").to(torch.float64)   # (MPS has no float64)
    if sampling.temperature == 0:
        out = torch.zeros_like(x)
        out.scatter_(-1, x.argmax(dim=-1, keepdim=True), 1.0)
        return out.numpy()
    x = x / sampling.temperature
    if sampling.top_k is not None and sampling.top_k < vocab_size:
        kth = torch.topk(x, sampling.top_k, dim=-1).values[..., -1:]
        x = x.masked_fill(x < kth, float("-inf"))
    if sampling.top_p is not None and sampling.top_p < 1:
        sorted_x, order = torch.sort(x, dim=-1, descending=True, stable=True)
        probs = torch.softmax(sorted_x, dim=-1)
        before = torch.cumsum(probs, dim=-1) - probs          # mass strictly above each token
        drop = before >= sampling.top_p
        drop[..., 0] = False
        x = x.scatter(-1, order, sorted_x.masked_fill(drop, float("-inf")))
    return torch.softmax(x, dim=-1).numpy()


def _top(vec: np.ndarray, k: int = TRACE_TOP) -> list[tuple[int, float]]:
    """The k largest entries of a distribution as (token id, probability), largest first."""
    k = min(k, vec.size)
    idx = np.argpartition(-vec, k - 1)[:k]
    idx = idx[np.lexsort((idx, -vec[idx]))]
    return [(int(i), float(vec[i])) for i in idx if vec[i] > 0]


# ---------------------------------------------------------------------------------------------
# One model's KV cache over the context, with batch expansion and rollback
# ---------------------------------------------------------------------------------------------

class CachedLM:
    """A causal LM reading a growing context.  Its cache covers ``context[:cached]`` with one row
    between iterations; ``start`` feeds the uncached context tokens (plus optional per-row
    extensions, after expanding the cache to several rows), ``extend`` feeds one more token per row,
    and ``commit(row, keep)`` keeps one row and crops the cache to the first ``keep`` tokens.
    With ``use_cache=False`` every call recomputes the whole sequence (the reference for tests)."""

    def __init__(self, model, device: torch.device, use_cache: bool = True):
        self.model = model
        self.device = device
        self.use_cache = use_cache
        self.calls = 0
        self.reset()

    def reset(self) -> None:
        self.cache = None
        self.cached = 0          # context tokens held by the cache (row-independent)
        self.rows = 1
        self._context: list[int] = []
        self._ext: torch.Tensor | None = None

    def _run(self, ids: torch.Tensor, use_cache: bool) -> torch.Tensor:
        self.calls += 1
        if use_cache:
            out = self.model(input_ids=ids, past_key_values=self.cache, use_cache=True)
            self.cache = out.past_key_values
        else:
            out = self.model(input_ids=ids, use_cache=False)
        return out.logits

    def prefill(self, context: Sequence[int]) -> None:
        """Cache every context token but the last (nothing to do without a cache)."""
        if self.use_cache and len(context) - 1 > self.cached:
            ids = torch.tensor([list(context[self.cached:-1])], device=self.device)
            self._run(ids, True)
            self.cached = len(context) - 1

    def start(self, context: Sequence[int], rows: int = 1,
              extension: torch.Tensor | None = None) -> torch.Tensor:
        """Logits (rows, 1 + m, V') at the last context token and at each of the m extension
        tokens (``extension``: (rows, m) token ids, or None for m = 0)."""
        m = 0 if extension is None else int(extension.shape[1])
        if self.use_cache:
            pending = torch.tensor([list(context[self.cached:])], device=self.device)
            if pending.shape[1] < 1:
                raise RuntimeError("nothing to feed: the cache already covers the whole context")
            if rows > 1 and self.cache is not None and self.cached > 0:
                if self.rows != 1:
                    raise RuntimeError("commit a single row before starting a new pass")
                self.cache.batch_repeat_interleave(rows)
            ids = pending.expand(rows, -1)
            if extension is not None:
                ids = torch.cat([ids, extension.to(self.device)], dim=1)
            self.rows = rows
            logits = self._run(ids, True)
            self._fed = len(context) + m
        else:
            self._context = list(context)
            self._ext = extension.to(self.device) if extension is not None else \
                torch.zeros((rows, 0), dtype=torch.long, device=self.device)
            ids = torch.cat([torch.tensor([self._context], device=self.device).expand(rows, -1),
                             self._ext], dim=1)
            self.rows = rows
            logits = self._run(ids, False)
        return logits[:, -(1 + m):, :]

    def expand(self, rows: int) -> None:
        """Repeat the single row (cache, or pending extension without a cache) ``rows`` times."""
        if rows == self.rows:
            return
        if self.rows != 1:
            raise RuntimeError("only a single-row state can be expanded")
        if self.use_cache:
            self.cache.batch_repeat_interleave(rows)
        else:
            self._ext = self._ext.repeat(rows, 1)
        self.rows = rows

    def extend(self, tokens: torch.Tensor) -> torch.Tensor:
        """Feed one more token per row (``tokens``: (rows, 1)); logits (rows, V') after it."""
        tokens = tokens.to(self.device)
        if self.use_cache:
            logits = self._run(tokens, True)
            self._fed += 1
        else:
            self._ext = torch.cat([self._ext, tokens], dim=1)
            ids = torch.cat([torch.tensor([self._context], device=self.device)
                             .expand(self._ext.shape[0], -1), self._ext], dim=1)
            logits = self._run(ids, False)
        return logits[:, -1, :]

    def commit(self, row: int, keep: int) -> None:
        """Keep cache row ``row`` and its first ``keep`` positions (the new context minus its
        last token, or less when the cache holds fewer)."""
        if not self.use_cache:
            return
        keep = min(keep, self._fed)
        if self.rows > 1:
            self.cache.batch_select_indices(torch.tensor([row], device=self.device))
            self.rows = 1
        if self._fed > keep:
            self.cache.crop(keep - self._fed)
        self.cached = keep


# ---------------------------------------------------------------------------------------------
# Traces and metrics
# ---------------------------------------------------------------------------------------------

@dataclass
class TreeNodeTrace:
    """One node s of the draft tree: its last token, how many drafts pass through it, the
    probability the draft and the target gave that token (p(s_last|parent), q(s_last|parent)),
    and the top entries of p(·|s) (absent at depth L) and q(·|s)."""

    node: Node
    depth: int
    token: int | None
    multiplicity: int
    p_token: float | None
    q_token: float | None
    p_top: list[tuple[int, float]]
    q_top: list[tuple[int, float]]


@dataclass
class IterationTrace:
    """Everything the app draws for one iteration."""

    index: int
    position: int                       # context length at the start of the iteration
    drafts: list[list[int]]
    nodes: list[TreeNodeTrace]
    tests: list[dict]                   # the verifier's acceptance tests, in order
    quantities: list[dict]              # [{"node": [...], name: value, ...}]
    rejected: list[Node]
    accepted: Node
    accepted_draft: int                 # 0-based, -1 when nothing was accepted
    tau: int
    extra: int
    is_bonus: bool
    residual_top: list[tuple[int, float]]   # the distribution the extra token came from
    expected_tau: float | None              # E[τ | drafts], exact, where the rule has a closed form
    alpha_star_root: float                  # single-token optimum with K drafts at the root (§6)
    acceptance_root: float                  # 1 − TV(p, q) at the root (one draft, one token)
    draft_s: float
    target_s: float
    verify_s: float
    block: DraftBlock | None = field(default=None, repr=False)

    def to_dict(self, token_text: Callable[[int], str] | None = None) -> dict:
        d = asdict(self)
        d.pop("block", None)
        for key in ("accepted",):
            d[key] = list(d[key])
        d["rejected"] = [list(s) for s in self.rejected]
        for n in d["nodes"]:
            n["node"] = list(n["node"])
            if token_text is not None and n["token"] is not None:
                n["text"] = token_text(n["token"])
        if token_text is not None:
            d["extra_text"] = token_text(self.extra)
        return d


@dataclass
class DecodeMetrics:
    """A run summed up.  ``block_efficiency`` = Σ(τ_i + 1) / iterations (tokens per target call,
    counted before truncation at EOS or at the length limit); ``mean_accepted_length`` is vLLM's
    1 + accepted / drafts (drafts = proposal rounds), the same number; ``acceptance_per_position[i]``
    is the fraction of iterations whose accepted prefix reached position i + 1;
    ``mean_root_acceptance`` is the mean over iterations of 1 − TV(p, q) = Σ_x min(p(x|c), q(x|c)) at
    the root c of each draft tree (one draft, one token: the draft pair's quality along this very
    generation, kept even without traces; 0 for autoregressive decoding).  ``target_calls``
    counts the target's forward passes during decoding (one per iteration), not the prompt's
    prefill.  Times are wall-clock seconds."""

    method: str
    K: int
    L: int
    temperature: float
    tokens_generated: int
    iterations: int
    target_calls: int
    draft_calls: int
    accepted_tokens: int
    block_efficiency: float
    mean_accepted_length: float
    acceptance_per_position: list[float]
    mean_root_acceptance: float
    tokens_per_second: float
    time_total_s: float
    time_prefill_s: float
    time_draft_s: float
    time_target_s: float
    time_verify_s: float
    time_other_s: float
    verify_fraction: float              # verify time / (draft + target + verify + other) time

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Generation:
    """One generation: the new token ids, their text, the metrics and (optionally) the traces."""

    prompt_ids: list[int]
    tokens: list[int]
    text: str
    stop_reason: str                    # "eos" or "length"
    metrics: DecodeMetrics
    iterations: list[IterationTrace] = field(default_factory=list)


def _summarize(method, K, L, T, tokens, taus, draft_calls, times, total,
               root_acceptance: Sequence[float] = ()) -> DecodeMetrics:
    n_it = len(taus)
    acc = int(sum(taus))
    be = (acc + n_it) / n_it if n_it else 0.0
    per_pos = [float(np.mean([t >= i for t in taus])) if n_it else 0.0 for i in range(1, L + 1)]
    loop = times["draft"] + times["target"] + times["verify"] + times["other"]
    root = float(np.mean(root_acceptance)) if len(root_acceptance) else 0.0
    return DecodeMetrics(method, K, L, T, len(tokens), n_it, n_it, draft_calls, acc, be, be, per_pos, root,
                         len(tokens) / total if total > 0 else 0.0, total, times["prefill"],
                         times["draft"], times["target"], times["verify"], times["other"],
                         times["verify"] / loop if loop > 0 else 0.0)


def _as_rng(seed) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        raise DecodingError("a seed is required: every run must replay exactly")
    return np.random.default_rng(seed)


def synchronize(device: torch.device) -> None:
    """Wait for queued GPU work, so that a wall-clock reading covers it (nothing to wait for on a CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _prompt_ids(pair: ModelPair, prompt: str | Sequence[int]) -> list[int]:
    if isinstance(prompt, str):
        return pair.encode(prompt)
    ids = [int(t) for t in prompt]
    if not ids:
        return pair.encode("")
    bad = [t for t in ids if not 0 <= t < pair.vocab_size]
    if bad:
        raise DecodingError(f"prompt token id {bad[0]} is outside the vocabulary of {pair.vocab_size}")
    return ids


def _finish(new: list[int], appended: Sequence[int], eos: frozenset[int], limit: int) -> str | None:
    """Append tokens up to the first EOS (included) and the length limit; the stop reason or None."""
    for t in appended:
        new.append(int(t))
        if int(t) in eos:
            return "eos"
        if len(new) >= limit:
            return "length"
    return None


# ---------------------------------------------------------------------------------------------
# Proposing and scoring
# ---------------------------------------------------------------------------------------------

class DraftProposer:
    """Samples K i.i.d. drafts of length L from the draft model in one batch (candidate generation,
    kept apart from verification as in ``transformers.generation``)."""

    def __init__(self, lm: CachedLM, vocab_size: int, sampling: SamplingConfig):
        self.lm, self.V, self.sampling = lm, vocab_size, sampling

    def propose(self, context: Sequence[int], K: int, L: int, coins: RandomCoins
                ) -> tuple[np.ndarray, dict[Node, np.ndarray]]:
        """Drafts (K, L) and p(·|s) for every node s with |s| < L (one vector per node)."""
        probs = next_token_probs(self.lm.start(context)[:, -1], self.V, self.sampling)
        self.lm.expand(K)
        p: dict[Node, np.ndarray] = {(): probs[0]}
        drafts = np.zeros((K, L), dtype=np.int64)
        for k in range(K):
            drafts[k, 0] = coins.categorical(p[()])
        for i in range(1, L):
            logits = self.lm.extend(torch.as_tensor(drafts[:, i - 1:i]))
            rows = {}
            for k in range(K):
                rows.setdefault(tuple(int(t) for t in drafts[k, :i]), k)
            new_rows = [k for node, k in rows.items() if node not in p]
            probs = next_token_probs(logits[new_rows], self.V, self.sampling)
            for j, k in enumerate(new_rows):
                p[tuple(int(t) for t in drafts[k, :i])] = probs[j]
            for k in range(K):
                drafts[k, i] = coins.categorical(p[tuple(int(t) for t in drafts[k, :i])])
        return drafts, p


class TargetScorer:
    """Runs the target once over the distinct drafts: q(·|s) for every node s with |s| ≤ L."""

    def __init__(self, lm: CachedLM, vocab_size: int, sampling: SamplingConfig):
        self.lm, self.V, self.sampling = lm, vocab_size, sampling

    def score(self, context: Sequence[int], drafts: np.ndarray
              ) -> tuple[dict[Node, np.ndarray], list[tuple[int, ...]]]:
        """q along every draft path, and the distinct drafts in the order of the target's rows."""
        distinct = list(dict.fromkeys(tuple(int(t) for t in row) for row in drafts))
        ext = torch.tensor(distinct, dtype=torch.long)
        logits = self.lm.start(context, rows=len(distinct), extension=ext)   # (U, L+1, V')
        probs = next_token_probs(logits, self.V, self.sampling)
        q: dict[Node, np.ndarray] = {}
        for u, x in enumerate(distinct):
            for i in range(len(x) + 1):
                q.setdefault(x[:i], probs[u, i])
        return q, distinct


# ---------------------------------------------------------------------------------------------
# Decoders
# ---------------------------------------------------------------------------------------------

def _check_length(pair: ModelPair, prompt_len: int, max_new_tokens: int, lookahead: int) -> None:
    if not isinstance(max_new_tokens, (int, np.integer)) or max_new_tokens < 1:
        raise DecodingError(f"max_new_tokens must be a positive integer, got {max_new_tokens}")
    limit = pair.max_positions
    if limit is not None and prompt_len + max_new_tokens + lookahead > limit:
        raise DecodingError(f"prompt ({prompt_len} tokens) + max_new_tokens ({max_new_tokens}) + "
                            f"draft lookahead ({lookahead}) exceeds the models' {limit} positions")


class SpeculativeDecoder:
    """Speculative decoding with K i.i.d. drafts of length L and a named verification rule."""

    def __init__(self, pair: ModelPair, method: str, K: int, L: int,
                 sampling: SamplingConfig | None = None, *, use_cache: bool = True,
                 trace: bool = True, keep_blocks: bool = False):
        check_method(method)
        for name, value in (("K", K), ("L", L)):
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
                raise DecodingError(f"{name} must be a positive integer, got {value!r}")
        self.pair = pair
        self.method = method
        self.verifier: Verifier = get_verifier(method)
        self.verifier.complete_trace = trace
        self.K, self.L = int(K), int(L)
        self.sampling = sampling or SamplingConfig()
        self.use_cache = use_cache
        self.trace = trace
        self.keep_blocks = keep_blocks
        self._closed_form = type(self.verifier).expected_tau is not Verifier.expected_tau
        self.draft_lm = CachedLM(pair.draft, pair.device, use_cache)
        self.target_lm = CachedLM(pair.target, pair.device, use_cache)
        self.proposer = DraftProposer(self.draft_lm, pair.vocab_size, self.sampling)
        self.scorer = TargetScorer(self.target_lm, pair.vocab_size, self.sampling)

    @torch.inference_mode()
    def generate(self, prompt: str | Sequence[int], max_new_tokens: int, seed,
                 on_iteration: Callable[[IterationTrace], None] | None = None) -> Generation:
        """Generate up to ``max_new_tokens`` new tokens (stopping after EOS), seeded.
        ``on_iteration`` (with ``trace=True``) receives each iteration's trace as it is made."""
        pair, K, L = self.pair, self.K, self.L
        ids = _prompt_ids(pair, prompt)
        _check_length(pair, len(ids), max_new_tokens, L + 1)
        rng = _as_rng(seed)
        coins = RandomCoins(rng)
        eos = pair.eos_ids
        dev = pair.device
        times = dict(prefill=0.0, draft=0.0, target=0.0, verify=0.0, other=0.0)
        self.draft_lm.reset()
        self.target_lm.reset()
        self.draft_lm.calls = self.target_lm.calls = 0
        t_start = time.perf_counter()
        self.draft_lm.prefill(ids)
        self.target_lm.prefill(ids)
        synchronize(dev)
        times["prefill"] = time.perf_counter() - t_start
        draft_calls0 = self.draft_lm.calls
        context = list(ids)
        new: list[int] = []
        taus: list[int] = []
        root_acc: list[float] = []
        traces: list[IterationTrace] = []
        stop = None
        while stop is None:
            t0 = time.perf_counter()
            drafts, p = self.proposer.propose(context, K, L, coins)
            synchronize(dev)
            t1 = time.perf_counter()
            q, distinct = self.scorer.score(context, drafts)
            synchronize(dev)
            t2 = time.perf_counter()
            block = DraftBlock(drafts, p, q)
            verdict = self.verifier.verify(block, rng)
            t3 = time.perf_counter()
            root_acc.append(float(np.minimum(p[()], q[()]).sum()))
            s = tuple(int(t) for t in verdict.accepted)
            tau = len(s)
            k_acc = next(k for k in range(K) if tuple(int(t) for t in drafts[k, :tau]) == s)
            n = len(context)
            self.target_lm.commit(distinct.index(tuple(int(t) for t in drafts[k_acc])), n + tau)
            self.draft_lm.commit(k_acc, n + tau)
            appended = s + (int(verdict.extra),)
            context.extend(appended)
            taus.append(tau)
            stop = _finish(new, appended, eos, max_new_tokens)
            t4 = time.perf_counter()
            times["draft"] += t1 - t0
            times["target"] += t2 - t1
            times["verify"] += t3 - t2
            times["other"] += t4 - t3
            if self.trace:
                traces.append(self._trace(len(traces), n, block, verdict, t1 - t0, t2 - t1, t3 - t2))
                if on_iteration is not None:
                    on_iteration(traces[-1])
        total = time.perf_counter() - t_start
        metrics = _summarize(self.method, K, L, self.sampling.temperature, new, taus,
                             self.draft_lm.calls - draft_calls0, times, total, root_acc)
        return Generation(ids, new, pair.decode(new), stop, metrics, traces)

    def sample(self, prompt: str | Sequence[int], num_samples: int, max_new_tokens: int,
               seed: int) -> list[Generation]:
        """``num_samples`` independent generations; sample j is seeded with (seed, j)."""
        if not isinstance(num_samples, (int, np.integer)) or num_samples < 1:
            raise DecodingError(f"num_samples must be a positive integer, got {num_samples}")
        return [self.generate(prompt, max_new_tokens, np.random.default_rng([int(seed), j]))
                for j in range(num_samples)]

    def _trace(self, index, position, block: DraftBlock, verdict, t_draft, t_target, t_verify
               ) -> IterationTrace:
        nodes = []
        for s in block.nodes():
            parent = s[:-1]
            nodes.append(TreeNodeTrace(
                node=s, depth=len(s), token=s[-1] if s else None, multiplicity=block.multiplicity(s),
                p_token=float(block.p[parent][s[-1]]) if s else None,
                q_token=float(block.q[parent][s[-1]]) if s else None,
                p_top=_top(block.p[s]) if s in block.p else [], q_top=_top(block.q[s])))
        tr = verdict.trace
        tests = [dict(node=list(t.node), draft=t.draft, prob=t.prob, passed=t.passed, kind=t.kind)
                 for t in tr.tests]
        quantities = [dict(node=list(s), **vals) for s, vals in tr.quantities.items()]
        residual = np.asarray(verdict.residual, dtype=np.float64)
        residual = residual / residual.sum()
        expected = self.verifier.expected_tau(block) if self._closed_form else None
        p0, q0 = block.p[()], block.q[()]
        return IterationTrace(
            index=index, position=position, drafts=block.drafts.tolist(), nodes=nodes, tests=tests,
            quantities=quantities, rejected=list(tr.rejected), accepted=tuple(verdict.accepted),
            accepted_draft=int(verdict.draft), tau=verdict.tau, extra=int(verdict.extra),
            is_bonus=bool(verdict.is_bonus), residual_top=_top(residual),
            expected_tau=None if expected is None else float(expected),
            alpha_star_root=single_token_optimum(p0, q0, self.K),
            acceptance_root=float(np.minimum(p0, q0).sum()),
            draft_s=t_draft, target_s=t_target, verify_s=t_verify,
            block=block if self.keep_blocks else None)


class AutoregressiveDecoder:
    """The target alone, one token per forward pass (the reference), with the same sampling."""

    method = "autoregressive"

    def __init__(self, pair: ModelPair, sampling: SamplingConfig | None = None, *, use_cache: bool = True):
        self.pair = pair
        self.sampling = sampling or SamplingConfig()
        self.lm = CachedLM(pair.target, pair.device, use_cache)

    @torch.inference_mode()
    def generate(self, prompt: str | Sequence[int], max_new_tokens: int, seed) -> Generation:
        pair = self.pair
        ids = _prompt_ids(pair, prompt)
        _check_length(pair, len(ids), max_new_tokens, 0)
        coins = RandomCoins(_as_rng(seed))
        eos = pair.eos_ids
        times = dict(prefill=0.0, draft=0.0, target=0.0, verify=0.0, other=0.0)
        self.lm.reset()
        t_start = time.perf_counter()
        self.lm.prefill(ids)
        synchronize(pair.device)
        times["prefill"] = time.perf_counter() - t_start
        context, new, stop, steps = list(ids), [], None, 0
        while stop is None:
            t0 = time.perf_counter()
            probs = next_token_probs(self.lm.start(context)[:, -1], pair.vocab_size, self.sampling)[0]
            synchronize(pair.device)
            times["target"] += time.perf_counter() - t0
            y = coins.categorical(probs)
            self.lm.commit(0, len(context))
            context.append(y)
            steps += 1
            stop = _finish(new, (y,), eos, max_new_tokens)
        total = time.perf_counter() - t_start
        metrics = _summarize(self.method, 0, 0, self.sampling.temperature, new, [0] * steps, 0,
                             times, total)
        return Generation(ids, new, pair.decode(new), stop, metrics, [])
