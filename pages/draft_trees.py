"""Draft trees: one sampled token tree of any shape and draft law, every tree verifier's exact E[τ]
against its own law's optimum and the i.i.d. optimum at the same budget, and which law wins at
each budget."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core.analysis.budget import VERIFIERS, coincident_laws, drafted_alike, law_curves, same_everywhere
from core.analysis.exact import LOSSLESS_TOL, MAX_SECONDS
from core.data.laws import LAWS, TOPK_LAW
from core.data.shapes import Shape
from core.rules.registry import DEFAULT_TREE_RULE, REGISTRY, display_name
from pages.ui import cached, charts, error_boundary, routing, rule_params, text, toy_config
from pages.ui.figures.trees import token_tree
from pages.ui.figures.laws import budget_curves

routing.router_guard()

#: What a tree rule does, after its name, by how it walks the tree (``Verifier.walk``); the rule
#: that samples the optimal LP's plan (``Verifier.optimal_lp``) is the own-law LP.
WALK_NOTES = {"rounds": "top-down", "leaf-to-root": "leaf to root"}


#: The budget chart is computed without asking when its tables are estimated under this many seconds.
BUDGET_AUTO_SECONDS = 3.0


def rule_name(method: str, shape: Shape) -> str:
    """The table's name of a tree rule: its name on token trees and what it does, or "lossy" where
    the instance the page runs (its defaults) is lossy by theory (``Verifier.lossless``); the
    parameters it runs with are said under the table (``rule_settings``), so that the name stays short
    enough for every column to fit."""
    name = display_name(method, shape)
    rule = REGISTRY[method]
    note = "own-law LP" if rule.optimal_lp else WALK_NOTES.get(rule.walk)
    if note:
        return f"{name} ({note})"
    if rule.needs_models:
        return name
    return name if rule().lossless() else f"{name} (lossy)"


def rule_settings(method: str) -> str:
    """The parameters the page runs a rule with (its defaults, those that change what it does:
    ``typical``'s epsilon and delta, EAGLE's release), "" for a rule without any."""
    rule = REGISTRY[method]
    if rule.needs_models:
        return ""
    return ", ".join(f"{p} = {v:g}" if isinstance(v, float) else f"{p} = {v}" for p, v in rule().settings().items())


def exact_text(x: float | None) -> str:
    """A headline value as a decimal, with the fraction it is beside it ("1.5503 (= 72331/46656)"); an
    integer as itself; a dash if missing."""
    if x is None:
        return text.DASH
    whole = text.fraction(x, integers=True)
    if whole is not None and "/" not in whole:
        return whole
    return text.fmt(x) + (f" (= {whole})" if whole else "")


#: What a certified LP value is (the metrics' help).
CERTIFIED = ("A fraction only where it is certified: an exact plan on the solver's support and an exact dual "
             "bound coincide (core.bounds.certify); otherwise the solver's value to 1e-9.")


def certified_text(cert) -> str:
    """An LP value (``core.bounds.certify.Certificate``) as a decimal a slide reads (the fraction it is
    certified to be, or the solver's value to 1e-9, goes in ``exact_note``); a dash if missing."""
    if cert is None:
        return text.DASH
    return text.fmt(float(cert.exact) if cert.certified else cert.value)


def exact_note(cert) -> str:
    """What ``certified_text`` rounds: the certified fraction, or the solver's value to nine places."""
    return "" if cert is None else (f"= {cert.fraction} exactly (certified)" if cert.certified
                                    else f"= {cert.value:.9f} (the solver's value)")


def _new_tree() -> None:
    st.session_state.trees_seed = int(st.session_state.get("trees_seed", 0)) + 1


cfg = toy_config.toy_config(methods=False, page_params=tuple(toy_config.TREE_PARAMS) + tuple(toy_config.TREES_PARAMS))
st.title("Draft trees: shapes and draft laws, each against its own optimum")
st.markdown(
    "Deployed systems rarely draft K independent chains. EAGLE-2 and SGLang take the most probable "
    "tokens at each node (**topk**), Sequoia and EAGLE-1 sample without replacement (**wor**), Hu et al. "
    "and SpecHub take the most probable tokens plus one sampled token (**greedy**). Pick the models in the "
    "sidebar, then a **shape** (chains K×L, or a static tree b: a node of depth d gets b_(d+1) draws) and a "
    "**draft law**. The page draws one tree, verifies every such draft exactly with the rules defined on "
    "any tree, and compares each with the best lossless verifier for that law, and with the best one for "
    "i.i.d. chains of the same budget.")
if cfg is None:
    st.stop()
st.markdown(f"**Models:** {cfg.description}; V = {cfg.V}, T = {cfg.T:g}.")
picked = toy_config.tree_controls(cfg)
if picked is None:
    st.stop()
shape, law = picked
topk_tree = law == TOPK_LAW.name and (not shape.chains or shape.L == 1)
st.caption(f"{shape.label} drafted by {law}: {LAWS[law].summary} Budget n = {shape.budget} drafted tokens, "
           f"depth L = {shape.L}" + (f"; below the root each chain goes on i.i.d." if shape.chains and shape.L > 1
                                     else "") + ".")

# ------------------------------------------------------------------------------------------------
st.session_state.setdefault("trees_seed", 0)
if topk_tree:       # drafted by topk at every node: one tree only, so no seed and no new one to draw
    st.header("1. The tree top-k drafts (the only one)")
    seed = st.session_state.trees_seed
else:
    st.header("1. One sampled tree")
    c1, c2, _ = st.columns([1, 1, 3], vertical_alignment="bottom")
    seed = c1.number_input("Tree seed", 0, 10**9, key="trees_seed")
    c2.button("New tree", on_click=_new_tree, key="trees_new", icon=":material/casino:")
    toy_config.write_page_url({"tree_seed": int(seed)})
refused = None
try:
    tree = cached.draw_token_tree(cfg.spec, shape, law, int(seed))
except Exception as exc:  # noqa: BLE001 - a law that does not exist here is one sentence
    refused = error_boundary.explain(exc, "the tree")
    st.error(text.escape_markdown(refused))
if refused is None:
    title = f"{shape.label} drafted by {law}" + ("" if topk_tree else f", seed {int(seed)}")
    if topk_tree:
        value = cached.topk_value(cfg.spec, shape)
        title += f"<br>top-k closed form: E[τ] = Σ q(s) = {exact_text(value)}"
    charts.chart(token_tree(tree, title=title, path_q=topk_tree), key="trees_tree")
    kinds = []
    if any(tree.deterministic(u) for u in tree.nodes()[1:]):
        kinds.append("squares on solid edges are **deterministic** children (a rank of p: topk's tokens, greedy's Top)")
    if any(not tree.deterministic(u) for u in tree.nodes()[1:]):
        kinds.append("circles on dotted edges are **sampled** (iid and wor draws, greedy's X)")
    if any(tree.multiplicity(u) > 1 for u in tree.nodes()[1:]):
        kinds.append("×m on an edge: the token was drawn m times there (iid merges equal draws)")
    kinds_text = "; ".join(kinds)
    st.caption("Node ∅ is the root, the context before the block; every other node stands for the path from the "
               f"root to it. {kinds_text[:1].upper()}{kinds_text[1:]}. Hover a node for p, q and its draw.")
    if topk_tree:
        st.info("A tree drafted by topk at every node is deterministic: the one above is the only tree. Each node "
                "is labelled with q(s), the target's probability of the path to it, and E[τ] = Σ q(s) over its "
                "nodes: no lossless verifier does better on it, and rrs, traversal and the LP all reach it (table "
                "below).")
    elif law == TOPK_LAW.name:
        st.caption("Chains \"by topk\" take p's top K tokens at the root only: below it each chain goes on by "
                   "sampling from p, not by p's top token, so this is not a top-k tree, the closed form Σ q(s) "
                   "does not apply, and the budget chart's topk line leaves such chains out.")

# ------------------------------------------------------------------------------------------------
st.header("2. Every verifier, exactly, against its own law's optimum")
st.markdown("E[τ] sums over every drafted tree and every coin. **rrs** tests the children top-down, one round "
            "each, each against S_i, the exact law of the i-th visited child; **traversal** walks leaves first. "
            "The **own-law LP** is the best any lossless verifier can do with drafts of this shape and law; the "
            "**i.i.d.-chains LP** is the best with K = n/L i.i.d. chains of the same budget.")
rules = list(cached.tree_rules(shape, law))
rule_params.controls(rules, st.sidebar)             # the tree rules' own parameters (typical's ε, δ; EAGLE's release)
if refused is not None:
    st.info("Nothing to verify: this law cannot draw this shape (above).")
else:
    too_slow = [m for m in rules
                if not REGISTRY[m].optimal_lp and cached.tree_seconds(cfg.V, shape, law, m) > MAX_SECONDS]
    # the own-law LP's value in node form, priced by its nodes; the LP-optimal verifier samples the
    # per-set form's plan, priced by its draft sets
    lp_why = cached.tree_optimum_refusal(cfg.V, shape, law)
    lp_auto = cached.optimum_auto(cfg.V, shape.L)
    plan_why = cached.tree_lp_refusal(cfg.V, shape, law)
    plan_auto = cached.tree_lp_size(cfg.V, shape, law) <= cached.LP_AUTO
    approved = st.session_state.setdefault("trees_approved", set())
    key = f"{cfg.spec}|{shape}|{law}"
    slow = [(m, cached.tree_seconds(cfg.V, shape, law, m)) for m in rules
            if not REGISTRY[m].optimal_lp and m not in too_slow]
    slow = [(m, sec) for m, sec in slow if sec > cached.EXACT_AUTO_SECONDS]
    if too_slow:
        st.warning("Too large to compute exactly here: " + ", ".join(
            f"{rule_name(m, shape)} ({text.duration(cached.tree_seconds(cfg.V, shape, law, m))})" for m in too_slow)
            + "; use a smaller V or tree.")
    ready = not (slow or (lp_why is None and not lp_auto) or (plan_why is None and not plan_auto)) or key in approved
    if not ready:
        st.warning("This is a large configuration: " + ", ".join(
            [f"{rule_name(m, shape)} about {text.duration(sec)}" for m, sec in slow]
            + ([f"the own-law LP up to about {text.duration(cached.optimum_seconds(cfg.V, shape.L))}"]
               if lp_why is None and not lp_auto else [])
            + ([f"the LP-optimal verifier's plan has {cached.tree_lp_size(cfg.V, shape, law):,} entries"]
               if plan_why is None and not plan_auto else []))
            + ".")
        if st.button("Compute anyway", type="primary", key="trees_go"):
            approved.add(key)
            st.rerun()
    else:
        n, L = shape.budget, shape.L
        K_iid = n // L if n % L == 0 else None
        jobs = [(m, (lambda m=m: cached.tree_exact(cfg.spec, m, shape, law))) for m in rules
                if m not in too_slow and (not REGISTRY[m].optimal_lp or plan_why is None)]
        if lp_why is None:
            jobs.append(("own_lp", lambda: cached.tree_lp_certificate(cfg.spec, shape, law)))
        iid_why = None if K_iid is None else cached.optimum_refusal(cfg.V, L)
        if K_iid is not None and iid_why is None:
            jobs.append(("iid_lp", lambda: cached.chains_lp_certificate(cfg.spec, K_iid, L)))
        results = cached.run_with_progress(jobs, "Exact laws and LPs", after_s=0.0 if key in approved else
                                           cached.PROGRESS_AFTER_S)
        own = results.get("own_lp")
        iid = results.get("iid_lp")
        problems = [f"{rule_name(m, shape)}: {error_boundary.explain(r, 'its exact law')}" for m, r in results.items()
                    if isinstance(r, Exception) and m in rules]
        for what, v in (("The own-law LP", own), ("The i.i.d.-chains LP", iid)):
            if isinstance(v, Exception):
                problems.append(f"{what}: {error_boundary.explain(v, 'this LP')}")
        own_cert = None if own is None or isinstance(own, Exception) else own
        iid_cert = None if iid is None or isinstance(iid, Exception) else iid
        own, iid = (None if c is None else float(c.exact) if c.certified else c.value for c in (own_cert, iid_cert))
        for e in problems:
            st.error(text.escape_markdown(e))
        c1, c2 = st.columns(2)
        c1.metric("Own-law LP: the best lossless verifier for these drafts", certified_text(own_cert),
                  help="max Σ|s|·π(t, s, y) over plans π that are lossless for the law of the drafted node set t. "
                       + CERTIFIED)
        c2.metric(f"i.i.d.-chains LP at the same budget n = {n}" + (f" (K = {K_iid}, L = {L})" if K_iid else ""),
                  certified_text(iid_cert),
                  help="The best lossless verifier of K = n/L i.i.d. chains of length L: what this law and shape "
                       "are compared with. " + CERTIFIED)
        exact_values = [f"{what} {exact_note(c)}" for what, c in (("own-law LP", own_cert), ("i.i.d.-chains LP", iid_cert))
                        if c is not None]
        if exact_values:
            line = "; ".join(exact_values)
            st.caption(text.escape_markdown(line[:1].upper() + line[1:] + "."))
        uncertified = [f"{what}: {c.reason}" for what, c in (("own-law LP", own_cert), ("i.i.d.-chains LP", iid_cert))
                       if c is not None and not c.certified]
        if uncertified:
            st.caption(text.escape_markdown("Not certified, so given to 1e-9: " + "; ".join(uncertified) + "."))
        if lp_why is not None:
            st.info(text.escape_markdown(f"The own-law LP is not shown: {lp_why}"))
        elif plan_why is not None and any(REGISTRY[m].optimal_lp for m in rules):
            st.caption(text.escape_markdown(f"The LP-optimal verifier is not run: {plan_why}: its plan has a row per "
                                            "drafted set; the own-law LP's value above is computed all the same."))
        if K_iid is None:
            st.caption(f"No i.i.d. chains have budget n = {n} at depth L = {L}: n/L is not a whole number.")
        elif iid_why is not None:
            st.caption(text.escape_markdown(f"The i.i.d.-chains LP is not shown: {iid_why}"))
        rows = [(m, r) for m, r in results.items() if m in rules and not isinstance(r, Exception)]
        if rows:
            table = pd.DataFrame([{
                "verifier": rule_name(m, shape),
                "E[τ]": r.expected_accepted,
                # the LP rule's E[τ] is the own-law LP's value: a fraction only where that is certified
                "fraction": ((own_cert.fraction or "") if own_cert is not None else "")
                if REGISTRY[m].optimal_lp else text.fraction(r.expected_accepted, integers=True) or "",
                "E[τ]+1": r.block_efficiency,
                "TV from q": text.clean(r.fidelity_tv),
                "lossless?": "yes" if r.is_lossless else "NO",
                # a lossy rule's share of what lossless verifiers can reach compares nothing
                "% own LP": 100 * r.expected_accepted / own if own and r.is_lossless else None,
                "% i.i.d. LP": 100 * r.expected_accepted / iid if iid and r.is_lossless else None,
            } for m, r in rows])
            table = table.dropna(axis=1, how="all")
            # short headers, each explained on hover: every column fits a 1280-px window's main column
            st.dataframe(table, hide_index=True, width="stretch", key="trees_table", placeholder=text.DASH,
                         height="content", column_config={
                             "E[τ]": st.column_config.NumberColumn(format="%.6f", help="Expected accepted tokens."),
                             "fraction": st.column_config.TextColumn(help="E[τ] as the fraction it is, where it is one "
                                                                          "(an LP's value only where certified)."),
                             "E[τ]+1": st.column_config.NumberColumn(format="%.4f", help="Block efficiency: tokens "
                                                                     "per target call."),
                             "TV from q": st.column_config.NumberColumn(format="%.3g", help="The completed output "
                                                                        "law's total-variation distance from q, measured."),
                             "% own LP": st.column_config.NumberColumn(format="%.2f", help="E[τ] as a share of the "
                                                                       "own-law LP (lossless rules only)."),
                             "% i.i.d. LP": st.column_config.NumberColumn(format="%.2f", help="E[τ] as a share of the "
                                                                          "i.i.d.-chains LP at the same budget.")})
            settings = [f"{display_name(m, shape)} with {rule_settings(m)}" for m, _ in rows if rule_settings(m)]
            if settings:
                st.caption("Run " + "; ".join(settings) + " (their defaults).")
            lossy = [rule_name(m, shape) for m, r in rows if not r.is_lossless]
            if lossy:
                st.warning(f"Not lossless here: {', '.join(lossy)} (TV from q above {LOSSLESS_TOL:g}): its output "
                           "is not distributed as q, so its E[τ] is not comparable with the lossless rules' nor "
                           "with the LPs.")
            if own is not None and iid is not None:
                gain = own / iid if iid > 0 else float("inf")
                st.caption(f"{law} on {shape.label}: its own optimum is {gain:.4f}× the i.i.d.-chains optimum at "
                           f"the same budget.")

# ------------------------------------------------------------------------------------------------
st.header("3. Which law, at which budget?")
L = shape.L
st.markdown(f"At every budget n (drafted tokens) and depth L = {L}, every shape of that budget (chains K×L "
            "where n/L is whole, and every static tree b) drafted by each law and verified exactly "
            "(`core.analysis.budget`, the table of `python -m core trees`). Each law's line is its **best "
            "shape of at most n drafted tokens** at each budget n for the verifier chosen; the grey lines are "
            "the i.i.d.-chains LP at the same budget (the best any verifier of K = n/L i.i.d. chains can do) and "
            "Sequoia's best top-k tree of any shape.")
CHART_RULES = {name: "own-law LP (each law's best lossless verifier)" if REGISTRY[rule].optimal_lp
               else rule_name(rule, shape) for name, rule in VERIFIERS.items()}
st.session_state.setdefault("trees_chart_rule", display_name(DEFAULT_TREE_RULE, shape))
st.session_state.setdefault("trees_chart_max", 16)
c1, c2 = st.columns([3, 2], vertical_alignment="bottom")
chart_rule = c1.radio("Verifier", list(CHART_RULES), key="trees_chart_rule", format_func=CHART_RULES.get,
                      horizontal=True)
top = c2.slider("Budgets from 4 to", 4, 16, key="trees_chart_max",
                help="Every shape of every budget, with its LPs certified: the largest budgets take longest.")
toy_config.write_page_url({"chart": chart_rule, "chart_max": int(top)})
budgets = list(range(max(4, L), int(top) + 1))
limit = cached.table_seconds_limit()
seconds = {n: cached.budget_seconds(cfg.spec, n, L) for n in budgets}
too_large = [n for n in budgets if seconds[n] > limit]
todo = [n for n in budgets if n not in too_large]
total = sum(seconds[n] for n in todo)
chart_key = f"{cfg.spec}|{L}|{top}"
chart_approved = st.session_state.setdefault("trees_chart_approved", set())
if too_large:
    st.caption(f"Left out: n = {', '.join(map(str, too_large))}, whose table would take over "
               f"{text.duration(limit)} each here; lower V or L, or the largest budget.")
if not todo:
    st.info("No budget's table can be computed here; lower V or L.")
elif total > BUDGET_AUTO_SECONDS and chart_key not in chart_approved:
    st.info(f"Every shape of {len(todo)} budgets × {len(LAWS)} laws × 3 verifiers, with certified LPs: about "
            f"{text.duration(total)} here, once (then kept for every reader of this server).")
    if st.button(f"Compute the chart (about {text.duration(total)})", type="primary", key="trees_chart_go"):
        chart_approved.add(chart_key)
        st.rerun()
else:
    bar = st.empty()
    tables, problems = {}, []
    for i, n in enumerate(todo):
        def progress(done: int, of: int, what: str, i: int = i, n: int = n) -> None:
            bar.progress((i + done / max(of, 1)) / len(todo), text=f"Budget n = {n}: {what} ({done}/{of})")
        try:
            tables[n] = cached.budget_table(cfg.spec, n, L, progress)
        except Exception as exc:  # noqa: BLE001 - one sentence per budget
            problems.append(f"n = {n}: {error_boundary.explain(exc, 'its table')}")
    bar.empty()
    for e in problems:
        st.error(text.escape_markdown(e))
    lines = law_curves(tables, chart_rule) if tables else {}
    shared = cached.shared_drafts(cfg.spec, tuple(tables), L) if tables else {}
    curves, names, notes = {}, {}, []
    for group in coincident_laws(lines):
        line, name = lines[group[0]], " = ".join(law.name for law in group)
        curves[group[0].name] = list(line.points)
        names[group[0].name] = name + (f" (ends at n = {line.last})" if line.ends is not None else "")
        if len(group) > 1:
            alike = drafted_alike(group, line, shared)
            notes.append(f"**{name}** is one line: " + (
                "they draft the same trees, with the same probabilities, on their best shapes "
                f"({', '.join(shape.label for shape in alike)})." if alike else "the same E[τ] from different trees."))
        if line.ends is not None:
            notes.append(text.escape_markdown(f"{name[:1].upper()}{name[1:]} ends at n = {line.last}: {line.ends}."))
    chains_lp, topk_tree = [], []
    for n, table in tables.items():
        if table.chains_lp is not None:
            cert = table.chains_lp
            chains_lp.append((n, float(cert.exact) if cert.certified else cert.value))
        if table.topk is not None:
            topk_tree.append((n, table.topk.exact))
    bounds = {"i.i.d.-chains LP (K = n/L)": chains_lp, "best top-k tree of any shape (Sequoia)": topk_tree}
    if tables:
        charts.chart(budget_curves(curves, CHART_RULES[chart_rule], L, bounds, names), key="trees_budget")
        everywhere = same_everywhere(shared)
        if everywhere:
            st.caption(text.escape_markdown(
                f"At V = {cfg.V}, {everywhere} draft the same trees, with the same probabilities, on every shape of "
                "these budgets that they can draw (the law of the drafted node set compared)."))
        if notes:
            st.caption(" ".join(notes))
        with st.expander("What am I looking at?"):
            st.markdown(text.note(
                "One line per draft law: at each budget n, the best E[τ] over every shape of at most n drafted "
                "tokens and depth L, for the verifier chosen (hover a point for the shape and its own budget, "
                "ties listed): a budget is a limit, and a tree of fewer tokens fits it, so a law's line never "
                "goes down (at L = 2 an odd n allows b = (1, n − 1) alone, and the best of exactly n would "
                "zig-zag). A line ends where the law cannot draw any shape of the next budget (wor, topk and "
                "greedy need as many tokens of positive p as they draw at a node); laws whose lines coincide "
                "are one line. Compare only at equal n and L.",
                ["p, q", "τ", "E[τ]", "lossless"]))
        winners = [{"n": n, "E[τ]": w[0], "as a fraction": w[1] or "",
                    "best (shape, law)": "; ".join(f"{sh.label} {law.name}" for sh, law in w[2])}
                   for n, table in tables.items() if (w := table.winners().get(chart_rule)) is not None]
        st.dataframe(pd.DataFrame(winners), hide_index=True, width="stretch", key="trees_winners",
                     column_config={"E[τ]": st.column_config.NumberColumn(format="%.6f")})
        st.caption(f"The winner at each budget for {CHART_RULES[chart_rule]}. An LP value is a fraction only where "
                   "it is certified in exact arithmetic; every table: `python -m core trees --budget N --L L`.")

# ------------------------------------------------------------------------------------------------
toy_config.copy_configuration(
    cfg, [display_name(rule, shape) for rule in VERIFIERS.values()], ["lp"], key="trees_copy", drafts=toy_config.tree_flags(shape, law),
    label="Copy this configuration: the command lines that reproduce these numbers",
    caption="The i.i.d.-chains LP at the same budget: `python -m core bound --draft p.json --target q.json "
            f"--K n/L --L {shape.L} --kind lp`. This page's address also holds the configuration.")
