"""The court: every verdict for one rule, computed, nothing assumed (``python -m core court``).

A rule of one's own (``--rule``, ``EXPLORER_RULES``) or a registered one (``--method``) is tried on
the same evidence, each verdict with the numbers it rests on and the instance that reproduces it:

- **lossless**: the exact TV of the completed output law from q on the presets (``PRESET_CASES``)
  and on a seeded family (``FAMILY``), with the worst instance; and the smallest counterexample
  found by a search over V, K, L from the smallest size up (``search_sizes``), trying first pairs of
  models whose probabilities are simple fractions (``RATIONAL``, shown as fractions) and then seeded
  ones;
- **optimal**: E[τ] over the LP optimum (the best any lossless verifier does with the same drafts,
  ``core.analysis.optimum``) on the family; a value above the LP is flagged: bought with loss;
- **monotone in K**: E[τ] at K = 1, 2, 3 on the same models;
- **against every registered rule** on the same family: wins, losses and ties of E[τ], where a lossy
  rule's higher E[τ] is never counted as a win (nor as the other rule's loss), and the rules ranked
  by mean E/LP, the lossless ones apart from the lossy ones;
- **drafts**: K i.i.d. chains only, or every tree shape and law (``TREE_CASES``), lossless there too
  or not;
- **stream**: the law of the first n tokens the rule generates over n iterations
  (``core.analysis.compensation.iterate_exact``), following ``Verifier.advance`` for a rule with
  state across iterations.

Whatever a rule from outside the project does wrong (it raises, returns a bad outcome, runs past
``INSTANCE_SECONDS`` on an instance) is one sentence in the verdict's ``failures``, naming the rule
and the instance; the court goes on with every other instance and rule.  The family runs as tasks of
the sweep engine (``map_batches``: serially, or on a Dask client, the rule's code shipped with the
job).
"""
from __future__ import annotations

import itertools
import json
import time
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Any, Callable

from toy_models import PRESETS, IIDModel, ToyModel

from core.analysis.compensation import iterate_exact
from core.analysis.exact import LOSSLESS_TOL, MAX_SECONDS, exact_analysis
from core.analysis.optimum import optimum_value, percent_of
from core.claims.base import FAILS, HOLDS, NA, Family
from core.data.exact_fraction import fraction
from core.data.laws import LAWS
from core.data.shapes import Shape
from core.errors import USER_ERRORS
from core.rules.base import Verifier, runs_on_words
from core.rules.params import declared
from core.rules.registry import RULES, chains_rules, is_user_rule, make_verifier, resolve
from core.sweep.config import InstanceKey
from core.sweep.engine import map_batches
from core.sweep.instances import instance_models

#: The seeded family every rule is tried on (instance i depends on (seed, family, V, L, i) alone, so
#: the same models are read at every K).
FAMILY = Family(("iid", "markov", "table"), Vs=(2, 3), Ks=(1, 2, 3), Ls=(1, 2), n=3)
#: The presets, each at (K, L).
PRESET_CASES = (("binary-toy", 1, 2), ("binary-toy", 2, 2), ("gbv-lossless", 2, 2), ("three-token-toy", 2, 2),
                ("several-drafts", 2, 2))
#: Token trees a rule defined on every tree is tried on: each shape by each law, on two presets.
TREE_CASES = tuple((preset, b, law) for preset in ("binary-toy", "three-token-toy")
                   for b in ((2, 1), (1, 2), (2, 2)) for law in LAWS)
#: The probabilities of the rational pairs the counterexample search tries first (i.i.d. models).
RATIONAL = {2: ((1, 2), (1, 3), (2, 3), (1, 4), (3, 4)),
            3: ((2, 1, 1), (1, 2, 1), (1, 1, 2), (1, 1, 1), (3, 2, 1), (1, 2, 3))}
