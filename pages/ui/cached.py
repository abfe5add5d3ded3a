"""Cached calls into ``core`` for the toy pages, and the thresholds above which a page asks first.

Nothing here implements a verification rule or a bound.  Cached functions take a JSON string
``spec`` (both models and the temperature) so that Streamlit can hash their arguments.
"""
from __future__ import annotations

import json
import time
from typing import Callable, Iterable

import numpy as np
import streamlit as st

from core import bounds
from core.analysis.exact import MAX_SECONDS, estimated_seconds, exact_analysis
from core.analysis.montecarlo import monte_carlo as run_monte_carlo
from core.analysis.toy_drafts import draw_block, draw_tree
from core.data.laws import IID_LAW, get_law, is_iid_chains
from core.data.shapes import Shape
from core.data.drafting import check_supports
from core.rules.params import declared
from core.rules.registry import ALIASES, REGISTRY, make_verifier
from pages.ui.text import duration, label, short
from toy_models import from_json

#: Above this many V^(K·L) draft outcomes a configuration counts as "large" (beyond it an answer may
#: take more than a second).
SMALL_OUTCOMES = 4096
#: Per-set LP sizes (``core.bounds.lp_size``: the acausal bound, the LP-optimal verifier's plan)
#: solved without asking; well under a second on two cores.
LP_AUTO = 6_000
#: The LP optimum (node form) is solved without asking when its estimate
#: (``core.bounds.node_lp_seconds``) is at most this many seconds.
OPTIMUM_AUTO_SECONDS = 1.0
#: Exact analyses estimated (``core.analysis.exact.estimated_seconds``) above this many seconds ask first.
EXACT_AUTO_SECONDS = 1.0
#: ``run_with_progress`` shows its bar once its jobs have run this long (cached work never does).
PROGRESS_AFTER_S = 0.25


def model_spec(draft, target, T: float, params: dict | None = None) -> str:
    """The hashable key of a configuration's models: both models' JSON and the temperature, and the
    rules' own parameters where any differs from its default ({rule: {name: value}},
    ``pages.ui.rule_params``), so that every cached result is keyed by them."""
    spec = {"draft": draft.to_json(), "target": target.to_json(), "T": float(T)}
    if params:
        spec["params"] = {rule: dict(values) for rule, values in params.items() if values}
    return json.dumps(spec, sort_keys=True)


def rule_settings(spec: str, method: str) -> dict:
    """The parameters ``method`` runs with on this configuration: those the spec sets, and the ones it
    reads from the models (``Param.context``: the temperature)."""
    obj = json.loads(spec)
    cls = REGISTRY[ALIASES.get(method, method)]
    given = dict(obj.get("params", {}).get(cls.name, {}))
    for param in declared(cls):
        if param.context == "temperature":
            given[param.name] = float(obj["T"])
    return given


@st.cache_resource(show_spinner=False, max_entries=64)
def models(spec: str):
    """(draft p, target q) at temperature T, built once per spec."""
    obj = json.loads(spec)
    T = obj["T"]
    return from_json(obj["draft"]).with_temperature(T), from_json(obj["target"]).with_temperature(T)


@st.cache_resource(show_spinner=False, max_entries=16)
def _model_verifier(spec: str, method: str, K: int, L: int):
    """A rule built from the models themselves (``needs_models``: the LP-optimal verifier solves an
    LP when built, td_optimal its node LPs when first used): build it once per configuration."""
    draft, target = models(spec)
    return make_verifier(method, draft=draft, target=target, K=K, L=L, **rule_settings(spec, method))


def _verifier(spec: str, method: str, K: int, L: int):
    if REGISTRY[method].needs_models:
        return _model_verifier(spec, method, K, L)
    return make_verifier(method, **rule_settings(spec, method))


@st.cache_data(show_spinner=False, max_entries=2048)
def exact(spec: str, method: str, K: int, L: int):
    """``core.analysis.exact.exact_analysis`` (ExactResult), cached."""
    draft, target = models(spec)
    return exact_analysis(_verifier(spec, method, K, L), draft, target, K, L)


