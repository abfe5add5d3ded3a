"""Thomas, Kitanovski, Goldblum & Pal, "Dynamic delayed tree expansion for improved multi-path
speculative decoding" (arXiv 2602.16994): (a) traversal verification dominates the
optimal-transport (OT) verifiers; (b) OT verifiers gain near the root of the draft tree, while
multi-draft gains matter deeper; (c) delaying the i.i.d. branching point (a single path, then K
branches: the static tree b = (1, …, 1, K, 1, …)) keeps the target law and improves on branching at
the root.

The OT verifiers here are the per-node couplings: SpecTr (``spectr``), SpecInfer (``specinfer``,
``rrs`` on a tree) and the best top-down coupling of Khisti et al. and Hu et al. (``td_optimal``)
with the top of its acceptance-optimal range.  Gain by depth (``core.analysis.depth_gain``): the
conditional acceptance a_d = P(τ ≥ d)/P(τ ≥ d − 1) of a rule minus SD's at each depth d.
"""
from __future__ import annotations

from core.analysis.depth_gain import conditional_gain
from core.analysis.exact import LOSSLESS_TOL, exact_analysis
from core.claims.base import GENERIC, PREMISE, Claim, Family, Instance, Source, Trial, trial_check
from core.data.laws import IID_LAW
from core.data.shapes import Shape

SOURCE = Source("delayed-expansion", "Thomas, Kitanovski, Goldblum & Pal, Dynamic delayed tree expansion",
                "arXiv 2602.16994, §4-§5", "https://arxiv.org/abs/2602.16994")
OT_RULES = ("spectr", "specinfer", "td_optimal")


def delayed_tree(K: int, L: int, at: int = 1) -> tuple[int, ...]:
    """b = (1, …, 1, K, 1, …, 1) of depth L: one path for ``at`` tokens, then K i.i.d. branches."""
    if not 1 <= at < L:
        raise ValueError(f"the branching depth must lie in 1..{L - 1}, got {at}")
    return (1,) * at + (K,) + (1,) * (L - at - 1)


def dominance_trial(draft, target, K: int, L: int, rules: tuple[str, ...] = OT_RULES) -> Trial:
    """Traversal's exact E[τ] against each OT verifier's in ``rules`` (with td_optimal, the top of its
    acceptance-optimal range)."""
    trav = exact_analysis("traversal", draft, target, K, L).expected_accepted
    ot = {m: exact_analysis(m, draft, target, K, L) for m in rules}
    values = {m: r.expected_accepted for m, r in ot.items()}
    if "td_optimal" in ot:
        values["td_optimal range max"] = float(ot["td_optimal"].extras["acceptance_optimal_range"][1])
    best = max(values, key=values.get)
    margin = trav - values[best]
    return Trial(margin >= -LOSSLESS_TOL, margin,
                 {"traversal": trav, **values, "best_ot": best, "traversal_minus_best_ot": margin})


def deployed_dominance_trial(draft, target, K: int, L: int) -> Trial:
    """``dominance_trial`` against SpecTr and SpecInfer only, the OT verifiers deployed as such."""
    return dominance_trial(draft, target, K, L, ("spectr", "specinfer"))


def root_gain_trial(draft, target, K: int, L: int, rule: str = "specinfer") -> Trial:
    """The OT rule's conditional acceptance gain over SD by depth; holds when it is largest at d = 1."""
    gain = conditional_gain(exact_analysis(rule, draft, target, K, L), exact_analysis("sd", draft, target, 1, L))
    deeper = max(gain[1:])
    return Trial(gain[0] >= deeper - LOSSLESS_TOL, gain[0] - deeper,
                 {"rule": rule, "gain_by_depth": [float(g) for g in gain]})


def deeper_gain_trial(draft, target, K: int, L: int, rule: str = "specinfer") -> Trial:
    """Traversal's conditional acceptance gain over the OT ``rule`` by depth; holds when it is larger
    at some depth d ≥ 2 than at the root (the multi-draft gain lies deeper)."""
    gain = conditional_gain(exact_analysis("traversal", draft, target, K, L), exact_analysis(rule, draft, target, K, L))
    deeper = max(gain[1:])
    return Trial(deeper >= gain[0] - LOSSLESS_TOL, deeper - gain[0],
                 {"against": rule, "gain_by_depth": [float(g) for g in gain]})


def delayed_lossless_trial(draft, target, K: int, L: int) -> Trial:
    """The largest TV from q of rrs and traversal on every delayed tree of depth L."""
    tvs = {f"{m} b={','.join(map(str, delayed_tree(K, L, at)))}":
           exact_analysis(m, draft, target, shape=Shape.tree(delayed_tree(K, L, at)), law=IID_LAW).fidelity_tv
           for m in ("rrs", "traversal") for at in range(1, L)}
    worst = max(tvs, key=tvs.get)
    return Trial(tvs[worst] <= LOSSLESS_TOL, LOSSLESS_TOL - tvs[worst], {"worst": worst, "fidelity_tv": tvs[worst]})


def same_budget_tree(K: int, L: int) -> tuple[int, ...]:
    """The delayed tree (1, K', 1, …) drafting as many tokens as K chains of length L:
    1 + K'·(L − 1) = K·L, so K' = (K·L − 1)/(L − 1), a whole number at L = 2 (K' = 2K − 1)."""
    branches, rest = divmod(K * L - 1, L - 1)
    if rest:
        raise ValueError(f"no delayed tree drafts exactly {K * L} tokens at depth {L}")
    return delayed_tree(branches, L)


