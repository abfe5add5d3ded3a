"""The instance families: seeded (draft p, target q) pairs on V tokens, for a draft length L.

Each instance is a pure function of (seed, family, V, L, index), through ``np.random.SeedSequence``
with that key as its spawn key, so any one of them can be rebuilt alone, on any machine, in any
order; the same pair is analysed at every K of a sweep (K changes the verifier, not the models).

- ``iid``, ``markov``, ``table``: the target q from a symmetric Dirichlet(α = 1) (i.i.d. tokens, a
  Markov chain, one conditional per prefix of length ≤ L), the draft p(·|u) = (1 − m)·q(·|u) + m·r(·|u)
  with r Dirichlet noise and the mismatch m ~ U(0, 1) (``toy_models.mixed_draft``);
- ``near``: a table target and p(·|u) = (1 − ε)·q(·|u) + ε·u with u uniform on the V tokens, ε
  cycling through ``NEAR_EPSILONS`` with the index: drafts close to the target;
- ``confident``: a ``markov`` pair whose first token is one token c (drawn with the target) with
  probability ``CONFIDENT_SHARE`` under both models, the rest of each model's first-token law and
  every transition as in ``markov``: a first token that draft and target agree on with confidence,
  the regime in which delaying the branching point of a token tree is proposed (Thomas et al., arXiv
  2602.16994).

The temperature is applied to both models after they are drawn; ``ToyModel.to_json`` stores the
models at T = 1, so ``reopen`` applies the row's temperature again.
"""
from __future__ import annotations

import numpy as np

from toy_models import (MarkovModel, TableModel, ToyModel, from_json, mixed_draft, random_iid, random_markov,
                        random_table)

from core.sweep.config import FAMILIES, InstanceKey

NEAR_EPSILONS = (0.01, 0.03, 0.1, 0.3)
ALPHA = 1.0
#: The probability both models of a ``confident`` pair give their shared first token.
CONFIDENT_SHARE = 0.96


def _first_token(model: MarkovModel, token: int) -> MarkovModel:
    """``model`` with ``token`` first with probability ``CONFIDENT_SHARE``, the other first tokens
    sharing the rest in their old proportions."""
    rest = np.delete(model.initial, token)
    rest = rest / rest.sum() * (1.0 - CONFIDENT_SHARE)
    return MarkovModel(np.insert(rest, token, CONFIDENT_SHARE), model.transition)


def instance_models(key: InstanceKey, seed: int) -> tuple[ToyModel, ToyModel, float]:
    """(draft, target, mismatch) at T = 1 for one instance: the mismatch is m or ε (module docstring)."""
    sequence = np.random.SeedSequence(seed, spawn_key=(FAMILIES.index(key.family), key.V, key.L, key.index))
    target_seed, draft_seed = (int(s) for s in sequence.generate_state(2))
    if key.family == "near":
        eps = NEAR_EPSILONS[key.index % len(NEAR_EPSILONS)]
        target = random_table(key.V, key.L, ALPHA, target_seed)
        draft = TableModel({u: (1.0 - eps) * q + eps / key.V for u, q in target.conditionals.items()})
        return draft, target, eps
    make = {"iid": lambda: random_iid(key.V, ALPHA, target_seed),
            "markov": lambda: random_markov(key.V, ALPHA, target_seed),
            "confident": lambda: random_markov(key.V, ALPHA, target_seed),
            "table": lambda: random_table(key.V, key.L, ALPHA, target_seed)}[key.family]
    mix = float(np.random.default_rng(draft_seed).uniform())
    target = make()
    draft = mixed_draft(target, mix, ALPHA, draft_seed)
    if key.family == "confident":
        token = int(np.random.default_rng(target_seed).integers(key.V))
        draft, target = _first_token(draft, token), _first_token(target, token)
    return draft, target, mix


def reopen(row) -> tuple[ToyModel, ToyModel]:
    """The (draft, target) of a results row (a mapping with ``draft``, ``target``, ``temperature``),
    exactly as the sweep analysed them."""
    T = float(row["temperature"])
    return from_json(row["draft"]).with_temperature(T), from_json(row["target"]).with_temperature(T)
