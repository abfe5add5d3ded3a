"""One batch of instances → result rows: the unit of work a Dask task (or the serial loop) runs.

One row per (instance, method): E[τ], the block efficiency E[τ] + 1, the fidelity error TV(P̃, q)
and the ratio E[τ]/LP to the optimal lossless verifier's value, beside the instance's requested
bounds (``lp``, ``acausal``, ``cic``, repeated on each of its rows) and its models as JSON text
(``ToyModel.to_json()`` at T = 1; ``core.sweep.instances.reopen`` rebuilds them).  Every number is
a deterministic function of the configuration and the instance key, so a batch gives the same rows
in any process.

A draft sweep's unit (``DraftKey``: the models of (family, V, L, index) and a budget n) gives one row
per shape of budget n × law × rule defined there (``draft_rows``).  Its rows carry the same columns,
K being b_1, and four more, ``DRAFT_COLUMNS``: ``shape`` (chains or tree), ``branching`` ("2,1"),
``budget`` and ``law``.  There ``lp`` is the own-law LP of the row's (shape, law), the best any
lossless verifier does with those drafts (``core.bounds.tree_lp_optimum``), ``ratio_lp`` = E[τ]
over it, and ``lp_iid`` is the optimal LP of K = n/L i.i.d. chains of the same length: the same
budget (NaN when L does not divide n).  ``acausal`` and ``cic`` are bounds for i.i.d. chains: there,
those of the same K = n/L chains.

A rule from outside the project that fails on an instance (``core.rules.containment``) gives a row
without numbers (NaN) and a ``failure`` column saying why in one sentence; the other rules' rows,
and the other instances, are computed as always.  A rule's own parameters are the configuration's
(``SweepConfig.params``).
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Iterable

from core import bounds
from core.analysis.exact import exact_analysis
from core.data.laws import IID_LAW, DraftLaw, is_iid_chains
from core.data.shapes import Shape
from core.rules.lp_optimal import LPOptimal
from core.errors import USER_ERRORS
from core.rules.registry import is_user_rule, make_verifier, resolve
from core.sweep.config import DraftKey, InstanceKey, SweepConfig, law_defined, runs_on
from core.sweep.instances import instance_models

#: The columns that name an instance; with ``method`` they name a row.
KEY_COLUMNS = ("family", "V", "K", "L", "index")
#: What a draft sweep's rows add: with ``KEY_COLUMNS`` and ``method`` they name a row.
DRAFT_COLUMNS = ("shape", "branching", "budget", "law")


def group_columns(frame) -> list[str]:
    """The columns that name one analysis (an instance, and its draft where the rows have one):
    the rows of one group differ by ``method`` only.  With ``temperature`` and ``seed``, so that
    sweeps of one grid at several temperatures or seeds, read together, stay apart."""
    return [*KEY_COLUMNS, *(c for c in ("temperature", "seed", *DRAFT_COLUMNS) if c in frame.columns)]


def instance_bounds(draft, target, K: int, L: int, kinds: Iterable[str]) -> dict[str, float]:
    """The requested bounds on E[τ]: the optimal lossless LP, the acausal coupling, claimed E_CIC."""
    compute = {"lp": lambda: bounds.lp_optimum(draft, target, K, L).value,
               "acausal": lambda: bounds.acausal_bound(draft, target, K, L),
               "cic": lambda: bounds.claimed_cic(draft, target, K, L)}
    return {kind: float(compute[kind]()) for kind in kinds}


def instance_rows(config: SweepConfig, key: InstanceKey) -> list[dict]:
    """The rows of one instance, one per method, in ``config.methods`` order.

    ratio_lp = E[τ]/LP (LP > 0 whenever p and q share support; an LP of 0 means no rule accepts
    anything, and every rule attains it: ratio 1).  Without the ``lp`` bound the column is absent."""
    draft, target, mismatch = instance_models(key, config.seed)
    draft_json, target_json = json.dumps(draft.to_json()), json.dumps(target.to_json())
    draft, target = draft.with_temperature(config.temperature), target.with_temperature(config.temperature)
    found = instance_bounds(draft, target, key.K, key.L, config.bounds)
    rows = []
    for method in config.methods:
        head = {**key._asdict(), "mismatch": mismatch, "temperature": config.temperature,
                "seed": config.seed, "method": method}
        with contained_failure(method, head, found, (draft_json, target_json), rows):
            verifier = make_verifier(method, draft=draft, target=target, K=key.K, L=key.L,
                                     **config.settings(method))
            result = exact_analysis(verifier, draft, target, key.K, key.L)
            rows.append(result_row(head, result, found, (draft_json, target_json)))
    return rows


@contextmanager
def contained_failure(method: str, head: dict, found: dict, models: tuple[str, str], rows: list[dict]):
    """Run the block; where a rule from outside the project fails there (``RuleFailure``: it raised,
    returned a bad outcome or ran past its time), append its row with the failure in one sentence
    (``failure``, naming the instance) and no numbers, so that the batch, and every other rule's
    row, goes on."""
    try:
        yield
    except USER_ERRORS as exc:
        if not is_user_rule(method):
            raise
        nan = float("nan")
        where = describe_key(head)
        rows.append({**head, "expected_accepted": nan, "block_efficiency": nan, "fidelity_tv": nan, **found,
                     **({"ratio_lp": nan} if "lp" in found else {}), "draft": models[0], "target": models[1],
                     "failure": f"{str(exc).strip().splitlines()[0]} (instance {where})"})


def describe_key(head: dict) -> str:
    """An instance (and its draft) as one line: ``iid V=2 K=2 L=1 #3`` (then ``b = (2, 1) wor``)."""
    text = "{family} V={V} K={K} L={L} #{index}".format(**head)
    if "law" in head and "branching" in head:
        text += f" {'chains' if head['shape'] == 'chains' else 'b'} {head['branching']} {head['law']}"
    return text