#: Seeded pairs the search tries at each size after the rational ones.
SEARCH_SEEDED = 2
#: The search's largest V, K and L, and its time budget (seconds).
SEARCH_MAX = (3, 3, 3)
SEARCH_SECONDS = 15.0
#: A rule from outside the project is stopped past this many seconds on one instance.
INSTANCE_SECONDS = 20.0
#: The stream verdict: n iterations on the binary toy at (K, L).
STREAM = ("binary-toy", 2, 2, 3)
#: Two E[τ] closer than this are a tie.
TIE = 1e-9


@dataclass(frozen=True)
class CourtVerdict:
    """One verdict: its key, status (``HOLDS``, ``FAILS``, ``NA``; None for a report that asserts
    nothing, such as the comparison with every rule), one line of words, and its numbers."""
    key: str
    title: str
    status: str | None
    words: str
    numbers: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Court:
    """Every verdict for one rule (module docstring)."""
    rule: str
    user: bool
    settings: dict
    parameters: list[dict]
    verdicts: list[CourtVerdict]
    failures: list[str]
    seconds: float

    def verdict(self, key: str) -> CourtVerdict:
        return next(v for v in self.verdicts if v.key == key)

    def to_json(self) -> dict:
        return {"rule": self.rule, "user_rule": self.user, "settings": self.settings,
                "parameters": self.parameters,
                "verdicts": [{"key": v.key, "title": v.title, "status": v.status, "verdict": v.words,
                              "numbers": v.numbers} for v in self.verdicts],
                "failures": self.failures, "seconds": round(self.seconds, 3)}

    def text(self) -> str:
        """The verdicts as text: one line each, then the comparison table and the failures."""
        lines = [f"court of {self.rule}" + (" (your rule)" if self.user else "")
                 + (f" with {', '.join(f'{k}={v}' for k, v in self.settings.items())}" if self.settings else "")
                 + f": {len(FAMILY.keys())} seeded instances, {len(PRESET_CASES)} presets, {self.seconds:.1f} s"]
        if self.parameters:
            lines.append("parameters: " + "; ".join(
                f"{p['name']} ({p['type']}, default {p['default']}{', ' + p['range'] if p.get('range') else ''})"
                f"{': ' + p['help'] if p['help'] else ''}" for p in self.parameters))
        for v in self.verdicts:
            mark = {HOLDS: "holds", FAILS: "fails", NA: "cannot be checked"}.get(v.status, "report")
            lines.append(f"  {v.title} [{mark}]: {v.words}")
        against = self.verdict("against").numbers
        if against.get("ranking"):
            lines.append("")
            lines.append(_table(["rank", "rule", "mean E/LP", "min E/LP", "max TV",
                                 f"wins/losses/ties vs {self.rule}"],
                                [[str(r["rank"]) if r["rank"] else "lossy", r["rule"], f"{r['mean']:.4f}",
                                  f"{r['min']:.4f}", f"{r['max_tv']:.2e}", r["versus"]]
                                 for r in against["ranking"]]))
        if self.failures:
            lines.append("")
            lines += [f"failed: {f}" for f in self.failures[:10]]
            if len(self.failures) > 10:
                lines.append(f"failed: … and {len(self.failures) - 10} more")
        return "\n".join(lines)


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    out = ["  ".join(h.ljust(w) for h, w in zip(header, widths)), "  ".join("-" * w for w in widths)]
    return "\n".join(out + ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows])


def opponents(rule: str) -> list[str]:
    """The registered rules a rule is compared with on the family's K i.i.d. chains: every one that runs
    on them (a released port that runs on its engine's trees only does not) but itself and
    ``lp_optimal`` (its value is the LP optimum, which the optimality verdict reads)."""
    chains = set(chains_rules())
    return [cls.name for cls in RULES if cls.name != rule and not cls.optimal_lp and cls.name in chains]


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _run(name: str, settings: dict, draft: ToyModel, target: ToyModel, K: int, L: int, *,
         shape: Shape | None = None, law=None) -> tuple[float, float]:
    """(E[τ], TV) of one rule on one instance (a rule from outside: against ``INSTANCE_SECONDS``)."""
    drafts = {"shape": shape, "law": law} if shape is not None else {"K": K, "L": L}
    verifier = make_verifier(name, draft=draft, target=target, **drafts, **settings)
    limit = INSTANCE_SECONDS if is_user_rule(name) else MAX_SECONDS
    r = exact_analysis(verifier, draft, target, max_seconds=limit, **drafts)
    return r.expected_accepted, r.fidelity_tv


