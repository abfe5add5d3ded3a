"""Speculative decoding over a real pair of causal language models: K i.i.d. drafts of length L, or
any draft plan of ``core.decoding.plans`` (chains or a static tree by any law, a rank-path tree,
EAGLE-2's dynamic tree).

One iteration (docs/maths.md), from a context c of n tokens, is one call into each step's module:

1. **Propose** (``core.decoding.proposal``): the draft model drafts the plan's tree (for K chains,
   K drafts x^(1..K) ∈ Ω^L merged into one tree), grown level by level, with p(·|c·s) at every
   node s that has children;
2. **Score** (``core.decoding.scoring``): the target runs once over the whole tree, giving
   q(·|c·s) at every node s (bonus positions included);
3. **Verify** (``core.decoding.verification``): a ``core.rules`` rule turns what it reads (a
   ``TokenTree``: K i.i.d. chains, or any other tree) into an accepted prefix s and an
   extra token y, and the iteration's trace is recorded;
4. **Commit** (``core.decoding.commit``): both caches rolled back to c·s, c ← c·s·y, and the stop
   test;

and a run ends with 5. **metrics** (``core.decoding.metrics``).  Both models score the tree in one
sequence with tree attention (``core.decoding.tree_attention``) when they can, and in one row per
draft otherwise (``core.decoding.cached_lm``).  Temperature, top-k and top-p
(``core.decoding.sampling``) act identically on both models' logits, in float64 on the models'
device, where the drafts are drawn too; two transfers to the host per iteration, one per model
(``core.decoding.transfer``).  Every run takes a seed and replays exactly (on the same device).
``core.decoding.autoregressive`` is the reference: the target alone.
"""
from __future__ import annotations

import time
from typing import Callable, Sequence

import numpy as np
import torch

from core.data.laws import IID_LAW, DraftLaw
from core.decoding.cached_lm import cached_lm
from core.decoding.commit import extend, finish, keep_accepted
from core.errors import DecodingError
from core.decoding.inputs import check_request
from core.decoding.methods import check_method
from core.decoding.metrics import Generation, device_generator, phase_times, summarize, synchronize
from core.decoding.pairs import ModelPair
from core.decoding.plans import DraftPlan, DynamicPlan, StaticPlan, check_plan, max_draws_per_node
from core.decoding.proposal import DraftProposer
from core.decoding.sampling import SamplingConfig
from core.decoding.scoring import TargetScorer
from core.decoding.iteration_trace import IterationTrace
from core.decoding.verification import iteration_trace, root_acceptance, verify
from core.rules.registry import Verifier, make_verifier


