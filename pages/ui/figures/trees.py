"""The drawing of a draft tree: its nodes, edges and the tests a rule made on it."""
from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from core.data.exact_fraction import fraction
from pages.ui.figures.style import FONT_SIZE, STATUS_COLORS, TICK_SIZE
from pages.ui.figures.layout import _layout


def tokens_str(node: Sequence[int], text: Callable[[int], str] | None = None) -> str:
    """A node (a token path) as text: ids separated by spaces ("1 3 2 1", never "1321", which is
    ambiguous once V > 10), or the tokens' own text joined as the model writes it; "∅" for the root
    (the empty prefix), and for the root only."""
    if not node:
        return "∅"
    if text is not None:
        return "".join(text(t) for t in node)
    return " ".join(str(t) for t in node)


# ------------------------------------------------------------------------------------------------
# Draft tree and one verification step
# ------------------------------------------------------------------------------------------------

def _tree_positions(nodes: Sequence[tuple[int, ...]]) -> dict[tuple[int, ...], tuple[float, float]]:
    children: dict[tuple, list] = {}
    for s in nodes:
        if s:
            children.setdefault(s[:-1], []).append(s)
    pos: dict[tuple, tuple[float, float]] = {}
    counter = [0]

    def place(s):
        kids = sorted(children.get(s, []))
        if not kids:
            y = float(counter[0])
            counter[0] += 1
        else:
            ys = [place(k) for k in kids]
            y = float(np.mean(ys))
        pos[s] = (float(len(s)), y)
        return y

    place(())
    return pos


def _drafts_through(block) -> dict[tuple[int, ...], list[int]]:
    """For every node below the root, the drafts (1-based) whose path goes through it."""
    out: dict[tuple[int, ...], list[int]] = {}
    for k in range(block.K):
        x = tuple(int(t) for t in block.draft(k))
        for d in range(1, len(x) + 1):
            out.setdefault(x[:d], []).append(k + 1)
    return out


def _drafts_label(drafts: Sequence[int]) -> str:
    return ("draft " if len(drafts) == 1 else "drafts ") + ", ".join(map(str, drafts))


def _free_row(y: float, taken: Sequence[float]) -> float:
    """A row near ``y`` at least half a row away from every y in ``taken`` (the nodes already drawn
    at that depth), the nearest such; ``y`` itself when nothing is there."""
    candidates = [y] + [y + sign * step for step in (0.5, 1.0, 1.5, 2.0) for sign in (-1, 1)]
    return next((c for c in candidates if all(abs(c - t) >= 0.5 for t in taken)), y - 0.5)


#: A row of the draft tree (px): the extra token can sit half a row from a node (``_free_row``), and
#: half a row must clear a node (``_TREE_NODE_PX``), so ``height`` is at least what the rows need.
_TREE_ROW_PX, _TREE_NODE_PX = 96, 28


def _test_status(trace, upto: int | None, accepted) -> tuple[list, bool, dict, set]:
    """(tests shown, whether every test is shown, status per node, accepted path) of a verification
    trace revealed up to its first ``upto`` tests: passed or rejected as tested, the accepted
    sub-block's nodes "accepted" once the whole trace is shown."""
    tests = list(trace.tests) if trace is not None else []
    shown = tests if upto is None else tests[:upto]
    complete = upto is None or upto >= len(tests)
    status = {t.node: "passed" if t.passed else "rejected" for t in shown}
    acc_path: set = set()
    if complete and accepted is not None:
        acc_path = {tuple(accepted[:i]) for i in range(1, len(accepted) + 1)}
        status.update({s: "accepted" for s in acc_path})
    return shown, complete, status, acc_path


def _tree_edges(fig: go.Figure, nodes, pos, acc_path: set, dashed: set = frozenset()) -> None:
    """The tree's edges: grey (dotted into the nodes of ``dashed``: sampled children), the accepted
    path thick and green."""
    lines: dict[str, tuple[list, list]] = {"edges": ([], []), "sampled edges": ([], []), "accepted path": ([], [])}
    for s in nodes:
        if s:
            (x0, y0), (x1, y1) = pos[s[:-1]], pos[s]
            xs, ys = lines["accepted path" if s in acc_path else "sampled edges" if s in dashed else "edges"]
            xs.extend([x0, x1, None])
            ys.extend([y0, y1, None])
    style = {"edges": dict(color="#bbbbbb", width=2), "sampled edges": dict(color="#888888", width=2, dash="dot"),
             "accepted path": dict(color=STATUS_COLORS["accepted"], width=6)}
    for name, (xs, ys) in lines.items():
        if xs or name == "edges":
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=style[name], hoverinfo="skip",
                                     showlegend=False, name=name))