@lru_cache(maxsize=None)
def _registered(name: str, seed: int, T: float, key: InstanceKey) -> tuple[float, float]:
    """``_run`` of a registered rule at its defaults on one instance of the family: the same for every
    court, so a process computes it once (a rule from outside is never kept: a name can be loaded
    again with other code)."""
    draft, target, _ = instance_models(key, seed)
    return _run(name, {}, draft.with_temperature(T), target.with_temperature(T), key.K, key.L)


@lru_cache(maxsize=None)
def _optimum(seed: int, T: float, key: InstanceKey) -> float:
    """The LP optimum of one instance of the family, kept as ``_registered`` is."""
    draft, target, _ = instance_models(key, seed)
    return optimum_value(draft.with_temperature(T), target.with_temperature(T), Shape.chains_of(key.K, key.L))


def judge(rule: str, settings: dict, rivals: tuple[str, ...], seed: int, T: float, key: InstanceKey) -> dict:
    """One instance of the family: every rule's (E[τ], TV), the LP optimum, the failures (one
    sentence each), and the models (JSON at T = 1).  The function a task of ``map_batches`` runs."""
    draft, target, _ = instance_models(key, seed)
    models = (draft.to_json(), target.to_json())
    draft, target = draft.with_temperature(T), target.with_temperature(T)
    where = f"{key.family} V={key.V} K={key.K} L={key.L} #{key.index}"
    values, failures = {}, []
    for name in (rule, *rivals):
        try:
            if name != rule and not is_user_rule(name):
                values[name] = _registered(name, seed, T, key)
            else:
                values[name] = _run(name, settings if name == rule else {}, draft, target, key.K, key.L)
        except USER_ERRORS as exc:
            failures.append(f"{name} on {where}: {_first_line(exc)}")
    try:
        lp = _optimum(seed, T, key)
    except USER_ERRORS as exc:
        lp, failures = None, [*failures, f"the LP optimum on {where}: {_first_line(exc)}"]
    return {"key": tuple(key), "models": models, "values": values, "lp": lp, "failures": failures}


def rational_pairs(V: int) -> list[tuple[ToyModel, ToyModel]]:
    """Every ordered pair of distinct i.i.d. models over V tokens whose probabilities are the simple
    fractions of ``RATIONAL``: the first instances a counterexample search tries."""
    dists = [tuple(x / sum(w) for x in w) for w in RATIONAL.get(V, ())]
    return [(IIDModel(p), IIDModel(q)) for p, q in itertools.permutations(dists, 2)]


def search_sizes() -> list[tuple[int, int, int]]:
    """(V, K, L) from the smallest up: by the draft outcomes V^(K·L), then V, K, L."""
    V_max, K_max, L_max = SEARCH_MAX
    sizes = itertools.product(range(2, V_max + 1), range(1, K_max + 1), range(1, L_max + 1))
    return sorted((s for s in sizes if s[0] ** (s[1] * s[2]) <= 4096),
                  key=lambda s: (s[0] ** (s[1] * s[2]), s))


def exact_model(model: ToyModel) -> dict:
    """A model's JSON with every probability written as the fraction it is, where it is one."""
    def show(x):
        if isinstance(x, list):
            return [show(v) for v in x]
        if isinstance(x, dict):
            return {k: show(v) for k, v in x.items()}
        if isinstance(x, float):
            return fraction(x, max_denominator=1000, integers=True) or x
        return x
    return show(model.to_json())


