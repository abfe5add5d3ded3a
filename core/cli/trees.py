"""The budget question's table: every tree shape of n drafted tokens × draft law × verifier.

``python -m core trees --preset NAME (or --draft/--target) --budget N --L L [--json]``
(docs/maths.md, "The budget question") prints one table for a budget of N drafted tokens and depth L: a row per shape of budget N (chains
K×L when K·L = N, every branching vector b) and draft law, with the exact E[τ] of ``rrs`` and
``traversal`` and the own-law LP (``lp``, certified in exact arithmetic where it can be), and the
largest TV of the three completed output laws from q, measured; then the i.i.d.-chains LP at the
same budget, the best ``topk`` tree of any shape by Sequoia's programme and the winner per verifier
(``core.analysis.budget``).  The table is priced first and refused in one line when too large;
progress goes to stderr when it is estimated to take more than a couple of seconds.  Every error is
one line on stderr with exit status 2, and a NaN or an infinity is an error, not a value.
"""
from __future__ import annotations

import json
import sys
from typing import Sequence

from core.cli.args import MAX_L, Parser, int_range, report_errors
from core.cli.lab import _add_models, _emit, _load_models, _table
from core.data.exact_fraction import fraction

#: Above this estimate (seconds) the table reports its progress on stderr.
PROGRESS_SECONDS = 2.0


def build_parser() -> Parser:
    p = Parser(prog="python -m core trees", description=__doc__.splitlines()[0])
    _add_models(p, drafts=False)
    p.add_argument("--budget", type=int_range("budget", 1, 256), required=True,
                   help="n, the number of drafted tokens (b_1 + b_1·b_2 + … + b_1⋯b_L)")
    p.add_argument("--L", type=int_range("L", 1, MAX_L), required=True, help="the depth of every tree")
    return p


def _value(value: float | None, frac: str | None) -> str:
    """'a/b = 1.234567' when a fraction, 'a' when an integer, else the decimal."""
    if value is None:
        return ""
    if frac and "/" not in frac:
        return frac
    return f"{frac} = {value:.6f}" if frac else f"{value:.6f}"


def _cell_text(cell, notes: list[str]) -> str:
    if cell.refused is not None and cell.expected_accepted is None:
        return _note(cell.refused, notes)
    if cell.verifier == "lp" and (cell.certificate is None or not cell.certificate.certified):
        reason = cell.refused or f"not certified: {cell.certificate.reason}"
        return f"{cell.expected_accepted:.9f} not certified " + _note(reason, notes)
    return _value(cell.expected_accepted, cell.fraction)


def _note(reason: str, notes: list[str]) -> str:
    """'refused [k]' with reason k among the footnotes (each reason once)."""
    if reason not in notes:
        notes.append(reason)
    return f"[{notes.index(reason) + 1}]"


def _tv(row) -> str:
    tvs = [c.fidelity_tv for c in row.cells.values() if c.fidelity_tv is not None]
    if not tvs:
        return ""
    worst = max(tvs)
    return "0" if worst == 0 else f"{worst:.1e}"


def render(table, temperature: float) -> str:
    """The table as text (module docstring)."""
    from core.analysis.budget import VERIFIERS

    notes: list[str] = []
    lines = [f"budget n={table.budget}  L={table.L}  V={table.V}  T={temperature:g}  "
             f"(E[τ] per verifier, block efficiency = E[τ] + 1; TV: the largest of the three, measured)"]
    rows = []
    for row in table.rows:
        cells = {"shape": row.shape.label, "law": row.law.name}
        if row.refused is not None:
            cells.update({v: "" for v in VERIFIERS}, rrs="refused " + _note(row.refused, notes), TV="")
        else:
            cells.update({v: _cell_text(row.cells[v], notes) for v in VERIFIERS}, TV=_tv(row))
        rows.append(cells)
    lines.append(_table(rows, ["shape", "law", *VERIFIERS, "TV"]))
    lines += [f"[{k}] {reason}" for k, reason in enumerate(notes, start=1)]
    lines.append("")
    if table.chains_K is None:
        lines.append(f"i.i.d.-chains LP at n={table.budget}: none (n/L = {table.budget}/{table.L} is "
                     f"not an integer)")
    elif table.chains_lp is None:
        lines.append(f"i.i.d.-chains LP at n={table.budget} (K={table.chains_K}): refused: "
                     f"{table.chains_lp_refused}")
    else:
        cert = table.chains_lp
        lines.append(f"i.i.d.-chains LP at n={table.budget} (K={table.chains_K} chains of L={table.L}): "
                     + (f"{_value(float(cert.exact), cert.fraction)}, certified" if cert.certified
                        else cert.text()))
    lines.append(_topk_line(table))
    lines.append("best per verifier (argmax within the table; lp is each (shape, law)'s ceiling):")
    winners = table.winners()
    width = max(map(len, winners), default=0)
    values = {v: _value(value, frac) for v, (value, frac, _) in winners.items()}
    span = max(map(len, values.values()), default=0)
    for v, (_, _, at) in winners.items():
        lines.append(f"  {v.ljust(width)}  {values[v].ljust(span)}  "
                     + ", ".join(f"{s.label} {law.name}" for s, law in at))
    return "\n".join(lines)


def _topk_line(table) -> str:
    head = "best topk tree of any shape by Sequoia's programme"
    if table.topk is None:
        return f"{head}: refused: {table.topk_refused}"
    t = table.topk
    sep = "" if table.V <= 10 else "."
    tree = "{" + ", ".join(sep.join(map(str, u)) for u in sorted(t.tokens, key=lambda u: (len(u), u))) + "}"
    exact = _value(t.exact, fraction(t.exact, integers=True))
    if t.positional:
        return (f"{head} (a_k = q of the k-th token in p's rank; exact on this context-independent "
                f"pair): {exact}, tree {tree}")
    return (f"{head} (Sequoia's positional model, a_k from the root's p and q; not exact on this "
            f"context-dependent pair): programme {t.model:.6f}; its tree mapped rank → token at "
            f"every node, {tree}, has exact E[τ] {exact} (topk closed form Σ q(s))")


def cmd_trees(args) -> int:
    from core.analysis.budget import budget_table, check_table

    draft, target = _load_models(args)
    seconds = check_table(draft, target, args.budget, args.L)

    def progress(done: int, total: int, what: str) -> None:
        if done < total:
            print(f"trees: [{done + 1}/{total}] {what}", file=sys.stderr, flush=True)

    table = budget_table(draft, target, args.budget, args.L,
                         progress=progress if seconds > PROGRESS_SECONDS else None)
    result = {"temperature": args.temperature, **table.describe()}
    _emit(result, json.dumps(result) if args.json else render(table, args.temperature))
    return 0


def main(argv: Sequence[str]) -> int:
    """``python -m core trees ...``: the exit status."""
    def run() -> int:
        args = build_parser().parse_args(list(argv)[1:])
        return cmd_trees(args)

    return report_errors(run, "lower --budget or --L")
