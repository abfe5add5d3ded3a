"""Small formatting helpers shared by the pages: numbers, and methods by the metadata of their rule
class (``core.rules.registry.REGISTRY``)."""
from __future__ import annotations

import math
import re

from core.data.exact_fraction import EXACT_TOL, fraction  # noqa: F401 (the pages' fraction is the library's)
from core.rules.registry import REGISTRY, method_names


def clean(x: float) -> float:
    """``x``, with round-off around 0 (|x| ≤ ``EXACT_TOL``: 7.8e-17, −0.0) shown as the 0 it is.
    ``fraction`` (from ``core.data.exact_fraction``) shows a value as the fraction it equals."""
    return 0.0 if abs(x) <= EXACT_TOL else float(x)


#: What a table cell or a metric shows where a value does not exist.
DASH = "—"


def fmt(x, digits: int = 4) -> str:
    """``x`` with ``digits`` decimals (round-off around 0 shown as 0); a dash for a missing or
    non-finite value."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return DASH
    return f"{clean(x):.{digits}f}"


def number(x, digits: int = 4) -> str:
    """``x`` as a table shows a value that may be tiny (a fidelity error, a distance): ``digits``
    decimals, or two significant digits where those decimals would keep fewer than two (|x| below
    10^−(digits−1)) or run long (|x| ≥ 10^6), in scientific notation once that is shorter; so 4e-17
    is "4e-17", never "0.0000" nor "0.00000000000000004".  An exact 0 is "0", a missing or
    non-finite value a dash.

    >>> [number(v) for v in (4e-17, 0.0646, 0.0, 1.5e-4, 0.0012, 2.5e7, None, float("nan"))]
    ['4e-17', '0.0646', '0', '0.00015', '0.0012', '2.5e+07', '—', '—']
    """
    if x is None or not math.isfinite(float(x)):
        return DASH
    x = float(x)
    if x == 0.0:
        return "0"
    if abs(x) < 10.0 ** -(digits - 1) or abs(x) >= 1e6:
        return f"{x:.2g}"
    return f"{x:.{digits}f}"


def duration(seconds: float) -> str:
    """A time in the unit a reader thinks in: ms, s, min, h, days, or "more than a year"."""
    if seconds < 1e-3:
        return "under 1 ms"
    for unit, size, limit in (("ms", 1e-3, 1.0), ("s", 1.0, 60.0), ("min", 60.0, 3600.0),
                              ("h", 3600.0, 86400.0), ("days", 86400.0, 365 * 86400.0)):
        if seconds < limit:
            value = seconds / size
            return f"{value:.0f} {unit}" if value >= 10 or unit == "ms" else f"{value:.2g} {unit}"
    return "more than a year"


#: Every symbol the figures use, in plain words with its formula (p = draft, q = target).
GLOSSARY: dict[str, str] = {
    "p, q": "p is the draft model and q the target model; p(y|s) is the probability of token y after "
            "the prefix s, and p(s) the probability of the whole prefix.",
    "K, L": "K is the number of drafts per iteration, L the number of tokens in each draft.",
    "τ": "the number of draft tokens the verifier accepts in one iteration, 0 ≤ τ ≤ L.",
    "E[τ]": "the average of τ, E[τ] = Σ_i i·P(τ = i); exact here, summed over every possible set of "
            "drafts and every coin the verifier tosses.",
    "block efficiency": "E[τ] + 1, the tokens produced per call of the target: the accepted ones plus "
                        "the extra token.",
    "extra token": "the token the verifier adds after the accepted prefix s: a bonus token drawn from "
                   "q(·|s) when the whole draft was accepted (τ = L), otherwise a correction drawn from "
                   "the residual.",
    "residual": "the law the correction is drawn from: what q still owes once the drafts' proposals are "
                "accounted for; with one draft, r(y) ∝ max(q(y|s) − p(y|s), 0).",
    "lossless": "the produced text has exactly the law of q: the completed output law P̃ equals q, "
                "i.e. the fidelity error TV(P̃, q) = ½ Σ_z |P̃(z) − q(z)| is 0 (to 1e-9).",
    "LP optimum": "the largest E[τ] of any lossless verifier with K independent drafts, found by a "
                  "linear program over draft multisets m and outputs (accepted prefix s, extra token y).",
    "acausal bound": "E[max_k LCP(x⁽ᵏ⁾, Y)] under the best coupling of the drafts x⁽¹⁾..x⁽ᴷ⁾ with a "
                     "target sample Y ~ q (LCP = longest common prefix): an upper bound no real verifier "
                     "reaches in general, since it cannot see Y in advance.",
    "E_CIC": "the value the SpecTr-GBV paper says its rule attains: E_CIC = Σ_s q(s)·[1 − (1 − m(s))^K] "
             "over prefixes s of length 1..L, with m(s) = min(p(s)/q(s), 1).",
    "greedy relaxation": "Σ_s W̄(s) with W̄(∅) = 1 and W̄(s·y) = min(q(y|s)·W̄(s), 1 − (1 − p(s·y))^K): "
                         "a cheap upper bound on the LP optimum.",
}


def note(text: str, symbols: list[str]) -> str:
    """A figure's "What am I looking at?" note: ``text``, then each symbol it uses defined from
    ``GLOSSARY`` (KeyError for a symbol that is not defined there)."""
    return text + "\n\n" + "\n".join(f"- **{s}**: {GLOSSARY[s]}" for s in symbols)


def all_methods() -> list[str]:
    """Every registered rule's name, in display order."""
    return list(method_names())