def search(rule: str, settings: dict, seconds: float = SEARCH_SECONDS) -> dict:
    """The smallest counterexample to losslessness: at each size of ``search_sizes`` the rational
    pairs, then ``SEARCH_SEEDED`` seeded ones of each of the families iid and markov; the first
    instance whose TV exceeds ``LOSSLESS_TOL``, or how far the search went within ``seconds``."""
    start, tried, failures = time.perf_counter(), 0, []
    reached = None
    for V, K, L in search_sizes():
        if time.perf_counter() - start > seconds:
            break
        pairs = [("rational", d, t) for d, t in rational_pairs(V)]
        pairs += [("seeded", *instance_models(InstanceKey(fam, V, K, L, i), 0)[:2])
                  for fam in ("iid", "markov") for i in range(SEARCH_SEEDED)]
        for kind, draft, target in pairs:
            try:
                e, tv = _run(rule, settings, draft, target, K, L)
            except USER_ERRORS as exc:
                failures.append(f"{rule} on the search's V={V} K={K} L={L}: {_first_line(exc)}")
                continue
            tried += 1
            if tv > LOSSLESS_TOL:
                return {"found": True, "V": V, "K": K, "L": L, "kind": kind, "tried": tried,
                        "fidelity_tv": tv, "fidelity_tv_fraction": fraction(tv, integers=True),
                        "expected_accepted": e, "expected_accepted_fraction": fraction(e, integers=True),
                        "draft": exact_model(draft), "target": exact_model(target), "failures": failures}
        reached = (V, K, L)
    return {"found": False, "tried": tried, "reached": list(reached) if reached else None, "failures": failures}


def _preset(rule: str, settings: dict, name: str, K: int, L: int) -> dict:
    preset = PRESETS[name]
    e, tv = _run(rule, settings, preset.draft, preset.target, K, L)
    try:
        lp = optimum_value(preset.draft, preset.target, Shape.chains_of(K, L))
    except USER_ERRORS:
        lp = None
    return {"preset": name, "K": K, "L": L, "expected_accepted": e, "expected_accepted_fraction": fraction(e, integers=True),
            "fidelity_tv": tv, "fidelity_tv_fraction": fraction(tv, integers=True), "lp_optimum": lp,
            "percent_of_lp": percent_of(e, lp) if lp is not None else None}


def _where(key) -> dict:
    family, V, K, L, index = key
    return {"family": family, "V": V, "K": K, "L": L, "index": index}


def _failed_everywhere(key: str, title: str, failures: list[str]) -> CourtVerdict:
    return CourtVerdict(key, title, NA, "the rule failed on every instance" + (f": {failures[0]}" if failures else ""))


def _lossless_verdict(rule: str, presets: list[dict], family: list[dict], found: dict) -> CourtVerdict:
    mine = [r for r in family if rule in r["values"]]
    if not presets and not mine and not found["found"] and not found["tried"]:
        return _failed_everywhere("lossless", "Lossless", [f for r in family for f in r["failures"]])
    worst = max(mine, key=lambda r: r["values"][rule][1], default=None)
    bad_presets = [p for p in presets if p["fidelity_tv"] > LOSSLESS_TOL]
    bad_family = [r for r in mine if r["values"][rule][1] > LOSSLESS_TOL]
    ok = not bad_presets and not bad_family and not found["found"]
    numbers = {"presets": presets, "family": FAMILY.describe(), "held": len(mine) - len(bad_family), "of": len(mine),
               "counterexample": found}
    if worst is not None:
        tv = worst["values"][rule][1]
        numbers["worst"] = {**_where(worst["key"]), "fidelity_tv": tv, "draft": worst["models"][0],
                            "target": worst["models"][1]}
    parts = [f"lossless on {len(presets) - len(bad_presets)} of {len(presets)} presets and "
             f"{len(mine) - len(bad_family)} of {len(mine)} seeded instances"]
    if bad_presets:
        p = max(bad_presets, key=lambda x: x["fidelity_tv"])
        parts.append(f"TV {p['fidelity_tv_fraction'] or format(p['fidelity_tv'], '.3g')} from q on {p['preset']} "
                     f"K={p['K']} L={p['L']}")
    if found["found"]:
        f = found
        parts.append(f"smallest counterexample V={f['V']} K={f['K']} L={f['L']} ({f['kind']} models "
                     f"p = {_probs(f['draft'])}, q = {_probs(f['target'])}): TV "
                     f"{f['fidelity_tv_fraction'] or format(f['fidelity_tv'], '.3g')}")
    elif found["reached"]:
        V, K, L = found["reached"]
        parts.append(f"no counterexample among {found['tried']} instances computed up to V={V} K={K} L={L}")
    return CourtVerdict("lossless", "Lossless", HOLDS if ok else FAILS, "; ".join(parts), numbers)


