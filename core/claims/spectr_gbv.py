"""The claims of the SpecTr-GBV paper (Lin, Sheng, Cai, Zhou 2026), each decided on one toy
configuration, and a seeded random search for configurations that break them; ``CLAIMS`` registers
them (``core.claims.registry``) on the binary toy.

The paper claims that its rule is lossless, optimal among lossless verifiers, attains its stated
E_CIC, is monotone in K, reduces to block verification at K = 1 and verifies in O(|Ω|).  Every
decision below is exact (``core.analysis.exact``, ``core.bounds``) except the last, which is a
wall-clock measurement on this machine.

The ``*_verdict`` functions are pure: they take exact results and bound values that the caller has
already computed (the app caches those), and return a ``ClaimVerdict``.  The ``*_claim`` functions
compute those inputs from the models first (for tests and the command line).

One tolerance, ``LOSSLESS_TOL`` (1e-9), for every comparison: two exact float64 values that are
equal in exact arithmetic (the rule's E[τ] against the closed-form E_CIC or the LP optimum, two
output laws, consecutive E[τ]) agree to ~1e-12 (HiGHS's LP optimum matches BV's exact E[τ] at K = 1
to ~1e-16), while every violation studied here exceeds 1e-3; so the same margin separates "equal"
from "different" in all of them.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from toy_models import IIDModel, ToyModel, random_pair

from core import bounds
from core.analysis.compensation import IterationResult, compensate, iterate_exact
from core.analysis.exact import LOSSLESS_TOL, ExactResult, exact_analysis
from core.analysis.toy_drafts import draw_block
from core.claims.base import FAILS, HOLDS, NA, STATUSES, Claim, Instance, Source
from core.errors import InvalidInput
from core.rules.registry import get_verifier

#: The rules the claims compare: the paper's rule; block verification, which it claims to reduce to
#: at K = 1; and best-of-K + BV, the lossless rule that verifies one of its K drafts, shown beside
#: it for every K.
GBV = "spectr_gbv"
K1_REFERENCE = "bv"
BEST_OF_K = "best_of_k_bv"

#: |Ω| at which one verification is timed for the O(|Ω|) claim.
TIMING_SIZES = (16, 64, 256, 1024, 4096)
#: Largest fitted exponent of time against |Ω| that still counts as O(|Ω|): linear plus timing noise.
MAX_TIMING_EXPONENT = 1.25


@dataclass(frozen=True)
class ClaimVerdict:
    """One claim decided on one configuration."""
    claim: str                      # the claim's title
    status: str                     # HOLDS, FAILS or NA
    numbers: Mapping[str, Any]      # the values the verdict rests on
    reproduce: Mapping[str, Any]    # JSON-ready; with the two models it reproduces the verdict
    #: A wall-clock fit on this machine (the O(|Ω|) claim), not an exact decision: its HOLDS means
    #: "the timing is consistent with the claim", never "the claim holds".
    measured: bool = False

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"verdict status must be one of {STATUSES}, got {self.status!r}")


def _holds(ok: bool) -> str:
    return HOLDS if ok else FAILS


# Lossless -------------------------------------------------------------------------------------------

def lossless_verdict(result: ExactResult) -> ClaimVerdict:
    """Lossless: the completed output law P̃ equals q on Ω^(L+1) (``ExactResult.is_lossless``).

    Numbers: the fidelity error TV(P̃, q), the sequence z where |P̃(z) − q(z)| is largest, and both
    probabilities there."""
    tv = result.fidelity_tv
    diff = np.abs(result.completed - result.target)
    z = tuple(int(i) for i in np.unravel_index(int(np.argmax(diff)), diff.shape))
    return ClaimVerdict(
        "Lossless", _holds(result.is_lossless),
        {"fidelity_tv": tv, "worst_sequence": z, "produced": float(result.completed[z]),
         "target": float(result.target[z])},
        {"method": result.method, "fidelity_tv": tv, "worst_sequence": list(z)})


def repair_verdict(result: ExactResult, target: ToyModel) -> ClaimVerdict:
    """Lossless with Algorithm 2 (reconstructed, ``core.analysis.compensation``): modifying the target
    of the next iteration restores q iff the rule never over-emits, i.e. F(u) = q(u) − P(O extends u)
    ≥ 0 for every prefix u.  Numbers: whether it over-emits, the prefix where F is lowest and the
    excess −min F there."""
    comp = compensate(result.output_law, target, result.L, result.method)
    return ClaimVerdict(
        "Lossless with Algorithm 2", _holds(not comp.over_emission),
        {"over_emission": comp.over_emission, "worst_prefix": comp.worst_node, "min_F": comp.min_F},
        {"method": result.method, "K": result.K, "L": result.L, "min_F": comp.min_F,
         "worst_prefix": list(comp.worst_node)})


def repair_iterations(draft: ToyModel, target: ToyModel, K: int, L: int, method: str = GBV,
                      n: int = 2) -> tuple[IterationResult, IterationResult] | None:
    """n iterations run exactly against plain q and against the compensated target, in that order;
    None beyond V = 3, K = 3, L = 2, where branching over every output takes too long to show live."""
    if draft.V > 3 or K > 3 or L > 2:
        return None
    plain, compensated = (iterate_exact(method, draft, target, K, L, n, compensate_target=c)
                          for c in (False, True))
    return plain, compensated


def lossless_claim(draft: ToyModel, target: ToyModel, K: int, L: int, method: str = GBV) -> ClaimVerdict:
    """``lossless_verdict`` from the models."""
    return lossless_verdict(exact_analysis(method, draft, target, K, L))


def repair_claim(draft: ToyModel, target: ToyModel, K: int, L: int, method: str = GBV) -> ClaimVerdict:
    """``repair_verdict`` from the models."""
    return repair_verdict(exact_analysis(method, draft, target, K, L), target)


# Optimal --------------------------------------------------------------------------------------------

#: The optimality claim's title: the rule is lossless and attains the LP optimum.  Not to be confused
#: with the search's ``ABOVE_LP`` check, which only asks whether E[τ] exceeds the LP optimum.
OPTIMAL = "Optimal among lossless verifiers"


def optimal_verdict(result: ExactResult, lp: float | None) -> ClaimVerdict:
    """Optimal among lossless verifiers: the rule is lossless and its E[τ] equals the LP optimum
    ``lp`` (None: not computed, NA).

    A rule that is not lossless fails outright; ``above_optimum`` says whether it accepts more than
    any lossless rule can, which is only possible by changing the output law."""
    e = result.expected_accepted
    if lp is None:
        return ClaimVerdict(OPTIMAL, NA, {"expected_accepted": e}, {"method": result.method})
    ok = result.is_lossless and abs(e - lp) <= LOSSLESS_TOL
    return ClaimVerdict(
        OPTIMAL, _holds(ok),
        {"expected_accepted": e, "lp_optimum": lp, "lossless": result.is_lossless, "gap": lp - e,
         "above_optimum": e > lp + LOSSLESS_TOL},
        {"method": result.method, "K": result.K, "L": result.L, "expected_accepted": e, "lp_optimum": lp})


def optimal_claim(draft: ToyModel, target: ToyModel, K: int, L: int, method: str = GBV) -> ClaimVerdict:
    """``optimal_verdict`` from the models (the LP is solved, ``core.bounds.lp_optimum``)."""
    return optimal_verdict(exact_analysis(method, draft, target, K, L),
                           float(bounds.lp_optimum(draft, target, K, L).value))


# Attains E_CIC --------------------------------------------------------------------------------------

def cic_verdict(result: ExactResult, cic: float, lp: float | None = None) -> ClaimVerdict:
    """Attains E_CIC: E[τ] equals the paper's E_CIC = Σ_s q(s)·[1 − (1 − m(s))^K]
    (``core.bounds.claimed_cic``).  With the LP optimum, ``unattainable`` says whether E_CIC exceeds
    what any lossless verifier can reach."""
    e = result.expected_accepted
    return ClaimVerdict(
        "Attains its stated E_CIC", _holds(abs(e - cic) <= LOSSLESS_TOL),
        {"expected_accepted": e, "claimed_cic": cic, "lp_optimum": lp,
         "unattainable": lp is not None and cic > lp + LOSSLESS_TOL},
        {"method": result.method, "K": result.K, "L": result.L, "expected_accepted": e, "claimed_cic": cic})


def cic_claim(draft: ToyModel, target: ToyModel, K: int, L: int, method: str = GBV) -> ClaimVerdict:
    """``cic_verdict`` from the models, with the LP optimum."""
    return cic_verdict(exact_analysis(method, draft, target, K, L), bounds.claimed_cic(draft, target, K, L),
                       float(bounds.lp_optimum(draft, target, K, L).value))


# Monotone in K --------------------------------------------------------------------------------------

def monotone_Ks(K: int) -> range:
    """The K checked for monotonicity: 1 .. max(4, K + 1), so at least one past the configuration's."""
    return range(1, max(4, K + 1) + 1)