def result_row(head: dict, result, found: dict[str, float], models: tuple[str, str]) -> dict:
    """One row: ``head`` (the instance, its draft and the method), then E[τ], the block efficiency,
    the fidelity error, the bounds ``found``, ratio_lp where ``found`` has the LP, and the models'
    JSON (draft, target), in that column order."""
    row = {**head, "expected_accepted": result.expected_accepted, "block_efficiency": result.block_efficiency,
           "fidelity_tv": result.fidelity_tv, **found}
    if "lp" in found:
        row["ratio_lp"] = result.expected_accepted / found["lp"] if found["lp"] > 0 else 1.0
    return {**row, "draft": models[0], "target": models[1]}


def draft_label(shape: Shape) -> dict:
    """A shape's ``shape``, ``branching`` and ``budget`` columns."""
    return {"shape": "chains" if shape.chains else "tree", "branching": ",".join(map(str, shape.branching)),
            "budget": shape.budget}


def draft_rows(config: SweepConfig, key: DraftKey) -> list[dict]:
    """The rows of one unit of a draft sweep: for every shape of depth L and budget n
    (``SweepConfig.draft_shapes``) and every law that can draft it over V tokens (``law_defined``),
    one row per rule that runs there (``runs_on``), in ``config.methods`` order.

    Every own-law LP is solved once per (shape, law) in node form (``lp``), and, where ``lp_optimal``
    runs, once in its per-set form, whose plan that rule samples (its E[τ] is the plan's, and its TV
    checks the plan); K i.i.d. chains, however written (the chains, the tree (K, 1, …, 1), the
    i.i.d.-chains baseline of the budget), are solved once."""
    draft, target, mismatch = instance_models(key, config.seed)
    draft_json, target_json = json.dumps(draft.to_json()), json.dumps(target.to_json())
    draft, target = draft.with_temperature(config.temperature), target.with_temperature(config.temperature)
    n, L = key.budget, key.L
    K_iid = n // L if n % L == 0 else None
    plans: dict[tuple, object] = {}
    optima: dict[tuple, float] = {}

    def same(shape: Shape, law: DraftLaw) -> tuple:
        return (IID_LAW, shape.K) if is_iid_chains(shape, law) else (shape, law)

    def own_plan(shape: Shape, law: DraftLaw):
        if same(shape, law) not in plans:
            plans[same(shape, law)] = (bounds.optimal_lp(draft, target, shape.K, L) if is_iid_chains(shape, law)
                                       else bounds.optimal_tree_lp(draft, target, shape, law))
        return plans[same(shape, law)]

    def own_lp(shape: Shape, law: DraftLaw) -> float:
        if same(shape, law) not in optima:
            optima[same(shape, law)] = float(bounds.tree_lp_optimum(draft, target, shape, law).value)
        return optima[same(shape, law)]

    iid = {kind: float("nan") for kind in config.bounds}
    if K_iid is not None:
        iid = {**instance_bounds(draft, target, K_iid, L, [k for k in config.bounds if k != "lp"]),
               **({"lp": own_lp(Shape.chains_of(K_iid, L), IID_LAW)} if "lp" in config.bounds else {})}

    rows = []
    for shape in config.draft_shapes(L):
        if shape.budget != n:
            continue
        for law in config.draft_laws():
            if not law_defined(key.V, shape, law):
                continue
            methods = [m for m in config.methods if runs_on(m, shape, law)]
            plan = own_plan(shape, law) if "lp_optimal" in methods else None
            found = {**{k: v for k, v in iid.items() if k != "lp"},
                     **({"lp": own_lp(shape, law), "lp_iid": iid["lp"]} if "lp" in config.bounds else {})}
            for method in methods:
                head = {"family": key.family, "V": key.V, "K": shape.K, "L": L, "index": key.index,
                        "mismatch": mismatch, "temperature": config.temperature, "seed": config.seed,
                        "method": method, **draft_label(shape), "law": law.name}
                with contained_failure(method, head, found, (draft_json, target_json), rows):
                    verifier = LPOptimal(plan=plan) if resolve(method) is LPOptimal else \
                        make_verifier(method, draft=draft, target=target, shape=shape, law=law,
                                      **config.settings(method))
                    result = exact_analysis(verifier, draft, target, shape=shape, law=law)
                    rows.append(result_row(head, result, found, (draft_json, target_json)))
    return rows


def run_batch(config: SweepConfig, keys: list[InstanceKey] | list[DraftKey]) -> list[dict]:
    """Every row of a batch of instances, in order (the function a Dask task runs)."""
    rows_of = draft_rows if config.drafts else instance_rows
    return [row for key in keys for row in rows_of(config, key)]