def _tree_nodes(fig: go.Figure, groups: Mapping[str, Sequence], pos, hover: Callable, node_text: Callable,
                token_text: Callable[[int], str] | None) -> None:
    """One marker trace per non-empty group of ``_NODE_GROUPS`` (legend name, colour, symbol, white
    label)."""
    for key, members in groups.items():
        if not members:
            continue
        name, fill, mark, dark = _NODE_GROUPS[key]
        fig.add_trace(go.Scatter(
            x=[pos[s][0] for s in members], y=[pos[s][1] for s in members], mode="markers+text",
            name=name, customdata=[tokens_str(s, token_text) for s in members],
            marker=dict(size=_TREE_NODE_PX, color=fill, symbol=mark, line=dict(width=1, color="#333333")),
            text=[node_text(s) for s in members],
            textposition="middle center" if token_text is None or key == "root" else "top center",
            textfont=dict(color="white" if dark and (token_text is None or key == "root") else "black",
                          size=FONT_SIZE if token_text is None else TICK_SIZE - 2),
            hovertext=[hover(s) for s in members], hoverinfo="text"))


def _tree_ending(fig: go.Figure, pos, current, complete: bool, accepted, extra, token_text) -> None:
    """The blue ring on ``current``; once the whole trace is shown, the extra token as a gold star at
    depth τ + 1, on a row clear of that depth's nodes."""
    if current is not None and tuple(current) in pos:
        cx, cy = pos[tuple(current)]
        fig.add_trace(go.Scatter(
            x=[cx], y=[cy], mode="markers", name="blue ring: the latest step revealed",
            marker=dict(size=_TREE_NODE_PX + 8, color="rgba(0,0,0,0)", line=dict(width=4, color=STATUS_COLORS["current"])),
            hoverinfo="skip"))
    if complete and accepted is not None and extra is not None:
        ax, ay = pos[tuple(accepted)]
        depth = len(accepted) + 1
        ex_x, ex_y = float(depth), _free_row(ay, [y for s, (x, y) in pos.items() if len(s) == depth])
        fig.add_trace(go.Scatter(x=[ax, ex_x], y=[ay, ex_y], mode="lines", line=dict(color="#ffbf00", width=3, dash="dot"),
                                 hoverinfo="skip", showlegend=False))
        fig.add_trace(go.Scatter(
            x=[ex_x], y=[ex_y], mode="markers+text", name="extra token (correction or bonus)",
            marker=dict(size=_TREE_NODE_PX + 4, color=STATUS_COLORS["extra"], symbol="star", line=dict(width=1, color="#333")),
            text=[token_text(extra) if token_text else str(extra)], textfont=dict(size=FONT_SIZE if token_text is None else TICK_SIZE - 2),
            textposition="middle center" if token_text is None else "bottom center",
            hovertext=[f"extra token y = {token_text(extra) if token_text else extra}, at depth {depth}"],
            hoverinfo="text"))


def _tree_layout(fig: go.Figure, nodes, L: int, title: str, height: int | None, right: float = 1.5) -> go.Figure:
    """Depth on x (0 to L, room for the extra token and ``right`` of labels), one row per leaf (a node
    without children: above depth L too, in a rank-path or dynamic tree)."""
    parents = {s[:-1] for s in nodes if s}
    n_leaves = max(1, len([s for s in nodes if s not in parents]))
    fig.update_xaxes(title_text="depth (tokens into the block)", dtick=1, range=[-0.4, L + right],
                     showgrid=False, zeroline=False)
    fig.update_yaxes(visible=False, range=[-1.0, n_leaves - 0.2])
    fig = _layout(fig, title, "depth (tokens into the block)", None,
                  height=max(height or 0, round(_TREE_ROW_PX * (n_leaves + 0.8)) + 170), series=False)
    return fig


#: The nodes of a tree diagram: (legend name, colour, marker, whether the label is white) per group.
#: Test outcomes in Okabe and Ito's colours (``STATUS_COLORS``); a drafted tree before any test tells
#: deterministic children (a rank of p: a square) from sampled ones (a circle), in two of Tol's
#: muted colours.
_NODE_GROUPS = {
    "root": ("root ∅ (the empty prefix)", STATUS_COLORS["root"], "circle", True),
    "accepted": ("accepted sub-block", STATUS_COLORS["accepted"], "circle", True),
    "passed": ("passed, not kept", STATUS_COLORS["passed"], "circle", False),
    "rejected": ("rejected (set H)", STATUS_COLORS["rejected"], "x", True),
    "untested": ("not tested", STATUS_COLORS["untested"], "circle", False),
    "deterministic": ("deterministic: a rank of p (top-k, greedy's Top)", "#332288", "square", True),
    "sampled": ("sampled from p (iid, wor, greedy's X)", "#88ccee", "circle", False),
}