def monotone_verdict(points: Sequence[tuple[int, float]]) -> ClaimVerdict:
    """Monotone in K: E[τ] never decreases from one K to the next, over (K, E[τ]) ``points`` in
    increasing K.  Numbers: the points and the first drop (K, E[τ], K', E[τ']) or None."""
    pts = tuple((int(k), float(v)) for k, v in points)
    drop = next(((k1, v1, k2, v2) for (k1, v1), (k2, v2) in zip(pts, pts[1:]) if v2 < v1 - LOSSLESS_TOL),
                None)
    return ClaimVerdict("Monotone in K", _holds(drop is None), {"points": pts, "drop": drop},
                        {"expected_accepted_by_K": {str(k): v for k, v in pts}})


def monotone_claim(draft: ToyModel, target: ToyModel, K: int, L: int, method: str = GBV) -> ClaimVerdict:
    """``monotone_verdict`` from the models, over ``monotone_Ks(K)``."""
    return monotone_verdict([(k, exact_analysis(method, draft, target, k, L).expected_accepted)
                             for k in monotone_Ks(K)])


# Reduces to block verification at K = 1 ---------------------------------------------------------------

def k1_verdict(rule: ExactResult, bv: ExactResult) -> ClaimVerdict:
    """Reduces to block verification at K = 1: the rule's output law at K = 1 equals BV's, to
    ``LOSSLESS_TOL`` in total variation ½ Σ_u |P_rule(O = u) − P_BV(O = u)|."""
    if rule.K != 1 or bv.K != 1:
        raise InvalidInput(f"the K = 1 claim needs both laws at K = 1, got K = {rule.K} and K = {bv.K}")
    outs = set(rule.output_law) | set(bv.output_law)
    law_tv = 0.5 * sum(abs(rule.output_law.get(u, 0.0) - bv.output_law.get(u, 0.0)) for u in outs)
    return ClaimVerdict(
        "Reduces to block verification at K = 1", _holds(law_tv <= LOSSLESS_TOL),
        {"rule_expected_accepted": rule.expected_accepted, "rule_fidelity_tv": rule.fidelity_tv,
         "bv_expected_accepted": bv.expected_accepted, "bv_fidelity_tv": bv.fidelity_tv, "law_tv": law_tv},
        {"method": rule.method, "K": 1, "L": rule.L, "output_law_tv": law_tv})


