"""vllm-ascend's former "block verify" (MagicMTP), shipped from PR 5542 until PR 7808 (issue 7807):
a product of uniforms against a product of ratios, and the token-level residual (docs/maths.md,
"vllm-ascend's block verify (`vllm_ascend_block`)").

Ported from vllm-project/vllm-ascend at 66d966b (the parent of 2f4d55e, PR 7808), the engine's p being
this project's q.  ``rejection_sample`` in ``vllm_ascend/sample/rejection_sampler.py`` takes this path
when ``max_spec_len >= 3`` and the drafter passes its probabilities (MTP, EAGLE-3); for each position
k = 1..L, with u_k ~ U[0, 1) one uniform per position (vLLM's ``generate_uniform_probs``):

    legal_k  iff  p(x_k) > 0  and  w_k ≥ u_1·u_2⋯u_k,        τ = the last legal k (0 if none),

after which the engine emits x_≤τ and, for τ < L, the token ``sample_recovered_tokens`` drew at
position τ + 1 from (q − p)₊ there (the token-level residual, argmax((q − p)₊/E), E ~ Exp(1)), for τ = L
the bonus from q.  The two released implementations differ in w_k (``variant``):

* ``triton`` — ``rejection_random_sample_block_verify_kernel`` in ``vllm_ascend/ops/triton/
  reject_sample.py`` (the one that runs on NPU: triton-ascend is a requirement, so ``HAS_TRITON``):
  ``pi = min(pi * target_prob / draft_prob, 1.0)``, w_k = min(1, w_(k−1)·q(x_k)/p(x_k)), block
  verification's weights;
* ``pytorch`` — ``rejection_random_sample_block_verify_pytorch`` (without Triton):
  ``pi = cumprod(clamp(target/draft, max=1))``, w_k = Π_(i≤k) min(1, q(x_i)/p(x_i)).

**The exact law.**  Write S_k = −ln(u_1⋯u_k): the S_k are the arrival times of a unit Poisson
process N, so with c_k = −ln w_k (∞ where w_k = 0), legal_k iff S_k ≥ c_k iff N(c_k) ≤ k − 1 (ties
have probability 0).  The counts of N at the sorted times c_k have independent Poisson increments,
and only whether each count is below k matters, so counts are capped at L.  The coin programme
draws the capped increments with categorical coins (Poisson probabilities), which is the uniforms'
law given the drafts exactly: sampling and the exact law are one programme, and ``tau_law`` gives
P(τ = k | x) by the same recursion over (count, last legal position so far).  Where (q − p)₊ has no
mass (p = q at the node), the kernel's argmax over a row of zeros would return token 0, and so does
this port; it is never drawn: there the drafted token's ratio is 1, so w_(k+1) = w_k and legal_k
implies legal_(k+1).
"""
from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from core.data.coins import Coins
from core.data.distributions import residual
from core.data.outcome import Outcome, Trace
from core.data.token_tree import TokenTree
from core.rules.one_chain import Chain, OneChainRule, chain_law_cost, chain_output_law
from core.rules.params import Param

#: The released implementations: the Triton kernel the NPU runs (the default), and the PyTorch one.
VARIANTS = ("triton", "pytorch")
SOURCE = ("vllm-project/vllm-ascend at 66d966b (before PR 7808): vllm_ascend/ops/triton/reject_sample.py, "
          "vllm_ascend/sample/rejection_sampler.py")


def weights(chain: Chain, variant: str) -> list[float]:
    """w_1..w_L of the variant (module docstring)."""
    w, out = 1.0, []
    for i in range(chain.L):
        ratio = chain.q_token(i) / chain.p_token(i)
        w = min(w * ratio, 1.0) if variant == "triton" else w * min(ratio, 1.0)
        out.append(w)
    return out


def _times(w: list[float]) -> list[float]:
    """c_k = −ln w_k, ∞ where w_k = 0."""
    return [math.inf if wk <= 0.0 else -math.log(min(wk, 1.0)) for wk in w]


def increments(lam: float, room: int) -> np.ndarray:
    """P(Poisson(λ) = j) for j < ``room`` and P(Poisson(λ) ≥ room) last: a capped increment."""
    pmf = np.array([math.exp(-lam) * lam ** j / math.factorial(j) for j in range(room)])
    return np.append(pmf, max(0.0, 1.0 - float(pmf.sum())))


def _steps(w: list[float]):
    """The sorted distinct times with the positions k (1-based) whose c_k is each, and the gap before it."""
    c = _times(w)
    previous = 0.0
    for t in sorted(set(c)):
        yield t, t - previous, [k + 1 for k, ck in enumerate(c) if ck == t]
        previous = t