def _probs(model: dict) -> str:
    probs = model.get("probs")
    return "(" + ", ".join(map(str, probs)) + ")" if probs is not None else json.dumps(model)


def _ratio(row: dict, name: str) -> float | None:
    if name not in row["values"] or row["lp"] is None:
        return None
    return row["values"][name][0] / row["lp"] if row["lp"] > 0 else 1.0


def _optimal_verdict(rule: str, family: list[dict]) -> CourtVerdict:
    rows = [(r, _ratio(r, rule)) for r in family]
    rows = [(r, x) for r, x in rows if x is not None]
    if not rows:
        return CourtVerdict("optimal", "Optimal among lossless verifiers", NA, "no instance was computed")
    ratios = [x for _, x in rows]
    above = [r for r, x in rows if x > 1 + TIE]
    optimal = [r for r, x in rows if abs(x - 1) <= TIE]
    worst_row, worst = min(rows, key=lambda t: t[1])
    words = (f"E[τ]/LP mean {sum(ratios) / len(ratios):.4f}, min {worst:.4f} "
             f"({worst_row['key'][0]} V={worst_row['key'][1]} K={worst_row['key'][2]} L={worst_row['key'][3]}); "
             f"equal to the LP optimum on {len(optimal)} of {len(rows)}")
    if above:
        lossy = sum(r["values"][rule][1] > LOSSLESS_TOL for r in above)
        words += (f"; above it on {len(above)} instances, bought with loss on {lossy} of them"
                  + ("" if lossy == len(above) else " (the others within the LP's tolerance)"))
    numbers = {"mean": sum(ratios) / len(ratios), "min": worst, "max": max(ratios), "optimal": len(optimal),
               "above_lp": len(above), "of": len(rows), "worst": _where(worst_row["key"])}
    return CourtVerdict("optimal", "Optimal among lossless verifiers",
                        HOLDS if len(optimal) == len(rows) else FAILS, words, numbers)


def _monotone_verdict(rule: str, family: list[dict]) -> CourtVerdict:
    series: dict[tuple, list[tuple[int, float]]] = {}
    for r in family:
        if rule in r["values"]:
            family_, V, K, L, index = r["key"]
            series.setdefault((family_, V, L, index), []).append((K, r["values"][rule][0]))
    drops = []
    for key, points in series.items():
        points.sort()
        drops += [(key, k1, e1, k2, e2) for (k1, e1), (k2, e2) in zip(points, points[1:]) if e2 < e1 - TIE]
    if not series:
        return _failed_everywhere("monotone", "Monotone in K", [f for r in family for f in r["failures"]])
    held = len(series) - len({d[0] for d in drops})
    words = f"E[τ] non-decreasing from K = 1 to 3 on {held} of {len(series)} pairs of models"
    numbers: dict[str, Any] = {"held": held, "of": len(series)}
    if drops:
        key, k1, e1, k2, e2 = min(drops, key=lambda d: d[4] - d[2])
        words += f"; the largest drop {e1:.4f} at K={k1} to {e2:.4f} at K={k2} ({key[0]} V={key[1]} L={key[2]} #{key[3]})"
        numbers["worst"] = {"family": key[0], "V": key[1], "L": key[2], "index": key[3], "K": k1,
                            "expected_accepted": e1, "next_K": k2, "next_expected_accepted": e2}
    return CourtVerdict("monotone", "Monotone in K", HOLDS if not drops else FAILS, words, numbers)