def k1_claim(draft: ToyModel, target: ToyModel, L: int, method: str = GBV) -> ClaimVerdict:
    """``k1_verdict`` from the models."""
    return k1_verdict(exact_analysis(method, draft, target, 1, L),
                      exact_analysis(K1_REFERENCE, draft, target, 1, L))


# Verification in O(|Ω|) -------------------------------------------------------------------------------

def verification_times(K: int, L: int, Vs: Sequence[int] = TIMING_SIZES, blocks: int = 20, seed: int = 0,
                       method: str = GBV) -> tuple[float, ...]:
    """Median wall time (seconds, on this machine) of one verification, per |Ω| in ``Vs``.

    For each V: i.i.d. models q ~ Dirichlet(1), p = (q + Dirichlet(1))/2 from seed + V; block b drawn
    (``draw_block``) and verified with seed + b."""
    verifier = get_verifier(method)
    out = []
    for V in Vs:
        rng = np.random.default_rng(seed + V)
        q = rng.dirichlet(np.ones(V))
        p = 0.5 * q + 0.5 * rng.dirichlet(np.ones(V))
        draft, target = IIDModel(p / p.sum()), IIDModel(q / q.sum())
        times = []
        for b in range(blocks):
            block = draw_block(draft, target, K, L, seed + b)
            coins = np.random.default_rng(seed + b)
            t0 = time.perf_counter()
            verifier.verify(block, coins)
            times.append(time.perf_counter() - t0)
        out.append(float(np.median(times)))
    return tuple(out)