@st.cache_data(show_spinner=False, max_entries=512)
def bound(spec: str, kind: str, K: int, L: int) -> float:
    """One bound of ``core.bounds``: lp_optimum, acausal, claimed_cic or greedy."""
    draft, target = models(spec)
    if kind == "lp_optimum":
        return float(bounds.lp_optimum(draft, target, K, L).value)
    if kind == "acausal":
        return float(bounds.acausal_bound(draft, target, K, L))
    if kind == "claimed_cic":
        return float(bounds.claimed_cic(draft, target, K, L))
    if kind == "greedy":
        return float(bounds.greedy_relaxation(draft, target, K, L))
    raise ValueError(f"unknown bound {kind!r}")


@st.cache_data(show_spinner=False, max_entries=512)
def frontier(spec: str, K: int, L: int, tv: float) -> float:
    """The loss-gain frontier at TV ``tv`` (``core.bounds.frontier``): the best E[τ] of any verifier
    of K i.i.d. drafts that far from q."""
    from core.bounds.frontier import frontier as solve

    draft, target = models(spec)
    return float(solve(draft, target, K, L, tv).value)


def with_setting(spec: str, rule: str, name: str, value) -> str:
    """The spec with one rule parameter set (``model_spec``'s ``params``): the key its results are
    cached under."""
    obj = json.loads(spec)
    params = obj.setdefault("params", {})
    params.setdefault(rule, {})[name] = value
    return json.dumps(obj, sort_keys=True)


@st.cache_data(show_spinner=False, max_entries=64)
def lp_plan(spec: str, K: int, L: int):
    """``core.bounds.optimal_lp`` (OptimalPlan), cached."""
    draft, target = models(spec)
    return bounds.optimal_lp(draft, target, K, L)


def lp_size(V: int, K: int, L: int) -> int:
    """Size (multisets × nodes) of the per-set LP for K drafts of length L over V tokens: the
    acausal bound's and the LP-optimal verifier's plan's."""
    return int(bounds.lp_size(V, K, L, "optimal")[0])


def optimum_auto(V: int, L: int) -> bool:
    """Whether the LP optimum (node form) is solved without asking: its estimate is at most
    ``OPTIMUM_AUTO_SECONDS`` (it does not depend on K)."""
    return bounds.node_lp_seconds(V, L) <= OPTIMUM_AUTO_SECONDS


def optimum_seconds(V: int, L: int) -> float:
    """The LP optimum's time estimate, at most (``core.bounds.node_lp_seconds``)."""
    return float(bounds.node_lp_seconds(V, L))


def optimum_refusal(V: int, L: int) -> str | None:
    """Why ``core.bounds`` refuses the LP optimum (node form) of K i.i.d. chains of length L over V
    tokens, as one sentence (its node count and time estimate); None when it agrees to solve it."""
    try:
        bounds.check_node_size(V, Shape.chains_of(1, L), IID_LAW)
    except bounds.BoundsTooLarge as exc:
        return str(exc)
    return None


def lp_refusal(V: int, K: int, L: int) -> str | None:
    """Why ``core.bounds`` refuses the per-set LP of this configuration (its size or its work is
    past the limit), as one sentence; None when it agrees to solve it."""
    try:
        bounds.check_size(V, K, L)
    except bounds.BoundsTooLarge as exc:
        return str(exc)
    return None


@st.cache_data(show_spinner=False, max_entries=256)
def monte_carlo(spec: str, method: str, K: int, L: int, n: int, seed: int):
    """``core.analysis.montecarlo.monte_carlo`` (MonteCarloResult), cached."""
    draft, target = models(spec)
    return run_monte_carlo(_verifier(spec, method, K, L), draft, target, K, L, n, seed)