def _against_verdict(rule: str, rivals: list[str], family: list[dict]) -> CourtVerdict:
    """Wins, losses and ties against each rival; a lossy rule's higher E[τ] never counts."""
    table = {}
    for other in rivals:
        c = {"wins": 0, "losses": 0, "ties": 0, "wins_bought_with_loss": 0, "losses_to_a_lossy_rule": 0}
        for r in family:
            if rule not in r["values"] or other not in r["values"]:
                continue
            (e, tv), (e2, tv2) = r["values"][rule], r["values"][other]
            if e > e2 + TIE:
                c["wins" if tv <= LOSSLESS_TOL else "wins_bought_with_loss"] += 1
            elif e2 > e + TIE:
                c["losses" if tv2 <= LOSSLESS_TOL else "losses_to_a_lossy_rule"] += 1
            else:
                c["ties"] += 1
        table[other] = c
    ranking = []
    for name in (rule, *rivals):
        ratios = [x for x in (_ratio(r, name) for r in family) if x is not None]
        tvs = [r["values"][name][1] for r in family if name in r["values"]]
        if ratios:
            c = table.get(name)
            versus = "—" if c is None else (f"{c['losses']}/{c['wins']}/{c['ties']}"
                                            + (f" (+{c['losses_to_a_lossy_rule']} bought with loss)"
                                               if c["losses_to_a_lossy_rule"] else ""))
            ranking.append({"rule": name, "mean": sum(ratios) / len(ratios), "min": min(ratios),
                            "max_tv": max(tvs), "lossless": max(tvs) <= LOSSLESS_TOL, "versus": versus})
    # a lossy rule is never crowned: the lossless rules ranked, then the lossy ones apart
    ranking.sort(key=lambda x: (not x["lossless"], -x["mean"]))
    for i, entry in enumerate(ranking):
        entry["rank"] = i + 1 if entry["lossless"] else None
    wins = sum(c["wins"] for c in table.values())
    losses = sum(c["losses"] for c in table.values())
    ties = sum(c["ties"] for c in table.values())
    bought = sum(c["wins_bought_with_loss"] for c in table.values())
    mine = next((x for x in ranking if x["rule"] == rule), None)
    if mine is None:
        return CourtVerdict("against", "Against every registered rule", NA,
                            "the rule failed on every instance", {"versus": table, "ranking": ranking})
    place = ("not ranked: lossy" if not mine["lossless"] else
             f"rank {mine['rank']} of {sum(x['lossless'] for x in ranking)} lossless rules by mean E/LP")
    words = (f"{place}; against {len(rivals)} registered rules on the same instances: {wins} wins, {losses} losses, "
             f"{ties} ties" + (f", {bought} higher E[τ] bought with loss (not wins)" if bought else ""))
    return CourtVerdict("against", "Against every registered rule", None, words,
                        {"versus": table, "ranking": ranking})


def _drafts_verdict(rule: str, settings: dict) -> CourtVerdict:
    cls = resolve(rule)
    if not cls.token_trees:
        words = runs_on_words(cls.runs_on) if cls.runs_on else "K i.i.d. chains only (token_trees is False)"
        return CourtVerdict("drafts", "Drafts it runs on", None, words, {"token_trees": False})
    rows, failures = [], []
    cases = [(preset, b, law) for preset, b, law in TREE_CASES if cls.supports(Shape.tree(b), law)]
    for preset, b, law in cases:
        p = PRESETS[preset]
        shape = Shape.tree(b)
        try:
            e, tv = _run(rule, settings, p.draft, p.target, None, None, shape=shape, law=law)
        except USER_ERRORS as exc:
            failures.append(f"{rule} on {preset} {shape.label} drafted by {law}: {_first_line(exc)}")
            continue
        rows.append({"preset": preset, "shape": shape.label, "law": law, "expected_accepted": e,
                     "expected_accepted_fraction": fraction(e, integers=True), "fidelity_tv": tv,
                     "fidelity_tv_fraction": fraction(tv, integers=True)})
    lossless = sum(r["fidelity_tv"] <= LOSSLESS_TOL for r in rows)
    where = f"{runs_on_words(cls.runs_on)}" if cls.runs_on else "every tree shape and law"
    words = f"{where}: lossless on {lossless} of {len(rows)} (preset, shape, law) of {len(cases)}"
    return CourtVerdict("drafts", "Drafts it runs on", HOLDS if rows and lossless == len(rows) else FAILS, words,
                        {"token_trees": True, "trees": rows, "failures": failures})