def timing_verdict(Vs: Sequence[int], seconds: Sequence[float]) -> ClaimVerdict:
    """Verification in O(|Ω|), as far as a timing can tell: the least-squares slope of log time
    against log |Ω| is at most ``MAX_TIMING_EXPONENT``.  A measurement (``measured=True``), not an
    exact verdict: it depends on this machine and its load, and a small slope (0.03 is typical at
    these sizes, where a test's fixed cost dominates) is consistent with O(|Ω|) without proving it."""
    slope = float(np.polyfit(np.log(Vs), np.log(seconds), 1)[0])
    return ClaimVerdict("Verification in O(|Ω|)", _holds(slope <= MAX_TIMING_EXPONENT),
                        {"sizes": tuple(Vs), "seconds": tuple(seconds), "exponent": slope},
                        {"sizes": list(Vs), "exponent": slope}, measured=True)


def timing_claim(K: int, L: int, Vs: Sequence[int] = TIMING_SIZES, blocks: int = 20, seed: int = 0,
                 method: str = GBV) -> ClaimVerdict:
    """``timing_verdict`` on ``verification_times`` measured now."""
    return timing_verdict(Vs, verification_times(K, L, Vs, blocks, seed, method))


# Random search ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SearchConfig:
    """One random configuration of the search: ``random_pair(kind, V, alpha, mix, seed)`` at
    temperature T, with K, L."""
    index: int      # 1-based position in the search
    kind: str
    V: int
    K: int
    L: int
    alpha: float
    mix: float
    seed: int
    T: float = 1.0

    def models(self) -> tuple[ToyModel, ToyModel]:
        """(draft p, target q), both at temperature T (p_T ∝ p^(1/T))."""
        draft, target = random_pair(self.kind, self.V, self.alpha, self.mix, self.seed)
        return draft.with_temperature(self.T), target.with_temperature(self.T)


#: Largest V the search draws: the monotonicity check at K + 1 = 4 drafts of one token then has at
#: most V^4 = 4096 draft outcomes, like every other configuration of the search.
SEARCH_V_MAX = 8