def short(method: str) -> str:
    """The rule's short name (its class's ``short``: "BV", "SpecTr-GBV"), for legends, tables and pickers."""
    return REGISTRY[method].short


def label(method: str) -> str:
    """The rule's long name, for legends and tables."""
    return REGISTRY[method].label


def method_name(method: str) -> str:
    """"short — label" from the rule's metadata (e.g. "BV — block verification"), for pickers and
    lists: the label never repeats the short name."""
    return f"{REGISTRY[method].short} — {REGISTRY[method].label}"


def monotonicity(curves: dict[str, list[tuple[int, float]]], tol: float) -> tuple[str, str]:
    """(kind, sentence) on whether each method's E[τ] is non-decreasing in K, naming exactly the
    methods and K it covers: kind "drops" (some E[τ](K') < E[τ](K) − tol for K < K' consecutive among
    those computed), "holds" (none drops), or "unchecked" (no method was computed at two K)."""
    covered, drops = {}, []
    for m, pts in curves.items():
        pts = sorted(pts)
        if len(pts) < 2:
            continue
        covered[m] = f"{REGISTRY[m].short} (K = {', '.join(str(k) for k, _ in pts)})"
        drops += [(m, f"{REGISTRY[m].short} drops from {v1:.4f} at K={k1} to {v2:.4f} at K={k2}")
                  for (k1, v1), (k2, v2) in zip(pts, pts[1:]) if v2 < v1 - tol]
    left = [REGISTRY[m].short for m, pts in curves.items() if len(pts) < 2]
    rest = f" Not checked (computed at fewer than two K): {', '.join(left)}." if left else ""
    if drops:
        fine = [c for m, c in covered.items() if m not in {d for d, _ in drops}]
        return "drops", ("Not monotone in K: " + "; ".join(d for _, d in drops) + "."
                         + (" Non-decreasing: " + "; ".join(fine) + "." if fine else "") + rest)
    if covered:
        return "holds", ("Non-decreasing in K on this configuration, for the methods computed at two "
                         "or more K: " + "; ".join(covered.values()) + "." + rest)
    return "unchecked", "No method was computed at two values of K, so monotonicity in K is not checked here."


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>~$|#])")


def escape_markdown(text: str) -> str:
    """``text`` with Markdown's special characters backslash-escaped, so that ``st.error`` and friends
    show it as written (``__init__`` stays ``__init__``, ``_x_`` is not italic)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def markdown_table(rows: list[dict], raw: tuple[str, ...] = ()) -> str:
    """``rows`` (dicts with the same keys, in column order) as a Markdown table, every cell escaped
    (``escape_markdown``) but those of the columns in ``raw``, which hold Markdown of their own.
    A small table drawn this way costs a browser nothing: ``st.dataframe`` loads about 1.5 MB of
    data-grid and Arrow scripts for it (docs/app.md, "Page speed").

    >>> print(markdown_table([{"claim": "lossless", "x|y": 1}, {"claim": "**b**", "x|y": 2.5}], raw=("claim",)))
    | claim | x\\|y |
    |---|---|
    | lossless | 1 |
    | **b** | 2.5 |
    """
    def cell(column: str, value) -> str:
        text = str(value).replace("\n", " ")
        return text if column in raw else escape_markdown(text)

    columns = list(rows[0]) if rows else []
    lines = ["| " + " | ".join(cell("", c) for c in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(c, row[c]) for c in columns) + " |" for row in rows]
    return "\n".join(lines)
