"""Step 1, propose: the draft model drafts one iteration's token tree, by the plan's shape and law.

The tree (``core.decoding.device_tree``) grows a level at a time on the models' device, and the draft
model computes p at a level's nodes in ONE call (``CachedLM.level``: one row with tree attention,
or one row per chain in the fallback).  Three plans (``core.decoding.plans``):

* **static** (chains K×L, a tree b; any law): a node of depth d that ``m`` draws reached gets
  m·b_(d+1) draws from its p by the law at that depth (``core.data.laws.law_at``: chains draw by the law at
  the root and i.i.d. below), each law by the drawer it names (``draft_laws.draw_on_device``:
  ``iid`` one token per draw, draws sharing a node i.i.d. from the same vector; the other laws k
  distinct tokens per node in their visit order); draws of the same (parent, token) share one node
  (``DraftTree.add_draws``).  The draft model feeds every node of depth 1..L−1: L calls.
* **rank tree** (any shape, ``topk``): each node's children are the first c tokens of its p in
  rank order (``draft_laws.ranked_top``).  The draft model feeds only the nodes that have
  children: its own tree (``fed``) is the rank tree's inner nodes.
* **dynamic** (EAGLE-2, Li et al. arXiv 2406.16858 §4): candidates are scored by their cumulative
  draft log-probability (the sum of log p along the path).  The root's ``width`` most probable
  children are depth 1's candidates, all expanded (fed to the draft); at each depth d ≥ 2, each
  node expanded at depth d − 1 proposes its ``width`` most probable children as candidates, and
  the ``width`` candidates of highest score are expanded next (while d < depth).  Then the
  ``budget`` candidates of highest score over every depth, ties to the shallower and then to the
  earlier candidate (so a parent, whose score is never lower, always comes before its child, and a
  child of rank r before rank r + 1), form the tree: it is closed under prefixes, and each node's
  children are the first c of its ranked children, a ``topk`` node with k = c.  Candidates of
  probability 0 (score −∞) are never kept.  The draft feeds the expanded nodes only: L calls.

The draft's node vectors, the tree and the draws come to the host at the end in ONE transfer; for
the dynamic tree the tree the target scores is chosen on the device first and built there from the
host's level sizes (no other transfer).  Candidate generation is kept apart from verification, as
in ``transformers.generation``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import numpy as np
import torch

from core.data.shapes import Shape
from core.data.token_tree import TokenTree
from core.data.nodes import Node
from core.decoding import transfer
from core.decoding.cached_lm import CachedLM
from core.data.laws import DraftLaw, law_at
from core.decoding.draft_laws import draw_on_device, ranked_top
from core.decoding.plans import DraftPlan, DynamicPlan, RankTreePlan, StaticPlan
from core.decoding.sampling import SamplingConfig, node_probs
from core.decoding.device_tree import DraftTree, HostTree


@dataclass
class Proposal:
    """One iteration's draft tree: on the device (``tree``, what the target scores) and on the
    host (``host``), the draws at every node that has children (``draws``, in the law's visit
    order), p(·|u) at those nodes (``p``; for chains at every node of depth < L), the law that drew
    them, and ``fed``: for every node, its index in the draft model's own tree (0 = root; −1 for a
    node the draft never fed).  ``drafts`` are the K chains (K, L) for chains."""

    plan: DraftPlan
    law: DraftLaw
    tree: DraftTree
    host: HostTree
    draws: dict[Node, tuple[int, ...]]
    p: dict[Node, np.ndarray]
    fed: np.ndarray
    drafts: np.ndarray | None = None

    @property
    def iid_chains(self) -> bool:
        """K i.i.d. drafts: verified by every rule (``TokenTree.chains``)."""
        return self.plan.iid_chains

    @cached_property
    def shape(self) -> Shape:
        """The plan's shape; for a rank-path or dynamic tree the smallest static tree containing
        this one (b_d = the most children of a node of depth d − 1): the verifiers read only its
        depth and the law per depth, each node's k being its own number of draws."""
        if isinstance(self.plan, StaticPlan):
            return self.plan.shape
        return Shape.containing(self.draws)

    def paths(self) -> list[list[int]]:
        """Every root-to-leaf path of tokens (the drafts, for chains)."""
        if self.drafts is not None:
            return self.drafts.tolist()
        return [list(s) for s in self.host.prefixes[1:] if s not in self.draws]

    def block(self, q: dict[Node, np.ndarray]) -> TokenTree:
        """What the verifier reads, a ``TokenTree`` with the target's q at every node: K i.i.d.
        drafts from their rows (every rule), any other tree from its shape, law and draws."""
        if self.iid_chains:
            return TokenTree.chains(self.drafts, self.p, q)
        return TokenTree(self.shape, self.law, self.draws, self.p, q)

    def draft_path(self, path: Sequence[int]) -> list[int]:
        """The nodes of ``path`` (tree indices) in the draft model's own tree, as far as it fed them."""
        out = []
        for i in path:
            if self.fed[i] <= 0:
                break
            out.append(int(self.fed[i]))
        return out