def search_configs(seed: int, trials: int, *, kinds: Sequence[str] = ("iid", "markov"),
                   V_range: tuple[int, int] = (2, 3), temperature: float = 1.0) -> tuple[SearchConfig, ...]:
    """The first ``trials`` configurations drawn from ``default_rng(seed)``: configuration i depends
    only on (seed, i) and the options.  Kind uniform on ``kinds``, V uniform on ``V_range``
    (inclusive, within 2..``SEARCH_V_MAX``), K, L ∈ {1, 2, 3} with L lowered until V^(K·L) ≤ 4096,
    Dirichlet α ∈ {0.3, 1, 3}, mismatch uniform on [0.1, 0.9] to 2 decimals, both models at
    ``temperature``.  The defaults are the search as first released (same draws for the same seed)."""
    lo, hi = (int(v) for v in V_range)
    if not 2 <= lo <= hi <= SEARCH_V_MAX:
        raise InvalidInput(f"the search's V range must lie within 2..{SEARCH_V_MAX}, got {lo}..{hi}")
    if not kinds:
        raise InvalidInput("the search needs at least one model family")
    rng = np.random.default_rng(int(seed))
    out = []
    for i in range(int(trials)):
        kind = str(rng.choice(list(kinds)))
        V = int(rng.integers(lo, hi + 1))
        K = int(rng.integers(1, 4))
        L = int(rng.integers(1, 4))
        while V ** (K * L) > 4096:
            L -= 1
        alpha = float(rng.choice([0.3, 1.0, 3.0]))
        mix = round(float(rng.uniform(0.1, 0.9)), 2)
        out.append(SearchConfig(i + 1, kind, V, K, L, alpha, mix, int(rng.integers(0, 10**6)), float(temperature)))
    return tuple(out)


#: The search's check that E[τ] is not above the LP optimum: a lossless rule can never be, so a rule
#: above it has changed the output law.  Weaker than ``OPTIMAL`` (which also needs E[τ] to reach it).
ABOVE_LP = "Not above the LP optimum"
#: The claims the search decides on each configuration, in the order it tests them.
SEARCH_CLAIMS = ("Lossless", "Attains its stated E_CIC", "Monotone in K", ABOVE_LP)


@dataclass(frozen=True)
class SearchRow:
    """One searched configuration and what it breaks: ``breaks`` pairs each broken claim (one of
    ``SEARCH_CLAIMS``) with the figures that show it; empty when it breaks none."""
    config: SearchConfig
    breaks: tuple[tuple[str, str], ...]

    @property
    def claims(self) -> tuple[str, ...]:
        """The claims this configuration breaks."""
        return tuple(claim for claim, _ in self.breaks)

    @property
    def broken(self) -> tuple[str, ...]:
        """What each break shows, in words."""
        return tuple(why for _, why in self.breaks)

    def as_dict(self) -> dict:
        """The row as the claims page shows it: the configuration, then one yes/no column per claim
        of ``SEARCH_CLAIMS`` and the figures of every break."""
        c = self.config
        return {"#": c.index, "kind": c.kind, "V": c.V, "K": c.K, "L": c.L, "alpha": c.alpha,
                "mismatch": c.mix, "model seed": c.seed, "T": c.T,
                **{f"breaks: {claim}": claim in self.claims for claim in SEARCH_CLAIMS},
                "claims broken": "; ".join(self.broken) or "none"}


def search_row(config: SearchConfig, result: ExactResult, next_result: ExactResult, cic: float,
               lp: float | None) -> SearchRow:
    """The claims decidable exactly on one configuration, from the rule's exact results at K and
    K + 1, E_CIC at K and the LP optimum at K (None: not computed): lossless, attains E_CIC,
    monotone from K to K + 1, not above the LP optimum."""
    e, e_next = result.expected_accepted, next_result.expected_accepted
    lossless, cic_claim, monotone, above_lp = SEARCH_CLAIMS
    breaks = []
    if not result.is_lossless:
        breaks.append((lossless, f"not lossless (TV {result.fidelity_tv:.2e})"))
    if abs(e - cic) > LOSSLESS_TOL:
        breaks.append((cic_claim, f"E[τ] {e:.4f} ≠ E_CIC {cic:.4f}"))
    if e_next < e - LOSSLESS_TOL:
        breaks.append((monotone, f"drops at K+1 ({e:.4f} → {e_next:.4f})"))
    if lp is not None and e > lp + LOSSLESS_TOL:
        breaks.append((above_lp, f"above the LP optimum {lp:.4f}"))
    return SearchRow(config, tuple(breaks))


