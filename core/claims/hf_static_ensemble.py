"""transformers' static ensemble verification (PR 45979, after DIVERSED, arXiv 2604.07622),
``core.rules.hf_ensemble`` (docs/maths.md, "transformers' static ensemble"): the PR claims that it
raises the acceptance rate from 1 − TV(p, q) to 1 − w·TV(p, q) and that it "provably achieves the
Pareto-optimal tradeoff between acceptance rate and distributional bias" (the paper's Proposition 1).

Both are per-token statements.  The lab decides them on one token (L = 1) and on blocks of L = 2,
where the best trade is the loss-gain frontier (``core.bounds.frontier``: the LP of every verifier of
the same chain whose completed output law is within the rule's own TV of q).  The rule runs at the
weight w = 1/2 (its default here; transformers' default, None, is w = 1: speculative sampling).
"""
from __future__ import annotations

import numpy as np

from core.analysis.exact import LOSSLESS_TOL
from core.bounds.frontier import frontier
from core.claims.base import Claim, Family, Instance, Source, Trial, holds, trial_check
from core.claims.chain_trials import exact_on, lossless_trial, opener
from core.rules.hf_ensemble import DEFAULT_W

SOURCE = Source("transformers-ensemble", "transformers' static ensemble verification (assistant_ensemble_weight)",
                "github.com/huggingface/transformers, src/transformers/generation/utils.py at b012bde; PR 45979; "
                "DIVERSED, arXiv 2604.07622", "https://github.com/huggingface/transformers/pull/45979", group="engines")
RULE = "hf_ensemble"


def acceptance(draft, target, K: int, L: int) -> Trial:
    """"The acceptance rate is 1 − w·TV(p, q)": at one token the rule's E[τ] is its acceptance rate,
    against the formula from the models' own TV (context-independent at the root)."""
    r = exact_on(RULE, None, draft, target, L)
    tv = 0.5 * float(np.abs(draft.cond(()) - target.cond(())).sum())
    claimed = 1.0 - DEFAULT_W * tv
    gap = abs(r.expected_accepted - claimed)
    return Trial(gap <= LOSSLESS_TOL, LOSSLESS_TOL - gap,
                 {"hf_ensemble_expected_accepted": r.expected_accepted, "claimed": claimed,
                  "sd_expected_accepted": 1.0 - tv, "hf_ensemble_tv": r.fidelity_tv})


def pareto(draft, target, K: int, L: int) -> Trial:
    """"Its trade is the best at its loss": the rule's E[τ] against the loss-gain frontier at its TV."""
    r = exact_on(RULE, None, draft, target, L)
    best = frontier(draft, target, 1, L, min(1.0, r.fidelity_tv)).value
    gap = r.expected_accepted - best
    return Trial(gap >= -1e-7, gap, {"hf_ensemble_expected_accepted": r.expected_accepted,
                                     "hf_ensemble_tv": r.fidelity_tv, "frontier": best})


TOY = dict(preset="binary-toy", methods=(RULE, "sd", "bv"))
ONE_TOKEN = Family(("iid", "markov", "table"), Vs=(2, 3), Ks=(1,), Ls=(1,), n=4)
BLOCKS = Family(("iid", "markov", "table"), Vs=(2, 3), Ks=(1,), Ls=(2,), n=4)
W1 = {RULE: {"w": 1.0}}
CLAIMS = (
    Claim("acceptance-rate", SOURCE, "Static ensemble verification raises the acceptance rate from 1 − TV(p, q) to "
          "1 − w·TV(p, q).",
          "Its exact E[τ] at one token (the acceptance rate), w = 1/2, against 1 − w·TV(p, q) from the models, on the "
          "binary toy (TV(p, q) = 1/3).", instance=Instance(1, 1, **TOY), check=trial_check(acceptance)),
    Claim("acceptance-rate-family", SOURCE, "The acceptance rate is 1 − w·TV(p, q) on every instance.",
          "The same at one token, w = 1/2, on each seeded instance; the largest difference.",
          family=ONE_TOKEN, trial=acceptance, methods=(RULE, "sd")),
    Claim("pareto-one-token", SOURCE, "It achieves the Pareto-optimal trade between acceptance and bias (PR 45979, "
          "Proposition 1).",
          "Its exact E[τ] at one token, w = 1/2, against the loss-gain frontier at its own TV from q, on the binary toy.",
          instance=Instance(1, 1, **TOY), check=trial_check(pareto)),
    Claim("pareto-one-token-family", SOURCE, "Its trade is the best at its loss at one token, on every instance.",
          "The same at one token on each seeded instance; the largest shortfall below the frontier.",
          family=ONE_TOKEN, trial=pareto, methods=(RULE, "sd")),
    Claim("pareto-blocks", SOURCE, "Its trade is the best at its loss on blocks of drafted tokens too.",
          "Its exact E[τ] on one chain of 2 tokens, w = 1/2, against the loss-gain frontier at its own TV from q (the "
          "completed law over the block), on the binary toy.", instance=Instance(1, 2, **TOY), check=trial_check(pareto)),
    Claim("pareto-blocks-family", SOURCE, "Its trade is the best at its loss on blocks, on every instance.",
          "The same on one chain of 2 tokens on each seeded instance; the largest shortfall below the frontier.",
          family=BLOCKS, trial=pareto, methods=(RULE, "bv")),
    Claim("w1-lossless-family", SOURCE, "At w = 1 (the default, None) it is speculative sampling: lossless.",
          "Its TV from q at w = 1 on one chain of 2 tokens on each seeded instance; the worst (largest) TV.",
          family=BLOCKS, trial=lossless_trial(RULE, W1[RULE]), methods=(RULE, "sd"),
          opens=opener(params=W1)),
)
