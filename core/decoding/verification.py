"""Step 3, verify: the proposal and the scores become what the rule reads (a ``TokenTree``: K
i.i.d. drafts, or any other shape and law), a ``core.rules`` rule turns it into an
accepted prefix s and an extra token y, and the iteration's trace is built from both.

The seeded generator that drew the drafts also drives the rule, so a run replays exactly.  The trace
keeps the top ``TRACE_TOP`` entries of each distribution, E[τ | drafts] where the rule has a closed
form, at the root the single-token optimum α* with K drafts (docs/maths.md) and 1 − TV(p, q), and the
rule's ordered log of steps (``step_traces``: a traversal rule's walk, node by node).
"""
from __future__ import annotations

import numpy as np

from core.bounds import single_token_optimum
from core.data.outcome import Verdict
from core.data.token_tree import TokenTree
from core.data.nodes import Node
from core.decoding.proposal import Proposal
from core.decoding.iteration_trace import IterationTrace, TreeNodeTrace
from core.rules.base import Verifier

#: Top entries kept for each distribution in a trace.
TRACE_TOP = 8


def verify(verifier: Verifier, proposal: Proposal, q: dict[Node, np.ndarray],
           rng: np.random.Generator) -> tuple[TokenTree, Verdict]:
    """What the rule reads (``Proposal.block``, a ``TokenTree``), and the rule's verdict on it."""
    block = proposal.block(q)
    return block, verifier.verify(block, rng)


def root_acceptance(block: TokenTree) -> float:
    """1 − TV(p, q) = Σ_x min(p(x|c), q(x|c)) at the root c: one draft's chance to pass one token."""
    return float(np.minimum(block.p[()], block.q[()]).sum())


def top_entries(vec: np.ndarray, k: int = TRACE_TOP) -> list[tuple[int, float]]:
    """The k largest entries of a distribution as (token id, probability), largest first (ties by
    token id), zeros left out."""
    k = min(k, vec.size)
    idx = np.argpartition(-vec, k - 1)[:k]
    idx = idx[np.lexsort((idx, -vec[idx]))]
    return [(int(i), float(vec[i])) for i in idx if vec[i] > 0]


def node_traces(block: TokenTree) -> list[TreeNodeTrace]:
    """Every node of the draft tree, by depth, with its token's p and q and their top entries."""
    nodes = []
    for s in block.nodes():
        parent = s[:-1]
        nodes.append(TreeNodeTrace(
            node=s, depth=len(s), token=s[-1] if s else None, multiplicity=block.multiplicity(s),
            p_token=float(block.p[parent][s[-1]]) if s else None,
            q_token=float(block.q[parent][s[-1]]) if s else None,
            p_top=top_entries(block.p[s]) if s in block.p else [], q_top=top_entries(block.q[s])))
    return nodes


def step_traces(steps, accepted: Node) -> list[dict]:
    """A rule's ``Trace.steps`` as plain dicts, in order: {"node": [...], "event": ..., its values}.

    For the traversal rules that is the walk itself: 'enter' a node (w, k, OTV's order), 'visit' a
    child (its weight w, S(c), T(c), multiplicity; here also "accepted", whether the accepted
    prefix runs through it, i.e. whether its subtree passed), 'residual' after a rejected child
    (w', A, and T' as "vector_top", its top entries; the whole vector stays with the rule).  The
    acceptance tests themselves are ``tests``: a leaf's comes right after its 'visit', an inner
    node's after its last 'residual'.
    """
    out = []
    for st in steps:
        d = dict(node=list(st.node), event=st.event, **st.values)
        if st.event == "visit":
            d["accepted"] = tuple(accepted[:len(st.node)]) == st.node
        if st.vector is not None:
            d["vector_top"] = top_entries(st.vector)
        out.append(d)
    return out


def iteration_trace(verifier: Verifier, proposal: Proposal, block: TokenTree,
                    verdict: Verdict, *, index: int, position: int,
                    seconds: tuple[float, float, float, float, float], keep_block: bool) -> IterationTrace:
    """The trace of iteration ``index`` started at context length ``position``; ``seconds`` are
    its (draft, target, verify, cache, other) wall-clock times."""
    tr = verdict.trace
    residual = np.asarray(verdict.residual, dtype=np.float64)
    residual = residual / residual.sum()
    # only a closed form: enumerating a rule's coins every iteration would cost more than decoding
    expected = verifier.expected_tau(block) if verifier.closed_form_tau else None
    p0, q0 = block.p[()], block.q[()]
    draft_s, target_s, verify_s, cache_s, other_s = seconds
    root_draws = len(proposal.draws[()]) if () in proposal.draws else block.K
    return IterationTrace(
        index=index, position=position, draft=proposal.plan.label, law=proposal.law.name,
        drafts=proposal.paths(), nodes=node_traces(block),
        tests=[dict(node=list(t.node), draft=t.draft, prob=t.prob, passed=t.passed, kind=t.kind)
               for t in tr.tests],
        quantities=[dict(node=list(s), **vals) for s, vals in tr.quantities.items()],
        steps=step_traces(tr.steps, tuple(verdict.accepted)),
        rejected=list(tr.rejected), accepted=tuple(verdict.accepted),
        accepted_draft=int(verdict.draft), tau=verdict.tau, extra=int(verdict.extra),
        is_bonus=bool(verdict.is_bonus), residual_top=top_entries(residual),
        expected_tau=None if expected is None else float(expected),
        alpha_star_root=single_token_optimum(p0, q0, root_draws),
        acceptance_root=root_acceptance(block),
        draft_s=draft_s, target_s=target_s, verify_s=verify_s, cache_s=cache_s, other_s=other_s,
        block=block if keep_block else None)