def _by_parent(prefixes: Sequence[Node], parents: np.ndarray, tokens: np.ndarray) -> dict[Node, tuple[int, ...]]:
    """{node: its draws in order} from draws given as (parent node index, token)."""
    out: dict[Node, list[int]] = {}
    for par, tok in zip(parents.tolist(), tokens.tolist()):
        out.setdefault(prefixes[par], []).append(tok)
    return {u: tuple(xs) for u, xs in out.items()}


class _RankLayout:
    """A rank tree's fixed structure, precomputed once: the nodes in breadth-first order (the
    plan's sorted paths), their parents, the inner nodes the draft feeds, and per depth the index
    tensors that pick each node's token from its parent's ranked top."""

    def __init__(self, plan: RankTreePlan):
        paths = plan.paths
        index = {(): 0} | {p: i + 1 for i, p in enumerate(paths)}
        inner = sorted({p[:-1] for p in paths if len(p) > 1}, key=lambda v: (len(v), v))
        draft_node = {(): 0} | {p: j + 1 for j, p in enumerate(inner)}
        self.fed = np.array([draft_node.get(p, -1) for p in [()] + list(paths)], dtype=np.int64)
        self.L = plan.L
        self.size, self.inner = len(paths) + 1, len(inner) + 1
        self.levels = []
        for d in range(1, self.L + 1):
            level = [p for p in paths if len(p) == d]
            parents_fed = [draft_node[p[:-1]] for p in level]
            first_fed = min(parents_fed)
            inner_here = [i for i, p in enumerate(level) if p in draft_node]
            self.levels.append(dict(
                parents=np.array([index[p[:-1]] for p in level]),
                row=np.array(parents_fed) - first_fed, rank=np.array([p[-1] - 1 for p in level]),
                width=max(p[-1] for p in level), parent_rows=(first_fed, max(parents_fed) + 1),
                inner=np.array(inner_here, dtype=np.int64),
                inner_parents=np.array([draft_node[level[i][:-1]] for i in inner_here], dtype=np.int64)))
        self._levels_on_device: dict = {}

    def on(self, device: torch.device) -> list[dict]:
        """The per-depth index arrays as tensors on ``device`` (made once per device)."""
        if device not in self._levels_on_device:
            self._levels_on_device[device] = [
                {k: torch.as_tensor(v, device=device) if isinstance(v, np.ndarray) else v for k, v in lv.items()}
                for lv in self.levels]
        return self._levels_on_device[device]