class SpeculativeDecoder:
    """Speculative decoding with a named verification rule and a draft plan: K chains of length L
    drafted by ``law`` (default: K i.i.d. drafts), or any ``plan`` of ``core.decoding.plans`` (a
    static tree b, a rank-path tree, EAGLE-2's dynamic tree), given instead of K, L and law.

    ``use_cache=False`` recomputes every forward pass from the whole sequence (the reference for
    the cache); ``trace=False`` keeps no per-iteration traces (and lets the rule skip work that only
    fills them); ``keep_blocks`` keeps what the rule read (its ``TokenTree``) in each
    iteration's trace.
    """

    def __init__(self, pair: ModelPair, method: str, K: int | None = None, L: int | None = None,
                 sampling: SamplingConfig | None = None, *, law: str | DraftLaw | None = None,
                 plan: DraftPlan | None = None, use_cache: bool = True, trace: bool = True,
                 keep_blocks: bool = False, params: dict | None = None):
        check_method(method)
        if plan is None:
            for name, value in (("K", K), ("L", L)):
                if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
                    raise DecodingError(f"{name} must be a positive integer, got {value!r}")
            plan = StaticPlan.chains(int(K), int(L), law or IID_LAW)
        elif (K, L, law) != (None, None, None):
            raise DecodingError("give K, L and law, or a plan, not both")
        check_plan(method, plan)
        self.plan = plan
        self.pair = pair
        self.method = method
        # the rule's own parameters (``Verifier.parameters``), each checked by its declaration
        self.verifier: Verifier = make_verifier(method, **(params or {}))
        self.verifier.complete_trace = trace
        self.K, self.L = plan.K, plan.L
        self.sampling = sampling or SamplingConfig()
        widest = max_draws_per_node(plan)
        if widest and self.sampling.top_k is not None and self.sampling.top_k < widest:
            raise DecodingError(f"{plan.label} draws {widest} distinct tokens at a node, more than "
                                f"top-k = {self.sampling.top_k} leaves; raise top-k or draw fewer")
        if isinstance(plan, DynamicPlan) and plan.width > pair.vocab_size:
            raise DecodingError(f"a dynamic tree of width {plan.width} needs at least that many tokens; "
                                f"the vocabulary has {pair.vocab_size}")
        self.use_cache = use_cache
        self.trace = trace
        self.keep_blocks = keep_blocks
        self.draft_lm = cached_lm(pair.draft, pair.device, use_cache, name="draft model")
        self.target_lm = cached_lm(pair.target, pair.device, use_cache, name="target model")
        d, t = self.draft_lm.layout, self.target_lm.layout
        #: How the two models read the draft tree: "tree attention", "rows", or one of each.
        self.attention = t if d == t else f"draft: {d}, target: {t}"
        if "rows" in self.attention and not (isinstance(plan, StaticPlan) and plan.shape.chains):
            raise DecodingError(f"{plan.label} needs tree attention, and the "
                                f"{'draft' if d == 'rows' else 'target'} model cannot take it (the "
                                "log says why); draft chains instead (--K, --L)")
        self.proposer = DraftProposer(self.draft_lm, pair.vocab_size, self.sampling, plan)
        self.scorer = TargetScorer(self.target_lm, pair.vocab_size, self.sampling)

    @torch.inference_mode()
    def generate(self, prompt: str | Sequence[int], max_new_tokens: int, seed,
                 on_iteration: Callable[[IterationTrace], None] | None = None) -> Generation:
        """Generate up to ``max_new_tokens`` new tokens, stopping after an EOS token.

        Parameters
        ----------
        prompt : str or sequence of int
            Text (tokenized with the pair's tokenizer, its special tokens included) or token ids;
            an empty prompt starts from the tokenizer's BOS token (EOS when there is none).
        max_new_tokens : int
            The most new tokens; an iteration that overshoots is truncated.
        seed : int, sequence of int, numpy.random.SeedSequence or numpy.random.Generator
            Required: the one generator ``np.random.default_rng(seed)`` drives the rule and seeds
            the ``torch.Generator`` that draws the drafts on the models' device, so a seed replays
            exactly on the same device (a ``Generator`` is used as is and advances).  ``None`` is
            refused rather than seeded from the operating system.
        on_iteration : callable, optional
            With ``trace=True``, called with each ``IterationTrace`` as soon as it is made.

        Returns
        -------
        Generation
            The prompt's and the new token ids, the new text, the stop reason ("eos" or
            "length"), the ``DecodeMetrics`` and, with ``trace=True``, one trace per iteration.

        Raises
        ------
        DecodingError
            When ``max_new_tokens`` is not a positive integer, a prompt token id is outside the
            vocabulary, prompt + ``max_new_tokens`` + L + 1 exceeds the models' positions, or
            ``seed`` is None.
        PairError
            When the prompt is empty and the tokenizer has neither a BOS nor an EOS token.

        Examples
        --------
        A tiny random Llama pair (vocabulary 16, no EOS token, float64), built in place:

        >>> import torch
        >>> from tokenizers import Tokenizer, models
        >>> from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
        >>> from core.decoding import AutoregressiveDecoder, SamplingConfig, SpeculativeDecoder
        >>> from core.decoding.pairs import pair_from_models
        >>> def tiny_llama(seed):
        ...     torch.manual_seed(seed)
        ...     config = LlamaConfig(vocab_size=16, hidden_size=16, intermediate_size=32,
        ...                          num_hidden_layers=1, num_attention_heads=2, eos_token_id=None)
        ...     return LlamaForCausalLM(config).double()
        >>> words = Tokenizer(models.WordLevel({f"t{i}": i for i in range(16)}, unk_token="t0"))
        >>> tokenizer = PreTrainedTokenizerFast(tokenizer_object=words)
        >>> pair = pair_from_models(tiny_llama(0), tiny_llama(1), tokenizer)
        >>> decoder = SpeculativeDecoder(pair, "bv", K=2, L=3)
        >>> gen = decoder.generate([1, 2, 3], max_new_tokens=8, seed=0)
        >>> len(gen.tokens), gen.stop_reason
        (8, 'length')
        >>> gen.metrics.block_efficiency >= 1.0
        True
        >>> gen.tokens == decoder.generate([1, 2, 3], max_new_tokens=8, seed=0).tokens
        True

        Greedy speculative decoding makes the target's own greedy tokens:

        >>> greedy = SamplingConfig(temperature=0.0)
        >>> spec = SpeculativeDecoder(pair, "sd", K=1, L=3, sampling=greedy).generate([1, 2, 3], 8, 0)
        >>> spec.tokens == AutoregressiveDecoder(pair, greedy).generate([1, 2, 3], 8, 0).tokens
        True
        """
        pair, K, L = self.pair, self.K, self.L
        ids = check_request(pair, prompt, max_new_tokens, seed, lookahead=L + 1)
        rng = np.random.default_rng(seed)
        generator = device_generator(rng, pair.device)
        eos = pair.eos_ids
        times = phase_times()
        t_start = time.perf_counter()
        for lm in (self.draft_lm, self.target_lm):
            lm.reset()
            lm.prefill(ids)
        synchronize(pair.device)
        times["prefill"] = time.perf_counter() - t_start
        draft_calls0 = self.draft_lm.calls
        context, new = list(ids), []
        taus: list[int] = []
        nodes: list[int] = []
        root_acc: list[float] = []
        traces: list[IterationTrace] = []
        verifier = self.verifier           # a rule with state across iterations advances (``Verifier.advance``)
        stop = None
        while stop is None:
            t0 = time.perf_counter()
            # 1. Propose: the plan's tree, and p(·|s) at every node that has children.
            proposal = self.proposer.propose(context, generator)
            synchronize(pair.device)
            t1 = time.perf_counter()
            # 2. Score: q(·|s) at every node of the tree, one target call over the whole tree.
            q = self.scorer.score(context, proposal)
            synchronize(pair.device)
            t2 = time.perf_counter()
            # 3. Verify: the rule's accepted prefix s and extra token y, with the seeded generator.
            block, verdict = verify(verifier, proposal, q, rng)
            t3 = time.perf_counter()
            # 4. Commit: both caches rolled back to c·s; c ← c·s·y; stop at EOS or the limit.
            position = len(context)
            keep_accepted(position, verdict, proposal, self.draft_lm, self.target_lm)
            synchronize(pair.device)
            t4 = time.perf_counter()
            root_acc.append(root_acceptance(block))
            taus.append(verdict.tau)
            nodes.append(proposal.host.size - 1)
            stop = finish(new, extend(context, verdict), eos, max_new_tokens)
            t5 = time.perf_counter()
            split = (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)
            for phase, seconds in zip(("draft", "target", "verify", "cache", "other"), split):
                times[phase] += seconds
            if self.trace:
                traces.append(iteration_trace(verifier, proposal, block, verdict, index=len(traces),
                                              position=position, seconds=split,
                                              keep_block=self.keep_blocks))
                if on_iteration is not None:
                    on_iteration(traces[-1])
            verifier = verifier.advance(verdict.tokens)
        # 5. Metrics.
        metrics = summarize(method=self.method, K=K, L=L, temperature=self.sampling.temperature,
                            tokens=new, taus=taus, draft_calls=self.draft_lm.calls - draft_calls0,
                            times=times, total_s=time.perf_counter() - t_start,
                            root_acceptance=root_acc, attention=self.attention,
                            peak_cache_bytes=self.draft_lm.peak_cache_bytes + self.target_lm.peak_cache_bytes,
                            draft=self.plan.label, law=self.proposer.law.name, tree_nodes=nodes)
        return Generation(prompt_ids=ids, tokens=new, text=pair.decode(new), stop_reason=stop,
                          metrics=metrics, iterations=traces)

    def sample(self, prompt: str | Sequence[int], num_samples: int, max_new_tokens: int,
               seed: int) -> list[Generation]:
        """``num_samples`` independent generations; sample j is seeded with (seed, j)."""
        if not isinstance(num_samples, (int, np.integer)) or num_samples < 1:
            raise DecodingError(f"num_samples must be a positive integer, got {num_samples}")
        return [self.generate(prompt, max_new_tokens, np.random.default_rng([int(seed), j]))
                for j in range(num_samples)]
