"""One verification step's charts: the distributions at a node, a residual, a round of a tree
verifier, every method on the same coins."""
from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from pages.ui.figures.style import color, short
from pages.ui.figures.layout import _layout


def _distribution_bars(series: Sequence[tuple[str, np.ndarray, str]], outlined: int | None, title: str,
                       token_text: Callable[[int], str] | None, top: int) -> go.Figure:
    """Grouped bars of distributions over the same tokens (name, vector, colour), the ``top`` most
    probable under any of them when V is larger (the ``outlined`` token always kept and outlined)."""
    V = len(series[0][1])
    idx = np.arange(V)
    if V > top:  # keep the most relevant tokens: the top most probable, or top - 1 and the outlined one
        score = np.maximum.reduce([np.asarray(v) for _, v, _ in series])
        order = np.argsort(-score, kind="stable")
        keep = order[:top] if outlined is None or outlined in order[:top] else np.append(order[:top - 1], outlined)
        idx = np.sort(keep)
    xs = [token_text(int(i)) if token_text else str(int(i)) for i in idx]
    fig = go.Figure()
    for name, vec, col in series:
        fig.add_trace(go.Bar(x=xs, y=np.asarray(vec)[idx].tolist(), name=name, marker_color=col,
                             marker_line=dict(width=[3 if int(i) == outlined else 0 for i in idx], color="#000")))
    fig.update_layout(barmode="group")
    fig.update_xaxes(type="category")
    return _layout(fig, title, "token", "probability", height=360)


def residual_bars(p: np.ndarray | None, q: np.ndarray, residual: np.ndarray, extra: int, where: str,
                  is_bonus: bool, token_text: Callable[[int], str] | None = None,
                  top: int = 30) -> go.Figure:
    """The law the extra token y was drawn from at the accepted node s, y outlined.  A bonus
    (the whole block accepted) is drawn from q(·|s) itself: q alone is shown, there is no p at a
    leaf and no residual.  A correction is drawn from the rule's residual, shown beside p(·|s) and
    q(·|s) (for SD it is normalize((q − p)₊); each rule has its own)."""
    y = token_text(extra) if token_text else extra
    if is_bonus:
        return _distribution_bars([("q(·|s) (target): the bonus token's law", q, "#3182bd")], extra,
                                  f"Extra token {y} (outlined): a bonus, drawn from q(·|s) at s = {where}", token_text, top)
    series = ([] if p is None else [("p (draft)", p, "#9ecae1")]) + [
        ("q (target)", q, "#3182bd"), ("residual: the correction token's law", residual, "#ffbf00")]
    return _distribution_bars(series, extra, f"Extra token {y} (outlined): a correction, drawn from the residual at s = {where}",
                              token_text, top)


def traversal_step(p: np.ndarray, q: np.ndarray, T: np.ndarray, where: str, rejected: int, A: float, w: float,
                   token_text: Callable[[int], str] | None = None, top: int = 30) -> go.Figure:
    """One residual update of a traversal rule at node b after its child ``rejected`` was rejected:
    p(·|b), q(·|b) and the new target T = (w·T − S)₊ / A beside them; the rejected token (outlined)
    has T = 0 there, and b keeps weight w = A/(A + 1 − w) (1 at the root)."""
    c = token_text(rejected) if token_text else rejected
    return _distribution_bars(
        [("p(·|b) (draft)", p, "#9ecae1"), ("q(·|b) (target)", q, "#3182bd"),
         ("T: what b still owes after the rejection", T, "#ffbf00")], rejected,
        f"At b = {where}, after rejecting {c} (outlined): A = {A:.4f}, b's weight w = {w:.4f}", token_text, top)


def round_bars(S: np.ndarray, T: np.ndarray, child: int, title: str, T_name: str = "T: what the node still owes q",
               after: np.ndarray | None = None, token_text: Callable[[int], str] | None = None,
               top: int = 30) -> go.Figure:
    """One round of a tree verifier at a node: S_i, the exact law of the visited child given the
    rounds before (what the test is against), beside T, what is left of the target there (for
    traversal, w·T), the visited ``child`` outlined; after a rejection, ``after`` = the new T,
    (T − S_i)₊ normalised."""
    series = [("S_i: the law of the visited child", S, "#9ecae1"), (T_name, T, "#3182bd")]
    if after is not None:
        series.append(("T after the rejection: (T − S_i)₊, normalised", after, "#ffbf00"))
    return _distribution_bars(series, child, title, token_text, top)


def compare_methods_bar(rows: Sequence[Mapping]) -> go.Figure:
    """τ on the same drafts and coins, and E[τ | these drafts], per method."""
    fig = go.Figure()
    fig.add_trace(go.Bar(x=[short(r["method"]) for r in rows], y=[r["tau"] for r in rows],
                         marker_color=[color(r["method"]) for r in rows], name="τ with these coins",
                         hovertemplate="%{x}: τ = %{y}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[short(r["method"]) for r in rows],
                             y=[r.get("expected_tau_given_drafts") for r in rows], mode="markers",
                             marker=dict(symbol="diamond", size=13, color="#111"),
                             name="E[τ | these drafts] (exact over the coins)"))
    # many rules' names lie slanted under the bars: the plot keeps its height above them
    longest = max((len(short(r["method"])) for r in rows), default=0)
    return _layout(fig, "Every method on the same drafts and the same coins", "method",
                   "accepted draft tokens τ", height=360 + (7 * longest if len(rows) > 12 else 0))