def draw(spec: str, K: int, L: int, seed: int):
    """K drafts of length L with p and q along the tree (``core.analysis.toy_drafts.draw_block``)."""
    draft, target = models(spec)
    return draw_block(draft, target, K, L, seed)


def verify(spec: str, method: str, block, coin_seed: int):
    """One seeded verification of ``block`` (Verdict)."""
    return _verifier(spec, method, block.K, block.L).verify(block, np.random.default_rng(coin_seed))


def expected_tau_given(spec: str, method: str, block) -> float | None:
    """E[τ | these drafts] over the verifier's coins; None where the rule cannot say."""
    try:
        return _verifier(spec, method, block.K, block.L).expected_tau(block)
    except Exception:  # noqa: BLE001 - a missing closed form is not an error
        return None


def exact_seconds(V: int, K: int, L: int, method: str) -> float:
    """Core's rough estimate of one exact analysis, in seconds on a 2-core machine."""
    cls = REGISTRY.get(method)
    return 0.0 if cls is None else float(estimated_seconds(cls, V, K, L))


def refused(V: int, K: int, L: int, methods: Iterable[str]) -> list[str]:
    """The methods whose exact law core refuses here (estimated past ``MAX_SECONDS``): no button can
    compute them."""
    return [m for m in methods if exact_seconds(V, K, L, m) > MAX_SECONDS]


def refusal_note(V: int, K: int, L: int, methods: Iterable[str]) -> str | None:
    """One sentence naming the methods past the hard limit, with their estimated times."""
    out = refused(V, K, L, methods)
    if not out:
        return None
    parts = ", ".join(f"{short(m)} ({duration(exact_seconds(V, K, L, m))})" for m in out)
    return (f"Too large to compute exactly here (estimated times; the limit is {duration(MAX_SECONDS)} "
            f"per method): {parts}; lower V, K or L to see them.")


def cost_note(V: int, K: int, L: int, methods: Iterable[str]) -> str | None:
    """A warning sentence when the exact analysis of this configuration may take seconds."""
    slow = [(m, exact_seconds(V, K, L, m)) for m in methods]
    slow = [(m, sec) for m, sec in slow if sec > EXACT_AUTO_SECONDS]
    if not slow:
        return None
    parts = ", ".join(f"{label(m)} about {duration(sec)}" for m, sec in slow)
    return f"This is a large configuration: exact laws may take a while ({parts})."


def run_with_progress(jobs: list[tuple[str, Callable[[], object]]], text: str,
                      after_s: float = PROGRESS_AFTER_S) -> dict:
    """Run labelled jobs in order; each job's exception is kept as its result (the caller shows it).

    A progress bar appears once the jobs have taken ``after_s`` seconds, and goes when all are done.
    Work that is already cached finishes before that and sends nothing: the toy laboratory's K curve
    alone is about 90 jobs, and a bar updated for each of them was 90 messages for the browser to
    draw on every rerun."""
    out: dict = {}
    slot = st.empty()       # the bar's place, the same on every run whether or not it shows
    start = time.perf_counter()
    shown = False
    for i, (name, job) in enumerate(jobs):
        if len(jobs) > 1 and time.perf_counter() - start > after_s:
            slot.progress(i / len(jobs), text=f"{text}: {name} ({i + 1}/{len(jobs)})")
            shown = True
        try:
            out[name] = job()
        except Exception as exc:  # noqa: BLE001
            out[name] = exc
    if shown:
        slot.empty()
    return out


# ------------------------------------------------------------------------------------------------
# Token trees of any shape and law (the Draft trees page, one iteration on a token tree)
# ------------------------------------------------------------------------------------------------

def tree_rules(shape=None, law=None) -> tuple[str, ...]:
    """The rules defined on token trees (``Verifier.token_trees``: top-down rejection ``rrs``, run by
    the ``specinfer`` rule, leaf-to-root ``traversal``, the own-law optimum ``lp_optimal``, and any rule
    registered or loaded later), in the registry's order; with a shape and a law, those that run on
    them (a released port runs on the drafts its engine makes: ``Verifier.runs_on``)."""
    return tuple(m for m, cls in REGISTRY.items()
                 if cls.token_trees and (shape is None or cls.supports(shape, law)))