def tau_law(w: list[float]) -> np.ndarray:
    """P(τ = k | x), k = 0..L, for the weights w (module docstring), by a recursion over the states
    (capped count of arrivals, last legal position so far) along the sorted times."""
    L = len(w)
    states = {(0, 0): 1.0}
    for t, gap, ks in _steps(w):
        after: dict[tuple[int, int], float] = {}
        for (n, best), mass in states.items():
            moves = [(L, 1.0)] if math.isinf(t) or n >= L else \
                [(min(L, n + j), pr) for j, pr in enumerate(increments(gap, L - n))]
            for m, pr in moves:
                if pr <= 0.0:
                    continue
                best2 = max([best] + [k for k in ks if m <= k - 1])
                after[(m, best2)] = after.get((m, best2), 0.0) + mass * pr
        states = after
    law = np.zeros(L + 1)
    for (_, best), mass in states.items():
        law[best] += mass
    return law


def recovered(p_row: np.ndarray, q_row: np.ndarray) -> np.ndarray:
    """The token ``sample_recovered_tokens`` draws: (q − p)₊ normalised, token 0 where it has no mass."""
    first = np.zeros(q_row.size)
    first[0] = 1.0
    return residual(q_row - p_row, first)


class VllmAscendBlock(OneChainRule):
    name = "vllm_ascend_block"
    short = "Ascend block"
    label = "vllm-ascend's former block verify (MagicMTP)"
    color = "#dd00bb"  # vLLM's colour (vllm-ascend is vLLM's Ascend plugin)
    engine = "vLLM"
    summary = ("Accept the longest prefix of one sampled chain whose weight w_k is at least the product of k "
               "uniforms, then draw the correction from the token-level residual, as vllm-ascend shipped it.")
    source = f"vllm-ascend's block verify before PR 7808, issue 7807 ({SOURCE})"
    lossless_by_theory = False
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("variant", str, VARIANTS[0], "the released implementation: the Triton kernel the NPU runs, with "
              "capped running weights, or the PyTorch one, with a product of capped ratios", choices=VARIANTS),
    )
    how = ("**How vllm-ascend's block verify tests.** Position k of the one chain is legal when its weight w_k is at "
           "least u_1⋯u_k, a product of k uniforms (w_k = min(1, w_(k−1)·q/p) in the Triton kernel, Π min(1, q/p) "
           "in the PyTorch one); the last legal position is τ, and the correction is drawn from (q − p)₊ at position "
           "τ + 1, as in token-level verification.")

    def __init__(self, variant: str = VARIANTS[0]):
        self.variant = self.parameters[0].check(variant)

    def verify_chain(self, tree: TokenTree, chain: Chain, coins: Coins) -> Outcome:
        """The legality tests through the Poisson counts at the sorted times c_k (module docstring)."""
        w = weights(chain, self.variant)
        L = chain.L
        count, counts = 0, {}
        for t, gap, _ in _steps(w):
            if math.isinf(t) or count >= L:
                count = L
            else:
                count = min(L, count + coins.categorical(increments(gap, L - count)))
            counts[t] = count
        trace = Trace()
        c = _times(w)
        tau = 0
        for k in range(1, L + 1):
            legal = counts[c[k - 1]] <= k - 1
            # P(legal_k) = P(N(c_k) ≤ k − 1), the Poisson distribution function
            prob = 0.0 if math.isinf(c[k - 1]) else float(increments(c[k - 1], k)[:k].sum())
            trace.test(chain.node(k), 0, prob, legal, "sub-block" if k < L else "full-block", w=w[k - 1])
            if legal:
                tau = k
        extra = chain.q[L] if tau == L else recovered(chain.p[tau], chain.q[tau])
        return Outcome(chain.node(tau), 0 if tau else -1, extra, trace)

    def model_output_law(self, draft, target, K: int, L: int):
        """Exact output law on one chain sampled from p: ``tau_law`` on each of the V^L paths."""
        def conditional(c: Chain):
            for tau, prob in enumerate(tau_law(weights(c, self.variant))):
                if prob > 0.0:
                    yield tau, float(prob), (c.q[L] if tau == L else recovered(c.p[tau], c.q[tau]))
        return chain_output_law(draft, target, L, conditional)

    model_law_cost = staticmethod(chain_law_cost)

    def __repr__(self) -> str:
        return f"<verifier vllm_ascend_block {self.variant}>"