def search_one(config: SearchConfig, lp_limit: int, method: str = GBV) -> SearchRow:
    """``search_row`` for one configuration, computed from its models: the rule's exact results at
    K and K + 1, E_CIC at K, and the LP optimum where its node count (``core.bounds.prefix_nodes``)
    is at most ``lp_limit``.  A pure function of its arguments, so a search can be spread over a cluster
    (``core.sweep.engine.map_batches``)."""
    draft, target = config.models()
    K, L = config.K, config.L
    lp = (float(bounds.lp_optimum(draft, target, K, L).value)
          if bounds.prefix_nodes(config.V, L) <= lp_limit else None)
    return search_row(config, exact_analysis(method, draft, target, K, L),
                      exact_analysis(method, draft, target, K + 1, L), bounds.claimed_cic(draft, target, K, L), lp)


def search_counterexamples(seed: int, trials: int, *, lp_limit: int, method: str = GBV) -> list[SearchRow]:
    """``search_one`` for each of ``search_configs(seed, trials)``, serially."""
    return [search_one(c, lp_limit, method) for c in search_configs(seed, trials)]


# The registry's entries --------------------------------------------------------------------------------

SOURCE = Source("spectr-gbv", "Lin, Sheng, Cai & Zhou, SpecTr-GBV (2026), as released in the authors' code",
                "the paper's claims; the rule as released, docs/maths.md \"SpecTr-GBV\"", "")


def _verdict(v: ClaimVerdict) -> tuple[str, dict]:
    return v.status, dict(v.numbers)


def _decided(claim_fn) -> Callable[[Instance], tuple[str, dict]]:
    """A registry ``check`` from one of the ``*_claim`` functions above, called on the instance's
    models, K and L."""
    def check(inst: Instance) -> tuple[str, dict]:
        draft, target = inst.models()
        return _verdict(claim_fn(draft, target, inst.K, inst.L))
    return check


def _timing(inst: Instance):
    return _verdict(timing_claim(inst.K, inst.L, Vs=(16, 64, 256, 1024), blocks=5))


TOY = dict(preset="binary-toy", methods=(GBV, K1_REFERENCE, BEST_OF_K, "traversal"))
_K2, _K1 = Instance(2, 2, **TOY), Instance(1, 2, **TOY)
CLAIMS = (
    Claim("lossless", SOURCE, "SpecTr-GBV's output has exactly the target's law.",
          "The TV of its completed output law from q, K = 2, L = 2, on the binary toy.",
          instance=_K2, check=_decided(lossless_claim)),
    Claim("repair", SOURCE, "Algorithm 2 (modifying the next iteration's target) makes the rule lossless.",
          "Whether the rule over-emits a prefix (F(u) = q(u) − P(O extends u) < 0), K = 2, L = 2.",
          instance=_K2, check=_decided(repair_claim)),
    Claim("optimal", SOURCE, "SpecTr-GBV is optimal among lossless verifiers.",
          "Whether it is lossless and its E[τ] equals the optimal-verifier LP, K = 1, L = 2.",
          instance=_K1, check=_decided(optimal_claim)),
    Claim("cic", SOURCE, "SpecTr-GBV attains its stated E_CIC = Σ_s q(s)·[1 − (1 − m(s))^K].",
          "Its exact E[τ] against E_CIC (and the LP), K = 2, L = 2.",
          instance=_K2, check=_decided(cic_claim)),
    Claim("monotone", SOURCE, "SpecTr-GBV's E[τ] never decreases as K grows.",
          "Its exact E[τ] for K = 1..4, L = 2.",
          instance=_K2, check=_decided(monotone_claim)),
    Claim("k1-is-bv", SOURCE, "At K = 1 SpecTr-GBV reduces to block verification.",
          "The TV between its output law and BV's at K = 1, L = 2.",
          instance=_K1, check=_decided(lambda draft, target, K, L: k1_claim(draft, target, L))),
    Claim("linear-time", SOURCE, "SpecTr-GBV verifies in O(|Ω|).",
          "The fitted exponent of one verification's wall time against |Ω| = 16..1024, K = 2, L = 2 "
          "(a measurement on this machine, not an exact verdict).",
          instance=_K2, check=_timing, measured=True),
)
