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
lossless verifier does with those drafts (``core.bounds.lp.optimal_tree_lp``), ``ratio_lp`` = E[τ]
over it, and ``lp_iid`` is the optimal LP of K = n/L i.i.d. chains of the same length: the same
budget (NaN when L does not divide n).  ``acausal`` and ``cic`` are bounds for i.i.d. chains: there,
those of the same K = n/L chains.
"""
from __future__ import annotations

import json
from typing import Iterable

from core import bounds
from core.analysis.exact import exact_analysis
from core.data.laws import IID_LAW, DraftLaw, is_iid_chains
from core.data.shapes import Shape
from core.rules.lp_optimal import LPOptimal
from core.rules.registry import make_verifier, resolve
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
    compute = {"lp": lambda: bounds.optimal_lp(draft, target, K, L).value,
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
        verifier = make_verifier(method, draft=draft, target=target, K=key.K, L=key.L)
        result = exact_analysis(verifier, draft, target, key.K, key.L)
        head = {**key._asdict(), "mismatch": mismatch, "temperature": config.temperature,
                "seed": config.seed, "method": method}
        rows.append(result_row(head, result, found, (draft_json, target_json)))
    return rows


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

    Every own-law LP is solved once per (shape, law) and shared with ``lp_optimal``'s row (whose
    E[τ] is then the plan's, and its TV checks the plan); K i.i.d. chains, however written (the
    chains, the tree (K, 1, …, 1), the i.i.d.-chains baseline of the budget), are solved once."""
    draft, target, mismatch = instance_models(key, config.seed)
    draft_json, target_json = json.dumps(draft.to_json()), json.dumps(target.to_json())
    draft, target = draft.with_temperature(config.temperature), target.with_temperature(config.temperature)
    n, L = key.budget, key.L
    K_iid = n // L if n % L == 0 else None
    plans: dict[tuple, object] = {}

    def own_plan(shape: Shape, law: DraftLaw):
        same = (IID_LAW, shape.K) if is_iid_chains(shape, law) else (shape, law)
        if same not in plans:
            plans[same] = (bounds.optimal_lp(draft, target, shape.K, L) if is_iid_chains(shape, law)
                           else bounds.optimal_tree_lp(draft, target, shape, law))
        return plans[same]

    iid = {kind: float("nan") for kind in config.bounds}
    if K_iid is not None:
        iid = {**instance_bounds(draft, target, K_iid, L, [k for k in config.bounds if k != "lp"]),
               **({"lp": own_plan(Shape.chains_of(K_iid, L), IID_LAW).value} if "lp" in config.bounds else {})}

    rows = []
    for shape in config.draft_shapes(L):
        if shape.budget != n:
            continue
        for law in config.draft_laws():
            if not law_defined(key.V, shape, law):
                continue
            methods = [m for m in config.methods if runs_on(m, shape, law)]
            plan = own_plan(shape, law) if "lp" in config.bounds or "lp_optimal" in methods else None
            found = {**{k: v for k, v in iid.items() if k != "lp"},
                     **({"lp": plan.value, "lp_iid": iid["lp"]} if "lp" in config.bounds else {})}
            for method in methods:
                verifier = LPOptimal(plan=plan) if resolve(method) is LPOptimal else \
                    make_verifier(method, draft=draft, target=target, shape=shape, law=law)
                result = exact_analysis(verifier, draft, target, shape=shape, law=law)
                head = {"family": key.family, "V": key.V, "K": shape.K, "L": L, "index": key.index,
                        "mismatch": mismatch, "temperature": config.temperature, "seed": config.seed,
                        "method": method, **draft_label(shape), "law": law.name}
                rows.append(result_row(head, result, found, (draft_json, target_json)))
    return rows


def run_batch(config: SweepConfig, keys: list[InstanceKey] | list[DraftKey]) -> list[dict]:
    """Every row of a batch of instances, in order (the function a Dask task runs)."""
    rows_of = draft_rows if config.drafts else instance_rows
    return [row for key in keys for row in rows_of(config, key)]
