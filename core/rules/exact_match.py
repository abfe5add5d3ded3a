"""Exact-match acceptance at T > 0 (docs/maths.md, "Exact-match acceptance (`exact_match`)"): the rule
of the multi-token-prediction verifiers that mlx-swift-lm PR #459 and llama.cpp PR #27694 propose
to replace.

For i = 1..L the target draws t_i ~ q(·|x_<i); the draft token x_i is accepted iff x_i = t_i; at the
first mismatch the target's own sample t_i is emitted and the step ends; after L matches the bonus
y ~ q(·|x).  Read from the threads: mlx-swift-lm #459 ("accepts a draft position only when the
drafted token is equal to a token sampled from the target at that position"), #267 ("accept up to
first mismatch → emit correction"), mlx-lm #1485 ("match verification (emit the target's own
sample)"); the text of llama.cpp #27694 itself was not available here.

Given the drafts, x_i = t_i has probability q(x_i|x_<i) and, on a mismatch, t_i is distributed as
q(·|x_<i) with x_i removed, so the coin programme tosses Bernoulli(q(x_i|x_<i)) and draws the
correction from that law:
    E[τ | x] = Σ_i Π_(j≤i) q(x_j|x_<j),   E[τ] = Σ_(i=1..L) Σ_(u ∈ Ω^i) p(u)·q(u).
Lossless: every emitted token is the target's sample t_i at its prefix (accepted when it equals the
draft token, emitted as the correction otherwise), so the output is q's whatever p is; the price is
acceptance Σ_x p(x)q(x) per token instead of speculative sampling's Σ_x min(p(x), q(x)).
"""
from __future__ import annotations

import numpy as np

from core.data.coins import Coins
from core.data.distributions import without
from core.data.outcome import Outcome
from core.data.token_tree import TokenTree
from core.rules.base import Verifier
from core.rules.token_level import token_walk


def _matches(block: TokenTree) -> list[float]:
    """q(x_i | x_<i) for draft 0: the probability that the target's sample equals the draft token."""
    x = block.draft(0)
    return [float(block.q[x[:i]][x[i]]) for i in range(block.L)]


class ExactMatch(Verifier):
    name = "exact_match"
    short = "Match"
    label = "exact-match acceptance at T > 0"
    color = "#442200"  # dark brown
    summary = ("One draft, checked against the target's own samples: accept x_i iff it equals t_i ~ "
               "q(·|x_<i), and at the first mismatch emit t_i.")
    source = ("the multi-token-prediction verifiers of mlx-swift-lm and llama.cpp, as described in "
              "ml-explore/mlx-swift-lm PR #459 and #267 and ml-explore/mlx-lm PR #1485")
    single_draft = True
    order_invariant = False
    lossless_by_theory = True   # every emitted token is a target sample (module docstring)
    needs_models = False
    closed_form_tau = True
    released_port = True
    below_baseline = ("it accepts a drafted token x only when the target's own sample equals it, with probability "
                      "q(x), never more than SD's min(1, q(x)/p(x))")

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:
        # on a mismatch the target's sample is q(·|u) given that it is not the draft token
        return token_walk(block, _matches(block), "match", lambda u, token: without(block.q[u], token), coins)

    def expected_tau(self, block: TokenTree) -> float:
        return float(np.sum(np.cumprod(_matches(block))))
