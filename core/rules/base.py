"""The one interface every verification rule implements (the registry is ``core.rules.registry``).

A rule is a *coin program*: ``run(block, coins) -> Outcome`` makes all its random choices through
``coins``; ``block`` is a ``TokenTree``: K i.i.d. drafts for every rule, a tree of any shape and law
for the rules with ``token_trees``.  ``verify`` runs it with seeded coins and draws the extra
token; ``law`` runs it over every coin outcome (``core.data.coins.enumerate_outcomes``) and returns
the exact conditional law of the output O = (s, y) given the drafts.  One implementation serves
sampling and exact analysis.
"""
from __future__ import annotations

from collections import defaultdict
from typing import ClassVar

import numpy as np

from core.errors import ExplorerError

from core.data.coins import Coins, RandomCoins, TooManyOutcomes, enumerate_outcomes
from core.data.laws import DraftLaw, get_law, is_iid_chains
from core.data.shapes import Shape
from core.data.token_tree import TokenTree
from core.data.outcome import Outcome, Verdict
from core.data.nodes import Node


class VerifierError(ExplorerError, ValueError):
    """A verifier cannot run on this input (e.g. a model-dependent rule without its model)."""


#: How ``runs_on_words`` names each shape of a ``Verifier.runs_on`` pair: ``one-chain`` is one chain
#: of L tokens (every node one child), as chains 1×L or the tree (1, …, 1).
SHAPE_WORDS = {"any": "chains and static trees", "chains": "chains", "tree": "static trees",
               "one-chain": "one chain"}


def runs_on_drafts(pairs: tuple[tuple[str, str], ...], shape: Shape, law: DraftLaw | str) -> bool:
    """Whether drafts of ``shape`` and ``law`` are among ``pairs`` (``Verifier.runs_on``)."""
    name = get_law(law).name
    kinds = {"any", "chains" if shape.chains else "tree"}
    if all(b == 1 for b in shape.branching):
        kinds.add("one-chain")
    if any(s in kinds and l == name for s, l in pairs):
        return True
    return is_iid_chains(shape, law) and any(l == "iid" and s in ("any", "chains") for s, l in pairs)


def runs_on_words(pairs: tuple[tuple[str, str], ...]) -> str:
    """``Verifier.runs_on`` in words, the laws of one shape together: "chains and static trees drafted
    by iid or wor, and static trees drafted by topk".

    >>> runs_on_words((("any", "iid"), ("any", "wor"), ("tree", "topk")))
    'chains and static trees drafted by iid or wor, and static trees drafted by topk'
    >>> runs_on_words((("chains", "iid"), ("one-chain", "topk")))
    'K i.i.d. chains, and one chain drafted by topk'
    """
    laws: dict[str, list[str]] = {}
    for s, l in pairs:
        laws.setdefault(s, []).append(l)
    parts = ["K i.i.d. chains" if (s, ls) == ("chains", ["iid"]) else f"{SHAPE_WORDS[s]} drafted by {' or '.join(ls)}"
             for s, ls in laws.items()]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + ", and " + parts[-1]


