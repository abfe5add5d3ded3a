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
from core.sweep.config import FAMILIES, InstanceKey
from core.sweep.engine import map_batches
from core.sweep.instances import instance_models

HOLDS, FAILS, NA = "holds here", "fails here", "cannot be checked here"
STATUSES = (HOLDS, FAILS, NA)

#: The most draft outcomes V^(K·L) (chains) or drafted tokens (a tree) an instance may have: beyond,
#: one verdict no longer comes within a second, and the claim is refused up front.
MAX_OUTCOMES = 4096
MAX_TREE_BUDGET = 16


@dataclass(frozen=True)
class Source:
    """Where claims come from: a paper (arXiv id and section) or a tracker thread."""
    id: str             # short, for ``--source``
    title: str          # authors, title
    where: str          # "arXiv 2602.16961, §3" or "github.com/org/repo/issues/N"
    url: str


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
        return out

    def to_json(self) -> dict:
        """What reproduces the instance: the models (or preset), K, L, T, the tree and law."""
        out = {"preset": self.preset} if self.preset else {"draft_p": dict(self.draft), "target_q": dict(self.target)}
        out.update(K=self.K, L=self.L, T=self.T, page=self.page)
        if self.b:
            out.update(b=list(self.b), law=self.law)
        return out


@dataclass(frozen=True)
class Family:
    """A grid of the sweep engine's seeded instances (``core.sweep.instances``): every family × V ×
    K × L, ``n`` instances each, at temperature T; instance i depends only on (seed, family, V, L, i)."""
    families: tuple[str, ...] = ("iid", "markov")
    Vs: tuple[int, ...] = (2, 3)
    Ks: tuple[int, ...] = (2,)
    Ls: tuple[int, ...] = (2,)
    n: int = 5
    seed: int = 0
    T: float = 1.0

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
        """The verdict in words: "holds here", "fails here", "holds on N of M instances", …"""
        if self.held is not None:
            n, m = self.held
            return f"holds on {n} of {m} instances"
        if self.measured:
            return {HOLDS: "consistent with the timing", FAILS: "not consistent with the timing"}.get(
                self.status, self.status)
        return self.status

    def summary(self, limit: int = 6) -> str:
        """The numbers in one line: ``name = value`` for each scalar (a float as a fraction of
        denominator ≤ 1000 where it is one, else to 6 significant digits), a family's worst instance's
        numbers after "worst:" (its margin left to ``to_json``); lists and tables are left to ``to_json``."""
        numbers = dict(self.numbers)
        worst = numbers.pop("worst", None)
        parts = [f"{k} = {_text(v)}" for k, v in numbers.items() if k not in ("held", "of", "family") and _scalar(v)]
        if worst:
            parts.append("worst: " + ", ".join(f"{k} = {_text(v)}" for k, v in worst.items()
                                               if _scalar(v) and k != "margin"))
        return "; ".join(parts[:limit + (1 if worst else 0)])

    def to_json(self) -> dict:
        return {"claim": self.claim, "status": self.status, "verdict": self.words,
                "held": [int(x) for x in self.held] if self.held else None, "measured": self.measured,
                "numbers": _jsonable(self.numbers),
                "instance": self.instance.to_json() if self.instance else None}


def _scalar(v) -> bool:
    return isinstance(v, (bool, int, float, str)) or hasattr(v, "item")


def _text(v) -> str:
    if isinstance(v, (bool, str)) or not hasattr(v, "__float__"):
        return str(v)
    v = float(v)
    if v == int(v) and abs(v) < 1e6:
        return str(int(v))
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

    ``check(instance)`` returns (status, numbers) on a single instance; a family claim has ``trial``
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
    rule's TV from q beside, since a lossy rule's E[τ] is no fair comparison."""
    def trial(draft: ToyModel, target: ToyModel, K: int, L: int) -> Trial:
        r = exact_analysis(rule, draft, target, K, L)
        b = exact_analysis(baseline, draft, target, baseline_K or K, L).expected_accepted
        gain = r.expected_accepted - b
        return Trial(gain >= -LOSSLESS_TOL, gain, {rule: r.expected_accepted, baseline: b, "gain": gain,
                                                   f"{rule}_fidelity_tv": r.fidelity_tv})
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
    status, numbers = claim.check(claim.instance)
    return Verdict(claim.key, status, numbers, claim.instance, measured=claim.measured)


def _run_trial(trial, seed: int, T: float, key: InstanceKey) -> tuple[Trial, dict, dict]:
    draft, target, _ = instance_models(key, seed)
    result = trial(draft.with_temperature(T), target.with_temperature(T), key.K, key.L)
    return result, draft.to_json(), target.to_json()


def decide_family(claim: Claim, client=None, progress=None) -> Verdict:
    """Every trial over the family's instances (``map_batches``: serially when ``client`` is None);
    "holds on N of M" (status HOLDS when N = M), the worst trial's numbers (smallest margin) and its
    instance."""
    fam = claim.family
    fam.check()
    keys = fam.keys()
    rows = map_batches(partial(_run_trial, claim.trial, fam.seed, fam.T), keys, client=client, progress=progress)
    n = sum(bool(r.holds) for r, _, _ in rows)
    worst = min(range(len(rows)), key=lambda i: rows[i][0].margin)
    trial, draft, target = rows[worst]
    key = keys[worst]
    opens = dict(claim.opens(key.K, key.L)) if claim.opens else {}
    inst = Instance(key.K, key.L, draft=draft, target=target, T=fam.T, methods=claim.methods, **opens)
    numbers = {"held": n, "of": len(rows), "family": fam.describe(),
               "worst": {"family": key.family, "V": key.V, "K": key.K, "L": key.L, "index": key.index,
                         "margin": float(trial.margin), **trial.numbers}}
    return Verdict(claim.key, holds(n == len(rows)), numbers, inst, held=(n, len(rows)))
