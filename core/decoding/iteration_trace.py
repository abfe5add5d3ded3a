"""What one iteration of speculative decoding records: the draft tree with p and q, the verifier's
tests and quantities, the outcome, and the root's acceptance numbers (docs/maths.md).

``core.decoding.verification.iteration_trace`` fills these; the app draws them and the command line
prints ``IterationTrace.to_dict``.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np

from core.data.shapes import Shape
from core.data.token_tree import TokenTree
from core.data.outcome import Test, Trace
from core.data.nodes import Node


@dataclass
class TreeNodeTrace:
    """One node s of the draft tree: its last token, how many drafts pass through it, the
    probability the draft and the target gave that token (p(s_last|parent), q(s_last|parent)),
    and the top entries of p(·|s) (absent at depth L) and q(·|s)."""

    node: Node
    depth: int
    token: int | None
    multiplicity: int
    p_token: float | None
    q_token: float | None
    p_top: list[tuple[int, float]]
    q_top: list[tuple[int, float]]


@dataclass
class IterationTrace:
    """Everything the app draws for one iteration: the tree (``nodes``: each node's prefix, so
    its parent is the prefix less its last token), the accepted path (``accepted``, a prefix of a
    node), the extra token and the time split (draft, target, verify, cache, other: ``seconds``)."""

    index: int
    position: int                       # context length at the start of the iteration
    draft: str                          # the draft plan (core.decoding.plans), e.g. "chains 4×4, iid"
    law: str                            # the name of the law that drew the tree (at T = 0, topk for wor and greedy)
    drafts: list[list[int]]             # the root-to-leaf paths (the K drafts, for chains)
    nodes: list[TreeNodeTrace]
    tests: list[dict]                   # the verifier's acceptance tests, in order
    quantities: list[dict]              # [{"node": [...], name: value, ...}]
    steps: list[dict]                   # the rule's ordered log (step_traces)
    rejected: list[Node]
    accepted: Node
    accepted_draft: int                 # 0-based, -1 when nothing was accepted
    tau: int
    extra: int
    is_bonus: bool
    residual_top: list[tuple[int, float]]   # the distribution the extra token came from
    expected_tau: float | None              # E[τ | drafts], exact, where the rule has a closed form
    alpha_star_root: float                  # single-token optimum with K drafts at the root (§6)
    acceptance_root: float                  # 1 − TV(p, q) at the root (one draft, one token)
    draft_s: float
    target_s: float
    verify_s: float
    cache_s: float
    other_s: float                      # the iteration's bookkeeping after the commit (as DecodeMetrics' "other")
    block: TokenTree | None = field(default=None, repr=False)

    @property
    def seconds(self) -> dict[str, float]:
        """The iteration's wall-clock split, in the order it ran: draft (proposing), target
        (scoring), verify (the rule), cache (rolling both caches back), other (the rest of the
        loop); per phase, these sum over the iterations to ``DecodeMetrics``' times."""
        return {"draft": self.draft_s, "target": self.target_s, "verify": self.verify_s,
                "cache": self.cache_s, "other": self.other_s}

    @property
    def iteration_s(self) -> float:
        """The iteration's wall-clock seconds: the sum of ``seconds``."""
        return sum(self.seconds.values())

    def edges(self) -> list[dict]:
        """The tree's edges, breadth first, for drawing it: each non-root node with its parent
        (both as token prefixes), its token, p and q of that token at the parent, and whether it
        lies on the accepted path."""
        return [{"parent": n.node[:-1], "node": n.node, "token": n.token, "p": n.p_token, "q": n.q_token,
                 "accepted": self.accepted[:n.depth] == n.node} for n in self.nodes if n.node]

    def to_dict(self, token_text: Callable[[int], str] | None = None) -> dict:
        """Plain lists and numbers (nodes as lists of token ids), without the block; with
        ``token_text``, each node's token and the extra token also get their text."""
        d = asdict(self)
        d.pop("block", None)
        d["accepted"] = list(self.accepted)
        d["rejected"] = [list(s) for s in self.rejected]
        for n in d["nodes"]:
            n["node"] = list(n["node"])
            if token_text is not None and n["token"] is not None:
                n["text"] = token_text(n["token"])
        if token_text is not None:
            d["extra_text"] = token_text(self.extra)
        return d


def tree_from_trace(it, V: int, plan):
    """What the rule read in a decoder ``IterationTrace``, rebuilt from its edges
    (``IterationTrace.edges``) for drawing, and the rule's ``Trace``: a ``TokenTree``: K i.i.d. chains
    (``plan.iid_chains``) from their drafts, any other draft from its draws, with the law that drew it (``it.law``: topk
    for wor and greedy at T = 0), so that its figure tells deterministic children from sampled ones.
    p and q hold the probabilities of the drafted tokens (what the tree shows), the rest is zero; a
    node's draws are its children in the order they were first drawn, each as often as it was drawn.
    The ``TokenTree``'s shape is the plan's for a static plan, else the smallest static tree
    containing this one (``Shape.containing``, as the decoder reads it)."""
    p: dict = {}
    q: dict = {}
    draws: dict = {}
    times = {n.node: n.multiplicity for n in it.nodes}
    for e in it.edges():
        u, t = tuple(e["parent"]), int(e["token"])
        p.setdefault(u, np.zeros(V))[t] = e["p"]
        q.setdefault(u, np.zeros(V))[t] = e["q"]
        draws.setdefault(u, []).extend([t] * times[tuple(e["node"])])
    for n in it.nodes:
        q.setdefault(tuple(n.node), np.zeros(V))
    if plan.iid_chains:
        block = TokenTree.chains(np.asarray(it.drafts, dtype=np.int64), p, q)
    else:
        shape = getattr(plan, "shape", None) or Shape.containing(draws)
        block = TokenTree(shape, it.law, {u: tuple(xs) for u, xs in draws.items()}, p, q)
    trace = Trace(tests=[Test(tuple(t["node"]), int(t["draft"]), float(t["prob"]), bool(t["passed"]), t["kind"])
                         for t in it.tests],
                  quantities={tuple(d["node"]): {k: float(v) for k, v in d.items() if k != "node"}
                              for d in it.quantities},
                  rejected=[tuple(s) for s in it.rejected])
    return block, trace
