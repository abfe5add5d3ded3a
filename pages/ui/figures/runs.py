"""The real decoder's runs and the sweeps over them: acceptance per position, where the time goes, lines with bands."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from pages.ui.figures.style import color, short, symbol
from pages.ui.figures.layout import _layout


# ------------------------------------------------------------------------------------------------
# Real decoder and sweeps
# ------------------------------------------------------------------------------------------------

# A *run* of the real decoder, as its charts key it: a method (a rule's name, or "autoregressive"), or a
# method with the draft it verified: (a rule's name, "chains 4×4, iid").

#: Bar patterns telling apart the drafts of runs that compare several (colour stays the rule's).
DRAFT_PATTERNS = ("", "/", "x", ".", "\\", "-", "|", "+")


def _runs(keys: Sequence) -> list[tuple[str, str, str]]:
    """(legend name, colour, bar pattern) of each run (above): the rule's short name and colour; when
    the runs verified more than one draft, the name also says the draft and the pattern tells it."""
    drafts = list(dict.fromkeys(k[1] for k in keys if isinstance(k, tuple)))
    out = []
    for k in keys:
        method, draft = k if isinstance(k, tuple) else (k, None)
        several = len(drafts) > 1 and draft is not None
        out.append((f"{short(method)} · {draft}" if several else short(method), color(method),
                    DRAFT_PATTERNS[drafts.index(draft) % len(DRAFT_PATTERNS)] if several else ""))
    return out


def acceptance_per_position(rates: Mapping) -> go.Figure:
    """P(τ ≥ i) per draft position i, one group of bars per position, one bar per run (keyed as above)."""
    fig = go.Figure()
    for (name, fill, pattern), r in zip(_runs(list(rates)), rates.values()):
        fig.add_trace(go.Bar(x=list(range(1, len(r) + 1)), y=list(r), name=name,
                             marker=dict(color=fill, pattern=dict(shape=pattern))))
    fig.update_layout(barmode="group")
    fig.update_xaxes(dtick=1)
    fig.update_yaxes(range=[0, 1.05])
    return _layout(fig, "Acceptance per draft position: P(τ ≥ i)", "draft position i", "fraction of iterations",
                   height=340)


#: The decoder's wall-clock phases, in the order an iteration runs them, and their colours.
PHASE_COLORS = {"draft": "#9ecae1", "target": "#3182bd", "verify": "#ffbf00", "cache": "#44aa99",
                "other": "#c7c7c7"}


def time_split(parts: Mapping, title: str = "Where the time goes", unit: str = "seconds") -> go.Figure:
    """One stacked bar per run (keyed as above): its time in each phase (``PHASE_COLORS``' order), in ``unit``."""
    fig = go.Figure()
    runs = list(parts)
    names = [name for name, _, _ in _runs(runs)]
    keys = sorted({k for v in parts.values() for k in v},
                  key=lambda k: list(PHASE_COLORS).index(k) if k in PHASE_COLORS else 99)
    for k in keys:
        fig.add_trace(go.Bar(y=names, x=[parts[m].get(k, 0.0) for m in runs], name=k, orientation="h",
                             marker_color=PHASE_COLORS.get(k, "#888"),
                             hovertemplate=f"%{{y}}: {k} %{{x:.4g}} {unit}<extra></extra>"))
    fig.update_layout(barmode="stack", legend_traceorder="normal")
    return _layout(fig, title, unit, "method", height=260 + 30 * len(runs))


def sweep_lines(df, x: str, y: str, lo: str | None, hi: str | None, theory: str | None = None,
                title: str = "", xlab: str = "", ylab: str = "", runs: str | None = None) -> go.Figure:
    """One line per method with a shaded 95% confidence band (columns lo/hi) over the points that
    have an interval (NaN: none, so no band there), and dashed theory curves.  With ``runs`` (a
    column of counts) each point's hover text gives its number of runs and its interval.

    A band is a filled area between two edges drawn without a line or markers (``band_traces``), in
    its method's legend group: a click on the method in the legend hides its band with it."""
    fig = go.Figure()
    for m, sub in df.groupby("method", sort=False):
        sub = sub.sort_values(x)
        c = color(m)
        band = bool(lo and hi and lo in sub and hi in sub)
        if band:
            for part in (sub.iloc[s] for s in _stretches((sub[lo].notna() & sub[hi].notna()).tolist())):
                fig.add_traces(band_traces(part[x].tolist(), part[lo].tolist(), part[hi].tolist(), c,
                                           group=m, name=f"{short(m)} 95% band"))
        hover = {}
        if runs:
            los, his = (sub[lo], sub[hi]) if band else ([np.nan] * len(sub),) * 2
            ci = [f"<br>95% CI: {a:.3f} to {b:.3f}" if np.isfinite(a) and np.isfinite(b) else ""
                  for a, b in zip(los, his)]
            hover = dict(text=[f"runs: {int(n)}{s}" for n, s in zip(sub[runs], ci)],
                         hovertemplate=f"{short(m)}<br>{xlab or x} = %{{x}}<br>{ylab or y}: %{{y:.3f}}"
                                       "<br>%{text}<extra></extra>")
        fig.add_trace(go.Scatter(x=sub[x].tolist(), y=sub[y].tolist(), mode="lines+markers", name=short(m),
                                 legendgroup=m, line=dict(color=c, width=3),
                                 marker=dict(symbol=symbol(m), size=10), **hover))
        if theory and theory in sub and sub[theory].notna().any():
            fig.add_trace(go.Scatter(x=sub[x].tolist(), y=sub[theory].tolist(), mode="lines", name=f"{short(m)}: 1 + E[τ | drafts]",
                                     line=dict(color=c, dash="dash", width=1.5)))
    fig.update_xaxes(dtick=1 if x in ("K", "L") else None)
    return _layout(fig, title, xlab, ylab)


def band_traces(x: Sequence, lo: Sequence[float], hi: Sequence[float], line_color: str, group: str,
                name: str) -> list[go.Scatter]:
    """A shaded band from ``lo`` to ``hi`` over ``x``: the lower edge, then the upper one filled down
    to it (``fill="tonexty"``), both without a line or markers, without hover and without a legend
    entry of their own, in legend group ``group`` (with the series they belong to)."""
    edge = dict(x=list(x), mode="lines", line=dict(width=0, color=line_color), hoverinfo="skip",
                showlegend=False, legendgroup=group, name=name)
    return [go.Scatter(y=list(lo), **edge),
            go.Scatter(y=list(hi), fill="tonexty", fillcolor=_rgba(line_color, 0.2), **edge)]


def _stretches(mask: Sequence[bool]) -> list[slice]:
    """The maximal stretches of consecutive True entries of ``mask``, as slices."""
    out, start = [], None
    for i, v in enumerate(list(mask) + [False]):
        if v and start is None:
            start = i
        elif not v and start is not None:
            out.append(slice(start, i))
            start = None
    return out


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)
    return f"rgba({r},{g},{b},{alpha})"