def draft_tree(block, trace=None, upto: int | None = None, accepted=None, extra: int | None = None,
               title: str = "Draft tree", token_text: Callable[[int], str] | None = None,
               height: int | None = None, current: tuple[int, ...] | None = None) -> go.Figure:
    """The draft tree of K i.i.d. drafts (a ``TokenTree`` read as its drafts: shared prefixes are
    shared nodes); node x = depth.

    With a ``trace``: node colours show the tests made so far (the first ``upto`` tests; all by
    default): green = accepted sub-block, light green = passed but not kept, red = rejected (the set
    H), grey = not tested.  A blue ring marks ``current`` (by default the latest test revealed, while
    some are still hidden).  When the whole trace is shown, the accepted path is drawn thick and the
    extra token hangs off its end as a gold star at depth τ + 1.  Each branch is labelled with the
    drafts that take it; hover shows p, q and the method's quantities.  ``height`` (px) is a
    minimum: the figure is as tall as its rows need (``_TREE_ROW_PX``).
    """
    nodes = block.nodes()
    pos = _tree_positions(nodes)
    through = _drafts_through(block)
    shown, complete, status, acc_path = _test_status(trace, upto, accepted)
    if current is None and shown and not complete:
        current = shown[-1].node

    fig = go.Figure()
    _tree_edges(fig, nodes, pos, acc_path)
    # the drafts on each branch (written where a set of drafts splits off, hover everywhere), on the
    # side of the edge it does not run through: above and left of a rising edge's middle, below and
    # left of a falling one's (the edge runs below, resp. above, its middle on the left), above a flat one
    mids: list[tuple[float, float, str, str, str]] = []
    for s in nodes[1:]:
        (x0, y0), (x1, y1) = pos[s[:-1]], pos[s]
        label = _drafts_label(through[s])
        branches = len(s) == 1 or through[s] != through[s[:-1]]
        side = "top left" if y1 > y0 else "bottom left" if y1 < y0 else "top center"
        mids.append(((x0 + x1) / 2, (y0 + y1) / 2, label if branches else "",
                     f"{label} go from {tokens_str(s[:-1], token_text)} to {tokens_str(s, token_text)}", side))
    if mids:
        fig.add_trace(go.Scatter(x=[m[0] for m in mids], y=[m[1] for m in mids], mode="text",
                                 text=[m[2] for m in mids], textposition=[m[4] for m in mids],
                                 textfont=dict(size=TICK_SIZE - 2, color="#555555"), hovertext=[m[3] for m in mids],
                                 hoverinfo="text", showlegend=False, name="drafts on each branch"))
    quantities = trace.quantities if trace is not None else {}

    def hover(s):
        if not s:
            return f"root ∅: the empty prefix (the context before the block)<br>drafts through it: {block.K}"
        lines = [f"node {tokens_str(s, token_text)}  (depth {len(s)})",
                 f"{_drafts_label(through[s])} ({block.multiplicity(s)} in all)"]
        lines += _node_lines(s, block, token_text)
        for k, v in quantities.get(s, {}).items():
            lines.append(f"{k} = {v:.4f}")
        return "<br>".join(lines + _test_lines(s, shown, "draft"))

    groups = {"root": [], "accepted": [], "passed": [], "rejected": [], "untested": []}
    for s in nodes:
        groups["root" if not s else status.get(s, "untested")].append(s)
    _tree_nodes(fig, groups, pos, hover, _node_token(token_text), token_text)
    _tree_ending(fig, pos, current, complete, accepted, extra, token_text)
    return _tree_layout(fig, nodes, block.L, title, height)


def _node_token(token_text: Callable[[int], str] | None) -> Callable:
    """A node's label: ∅ at the root, else its last token."""
    return lambda s: "∅" if not s else (token_text(s[-1]) if token_text else str(s[-1]))


def _node_lines(s, tree, token_text) -> list[str]:
    """Hover lines of a non-root node of a draft tree (a ``TokenTree``): p, q, q/p of
    its token given its parent, and of the whole path."""
    u, t = s[:-1], s[-1]
    pt, qt = float(tree.p[u][t]), float(tree.q[u][t])
    return [f"p(token|parent) = {pt:.4f},  q(token|parent) = {qt:.4f}",
            f"q/p = {qt / pt:.4f}" if pt > 0 else "q/p = ∞",
            f"p(s) = {tree.p_joint(s):.4g},  q(s) = {tree.q_joint(s):.4g}"]


def _test_lines(s, shown, who: str) -> list[str]:
    """Hover lines of the tests of node s among those ``shown``; ``who`` names a test's index
    ("draft": the draft that offered it; "draw": its first draw among its parent's)."""
    return [f"test ({t.kind}, {who} {t.draft + 1}): pass prob {t.prob:.4f} → {'PASSED' if t.passed else 'REJECTED'}"
            for t in shown if t.node == s]