class Verifier:
    """Base class.  A concrete rule sets every class attribute below and implements ``run``.

    A rule is one module: everything the library, the command line and the pages say about it is
    read from these attributes (``tests/test_rules_metadata.py`` checks that each one is set).
    """

    # What it is called and how it is shown.
    name: ClassVar[str]     # registry key and command-line name, e.g. "bv"
    short: ClassVar[str]    # legend name, e.g. "BV"
    label: ClassVar[str]    # what the short name stands for, never repeating it: "block verification"
    color: ClassVar[str]    # "#rrggbb", the rule's colour on every page: unique, colour-blind safe (docs/app.md)
    #: The serving engine whose released code the rule is ported from ("" for a paper's rule): the
    #: rules of one engine share its colour, and their markers tell them apart (docs/app.md).
    engine: ClassVar[str] = ""
    summary: ClassVar[str]  # one sentence saying what the rule does
    source: ClassVar[str]   # where it comes from: paper(s), or "derived in this project"

    # What it needs and what it promises.
    single_draft: ClassVar[bool]        # uses draft 0 only, whatever K is
    order_invariant: ClassVar[bool]     # law of O depends on the drafts only as a multiset
    lossless_by_theory: ClassVar[bool]  # a hypothesis; exact analysis measures it
    needs_models: ClassVar[bool]        # built from the toy models themselves: unusable by the real decoder
    closed_form_tau: ClassVar[bool]     # ``expected_tau`` is a closed form, not an enumeration of coins
    #: At T = 0 (draft and target one-hot) the rule's output is the target's greedy decoding, as every
    #: rule that tests against q's argmax gives; False for a rule that tests against another law there.
    greedy_is_target: ClassVar[bool] = True

    #: What drafts it is defined on: True for every shape and draft law (``core.data.shapes``,
    #: ``core.data.laws``; ``run_tree`` then reads any ``TokenTree``, and the rule may have the
    #: model-level ``tree_output_law(draft, target, shape, law)`` and ``tree_law_cost(V, shape,
    #: law)``), False for K i.i.d. chains only (a tree whose ``iid_chains`` is True).  ``supports``
    #: and ``core.rules.registry.require`` read it, and so do the command line and the pages.
    token_trees: ClassVar[bool] = False
    #: Where a rule runs on some token trees but not on all (a released port runs on the drafts its
    #: engine makes): (shape, law name) pairs, the shape ``"chains"``, ``"tree"`` (a static tree b),
    #: ``"one-chain"`` (every node one child) or ``"any"``, e.g. ``(("any", "iid"), ("tree", "topk"))``; () for a rule whose ``token_trees``
    #: says it all.  A rule listing ``iid`` on chains also takes every other way of writing K i.i.d.
    #: drafts (``is_iid_chains``).  ``supports``, the refusal (``core.rules.registry.require``:
    #: ``runs_on_words``) and the pages' lists of rules read it.
    runs_on: ClassVar[tuple[tuple[str, str], ...]] = ()

    #: How its trace replays step by step (``pages/one_step.py`` reads it): "tests" (its acceptance
    #: tests in order), "block" (block verification along one path at a time, each test with its
    #: numbers: ``core.rules.block.block_verify``), "leaf-to-root" (the traversal recursion's enter,
    #: visit and residual steps: ``core.rules.traversal_walk``), "rounds" (on a token tree, one round
    #: per child tested, with S_i and T: ``core.rules.specinfer.rrs_walk``).
    walk: ClassVar[str] = "tests"

    #: How the rule works, as the step page teaches it above its replay (Markdown, "" for none): on K
    #: i.i.d. chains, how each test's probability is computed, or how its walk goes ("leaf-to-root").
    how: ClassVar[str] = ""
    #: How its walk goes on a token tree ("leaf-to-root", and "rounds", whose replay on K i.i.d.
    #: chains is that of their token tree); "" for a rule whose replay on a tree has no such text.
    how_on_trees: ClassVar[str] = ""
    #: For a "block" walk: the symbol of the law its tests divide by, p or a selected draft's p*.
    tested_law: ClassVar[str] = "p"
    #: For a "block" walk: True when it moves from draft to draft carrying the residual T the drafts
    #: before left at the node it stands at (RBV), against which a draft's first token is tested.
    carries_residual: ClassVar[bool] = False

    #: True for the rule that samples the optimal LP's plan: it costs what that LP costs
    #: (``core.bounds.lp_size``, ``tree_lp_size``), which a page prices before it runs the rule.
    optimal_lp: ClassVar[bool] = False

    #: The rule's own parameters, keyword parameters of its constructor, each declared as a
    #: ``core.rules.params.Param`` (name, type, default, one line of help, the values it takes):
    #: ``make_verifier`` checks them, the command line sets them (``--param NAME=VALUE``), the pages
    #: show them as controls and a link, a sweep and a claim record them.  A bare name is the older
    #: form (its default and type are the constructor's).  () for a rule without any.
    parameters: ClassVar[tuple] = ()

    #: Whether the rule is ported from a released code base (its repository and commit are in
    #: ``source``) rather than from a paper's algorithm.  ``exact --method all`` on --K/--L alone and a
    #: sweep's default rules (``core.sweep.config.default_methods``) compare the papers' rules on K
    #: i.i.d. drafts; a released port runs by name, is audited by its claims (``core.claims``), and is
    #: listed by ``exact --method all`` with --tree or --law.
    released_port: ClassVar[bool] = False

    #: Why the rule can accept fewer tokens than SD, the one-draft baseline, where that is so by its
    #: construction ("" for a rule that never does): the pages say it beside the rule's value where it
    #: sits below SD's.
    below_baseline: ClassVar[str] = ""

    #: False lets a rule skip work that only fills its trace (best-of-K then computes A and h only
    #: at the nodes BV's coins reach, each other node costing a vocabulary sort).  The decoder sets
    #: it when it keeps no traces; the law and the random stream are the same either way.
    complete_trace: bool = True

    @classmethod
    def supports(cls, shape: Shape, law: DraftLaw | str) -> bool:
        """Whether the rule is defined on drafts of this shape and law (``runs_on``, else
        ``token_trees``)."""
        if cls.runs_on:
            return runs_on_drafts(cls.runs_on, shape, law)
        return cls.token_trees or is_iid_chains(shape, law)

    def run(self, block: TokenTree, coins: Coins) -> Outcome:
        """The rule's coin program on the drafts: the drafts name the rule's program for them
        (``block.program_of``: ``run_chains`` on K i.i.d. drafts, ``run_tree`` on any other tree),
        so no rule asks what it was given."""
        return block.program_of(self)(block, coins)

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:  # pragma: no cover - abstract
        """The coin program on K i.i.d. drafts of length L (every rule)."""
        raise NotImplementedError

    def run_tree(self, tree: TokenTree, coins: Coins) -> Outcome:
        """The coin program on a token tree of any shape and law (the rules with ``token_trees``)."""
        raise VerifierError(f"{self.name} is defined on K i.i.d. chains only, not on a token tree of "
                            f"{tree.shape.label} drafted by {tree.law.name}")

    def verify(self, block: TokenTree, rng: np.random.Generator | int) -> Verdict:
        """One seeded verification step: the accepted sub-block, its draft, the extra token."""
        return self._verified(block, block.program_of(self), rng)

    def verify_tree(self, tree: TokenTree, rng: np.random.Generator | int) -> Verdict:
        """``verify`` by the rule's token-tree programme (``run_tree``) whatever the tree, K i.i.d.
        drafts included: there it replays them as their token tree (rrs round by round)."""
        return self._verified(tree, self.run_tree, rng)

    def _verified(self, block: TokenTree, program, rng: np.random.Generator | int) -> Verdict:
        coins = RandomCoins(rng)
        out = program(block, coins)
        extra = coins.categorical(out.residual)
        return Verdict(out.accepted, out.draft, extra, out.residual, out.tau == block.L, out.trace)

    def law(self, block: TokenTree, program=None) -> dict[tuple[Node, int], float]:
        """Exact P(O = (s, y) | drafts), summed over every internal coin, of the drafts' programme
        (``program_of``) or of the one given (``run_tree`` replays K i.i.d. chains as their tree)."""
        law: dict[tuple[Node, int], float] = defaultdict(float)
        run = program or block.program_of(self)
        for prob, out in enumerate_outcomes(lambda coins: run(block, coins)):
            residual = out.residual / out.residual.sum()
            for y in np.flatnonzero(residual > 0):
                law[(out.accepted, int(y))] += prob * float(residual[y])
        return dict(law)

    def expected_tau(self, block: TokenTree, max_leaves: int = 4096) -> float | None:
        """E[τ | drafts], exactly, by enumerating the internal coins; None when there are more than
        ``max_leaves`` coin outcomes.  Rules with a closed form override this and set
        ``closed_form_tau``."""
        run = block.program_of(self)
        try:
            leaves = enumerate_outcomes(lambda coins: run(block, coins), max_leaves)
        except TooManyOutcomes:
            return None
        return float(sum(prob * out.tau for prob, out in leaves))

    def advance(self, output: Node) -> "Verifier":
        """The rule for the next iteration, after this one emitted ``output`` (s·y): the rule itself,
        for a rule without state across iterations (every registered rule).  A rule with state returns
        a new instance that carries it; the decoder and the exact law of the generated stream
        (``core.analysis.compensation.iterate_exact``, the court's stream verdict) follow it."""
        return self

    def fallback_mass(self, draft, target, K: int, L: int) -> float:
        """P(the extra token is drawn from q(·|s) because the rule's residual has no positive mass).

        That fallback is this project's choice, not the rule's.  For a lossless rule the residual
        is positive wherever it is drawn with positive probability, so the mass is 0; rules that
        can reach an empty residual (SpecTr-GBV) override this with the exact mass on toy models.
        """
        return 0.0

    def summary_extras(self, draft, target, K: int, L: int) -> dict:
        """Fields that only this rule adds to an exact analysis's summary (``ExactResult.summary``),
        e.g. ``td_optimal``'s range over acceptance-optimal plans; {} for every other rule, whose
        summary then stays as it was."""
        return {}

    def settings(self) -> dict[str, object]:
        """The parameters this instance holds that change what it does (by default every one of
        ``parameters``); a rule whose parameter matters only in some variant leaves it out elsewhere."""
        names = (getattr(p, "name", p) for p in self.parameters)
        return {name: getattr(self, name) for name in names}

    def lossless(self) -> bool:
        """Whether this instance, with its parameters, is lossless by theory (a hypothesis, as the
        class's ``lossless_by_theory``, which says it for the rule's every variant)."""
        return self.lossless_by_theory

    def __repr__(self) -> str:
        return f"<verifier {self.name}>"