@st.cache_resource(show_spinner=False, max_entries=32)
def _tree_model_verifier(spec: str, method: str, shape, law: str):
    """A model-dependent rule (``lp_optimal``: the own-law LP) on (shape, law), solved once."""
    draft, target = models(spec)
    return make_verifier(method, draft=draft, target=target, shape=shape, law=law, **rule_settings(spec, method))


def tree_verifier(spec: str, method: str, shape, law: str):
    """The rule ``method`` for drafts of ``shape`` drafted by ``law`` (refused in one sentence where
    it is defined on K i.i.d. chains only: ``core.rules.registry.require``)."""
    if REGISTRY[method].needs_models:
        return _tree_model_verifier(spec, method, shape, law)
    return make_verifier(method, shape=shape, law=law, **rule_settings(spec, method))


@st.cache_data(show_spinner=False, max_entries=1024)
def tree_exact(spec: str, method: str, shape, law: str):
    """``exact_analysis(method, shape=shape, law=law)`` (ExactResult), cached."""
    draft, target = models(spec)
    return exact_analysis(tree_verifier(spec, method, shape, law), draft, target, shape=shape, law=law)


@st.cache_data(show_spinner=False, max_entries=256)
def tree_lp_certificate(spec: str, shape, law: str):
    """The own-law LP's optimum with its exact certificate where there is one
    (``core.bounds.certify.certify_tree_lp``; K i.i.d. chains for ``iid`` on (K, 1, …, 1))."""
    from core.bounds.certify import certify_tree_lp
    draft, target = models(spec)
    return certify_tree_lp(draft, target, shape, law)


@st.cache_data(show_spinner=False, max_entries=256)
def chains_lp_certificate(spec: str, K: int, L: int):
    """The LP optimum of K i.i.d. chains of length L, certified where it can be
    (``core.bounds.certify.certify_chains_lp``)."""
    from core.bounds.certify import certify_chains_lp
    draft, target = models(spec)
    return certify_chains_lp(draft, target, K, L)


def tree_lp_size(V: int, shape, law: str) -> int:
    """The own-law LP's size, priced before it is built (``core.bounds.tree_lp_size``; ``lp_size``
    for K i.i.d. chains, which it hands to ``optimal_lp``).  The pages name the law (their widgets'
    value, and the cache key of the functions above)."""
    law = get_law(law)
    if is_iid_chains(shape, law):
        return lp_size(V, shape.K, shape.L)
    return int(bounds.tree_lp_size(V, shape, law).size)


def tree_optimum_refusal(V: int, shape, law: str) -> str | None:
    """Why core refuses the own-law LP's value here (node form: its nodes, or a node's combinations,
    past the limits), as one sentence; None when it agrees to solve it.  The law by name."""
    try:
        bounds.check_node_size(V, shape, get_law(law))
    except bounds.BoundsTooLarge as exc:
        return str(exc)
    return None


def tree_lp_refusal(V: int, shape, law: str) -> str | None:
    """Why core refuses the own-law LP's per-set form here, whose plan the LP-optimal verifier samples
    (size, work or drafted trees past the limits), as one sentence; None when it agrees to solve it.
    The law by name, as ``tree_lp_size``."""
    law = get_law(law)
    try:
        if is_iid_chains(shape, law):
            bounds.check_size(V, shape.K, shape.L)
        else:
            bounds.check_tree_size(V, shape, law)
    except bounds.BoundsTooLarge as exc:
        return str(exc)
    return None


def tree_seconds(V: int, shape, law: str, method: str) -> float:
    """Core's rough estimate of one exact analysis of ``method`` on (shape, law), in seconds."""
    return float(estimated_seconds(REGISTRY[method], V, shape=shape, law=law))