def delayed_beats_root_trial(draft, target, K: int, L: int, rule: str = "rrs") -> Trial:
    """E[τ] of ``rule`` on the delayed tree of the same budget (``same_budget_tree``) against K i.i.d.
    chains branching at the root; the delayed tree with the same K leaves, (1, K, 1, …), beside."""
    def value(shape: Shape) -> float:
        return exact_analysis(rule, draft, target, shape=shape, law=IID_LAW).expected_accepted

    b = same_budget_tree(K, L)
    delayed, root = value(Shape.tree(b)), value(Shape.chains_of(K, L))
    return Trial(delayed >= root - LOSSLESS_TOL, delayed - root,
                 {"rule": rule, "delayed_tree": ",".join(map(str, b)), "delayed": delayed, "root": root,
                  "budget": K * L, "same_K_delayed": value(Shape.tree(delayed_tree(K, L)))})



def _trees(K: int, L: int) -> dict:
    return {"page": "trees", "b": delayed_tree(K, L), "law": IID_LAW.name}


TOY = dict(preset="binary-toy")
#: The source's premise for delaying the branching point: a first token the draft and the target
#: agree on with confidence (the sweep's ``confident`` family, V = 3 Markov pairs).
PREMISE_WORDS = ("a first token that draft and target share with probability 0.96 (V = 3 Markov pairs, random "
                 "transitions)")


def premise(**grid) -> Family:
    """The source's premise as a family: ``confident`` pairs at V = 3."""
    return Family(("confident",), Vs=(3,), regime=PREMISE, premise=PREMISE_WORDS, **grid)


def generic(**grid) -> Family:
    """A generic family beside the premise: seeded random i.i.d. and Markov pairs."""
    return Family(("iid", "markov"), Vs=(2, 3), regime=GENERIC, **grid)


def in_both_regimes(id: str, statement: str, computed: str, trial, grid: dict, n_premise: int, n_generic: int,
                    **kw) -> tuple[Claim, Claim]:
    """A claim of the source decided in its premise's regime first (key ``ID-premise``), then on a
    generic family (key ``ID``); ``computed`` says "{of}" where the premise is named."""
    return (Claim(f"{id}-premise", SOURCE, statement, computed.format(of=" of the source's premise"),
                  family=premise(n=n_premise, **grid), trial=trial, **kw),
            Claim(id, SOURCE, statement, computed.format(of=""), family=generic(n=n_generic, **grid), trial=trial, **kw))


CLAIMS = (
    Claim("traversal-dominates", SOURCE,
          "Traversal verification accepts at least as many tokens as every optimal-transport verifier.",
          "Traversal's exact E[τ] against SpecTr's, SpecInfer's, td_optimal's and the top of td_optimal's "
          "acceptance-optimal range, K = 2, L = 2, on the binary toy.",
          instance=Instance(2, 2, methods=("traversal", *OT_RULES), **TOY), check=trial_check(dominance_trial)),
    Claim("traversal-dominates-family", SOURCE,
          "Traversal verification dominates the optimal-transport verifiers across instances.",
          "As above, on each seeded instance; the worst margin of traversal over the best OT verifier.",
          family=Family(("iid", "markov"), Vs=(2, 3), Ks=(2,), Ls=(2,), n=3), trial=dominance_trial,
          methods=("traversal", *OT_RULES)),
    Claim("traversal-dominates-spectr-specinfer", SOURCE,
          "Traversal verification accepts at least as many tokens as SpecTr and SpecInfer.",
          "Traversal's exact E[τ] against SpecTr's and SpecInfer's on each seeded instance, K = 2 and 3, L = 2.",
          family=Family(("iid", "markov"), Vs=(2, 3), Ks=(2, 3), Ls=(2,), n=4), trial=deployed_dominance_trial,
          methods=("traversal", "spectr", "specinfer")),
    *in_both_regimes(
        "ot-gain-at-root", "Optimal-transport verifiers gain most near the root of the draft tree.",
        "SpecInfer's conditional acceptance P(τ ≥ d)/P(τ ≥ d − 1) minus SD's, d = 1..L, on each seeded "
        "instance{of} (K = 2, L = 3): holds where the gain is largest at d = 1.",
        root_gain_trial, dict(Ks=(2,), Ls=(3,)), 10, 4,
        methods=("sd", "specinfer", "traversal"), opens=lambda K, L: {"section": "depth"}),
    *in_both_regimes(
        "traversal-gains-deeper",
        "Multi-draft gains beyond the optimal-transport verifiers lie deeper in the tree than the root.",
        "Traversal's conditional acceptance minus SpecInfer's, d = 1..L, on each seeded instance{of} (K = 2, "
        "L = 3): holds where some depth d ≥ 2 gains more than d = 1.",
        deeper_gain_trial, dict(Ks=(2,), Ls=(3,)), 10, 4,
        methods=("sd", "specinfer", "traversal"), opens=lambda K, L: {"section": "depth"}),
    Claim("delayed-lossless", SOURCE,
          "Delaying the branching point keeps the target distribution.",
          "The TV from q of rrs and traversal on every tree b = (1, …, K, …, 1) of depth L = 3, K = 2, on each "
          "seeded instance.",
          family=Family(("iid", "markov"), Vs=(2, 3), Ks=(2,), Ls=(3,), n=3), trial=delayed_lossless_trial,
          opens=_trees),
    *in_both_regimes(
        "delayed-beats-root", "Delaying the branching point improves on K i.i.d. rollouts from the root.",
        "SpecInfer's (rrs) exact E[τ] on the tree b = (1, 3) against K = 2 chains from the root, both drafting 4 "
        "tokens at L = 2, on each seeded instance{of} (the tree (1, 2) with the same K beside).",
        delayed_beats_root_trial, dict(Ks=(2,), Ls=(2,)), 20, 4,
        opens=lambda K, L: {"page": "trees", "b": same_budget_tree(K, L), "law": IID_LAW.name}),
)
