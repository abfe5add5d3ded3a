"""Small formatting helpers shared by the pages: numbers, and methods by the metadata of their rule
class (``core.rules.registry.REGISTRY``)."""
from __future__ import annotations

import math
import re

from core.data.exact_fraction import EXACT_TOL, as_fraction, fraction  # noqa: F401 (the pages' fraction is the library's)
from core.rules.registry import REGISTRY, chains_rules, is_user_rule


def clean(x: float) -> float:
    """``x`` as the exact value it is within ``EXACT_TOL`` (1e-12) of, where it is one: round-off
    around a whole number (7.8e-17, −0.0, 0.9999999999999998) is that number, and a value within
    rounding of a fraction (``as_fraction``: 11/9 computed in float64) is that fraction's float.
    Every number a page shows goes through it (``fmt``, ``number``), so no page shows 1.1e-16 for 0.
    ``fraction`` (from ``core.data.exact_fraction``) writes a value as the fraction it equals.

    >>> clean(1.1e-16), clean(-0.0), clean(1 - 2e-16), clean(11 / 9 + 3e-16) == 11 / 9, clean(0.25 + 1e-9)
    (0.0, 0.0, 1.0, True, 0.250000001)
    """
    x = float(x)
    if not math.isfinite(x):
        return x
    whole = round(x)
    if abs(x - whole) <= EXACT_TOL:
        return float(whole) + 0.0          # + 0.0: −0.0 is 0
    f = as_fraction(x)
    return float(f) if f is not None else x


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
    is "4e-10", never "0.0000" nor "0.0000000004".  A value within 1e-12 of an exact one is that
    one (``clean``: 4e-17 is "0"); a missing or non-finite value is a dash.

    >>> [number(v) for v in (4e-10, 4e-17, 0.0646, 0.0, 1.5e-4, 0.0012, 2.5e7, None, float("nan"))]
    ['4e-10', '0', '0.0646', '0', '0.00015', '0.0012', '2.5e+07', '—', '—']
    """
    if x is None or not math.isfinite(float(x)):
        return DASH
    x = clean(x)
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
    """Every rule that runs on K i.i.d. drafts (what the laboratory, the leaderboard and the step page's
    chains draft), in display order: the registered ones, then those loaded from outside the project
    (``EXPLORER_RULES``); a released port that runs only on its engine's trees is on the Draft trees
    page (``core.rules.registry.chains_rules``)."""
    return chains_rules()


#: How a rule loaded from outside the project is marked wherever it is named.
YOUR_RULE = "your rule"


def short(method: str) -> str:
    """The rule's short name (its class's ``short``: "BV", "SpecTr-GBV"), for legends, tables and
    pickers; a rule of one's own is marked "(your rule)", and a name no rule has here (a results
    file's rule that is not loaded) is shown as it is."""
    cls = REGISTRY.get(method)
    if cls is None:
        return method
    return f"{cls.short} ({YOUR_RULE})" if is_user_rule(method) else cls.short


def label(method: str) -> str:
    """The rule's long name, for legends and tables (the name itself for an unknown one)."""
    cls = REGISTRY.get(method)
    return method if cls is None else cls.label


def method_name(method: str) -> str:
    """"short — label" from the rule's metadata (e.g. "BV — block verification"), for pickers and
    lists: the label never repeats the short name."""
    return f"{short(method)} — {label(method)}"


def monotonicity(curves: dict[str, list[tuple[float, float]]], tol: float, axis: str = "K") -> tuple[str, str]:
    """(kind, sentence) on whether each method's E[τ] is non-decreasing in ``axis`` (K or L), naming
    exactly the methods and values it covers: kind "drops" (some E[τ](x') < E[τ](x) − tol for x < x'
    consecutive among those computed), "holds" (none drops), or "unchecked" (no method was computed
    at two values)."""
    covered, drops = {}, []
    for m, pts in curves.items():
        pts = sorted(pts)
        if len(pts) < 2:
            continue
        covered[m] = f"{short(m)} ({axis} = {', '.join(f'{k:g}' for k, _ in pts)})"
        drops += [(m, f"{short(m)} drops from {v1:.4f} at {axis}={k1:g} to {v2:.4f} at {axis}={k2:g}")
                  for (k1, v1), (k2, v2) in zip(pts, pts[1:]) if v2 < v1 - tol]
    left = [short(m) for m, pts in curves.items() if len(pts) < 2]
    rest = f" Not checked (computed at fewer than two {axis}): {', '.join(left)}." if left else ""
    if drops:
        fine = [c for m, c in covered.items() if m not in {d for d, _ in drops}]
        return "drops", (f"Not monotone in {axis}: " + "; ".join(d for _, d in drops) + "."
                         + (" Non-decreasing: " + "; ".join(fine) + "." if fine else "") + rest)
    if covered:
        return "holds", (f"Non-decreasing in {axis} on this configuration, for the methods computed at two "
                         f"or more {axis}: " + "; ".join(covered.values()) + "." + rest)
    return "unchecked", (f"No method was computed at two values of {axis}, so monotonicity in {axis} is not "
                         "checked here.")


def best_temperature(curves: dict[str, list[tuple[float, float]]]) -> str:
    """One sentence: at which temperature each method's E[τ] is largest, and its range over the
    temperatures computed.

    >>> best_temperature({"sd": [(0.5, 1.2), (1.0, 1.1), (1.5, 1.0)]})
    'Largest E[τ]: SD at T = 0.5 (1.2000; from 1.0000 to 1.2000 over T = 0.5 to 1.5).'
    """
    parts = []
    for m, pts in curves.items():
        if not pts:
            continue
        pts = sorted(pts)
        top = max(pts, key=lambda p: p[1])
        parts.append(f"{REGISTRY[m].short} at T = {top[0]:g} ({top[1]:.4f}; from {min(v for _, v in pts):.4f} "
                     f"to {top[1]:.4f} over T = {pts[0][0]:g} to {pts[-1][0]:g})")
    return "Largest E[τ]: " + "; ".join(parts) + "." if parts else "No method was computed at any temperature."


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
