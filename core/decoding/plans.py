"""What the draft model drafts each iteration: a *draft plan* (docs/decoder.md, "Shapes and laws").

Three kinds, small frozen dataclasses that need no torch (the command line checks them before it
loads a model):

- ``StaticPlan(shape, law)``: chains K×L or a static tree b = (b_1, …, b_L)
  (``core.data.shapes.Shape``) drafted by any law of ``core.data.laws``: ``iid``, ``wor``
  (Gumbel-top-k), ``topk`` or ``greedy``, exactly as the exact laboratory drafts them.
- ``RankTreePlan(paths)``: a fixed tree of any shape given by *rank paths* (``core.bounds.sequoia``:
  (1, 2) is the second most probable child of the most probable child of the root), drafted by
  ``topk``: every node's children are the first k tokens of p at that node, in rank order.
- ``DynamicPlan(budget, depth, width)``: EAGLE-2's dynamic tree (Li et al., arXiv 2406.16858, §4),
  rebuilt every iteration from the draft's probabilities (``core.decoding.proposal``): at each depth
  the ``width`` nodes of highest cumulative draft log-probability are expanded, each proposing its
  ``width`` most probable children, and the ``budget`` candidates of highest cumulative
  log-probability, over every depth, form the tree.

Every plan says its depth ``L``, its root width ``K``, the law its verifier must read (``law``,
per temperature: ``law_at_temperature``), how many tokens it drafts at most (``budget``) and whether
its drafts are K i.i.d. chains (``iid_chains``), which every rule verifies; other drafts are
verified by the rules defined on token trees (``rrs`` = ``specinfer``, ``traversal``), and the
others are refused in one sentence (``check_plan``).

**T = 0.**  At temperature 0 the decoder's p is one-hot (the draft's argmax), which has no second
most probable token.  The laws that draw distinct tokens are then taken at their T → 0 limit:
``wor`` (Gumbel-top-k of log p/T) and ``greedy`` (the top k − 1 and one sample) both tend to
``topk``, the k highest draft logits in rank order, and every ``topk`` ranking (static trees,
rank-path trees, the dynamic tree) reads the draft's softmax at T = 1 (the same order as its
logits, after top-k/top-p).  ``iid`` stays the argmax repeated: K chains merge into one.  At T = 0
the target is greedy, so every rule still gives the target's greedy tokens.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence, Union

from core.data.laws import IID_LAW, TOPK_LAW, DraftLaw, get_law, is_iid_chains
from core.data.shapes import Shape
from core.errors import DecodingError
from core.errors import InvalidInput

#: A path of ranks (1-based) from the root: (1, 2) = the 2nd child of the 1st child of the root.
RankPath = tuple[int, ...]


def _checked_shape(make, *args) -> Shape:
    try:
        return make(*args)
    except InvalidInput as exc:
        raise DecodingError(str(exc)) from None


def _checked_law(law: str | DraftLaw) -> DraftLaw:
    """The law, given itself or by name (a plan's options come from the command line and the app)."""
    try:
        return get_law(law)
    except InvalidInput as exc:
        raise DecodingError(str(exc)) from None


@dataclass(frozen=True)
class StaticPlan:
    """Chains K×L or a static tree b, drafted by ``law`` (module docstring; given by name, it is
    looked up once, here)."""

    shape: Shape
    law: DraftLaw = IID_LAW

    def __post_init__(self):
        object.__setattr__(self, "law", _checked_law(self.law))

    @classmethod
    def chains(cls, K: int, L: int, law: str | DraftLaw = IID_LAW) -> "StaticPlan":
        return cls(_checked_shape(Shape.chains_of, K, L), law)

    @classmethod
    def tree(cls, branching: Sequence[int], law: str | DraftLaw = IID_LAW) -> "StaticPlan":
        return cls(_checked_shape(Shape.tree, tuple(branching)), law)

    kind = "static"

    @property
    def L(self) -> int:
        return self.shape.L

    @property
    def K(self) -> int:
        return self.shape.K

    @property
    def budget(self) -> int:
        return self.shape.budget

    @property
    def iid_chains(self) -> bool:
        """K i.i.d. drafts of length L (every rule verifies them): ``core.data.laws.is_iid_chains``."""
        return is_iid_chains(self.shape, self.law)

    def law_at_temperature(self, temperature: float) -> DraftLaw:
        """The law drafted and verified at this temperature (module docstring: T = 0)."""
        if temperature == 0 and not self.iid_chains and self.law.distinct:
            return TOPK_LAW
        return self.law

    @property
    def label(self) -> str:
        return f"{self.shape.label}, {self.law.name}"

    def describe(self) -> dict:
        return {"kind": self.kind, **self.shape.describe(), "law": self.law.name, "label": self.label}


@dataclass(frozen=True)
class RankTreePlan:
    """A tree of any shape given by its non-root nodes' rank paths, drafted by ``topk``.  The paths
    must be closed under prefixes, and the children of every node must be ranks 1..c (the c most
    probable tokens), as ``core.bounds.sequoia.best_tree`` builds them."""

    paths: tuple[RankPath, ...]

    kind = "rank tree"
    law = TOPK_LAW
    iid_chains = False

    def __post_init__(self):
        try:
            paths = tuple(sorted({tuple(int(r) for r in p) for p in self.paths}, key=lambda v: (len(v), v)))
        except (TypeError, ValueError):
            raise DecodingError("tree paths must be lists of positive integer ranks, e.g. 1,2,1.1") from None
        if not paths or any(not p or min(p) < 1 for p in paths):
            raise DecodingError("tree paths must be non-empty lists of ranks ≥ 1, e.g. 1,2,1.1")
        have = set(paths)
        for p in paths:
            if len(p) > 1 and p[:-1] not in have:
                raise DecodingError(f"tree path {_dotted(p)} has no parent {_dotted(p[:-1])}: the paths "
                                    "must be closed under prefixes")
            if p[-1] > 1 and p[:-1] + (p[-1] - 1,) not in have:
                raise DecodingError(f"tree path {_dotted(p)} has no elder sibling "
                                    f"{_dotted(p[:-1] + (p[-1] - 1,))}: a node's children are its "
                                    "ranks 1..c (topk drafts the c most probable tokens)")
        object.__setattr__(self, "paths", paths)

    @property
    def L(self) -> int:
        return max(len(p) for p in self.paths)

    @property
    def K(self) -> int:
        return sum(1 for p in self.paths if len(p) == 1)

    @property
    def budget(self) -> int:
        return len(self.paths)

    def law_at_temperature(self, temperature: float) -> DraftLaw:
        return TOPK_LAW

    @property
    def label(self) -> str:
        return f"rank tree of {self.budget} nodes, depth {self.L}, {self.law.name}"

    def describe(self) -> dict:
        return {"kind": self.kind, "budget": self.budget, "depth": self.L, "law": self.law.name,
                "paths": [list(p) for p in self.paths], "label": self.label}


@dataclass(frozen=True)
class DynamicPlan:
    """EAGLE-2's dynamic tree: ``budget`` nodes, depth ≤ ``depth``, ``width`` nodes expanded per
    depth with ``width`` children each (module docstring; the procedure: docs/decoder.md)."""

    budget: int
    depth: int
    width: int = 4

    kind = "dynamic"
    law = TOPK_LAW
    iid_chains = False

    def __post_init__(self):
        for name, value in (("budget", self.budget), ("depth L", self.depth), ("width K", self.width)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise DecodingError(f"a dynamic tree's {name} must be a positive integer, got {value!r}")
        if self.budget > self.candidates:
            raise DecodingError(f"a dynamic tree of depth {self.depth} expanding {self.width} nodes per "
                                f"depth has only {self.candidates} candidates, fewer than the budget "
                                f"{self.budget}; lower the budget or raise the width or depth")

    @property
    def candidates(self) -> int:
        """width + (depth − 1)·width²: the root's children, then each expanded node's children."""
        return self.width + (self.depth - 1) * self.width ** 2

    @property
    def L(self) -> int:
        return self.depth

    @property
    def K(self) -> int:
        return self.width

    def law_at_temperature(self, temperature: float) -> DraftLaw:
        return TOPK_LAW

    @property
    def label(self) -> str:
        return f"dynamic tree of {self.budget} nodes, depth {self.depth}, top-{self.width}"

    def describe(self) -> dict:
        return {"kind": self.kind, "budget": self.budget, "depth": self.depth, "width": self.width,
                "law": self.law.name, "label": self.label}


DraftPlan = Union[StaticPlan, RankTreePlan, DynamicPlan]


def _dotted(path: Sequence[int]) -> str:
    return ".".join(map(str, path))


def parse_rank_paths(text: str) -> RankTreePlan:
    """The command line's ``--tree-paths``: a JSON file (a list of rank lists, or an object with
    "paths", as ``benchmarks/tree_shape.py`` writes them) or inline paths, comma-separated, ranks
    joined by dots: ``1,2,1.1`` = the root's two best children and the best child of the first."""
    text = str(text).strip()
    if text.endswith(".json"):
        file = Path(text)
        if not file.is_file():
            raise DecodingError(f"--tree-paths: no such file {text}")
        try:
            data = json.loads(file.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise DecodingError(f"--tree-paths: {text} is not a JSON file of rank paths ({exc})") from None
        paths = data.get("paths") if isinstance(data, dict) else data
        if not isinstance(paths, list):
            raise DecodingError(f"--tree-paths: {text} must hold a list of rank paths or {{\"paths\": [...]}}")
        return RankTreePlan(tuple(tuple(p) for p in paths))
    try:
        paths = tuple(tuple(int(r) for r in item.split(".")) for item in text.replace(" ", "").split(",") if item)
    except ValueError:
        raise DecodingError(f"--tree-paths must be rank paths such as 1,2,1.1 (or a .json file), got {text!r}") from None
    return RankTreePlan(paths)


def draft_plan(*, K: int | None = None, L: int | None = None, law: str | DraftLaw | None = None,
               tree: str | Sequence[int] | None = None, paths: str | Sequence[RankPath] | None = None,
               budget: int | None = None) -> DraftPlan:
    """The plan named by the command line's (or the app's) options, checked: chains ``K``×``L``
    (default 1×4) drafted by ``law`` (default iid; the law or its name); ``tree`` (b or "2,2,1") with ``law``; ``paths``
    (rank paths, inline or a .json file); or ``budget`` (a dynamic tree of depth L, default 4, and
    width K, default 4).  At most one of ``tree``, ``paths`` and ``budget``."""
    chosen = [name for name, v in (("--tree", tree), ("--tree-paths", paths), ("--budget", budget)) if v is not None]
    if len(chosen) > 1:
        raise DecodingError(f"give one of {', '.join(chosen)}, not several")
    law = None if law is None else _checked_law(law)
    if paths is not None or budget is not None:
        if law not in (None, TOPK_LAW):
            raise DecodingError(f"{chosen[0]} drafts by {TOPK_LAW.name} (each node's most probable tokens), "
                                f"not by {law.name}")
        if paths is not None:
            if K is not None or L is not None:
                raise DecodingError("--tree-paths fixes the tree: give no --K or --L with it")
            return parse_rank_paths(paths) if isinstance(paths, str) else RankTreePlan(tuple(map(tuple, paths)))
        return DynamicPlan(int(budget), 4 if L is None else L, 4 if K is None else K)
    if tree is not None:
        if K is not None or L is not None:
            raise DecodingError("--tree b1,b2,... fixes K = b1 and L: give no --K or --L with it")
        if isinstance(tree, str):
            shape = _checked_shape(Shape.parse, tree)
            return StaticPlan(shape, law or IID_LAW)
        return StaticPlan.tree(tree, law or IID_LAW)
    return StaticPlan.chains(1 if K is None else K, 4 if L is None else L, law or IID_LAW)


def tree_rules(methods: Sequence[str]) -> list[str]:
    """The methods among ``methods`` defined on token trees of any shape and law."""
    from core.rules.registry import resolve
    return [m for m in methods if resolve(m).token_trees]


def check_plan(method: str, plan: DraftPlan) -> None:
    """Refuse, in one sentence, a rule that is not defined on the plan's drafts: a released port with
    ``runs_on`` takes the static drafts it names; every other rule takes K i.i.d. chains, and only the
    token-tree rules (``rrs``/``specinfer``, ``traversal``) take the rest."""
    from core.decoding.methods import decoder_methods
    from core.rules.registry import chains_only, refusal, resolve, tree_label
    cls = resolve(method)
    if cls.runs_on:                 # a released port: the static drafts its engine makes
        if isinstance(plan, StaticPlan) and cls.supports(plan.shape, plan.law):
            return
        raise DecodingError(refusal(cls, plan.label))
    if plan.iid_chains or cls.token_trees:
        return
    others = ", ".join(tree_label(m) for m in tree_rules(decoder_methods()))
    raise DecodingError(chains_only(method, plan.label, others))


def max_draws_per_node(plan: DraftPlan) -> int:
    """The most draws a node can receive from a distinct-token law (0 when none draws distinct
    tokens): what a sampler's top-k must leave room for."""
    if isinstance(plan, StaticPlan):
        if not plan.law.distinct or plan.iid_chains:
            return 0
        return plan.K if plan.shape.chains else max(plan.shape.branching)
    if isinstance(plan, RankTreePlan):
        counts: dict = {}
        for p in plan.paths:
            counts[p[:-1]] = counts.get(p[:-1], 0) + 1
        return max(counts.values())
    return plan.width


__all__ = ["DraftPlan", "DynamicPlan", "RankPath", "RankTreePlan", "StaticPlan", "check_plan",
           "draft_plan", "max_draws_per_node", "parse_rank_paths", "tree_rules"]