def _stream_verdict(rule: str, settings: dict) -> CourtVerdict:
    name, K, L, n = STREAM
    preset = PRESETS[name]
    verifier = make_verifier(rule, draft=preset.draft, target=preset.target, K=K, L=L, **settings)
    stateful = type(verifier).advance is not Verifier.advance
    result = iterate_exact(verifier, preset.draft, preset.target, K, L, n, compensate_target=False)
    words = (f"{'with' if stateful else 'no'} state across iterations; the first {n} generated tokens on "
             f"{name} (K={K}, L={L}) at TV {fraction(result.tv, integers=True) or format(result.tv, '.3g')} from q, "
             f"{result.tokens_per_iteration:.4f} tokens per iteration")
    return CourtVerdict("stream", "The generated stream", HOLDS if result.tv <= LOSSLESS_TOL else FAILS, words,
                        {"stateful": stateful, "preset": name, "K": K, "L": L, "iterations": n,
                         "stream_tv": result.tv, "tokens_per_iteration": result.tokens_per_iteration})


def court(rule: str, settings: dict | None = None, *, client=None,
          progress: Callable[[str, int, int], None] | None = None, search_seconds: float = SEARCH_SECONDS) -> Court:
    """Every verdict for ``rule`` (a registered name, an alias, or a loaded rule's) with its own
    parameters ``settings`` (module docstring).  ``client`` runs the family on a Dask cluster (None:
    in this process); ``progress(stage, done, total)`` follows the family and the stages."""
    start = time.perf_counter()
    cls = resolve(rule)
    rule = cls.name
    settings = dict(settings or {})
    if not cls.needs_models:
        make_verifier(rule, **settings)      # a bad parameter is refused before anything is computed
    rivals = tuple(opponents(rule))
    failures: list[str] = []

    def stage(what: str, done: int = 0, total: int = 1):
        if progress is not None:
            progress(what, done, total)

    stage("presets")
    presets = []
    for name, K, L in PRESET_CASES:
        try:
            presets.append(_preset(rule, settings, name, K, L))
        except USER_ERRORS as exc:
            failures.append(f"{rule} on {name} K={K} L={L}: {_first_line(exc)}")
    keys = FAMILY.keys()
    family = map_batches(partial(judge, rule, settings, rivals, FAMILY.seed, FAMILY.T), keys, client=client,
                         progress=None if progress is None else lambda d, t, s: progress("family", d, t))
    failures += [f for r in family for f in r["failures"]]
    stage("search")
    found = search(rule, settings, search_seconds)
    failures += found.pop("failures")
    stage("trees and stream")
    verdicts = [_lossless_verdict(rule, presets, family, found), _optimal_verdict(rule, family),
                _monotone_verdict(rule, family), _against_verdict(rule, list(rivals), family),
                _drafts_verdict(rule, settings)]
    failures += verdicts[-1].numbers.pop("failures", [])
    try:
        verdicts.append(_stream_verdict(rule, settings))
    except USER_ERRORS as exc:
        failures.append(f"{rule} on the stream of {STREAM[0]}: {_first_line(exc)}")
        verdicts.append(CourtVerdict("stream", "The generated stream", NA, _first_line(exc)))
    parameters = [{**p.describe(), "range": p.range_text()} for p in declared(cls) if p.settable]
    return Court(rule, is_user_rule(rule), settings, parameters, verdicts, failures, time.perf_counter() - start)
