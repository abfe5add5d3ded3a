"""One batch of instances → result rows: the unit of work a Dask task (or the serial loop) runs.

One row per (instance, method): E[τ], the block efficiency E[τ] + 1, the fidelity error TV(P̃, q)
and the ratio E[τ]/LP to the optimal lossless verifier's value, beside the instance's requested
bounds (``lp``, ``acausal``, ``cic``, repeated on each of its rows) and its models as JSON text
(``ToyModel.to_json()`` at T = 1; ``core.sweep.instances.reopen`` rebuilds them).  Every number is
a deterministic function of the configuration and the instance key, so a batch gives the same rows
in any process.
"""
from __future__ import annotations

import json
from typing import Iterable

from core import bounds
from core.analysis.exact import exact_analysis
from core.rules.registry import make_verifier
from core.sweep.config import InstanceKey, SweepConfig
from core.sweep.instances import instance_models

#: The columns that name an instance; with ``method`` they name a row.
KEY_COLUMNS = ("family", "V", "K", "L", "index")


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
        row = {**key._asdict(), "mismatch": mismatch, "temperature": config.temperature,
               "seed": config.seed, "method": method,
               "expected_accepted": result.expected_accepted,
               "block_efficiency": result.block_efficiency,
               "fidelity_tv": result.fidelity_tv, **found}
        if "lp" in found:
            row["ratio_lp"] = result.expected_accepted / found["lp"] if found["lp"] > 0 else 1.0
        rows.append({**row, "draft": draft_json, "target": target_json})
    return rows


def run_batch(config: SweepConfig, keys: list[InstanceKey]) -> list[dict]:
    """Every row of a batch of instances, in order (the function a Dask task runs)."""
    return [row for key in keys for row in instance_rows(config, key)]
