"""What a claim is: its source, the sentence it asserts, what is computed, and how its verdict is
reached, on one reproducible instance or over a seeded random family.

A *single-instance* claim carries an ``Instance`` (two toy models, K, L, T, and where the instance
opens: the toy laboratory or the Draft trees page) and a ``check`` that decides it there.  A
*family* claim carries a ``Family`` (a grid of the sweep engine's seeded instances,
``core.sweep.instances``) and a ``trial`` that decides it on one instance; ``decide_family`` runs the
trials with ``core.sweep.engine.map_batches`` (serially, or on a Dask client) and reports
"holds on N of M" with the worst instance, which opens in the laboratory like any other.

Statuses are three, shared with SpecTr-GBV's verdicts (``core.claims.spectr_gbv``): "holds here",
"fails here", "cannot be checked here"; a family verdict adds the count N of M to its words.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Mapping

from toy_models import PRESETS, ToyModel, from_json

from core.analysis.exact import LOSSLESS_TOL, exact_analysis
from core.data.exact_fraction import fraction
from core.data.laws import IID_LAW
from core.errors import InvalidInput
from core.rules.params import encode
from core.rules.registry import REGISTRY
from core.sweep.config import FAMILIES, InstanceKey
from core.sweep.engine import map_batches
from core.sweep.instances import instance_models

HOLDS, FAILS, NA = "holds here", "fails here", "cannot be checked here"
#: What a comparison's numbers say where the winner is lossy: its gain is bought with loss (a trial's
#: True; a family verdict's count of such instances).
BOUGHT = "gain_bought_with_loss"
STATUSES = (HOLDS, FAILS, NA)

#: The most draft outcomes V^(K·L) (chains) or drafted tokens (a tree) an instance may have: beyond,
#: one verdict no longer comes within a second, and the claim is refused up front.
MAX_OUTCOMES = 4096
MAX_TREE_BUDGET = 16


@dataclass(frozen=True)
class Source:
    """Where claims come from: a paper (arXiv id and section) or a tracker thread (group
    ``papers``), or the verification code a serving engine ships (group ``engines``: the
    repository, file and commit ported)."""
    id: str             # short, for ``--source``
    title: str          # authors, title
    where: str          # "arXiv 2602.16961, §3" or "github.com/org/repo/issues/N"
    url: str
    group: str = "papers"


@dataclass(frozen=True)
class Instance:
    """A reproducible instance: p and q (JSON at T = 1, or a preset's name), K, L, T, the rules to
    show, and where it opens: the toy laboratory (``page="lab"``, its ``section``) or the Draft
    trees page (``page="trees"``) with a static tree ``b`` drafted by the law named ``law`` (an
    instance is written as a link and as JSON)."""
    K: int
    L: int
    draft: Mapping | None = None
    target: Mapping | None = None
    preset: str | None = None
    T: float = 1.0
    methods: tuple[str, ...] = ()
    page: str = "lab"
    section: str | None = None
    b: tuple[int, ...] | None = None
    law: str = IID_LAW.name
    #: The rules' own parameters the claim ran them with, {rule: {name: value}} (e.g. EAGLE-2's
    #: release): the link carries them (``params``, ``core.rules.params.encode``), and so does the JSON.
    params: Mapping[str, Mapping[str, Any]] | None = None

    @classmethod
    def of(cls, draft: ToyModel, target: ToyModel, K: int, L: int, **kw) -> "Instance":
        """The instance of two models (stored at T = 1; ``T`` in ``kw`` tempers both)."""
        return cls(K, L, draft=draft.to_json(), target=target.to_json(), **kw)

    def models(self) -> tuple[ToyModel, ToyModel]:
        """(draft p, target q) at temperature T."""
        if self.preset is not None:
            preset = PRESETS[self.preset]
            draft, target = preset.draft, preset.target
        else:
            draft, target = from_json(dict(self.draft)), from_json(dict(self.target))
        return draft.with_temperature(self.T), target.with_temperature(self.T)

    @property
    def V(self) -> int:
        return self.models()[1].V

    def check(self) -> None:
        """Refuse, in one sentence, an instance too large for a verdict within a second."""
        if self.b is not None:
            budget = sum(math.prod(self.b[:d + 1]) for d in range(len(self.b)))
            if budget > MAX_TREE_BUDGET:
                raise InvalidInput(f"the tree b = {','.join(map(str, self.b))} drafts {budget} tokens; "
                                   f"a claim's instance drafts at most {MAX_TREE_BUDGET}")
        elif self.V ** (self.K * self.L) > MAX_OUTCOMES:
            raise InvalidInput(f"V = {self.V}, K = {self.K}, L = {self.L} has {self.V ** (self.K * self.L):,} "
                               f"draft outcomes; a claim's instance has at most {MAX_OUTCOMES:,}")

    def query(self) -> dict[str, str]:
        """The URL query that opens this instance on its page (``pages/ui/toy_config.URL_PARAMS``)."""
        if self.preset is not None:
            out = {"source": "Preset", "preset": self.preset}
        else:
            out = {"source": "JSON", "p": json.dumps(dict(self.draft)), "q": json.dumps(dict(self.target))}
        out.update(K=str(self.K), L=str(self.L), T=f"{self.T:g}")
        if self.page == "trees":
            out.update(shape="tree" if self.b else "chains", law=self.law,
                       **({"b": ",".join(map(str, self.b))} if self.b else {}))
        else:
            if self.methods:
                out["methods"] = ",".join(self.methods)
            if self.section:
                out["section"] = self.section
        if self.params:
            out["params"] = encode(self.params, REGISTRY)
        return out

    def to_json(self) -> dict:
        """What reproduces the instance: the models (or preset), K, L, T, the tree and law, and where
        it opens (the page, its section, the rules it shows)."""
        out = {"preset": self.preset} if self.preset else {"draft_p": dict(self.draft), "target_q": dict(self.target)}
        out.update(K=self.K, L=self.L, T=self.T, page=self.page)
        if self.b:
            out.update(b=list(self.b), law=self.law)
        if self.params:
            out["params"] = {rule: dict(values) for rule, values in self.params.items()}
        if self.methods:
            out["methods"] = list(self.methods)
        if self.section:
            out["section"] = self.section
        return out

    @classmethod
    def from_json(cls, data: Mapping) -> "Instance":
        """The instance ``to_json`` wrote."""
        return cls(int(data["K"]), int(data["L"]), draft=data.get("draft_p"), target=data.get("target_q"),
                   preset=data.get("preset"), T=float(data["T"]), methods=tuple(data.get("methods", ())),
                   page=data.get("page", "lab"), section=data.get("section"),
                   b=tuple(data["b"]) if data.get("b") else None, law=data.get("law", IID_LAW.name),
                   params=data.get("params"))


#: The regimes a family tests a claim in: the pairs its source's premise describes, narrower than
#: a generic family ("premise"); a generic family beside such a premise ("generic"); a generic
#: family that is itself the premise, the source stating the claim for every pair ("every pair").
PREMISE, GENERIC, EVERY_PAIR = "premise", "generic", "every pair"
REGIMES = (PREMISE, GENERIC, EVERY_PAIR)


@dataclass(frozen=True)
class Family:
    """A grid of the sweep engine's seeded instances (``core.sweep.instances``): every family × V ×
    K × L, ``n`` instances each, at temperature T; instance i depends only on (seed, family, V, L, i).

    ``regime`` says what the family is to its claim (``REGIMES``) and ``premise`` the source's premise
    in words where the family is that premise: a verdict over random pairs whose first token is
    uncertain says nothing of a claim made for pairs that agree on it with confidence."""
    families: tuple[str, ...] = ("iid", "markov")
    Vs: tuple[int, ...] = (2, 3)
    Ks: tuple[int, ...] = (2,)
    Ls: tuple[int, ...] = (2,)
    n: int = 5
    seed: int = 0
    T: float = 1.0
    regime: str = EVERY_PAIR
    premise: str = ""

    def __post_init__(self):
        if self.regime not in REGIMES or (self.regime == PREMISE) != bool(self.premise):
            raise ValueError(f"a family's regime is one of {REGIMES}, with its premise in words for {PREMISE!r}")

    def regime_words(self) -> str:
        """The regime as the claims page and the command line label the verdict."""
        return {PREMISE: f"the source's premise: {self.premise}",
                GENERIC: "generic: seeded random pairs, beside the source's premise",
                EVERY_PAIR: "every pair: the source states it for any pair; seeded random pairs"}[self.regime]

    def keys(self) -> list[InstanceKey]:
        return [InstanceKey(f, V, K, L, i) for f in self.families for V in self.Vs for K in self.Ks
                for L in self.Ls for i in range(self.n)]

    def describe(self) -> str:
        def values(xs) -> str:
            return "{" + ", ".join(map(str, sorted(set(xs)))) + "}"

        return (f"{len(self.keys())} seeded instances (sweep seed {self.seed}): families {', '.join(self.families)}; "
                f"V ∈ {values(self.Vs)}, K ∈ {values(self.Ks)}, L ∈ {values(self.Ls)}, {self.n} each, T = {self.T:g}")

    def check(self) -> None:
        """Refuse, in one sentence, a family with an instance too large or a family the sweep lacks."""
        if unknown := [f for f in self.families if f not in FAMILIES]:
            raise InvalidInput(f"unknown family {unknown[0]!r}; the families are {', '.join(FAMILIES)}")
        V, K, L = max(self.Vs), max(self.Ks), max(self.Ls)
        if max(V ** (k * l) for k in self.Ks for l in self.Ls) > MAX_OUTCOMES:
            raise InvalidInput(f"the family reaches V = {V}, K = {K}, L = {L}, past {MAX_OUTCOMES:,} draft "
                               f"outcomes V^(K·L) for one instance")


@dataclass(frozen=True)
class Trial:
    """One instance of a family decided: whether the claim holds there, a margin (the smaller, the
    nearer to failing; negative when it fails), and the numbers it rests on."""
    holds: bool
    margin: float
    numbers: Mapping[str, Any]


@dataclass(frozen=True)
class Verdict:
    """A claim decided: its status, the numbers it rests on, the instance that reproduces it (for a
    family, the worst one), and for a family the count ``held`` = (N, M)."""
    claim: str
    status: str
    numbers: Mapping[str, Any]
    instance: Instance | None = None
    held: tuple[int, int] | None = None
    measured: bool = False

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"verdict status must be one of {STATUSES}, got {self.status!r}")

    @property
    def words(self) -> str:
        """The verdict in words: "holds here", "fails here", "holds on N of M instances", …; a
        comparison won by a lossy rule says so: "holds here, the gain bought with loss", "holds on N of
        M instances, the gain bought with loss on B" (``beats_trial``)."""
        bought = self.numbers.get(BOUGHT) if isinstance(self.numbers, Mapping) else None
        if self.held is not None:
            n, m = self.held
            return f"holds on {n} of {m} instances" + (f", the gain bought with loss on {bought}" if bought else "")
        if self.measured:
            return {HOLDS: "consistent with the timing", FAILS: "not consistent with the timing"}.get(
                self.status, self.status)
        if self.status == HOLDS and (bought or self.numbers.get("gain_bought_with")):
            return "holds here, the gain bought with loss"
        return self.status

    def summary(self, limit: int = 7) -> str:
        """The numbers in words a student reads (``number_words``): "TV from q = 0.0646; E[τ] = 4/3",
        a float as a fraction of denominator ≤ 1000 where it is one, round-off as the value it is, a
        rule by its name, a yes or no for a flag, a list of E[τ] by K as its values; a family's worst
        instance after "worst instance:", its margin left to ``to_json``."""
        numbers = dict(self.numbers)
        worst = numbers.pop("worst", None)
        parts = [p for k, v in numbers.items() if k not in ("held", "of", "family") and (p := number_words(k, v))]
        if isinstance(worst, Mapping):
            where = ", ".join(f"{k} = {worst[k]}" for k in ("V", "K", "L") if k in worst)
            inner = [p for k, v in worst.items() if k not in ("family", "V", "K", "L", "index", "margin")
                     and (p := number_words(k, v))]
            parts.append(f"worst instance ({worst.get('family', '')} #{worst.get('index', '')}, {where}): "
                         + "; ".join(inner[:limit]))
        elif worst is not None:
            parts.append(number_words("worst", worst))
        return "; ".join(parts[:limit + 1])

    def to_json(self) -> dict:
        return {"claim": self.claim, "status": self.status, "verdict": self.words,
                "held": [int(x) for x in self.held] if self.held else None, "measured": self.measured,
                "numbers": _jsonable(self.numbers),
                "instance": self.instance.to_json() if self.instance else None}

    @classmethod
    def from_json(cls, data: Mapping) -> "Verdict":
        """The verdict ``to_json`` wrote (its numbers as JSON has them: lists for tuples)."""
        return cls(data["claim"], data["status"], data["numbers"],
                   Instance.from_json(data["instance"]) if data.get("instance") else None,
                   held=tuple(data["held"]) if data.get("held") else None, measured=bool(data.get("measured")))


#: How a verdict's numbers read (``number_words``): the words for each name a check or trial gives
#: its numbers; a rule's name in a key ("sd_expected_accepted") is read by ``_rule_words``.
WORDS: dict[str, str] = {
    "fidelity_tv": "TV from q", "tv": "TV from q", "largest_tv": "largest TV from q",
    "expected_accepted": "E[τ]", "lp_optimum": "LP optimum", "claimed_cic": "claimed E_CIC",
    "gap": "gap to the LP optimum", "gain": "gain in E[τ]", "difference": "difference", "closed_form": "closed form",
    "two_step_optimum": "two-step optimum", "iid_optimum": "optimum with i.i.d. drafts",
    "wor_optimum": "optimum without replacement", "produced": "the rule's probability of z",
    "target": "q's probability of z", "worst_sequence": "at z", "worst_prefix": "at the prefix",
    "min_F": "q's mass minus the rule's at the worst prefix", "law_tv": "TV between the two output laws",
    "rule_expected_accepted": "SpecTr-GBV's E[τ]", "rule_fidelity_tv": "SpecTr-GBV's TV from q",
    "algorithm_clean_tv": "TV from q of the algorithm as written", "stream_tv": "TV from q of the text",
    "tokens_per_call": "tokens per target call", "repaired_tv": "TV from q once repaired",
    "repaired_tokens_per_call": "tokens per call once repaired", "exponent": "fitted exponent of |Ω|",
    "sizes": "|Ω|", "seconds": "seconds per verification", "at": "at", "gain_bought_with": "the gain is bought with",
    "best_ot": "best optimal-transport verifier", "traversal_minus_best_ot": "Traversal minus the best of them",
    "td_optimal range max": "top of TD-optimal's acceptance-optimal range", "against": "against",
    "gain_by_depth": "gain by depth d = 1, 2, …", "rule": "rule", "delayed_tree": "delayed tree b",
    "delayed": "E[τ] on the delayed tree", "root": "E[τ] on K chains from the root", "budget": "drafted tokens",
    "same_K_delayed": "E[τ] on the delayed tree with the same K", "worst": "worst tree",
    "tv_by_mismatch": "TV from q by mismatch", "expected_accepted_by_mismatch": "E[τ] by mismatch",
    "frontier": "the loss-gain frontier at its TV", "claimed": "claimed value",
    "p": "draft p", "q": "target q", "searched": "instances searched", "tree": "drafts",
    "tv_fraction": "TV from q exactly", "default_expected_accepted": "E[τ] at the default thresholds",
}
#: Flags: the words for yes and for no.
FLAGS: dict[str, tuple[str, str]] = {
    "over_emission": ("it already emits a prefix more often than q does: no later iteration can repair that",
                      "it never emits a prefix more often than q does"),
    "unattainable": ("E_CIC is above the LP optimum: no lossless verifier attains it",
                     "E_CIC is not above the LP optimum"),
    "lossless": ("lossless", "not lossless"), "above_optimum": ("above the LP optimum", "not above the LP optimum"),
    "repairable": ("repairable by the next iteration's target", "not repairable"),
}


def _rule_words(key: str) -> str | None:
    """``key`` read as a rule's number: "sd" is SD's E[τ], "hsd_tv" HSD's TV from q, and so on."""
    from core.rules.registry import ALIASES, REGISTRY, resolve
    names = {**{rule: resolve(rule).short for rule in REGISTRY}, **{alias: alias for alias in ALIASES},
             "best_of_k": resolve("best_of_k_bv").short}
    for rule in sorted(names, key=len, reverse=True):
        if key == rule:
            return f"{names[rule]}'s E[τ]"
        for end, what in (("_expected_accepted", "E[τ]"), ("_fidelity_tv", "TV from q"), ("_tv", "TV from q"),
                          ("_tokens_per_call", "tokens per target call")):
            if key == rule + end:
                return f"{names[rule]}'s {what}"
    if key == "eagle2_tv":
        return "the EAGLE-2 release's TV from q"
    if key == "current_tv":
        return "the current release's TV from q"
    return None


def number_words(key: str, value) -> str:
    """One number of a verdict in words (``WORDS``, ``FLAGS``, ``_rule_words``); "" for what a line
    does not show (a table, the E[τ] by K of the monotone claim is its values)."""
    if key in FLAGS:
        return FLAGS[key][0 if value else 1]
    if key == BOUGHT:             # True on one instance, a count over a family
        return "the gain is bought with loss" + ("" if value is True else f" on {int(value)} instances")
    if key == "points":
        pts = list(value)
        return (f"E[τ] at K = {', '.join(str(int(k)) for k, _ in pts)}: {', '.join(_text(v) for _, v in pts)}"
                if pts else "")
    if key == "drop":
        return ("never drops" if not value else
                f"drops from {_text(value[1])} at K = {int(value[0])} to {_text(value[3])} at K = {int(value[2])}")
    name = WORDS.get(key) or _rule_words(key) or key.replace("_", " ")
    if isinstance(value, str):
        from core.rules.registry import REGISTRY
        return f"{name}: {REGISTRY[value].short if value in REGISTRY else value}"
    if isinstance(value, (list, tuple)):
        if all(_scalar(v) and not isinstance(v, str) for v in value):
            shown = " ".join if key in ("worst_sequence", "worst_prefix") else ", ".join
            return f"{name} {shown(_text(v) for v in value)}" if key in ("worst_sequence", "worst_prefix") \
                else f"{name}: {shown(_text(v) for v in value)}"
        return ""
    if not _scalar(value):
        return ""
    return f"{name} = {_text(value)}"


def _scalar(v) -> bool:
    return isinstance(v, (bool, int, float, str)) or hasattr(v, "item")


def _text(v) -> str:
    """A number as a line shows it: within 1e-12 of a whole number, that number (round-off is not
    shown); a fraction of denominator ≤ 1000 where it is one; else 6 significant digits."""
    if isinstance(v, (bool, str)) or not hasattr(v, "__float__"):
        return str(v)
    v = float(v)
    if abs(v - round(v)) <= 1e-12 and abs(v) < 1e6:
        return str(int(round(v)))
    return fraction(v, max_denominator=1000) or f"{v:.6g}"


def _jsonable(x):
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if hasattr(x, "item"):                  # numpy scalars
        return x.item()
    return x


def holds(ok: bool) -> str:
    return HOLDS if ok else FAILS


@dataclass(frozen=True)
class Claim:
    """One claim: adding one is one entry in its source's ``CLAIMS`` plus its test.

    ``check(instance)`` returns (status, numbers) on a single instance, or (status, numbers, the
    instance its numbers are on) where that is another one (a search's find, which the link then
    opens); a family claim has ``trial``
    (draft, target, K, L) → ``Trial`` and ``family`` instead.  ``methods`` are the rules the
    instance shows when it opens in the laboratory."""
    id: str
    source: Source
    statement: str          # the claim, in one sentence
    computed: str           # what is computed to decide it
    instance: Instance | None = None
    check: Callable[[Instance], tuple[str, Mapping]] | None = None
    family: Family | None = None
    trial: Callable[[ToyModel, ToyModel, int, int], Trial] | None = None
    methods: tuple[str, ...] = ()
    measured: bool = False
    #: For a family claim: the worst instance's page options from its (K, L), e.g. the Draft trees
    #: page with a static tree (``Instance`` fields ``page``, ``b``, ``law``); the laboratory when None.
    opens: Callable[[int, int], Mapping] | None = None

    def __post_init__(self):
        if (self.check is None) == (self.trial is None) or (self.trial is not None) != (self.family is not None) \
                or (self.check is not None and self.instance is None):
            raise ValueError(f"claim {self.id}: give check with an instance, or trial with a family")

    @property
    def key(self) -> str:
        """``source/id``: unique across the registry."""
        return f"{self.source.id}/{self.id}"


def lossless_trial(rule: str, **drafts) -> Callable[..., Trial]:
    """A trial for "``rule`` is lossless": its exact completed output law against q (TV within
    ``LOSSLESS_TOL``), with K i.i.d. chains, or ``drafts`` (``shape=``, ``law=``) for a token tree."""
    def trial(draft: ToyModel, target: ToyModel, K: int, L: int) -> Trial:
        r = exact_analysis(rule, draft, target, **(drafts or {"K": K, "L": L}))
        return Trial(r.is_lossless, LOSSLESS_TOL - r.fidelity_tv,
                     {"rule": rule, "fidelity_tv": r.fidelity_tv, "expected_accepted": r.expected_accepted})
    return trial


def beats_trial(rule: str, baseline: str, baseline_K: int | None = None) -> Callable[..., Trial]:
    """A trial for "``rule`` accepts at least as much as ``baseline``": both exact E[τ] at the
    instance's K (the baseline at ``baseline_K`` when given, e.g. 1 for a single draft), and the
    rule's TV from q beside, since a lossy rule's E[τ] is no fair comparison: where the rule gains
    while lossy, the trial says that the gain is bought with loss (``BOUGHT``), and the verdict's
    words count those instances."""
    def trial(draft: ToyModel, target: ToyModel, K: int, L: int) -> Trial:
        r = exact_analysis(rule, draft, target, K, L)
        b = exact_analysis(baseline, draft, target, baseline_K or K, L).expected_accepted
        gain = r.expected_accepted - b
        numbers = {rule: r.expected_accepted, baseline: b, "gain": gain, f"{rule}_fidelity_tv": r.fidelity_tv}
        if gain > LOSSLESS_TOL and not r.is_lossless:
            numbers[BOUGHT] = True
        return Trial(gain >= -LOSSLESS_TOL, gain, numbers)
    return trial


def trial_check(trial: Callable[..., Trial], **kw) -> Callable[[Instance], tuple[str, Mapping]]:
    """A single-instance ``check`` from a family ``trial``: the trial on the instance's models, K, L."""
    def check(inst: Instance) -> tuple[str, Mapping]:
        t = trial(*inst.models(), inst.K, inst.L, **kw)
        return holds(t.holds), dict(t.numbers)
    return check


def decide(claim: Claim, client=None, progress=None) -> Verdict:
    """The claim's verdict on its instance, or over its family (``decide_family``)."""
    if claim.family is not None:
        return decide_family(claim, client=client, progress=progress)
    claim.instance.check()
    status, numbers, *found = claim.check(claim.instance)
    return Verdict(claim.key, status, numbers, found[0] if found else claim.instance, measured=claim.measured)


def _run_trial(trial, seed: int, T: float, key: InstanceKey) -> tuple[Trial, dict, dict]:
    draft, target, _ = instance_models(key, seed)
    result = trial(draft.with_temperature(T), target.with_temperature(T), key.K, key.L)
    return result, draft.to_json(), target.to_json()


#: Margins this close are a tie: the family's first such instance is its worst.
MARGIN_TIE = 1e-9


def decide_family(claim: Claim, client=None, progress=None) -> Verdict:
    """Every trial over the family's instances (``map_batches``: serially when ``client`` is None);
    "holds on N of M" (status HOLDS when N = M), the worst trial's numbers (smallest margin) and its
    instance."""
    fam = claim.family
    fam.check()
    keys = fam.keys()
    rows = map_batches(partial(_run_trial, claim.trial, fam.seed, fam.T), keys, client=client, progress=progress)
    n = sum(bool(r.holds) for r, _, _ in rows)
    # the first instance within MARGIN_TIE of the smallest margin: where every instance ties (a rule
    # exactly on a bound), rounding would otherwise pick the instance shown
    least = min(r.margin for r, _, _ in rows)
    worst = next(i for i, (r, _, _) in enumerate(rows) if r.margin <= least + MARGIN_TIE)
    trial, draft, target = rows[worst]
    key = keys[worst]
    opens = dict(claim.opens(key.K, key.L)) if claim.opens else {}
    inst = Instance(key.K, key.L, draft=draft, target=target, T=fam.T, methods=claim.methods, **opens)
    numbers = {"held": n, "of": len(rows), "family": fam.describe(),
               "worst": {"family": key.family, "V": key.V, "K": key.K, "L": key.L, "index": key.index,
                         "margin": float(trial.margin), **trial.numbers}}
    bought = sum(bool(r.holds and r.numbers.get(BOUGHT)) for r, _, _ in rows)
    if bought:
        numbers[BOUGHT] = bought
    return Verdict(claim.key, holds(n == len(rows)), numbers, inst, held=(n, len(rows)))
