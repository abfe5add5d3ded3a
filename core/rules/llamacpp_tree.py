"""llama.cpp's stochastic tree verification, as released (ggml-org/llama.cpp,
``examples/speculative/speculative.cpp``, the ``params.sampling.temp > 0`` branch: PR 5625, ported at
007d713 and checked against the PR's own version, whose verification loop is the same;
docs/maths.md, "Released rules, ported").

llama.cpp names the models as this project does (``p_tgt``, ``p_dft``).  Drafting: each drafted
sequence takes the draft's top candidate at every step, and a sequence splits where a further
candidate's probability exceeds ``p_split`` (``cur_p->data[is].id``, the candidates sorted by p): the
sequences are the root-to-leaf paths of a tree of top-k children, which a static tree drafted by
``topk`` fixes here.  Verification, at each depth d from the root, with ``active_seqs`` the set of
sequences (built once per iteration) and ``dist_tgt`` = T = q at the kept sequence's depth-d position:

1. pick a sequence s uniformly from ``active_seqs``; its depth-d token x was drafted at its own
   prefix, whose draft law P = p(·|s_<d) it carries (``drafts[s].dists``);
2. accept x iff r ≤ T(x)/P(x), r uniform on [0, 1): with probability min(1, T(x)/P(x));
3. on acceptance emit x, keep s (its target row gives the next depth's T) and go one depth down;
4. on rejection remove s from ``active_seqs`` and set T ← (T − P)₊ normalised (every rejection);
5. when ``active_seqs`` is empty, emit y ~ T; past the last drafted depth every sequence is removed
   and y ~ q at the kept sequence's last position (the bonus).

Two lines make the released set differ from the one the comments describe, and the port keeps both:
the sequences sharing a rejected token are marked inactive but ``active_seqs.erase(s)`` erases s
again instead of them, so they stay and are picked later (a token rejected once has T(x) = 0 after
the update, so such a pick is rejected for sure, and subtracts P from T once more); and the clean-up
of sequences that disagree with an accepted token is dead code (acceptance breaks out of the loop
before it), so at the next depth sequences of other branches are still picked, tested against the
kept sequence's T with their own P, and may be accepted: the emitted tokens then need not be a path
of the tree, and the target's row for the next depth is the kept sequence's own.  Given the tree,
every step above is a coin of this programme; the exact law follows by enumerating them
(``run_tree``) or, merging equal states, by ``tree_output_law``.

Not modelled: the samplers' truncations (top-k 40, top-p, min-p by default) on either side, and what
a cross-branch acceptance does to the next iteration's context (the kept sequence's KV cache carries
its own tokens, not the emitted ones).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from core.data.coins import Coins, RandomCoins
from core.data.distributions import acceptance_ratio, residual
from core.data.drafting import draft_tree
from core.data.laws import TOPK_LAW
from core.data.nodes import Node
from core.data.outcome import Outcome, Trace
from core.data.shapes import Shape
from core.data.token_tree import TokenTree
from core.rules.base import Verifier


def sequences(tree: TokenTree) -> list[Node]:
    """The drafted sequences: the tree's root-to-leaf paths, sequence 0 the all-top-1 path (llama.cpp's
    first sequence keeps the top candidate at every split)."""
    return tree.leaves()


def rejected(T: np.ndarray, P: np.ndarray) -> np.ndarray:
    """``dist_tgt`` after a rejection: (T − P)₊ normalised.  A rejection needs T(x) < P(x), so T ≠ P and
    the positive part has mass (the fallback T is never used)."""
    return residual(T - P, T)


class LlamacppTree(Verifier):
    """llama.cpp's stochastic verification of its top-candidate tree, sequences in random order."""

    name = "llamacpp_tree"
    short = "llama.cpp tree"
    label = "llama.cpp's stochastic tree verification of top candidates, as released"
    engine = "llama.cpp"
    color = "#335533"  # llama.cpp's colour
    summary = ("At each depth test the drafted sequences in random order, each token with min(1, T/p) against "
               "the real draft probability, updating the target's residual T after every rejection, as "
               "released.")
    source = ("ggml-org/llama.cpp, examples/speculative/speculative.cpp (PR 5625), the temp > 0 verification "
              "at 007d713")
    single_draft = False
    order_invariant = False
    lossless_by_theory = False
    needs_models = False
    closed_form_tau = False
    token_trees = True
    runs_on = (("tree", "topk"),)
    released_port = True

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:  # pragma: no cover - refused
        return self.run_tree(block, coins)

    def run_tree(self, tree: TokenTree, coins: Coins) -> Outcome:
        seqs = sequences(tree)
        active = list(range(len(seqs)))
        trace = Trace()
        emitted: Node = ()
        keep = 0
        for d in range(tree.L):
            T = tree.q[seqs[keep][:d]]
            while active:
                s = active[coins.categorical(np.ones(len(active)))]
                x, P = seqs[s][d], tree.p[seqs[s][:d]]
                prob = acceptance_ratio(T[x], P[x])
                if trace.test(seqs[s][:d + 1], s, prob, coins.bernoulli(prob), "token", p=P[x], T=T[x]):
                    emitted, keep = emitted + (x,), s
                    break
                active.remove(s)
                T = rejected(T, P)
            else:
                return Outcome(emitted, keep if emitted else -1, T, trace)
        return Outcome(emitted, keep, tree.q[seqs[keep]], trace)

    def tree_output_law(self, draft, target, shape: Shape, law) -> tuple[dict[Node, float], int]:
        """The exact law of O on the one tree a ``topk`` law drafts, by the walk of ``run_tree`` with
        equal states merged: at depth d a state is (the sequences left, T), and the law of
        what is emitted from there on is computed once per state.  Returns the law and the states."""
        tree = TokenTree.from_models(_topk_draws(draft.cond, shape), draft.cond, target.cond, shape, TOPK_LAW)
        seqs = sequences(tree)
        L = tree.L

        @lru_cache(maxsize=None)
        def depth(d: int, left: frozenset, keep: int) -> tuple[tuple[Node, float], ...]:
            if d == L:
                return _points(tree.q[seqs[keep]])
            return walk(d, left, tree.q[seqs[keep][:d]].tobytes())

        @lru_cache(maxsize=None)
        def walk(d: int, left: frozenset, T_bytes: bytes) -> tuple[tuple[Node, float], ...]:
            T = np.frombuffer(T_bytes)
            if not left:
                return _points(T)
            out: dict[Node, float] = {}
            for s in sorted(left):
                x, P = seqs[s][d], tree.p[seqs[s][:d]]
                a = acceptance_ratio(T[x], P[x])
                if a > 0:
                    for rest, w in depth(d + 1, left, s):
                        out[(x,) + rest] = out.get((x,) + rest, 0.0) + w * a / len(left)
                if a < 1:
                    for rest, w in walk(d, left - {s}, rejected(T, P).tobytes()):
                        out[rest] = out.get(rest, 0.0) + w * (1 - a) / len(left)
            return tuple(out.items())

        law = dict(depth(0, frozenset(range(len(seqs))), 0))
        return law, depth.cache_info().currsize + walk.cache_info().currsize

    @staticmethod
    def tree_law_cost(V: int, shape: Shape, law) -> float:
        """Seconds, roughly: the states (sequences left, kept one) at each depth, each trying every
        sequence left."""
        n = shape.leaves
        return 2e-5 * shape.L * n * n * 2.0 ** min(n, 40)

    def __repr__(self) -> str:
        return "<verifier llamacpp_tree>"


def _points(T: np.ndarray) -> tuple[tuple[Node, float], ...]:
    return tuple(((int(y),), float(T[y])) for y in np.flatnonzero(T > 0))


def _topk_draws(cond, shape: Shape) -> dict[Node, tuple[int, ...]]:
    """The draws of the one tree the ``topk`` law drafts on ``shape`` (it tosses no coin)."""
    return draft_tree(cond, shape, TOPK_LAW, RandomCoins(0))