@st.cache_data(show_spinner=False, max_entries=64)
def topk_value(spec: str, shape) -> float:
    """Σ q(s) over the tree drafted by ``topk`` (``core.bounds.topk_tree_value``)."""
    draft, target = models(spec)
    return float(bounds.topk_tree_value(draft, target, shape))


def draw_token_tree(spec: str, shape, law: str, seed: int):
    """One token tree of ``shape`` drafted by ``law``, seeded (``core.analysis.toy_drafts.draw_tree``),
    after checking that the law exists at every node the draft can reach (one sentence if not)."""
    draft, target = models(spec)
    check_supports(draft.cond, shape, law)
    return draw_tree(draft, target, shape, law, seed)


def tree_verify(spec: str, method: str, tree, coin_seed: int):
    """One seeded verification of a token tree by the rule's token-tree programme (Verdict): K
    i.i.d. chains too are then verified as their token tree."""
    return tree_verifier(spec, method, tree.shape, tree.law.name).verify_tree(tree, np.random.default_rng(coin_seed))


def tree_expected_tau(spec: str, method: str, tree) -> float | None:
    """E[τ | this tree] over the verifier's coins; None where the rule cannot say."""
    try:
        return tree_verifier(spec, method, tree.shape, tree.law.name).expected_tau(tree)
    except Exception:  # noqa: BLE001 - a missing closed form is not an error
        return None


# ------------------------------------------------------------------------------------------------
# The budget question (core.analysis.budget): imported by the Draft trees page only, when it first
# asks, so that the other toy pages never load it
# ------------------------------------------------------------------------------------------------

@st.cache_data(show_spinner=False, max_entries=512)
def budget_seconds(spec: str, budget: int, L: int) -> float:
    """What ``core.analysis.budget.budget_table`` is estimated to take on this configuration."""
    from core.analysis.budget import estimated_table_seconds
    draft, target = models(spec)
    return float(estimated_table_seconds(draft, target, budget, L))


@st.cache_resource(show_spinner=False)
def _budget_tables() -> dict:
    """The budget tables computed in this server process, by (spec, budget, L), oldest first."""
    return {}


#: How many budget tables ``budget_table`` keeps (2.5-3.6 kB each pickled, measured on the
#: three-token toy at n = 4 and 9, L = 2).
BUDGET_TABLES_KEPT = 256


def budget_table(spec: str, budget: int, L: int, progress: Callable[[int, int, str], None] | None = None):
    """The budget question's table for n = ``budget`` drafted tokens and depth L
    (``core.analysis.budget.budget_table``: every shape × law × verifier, the i.i.d.-chains LP,
    Sequoia's top-k programme), kept for every session of the server; ``progress(done, total, what)``
    is called while it is computed.  Kept by hand rather than by ``st.cache_data``, whose cached
    functions may not update an element made outside them (the progress bar)."""
    tables = _budget_tables()
    key = (spec, int(budget), int(L))
    if key not in tables:
        from core.analysis.budget import budget_table as compute
        draft, target = models(spec)
        table = compute(draft, target, int(budget), int(L), progress=progress)
        while len(tables) >= BUDGET_TABLES_KEPT:
            tables.pop(next(iter(tables)), None)
        tables[key] = table
    return tables[key]


@st.cache_data(show_spinner=False, max_entries=64)
def shared_drafts(spec: str, budgets: tuple[int, ...], L: int) -> dict:
    """Per shape of these budgets' tables (``budget_table``), the laws that can draw it grouped by the
    trees they draft (``core.analysis.budget.shared_drafts``)."""
    from core.analysis.budget import shared_drafts as compute
    draft, _ = models(spec)
    return compute(draft, {n: budget_table(spec, n, L) for n in budgets})


def table_seconds_limit() -> float:
    """The longest table ``budget_table`` agrees to compute (``core.analysis.budget.TABLE_SECONDS``)."""
    from core.analysis.budget import TABLE_SECONDS
    return float(TABLE_SECONDS)