class DraftProposer:
    """Drafts each iteration's tree by ``plan`` from the draft model (its ``CachedLM``), sampling
    as ``sampling`` says (at T = 0 the distinct-token laws rank by the draft's softmax at T = 1:
    ``core.decoding.plans``)."""

    def __init__(self, lm: CachedLM, vocab_size: int, sampling: SamplingConfig, plan: DraftPlan):
        self.lm, self.V, self.sampling, self.plan = lm, vocab_size, sampling, plan
        self.law = plan.law_at_temperature(sampling.temperature)
        # the distribution a non-iid law draws from: p itself, or at T = 0 the draft's T = 1 softmax
        self.ranking = sampling if sampling.temperature > 0 else \
            SamplingConfig(1.0, sampling.top_k, sampling.top_p)
        self._layout = _RankLayout(plan) if isinstance(plan, RankTreePlan) else None
        if isinstance(plan, DynamicPlan):       # each candidate's depth, in the candidates' layout
            k = plan.width
            self._depths = np.repeat(np.arange(1, plan.depth + 1), [k] + [k * k] * (plan.depth - 1))
            self._depths_on_device: dict = {}

    def _probs(self, logits: torch.Tensor, law: DraftLaw) -> torch.Tensor:
        return node_probs(logits, self.V, self.ranking if law.distinct else self.sampling)

    def propose(self, context: Sequence[int], generator: torch.Generator) -> Proposal:
        """This iteration's tree after ``context``, each random draw made with ``generator``."""
        if isinstance(self.plan, StaticPlan):
            return self._static(context, generator)
        if isinstance(self.plan, RankTreePlan):
            return self._rank_tree(context)
        return self._dynamic(context)

    # -- chains and static trees, any law ---------------------------------------------------------

    def _static(self, context: Sequence[int], generator: torch.Generator) -> Proposal:
        shape, L = self.plan.shape, self.plan.L
        laws = [law_at(shape, d, self.law) for d in range(L)]
        root = self._probs(self.lm.root(context), laws[0])                           # (1, V)
        device = root.device
        tree = DraftTree(1 + shape.budget, self.V, device, chains=(shape.K, L) if shape.chains else None)
        p = torch.empty((1 + shape.budget, self.V), dtype=torch.float64, device=device)
        p[:1] = root
        arrived = torch.zeros(1, dtype=torch.long, device=device)     # one entry per draw reaching a node
        draw_parents, draw_tokens = [], []
        for d in range(L):
            b = shape.branching[d]
            parents = arrived.repeat_interleave(b)                    # every draw spawns b draws at its node
            tokens = draw_on_device(laws[d], p[arrived], b, generator).reshape(-1)
            arrived = tree.add_draws(parents, tokens)
            draw_parents.append(parents)
            draw_tokens.append(tokens)
            if d < L - 1:
                lo, hi = tree.levels[d + 1]
                p[lo:hi] = self._probs(self.lm.level(context, tree, lo, hi), laws[d + 1])
        inner = tree.levels[L - 1][1]                                 # the nodes of depth < L
        extra = (tree.chains,) if tree.chains is not None else ()
        p_host, parents, tokens, d_par, d_tok, *chains = transfer.to_host(
            p[:inner], tree.parents[:tree.size], tree.tokens[:tree.size], torch.cat(draw_parents),
            torch.cat(draw_tokens), *extra)
        host = HostTree.build(tree, parents, tokens, chains[0] if chains else None)
        fed = np.where(np.arange(tree.size) < inner, np.arange(tree.size), -1)
        return Proposal(self.plan, self.law, tree, host, _by_parent(host.prefixes, d_par, d_tok),
                        {host.prefixes[i]: p_host[i] for i in range(inner)}, fed,
                        tokens[chains[0]] if chains else None)

    # -- a rank-path tree (Sequoia's), topk ---------------------------------------------------------

    def _rank_tree(self, context: Sequence[int]) -> Proposal:
        layout = self._layout
        root = self._probs(self.lm.root(context), self.law)
        device = root.device
        levels = layout.on(device)
        fed = DraftTree(layout.inner, self.V, device)
        tree = DraftTree(layout.size, self.V, device)
        p = torch.empty((layout.inner, self.V), dtype=torch.float64, device=device)
        p[:1] = root
        for d, lv in enumerate(levels, start=1):
            a, b = lv["parent_rows"]
            tokens = ranked_top(p[a:b], lv["width"])[lv["row"], lv["rank"]]
            tree.add_level(lv["parents"], tokens)
            if d < layout.L and lv["inner"].numel():
                lo, hi = fed.add_level(lv["inner_parents"], tokens[lv["inner"]])
                p[lo:hi] = self._probs(self.lm.level(context, fed, lo, hi), self.law)
        p_host, parents, tokens = transfer.to_host(p, tree.parents[:tree.size], tree.tokens[:tree.size])
        host = HostTree.build(tree, parents, tokens)
        return self._tree_proposal(tree, host, p_host, layout.fed)

    def _tree_proposal(self, tree: DraftTree, host: HostTree, p_host: np.ndarray, fed: np.ndarray) -> Proposal:
        """A topk tree whose nodes' children are listed in rank order, breadth first."""
        draws = _by_parent(host.prefixes, host.parents[1:], host.tokens[1:])
        p = {u: p_host[fed[host.index[u]]] for u in draws}
        return Proposal(self.plan, self.law, tree, host, draws, p, fed)

    # -- EAGLE-2's dynamic tree -------------------------------------------------------------------

    def _dynamic(self, context: Sequence[int]) -> Proposal:
        plan, V = self.plan, self.V
        k, L, n = plan.width, plan.depth, plan.budget
        root = self._probs(self.lm.root(context), self.law)
        device = root.device
        long = dict(dtype=torch.long, device=device)
        C = plan.candidates
        fed = DraftTree(1 + k * (L - 1), V, device)
        p = torch.empty((1 + k * (L - 1), V), dtype=torch.float64, device=device)
        p[:1] = root
        token = torch.empty(C, **long)
        score = torch.empty(C, dtype=torch.float64, device=device)
        parent = torch.full((C,), -1, **long)                       # the parent's candidate index (−1: root)
        draft_node = torch.full((C + 1,), -1, **long)               # candidate + 1 -> draft node (0: root)
        draft_node[0] = 0
        top = ranked_top(root, k)[0]
        token[:k], score[:k] = top, root[0, top].log()
        expanded = torch.arange(k, **long)                          # depth 1: every candidate
        for d in range(2, L + 1):
            lo, hi = fed.add_level(draft_node[parent[expanded] + 1], token[expanded])
            draft_node[expanded + 1] = torch.arange(lo, hi, **long)
            p[lo:hi] = self._probs(self.lm.level(context, fed, lo, hi), self.law)
            children = ranked_top(p[lo:hi], k)                      # (k, k), rank order
            base = k + (d - 2) * k * k
            token[base:base + k * k] = children.reshape(-1)
            score[base:base + k * k] = (score[expanded][:, None] + p[lo:hi].gather(-1, children).log()).reshape(-1)
            parent[base:base + k * k] = expanded.repeat_interleave(k)
            if d < L:                                               # the k best of this depth, ties in order
                best = torch.sort(-score[base:base + k * k], stable=True).indices[:k]
                expanded = base + best
        # the budget: the n best candidates, ties to the earlier (shallower, then rank order)
        chosen = torch.sort(-score, stable=True).indices[:n]
        key = torch.where(torch.isfinite(score[chosen]), chosen, chosen + C).sort().values
        kept = key < C                                              # probability-0 candidates last
        chosen_in_order = torch.where(kept, key, key - C)
        position = torch.zeros(C + 1, **long)
        position[chosen_in_order + 1] = torch.arange(1, chosen_in_order.numel() + 1, **long)
        chosen_parent = position[parent[chosen_in_order] + 1]
        if device not in self._depths_on_device:
            self._depths_on_device[device] = torch.as_tensor(self._depths, device=device)
        depth = self._depths_on_device[device][chosen_in_order]
        chosen_tokens = token[chosen_in_order]
        p_host, host_tokens, host_parents, host_depths, host_kept, host_draft_nodes = transfer.to_host(
            p, chosen_tokens, chosen_parent, depth, kept, draft_node[chosen_in_order + 1])
        n_kept = int(host_kept.sum())
        tree = DraftTree(1 + n_kept, V, device)
        start = 0
        for count in np.bincount(host_depths[:n_kept], minlength=L + 1)[1:]:
            if count:
                tree.add_level(chosen_parent[start:start + count], chosen_tokens[start:start + count])
                start += count
        parents = np.concatenate([[-1], host_parents[:n_kept]])
        tokens = np.concatenate([[-1], host_tokens[:n_kept]])
        host = HostTree.build(tree, parents, tokens)
        return self._tree_proposal(tree, host, p_host, np.concatenate([[0], host_draft_nodes[:n_kept]]))