def token_tree(tree, trace=None, upto: int | None = None, accepted=None, extra: int | None = None,
               title: str = "Token tree", current: tuple[int, ...] | None = None,
               path_q: bool = False, token_text: Callable[[int], str] | None = None) -> go.Figure:
    """A drafted token tree (``core.data.token_tree.TokenTree``, any shape and law); node x = depth.

    Children drafted deterministically (a rank of p: every child of ``topk``, greedy's Top) hang on
    solid edges, sampled ones (iid, wor, greedy's X) on dotted edges; a child drawn m > 1 times
    (``iid``) is labelled ×m on its edge.  Without a ``trace`` the nodes themselves are squares
    (deterministic) or circles (sampled); with one they show the tests revealed, as ``draft_tree``
    (the first ``upto`` tests, the ring on ``current``, the accepted path and the extra token once
    all are shown).  ``path_q`` writes q(s), the target's probability of the path to each node, beside
    it: on a tree drafted by ``topk`` at every node these terms sum to E[τ] (docs/maths.md, "Top-k
    trees: a closed form").  Hover gives p, q, the draw and the test of every node.  ``token_text``
    labels each node with its token's text instead of its id (a real model's tree)."""
    nodes = tree.nodes()
    pos = _tree_positions(nodes)
    shown, complete, status, acc_path = _test_status(trace, upto, accepted)
    if current is None and shown and not complete:
        current = shown[-1].node
    sampled = {s for s in nodes[1:] if not tree.deterministic(s)}

    fig = go.Figure()
    _tree_edges(fig, nodes, pos, acc_path, sampled)
    many = [s for s in nodes[1:] if tree.multiplicity(s) > 1]
    if many:
        fig.add_trace(go.Scatter(
            x=[(pos[s[:-1]][0] + pos[s][0]) / 2 for s in many], y=[(pos[s[:-1]][1] + pos[s][1]) / 2 for s in many],
            mode="text", text=[f"×{tree.multiplicity(s)}" for s in many], textposition="top center",
            textfont=dict(size=TICK_SIZE - 1, color="#555555"), showlegend=False, name="multiplicities",
            hovertext=[f"{tokens_str(s, token_text)} was drawn {tree.multiplicity(s)} times at "
                       f"{tokens_str(s[:-1], token_text)}" for s in many],
            hoverinfo="text"))

    def hover(s):
        if not s:
            return f"root ∅: the empty prefix (the context before the block)<br>{len(tree.draws[()])} draws by {tree.law_at(0).name}"
        u = s[:-1]
        law = tree.law_at(len(u)).name
        how = "deterministic (a rank of p)" if s not in sampled else "sampled from p"
        lines = [f"node {tokens_str(s, token_text)}  (depth {len(s)})",
                 f"drafted by {law} at {tokens_str(u, token_text)}: {how}; drawn {tree.multiplicity(s)} time(s) "
                 f"of {len(tree.draws[u])}"]
        lines += _node_lines(s, tree, token_text)
        return "<br>".join(lines + _test_lines(s, shown, "draw"))

    if trace is None:
        groups = {"root": [()], "deterministic": [s for s in nodes[1:] if s not in sampled],
                  "sampled": [s for s in nodes[1:] if s in sampled]}
    else:
        groups = {"root": [], "accepted": [], "passed": [], "rejected": [], "untested": []}
        for s in nodes:
            groups["root" if not s else status.get(s, "untested")].append(s)
    _tree_nodes(fig, groups, pos, hover, _node_token(token_text), token_text)
    if path_q and len(nodes) > 1:
        terms = [(s, tree.q_joint(s)) for s in nodes[1:]]
        fig.add_trace(go.Scatter(
            # a third of a row below each node: clear of the node's mark and of its edges
            x=[pos[s][0] for s, _ in terms], y=[pos[s][1] - 0.36 for s, _ in terms], mode="text",
            text=[f"q = {_short_fraction(v)}" for _, v in terms], textposition="middle center",
            textfont=dict(size=TICK_SIZE - 1, color="#332288"), customdata=[v for _, v in terms],
            hovertext=[f"q({tokens_str(s)}) = {v:.6f}: the target's probability of this path, this node's "
                       f"term of Σ q(s)" for s, v in terms], hoverinfo="text",
            name="q(s): each node's term of E[τ] = Σ q(s)"))
    _tree_ending(fig, pos, current, complete, accepted, extra, token_text)
    return _tree_layout(fig, nodes, tree.L, title, None)


def _short_fraction(x: float) -> str:
    """``x`` as the small fraction it is (denominator at most 10⁴), else to four decimals."""
    return fraction(x, max_denominator=10_000, integers=True) or f"{x:.4f}"
