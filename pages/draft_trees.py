"""Draft trees: one sampled token tree of any shape and draft law, every tree verifier's exact E[τ]
against its own law's optimum and the i.i.d. optimum at the same budget, and which law wins at
each budget."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core.analysis.exact import LOSSLESS_TOL, MAX_SECONDS
from core.data.laws import LAWS
from core.rules.registry import REGISTRY
from pages.ui import cached, charts, errors, figures, routing, text, toy_config

routing.router_guard()

#: How the table names each tree rule: ``rrs`` is run by the ``specinfer`` rule on every shape and law.
RULE_NAMES = {"specinfer": "rrs (top-down)", "traversal": "traversal (leaf to root)",
              "lp_optimal": "lp_optimal (own-law LP)"}


def rule_name(method: str) -> str:
    """The table's name of a tree rule; a rule registered later says whether it is lossy, with the
    defaults of its own parameters (``typical``'s epsilon and delta)."""
    if method in RULE_NAMES:
        return RULE_NAMES[method]
    rule = REGISTRY[method]
    default = None if rule.needs_models else rule()
    notes = [f"{p} = {getattr(default, p):g}" for p in rule.parameters
             if isinstance(getattr(default, p, None), float)] + ([] if rule.lossless_by_theory else ["lossy"])
    return f"{rule.name} ({', '.join(notes)})" if notes else rule.name


def exact_text(x: float | None) -> str:
    """A value as the fraction it is (an integer as itself), else to six places; a dash if missing."""
    return text.DASH if x is None else text.fraction(x, integers=True) or text.fmt(x, 6)


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
topk_tree = law == "topk" and (not shape.chains or shape.L == 1)
st.caption(f"{shape.label} drafted by {law}: {LAWS[law].summary} Budget n = {shape.budget} drafted tokens, "
           f"depth L = {shape.L}" + (f"; below the root each chain goes on i.i.d." if shape.chains and shape.L > 1
                                     else "") + ".")

# ------------------------------------------------------------------------------------------------
st.header("1. One sampled tree")
st.session_state.setdefault("trees_seed", 0)
c1, c2, _ = st.columns([1, 1, 3], vertical_alignment="bottom")
seed = c1.number_input("Tree seed", 0, 10**9, key="trees_seed")
c2.button("New tree", on_click=_new_tree, key="trees_new", icon=":material/casino:")
toy_config.write_page_url({"tree_seed": int(seed)})
refused = None
try:
    tree = cached.draw_token_tree(cfg.spec, shape, law, int(seed))
except Exception as exc:  # noqa: BLE001 - a law that does not exist here is one sentence
    refused = errors.explain(exc, "the tree")
    st.error(text.escape_markdown(refused))
if refused is None:
    title = f"{shape.label} drafted by {law}, seed {int(seed)}"
    if topk_tree:
        value = cached.topk_value(cfg.spec, shape)
        title += f"<br>top-k closed form: E[τ] = Σ q(s) = {exact_text(value)}"
    charts.chart(figures.token_tree(tree, title=title, path_q=topk_tree), key="trees_tree")
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
    elif law == "topk":
        st.caption("topk chains are deterministic at the root only: the chains go on i.i.d., so the closed form "
                   "Σ q(s) of a top-k tree does not apply.")

# ------------------------------------------------------------------------------------------------
st.header("2. Every verifier, exactly, against its own law's optimum")
st.markdown("E[τ] sums over every drafted tree and every coin. **rrs** tests the children top-down, one round "
            "each, each against S_i, the exact law of the i-th visited child; **traversal** walks leaves first. "
            "The **own-law LP** is the best any lossless verifier can do with drafts of this shape and law; the "
            "**i.i.d.-chains LP** is the best with K = n/L i.i.d. chains of the same budget.")
rules = list(cached.TREE_RULES)
if refused is not None:
    st.info("Nothing to verify: this law cannot draw this shape (above).")
else:
    too_slow = [m for m in rules if m != "lp_optimal" and cached.tree_seconds(cfg.V, shape, law, m) > MAX_SECONDS]
    lp_why = cached.tree_lp_refusal(cfg.V, shape, law)
    lp_auto = cached.tree_lp_size(cfg.V, shape, law) <= cached.LP_AUTO
    approved = st.session_state.setdefault("trees_approved", set())
    key = f"{cfg.spec}|{shape}|{law}"
    slow = [(m, cached.tree_seconds(cfg.V, shape, law, m)) for m in rules if m != "lp_optimal" and m not in too_slow]
    slow = [(m, sec) for m, sec in slow if sec > cached.EXACT_AUTO_SECONDS]
    if too_slow:
        st.warning("Too large to compute exactly here: " + ", ".join(
            f"{rule_name(m)} ({text.duration(cached.tree_seconds(cfg.V, shape, law, m))})" for m in too_slow)
            + "; use a smaller V or tree.")
    ready = not (slow or (lp_why is None and not lp_auto)) or key in approved
    if not ready:
        st.warning("This is a large configuration: " + ", ".join(
            [f"{rule_name(m)} about {text.duration(sec)}" for m, sec in slow]
            + ([f"the own-law LP has {cached.tree_lp_size(cfg.V, shape, law):,} entries"] if lp_why is None and not lp_auto else []))
            + ".")
        if st.button("Compute anyway", type="primary", key="trees_go"):
            approved.add(key)
            st.rerun()
    else:
        n, L = shape.budget, shape.L
        K_iid = n // L if n % L == 0 else None
        jobs = [(m, (lambda m=m: cached.tree_exact(cfg.spec, m, shape, law))) for m in rules
                if m not in too_slow and (m != "lp_optimal" or lp_why is None)]
        if lp_why is None:
            jobs.append(("own_lp", lambda: cached.tree_lp_value(cfg.spec, shape, law)))
        iid_why = None if K_iid is None else cached.lp_refusal(cfg.V, K_iid, L)
        if K_iid is not None and iid_why is None:
            jobs.append(("iid_lp", lambda: cached.bound(cfg.spec, "lp_optimum", K_iid, L)))
        results = cached.run_with_progress(jobs, "Exact laws and LPs", after_s=0.0 if key in approved else
                                           cached.PROGRESS_AFTER_S)
        own = results.get("own_lp")
        iid = results.get("iid_lp")
        problems = [f"{rule_name(m)}: {errors.explain(r, 'its exact law')}" for m, r in results.items()
                    if isinstance(r, Exception) and m in rules]
        for what, v in (("The own-law LP", own), ("The i.i.d.-chains LP", iid)):
            if isinstance(v, Exception):
                problems.append(f"{what}: {errors.explain(v, 'this LP')}")
        own = None if own is None or isinstance(own, Exception) else float(own)
        iid = None if iid is None or isinstance(iid, Exception) else float(iid)
        for e in problems:
            st.error(text.escape_markdown(e))
        c1, c2 = st.columns(2)
        c1.metric("Own-law LP: the best lossless verifier for these drafts", exact_text(own),
                  help="max Σ|s|·π(t, s, y) over plans π that are lossless for the law of the drafted node set t.")
        c2.metric(f"i.i.d.-chains LP at the same budget n = {n}" + (f" (K = {K_iid}, L = {L})" if K_iid else ""),
                  exact_text(iid),
                  help="The best lossless verifier of K = n/L i.i.d. chains of length L: what this law and shape "
                       "are compared with.")
        if lp_why is not None:
            st.info(text.escape_markdown(f"The own-law LP is not shown: {lp_why}"))
        if K_iid is None:
            st.caption(f"No i.i.d. chains have budget n = {n} at depth L = {L}: n/L is not a whole number.")
        elif iid_why is not None:
            st.caption(text.escape_markdown(f"The i.i.d.-chains LP is not shown: {iid_why}"))
        rows = [(m, r) for m, r in results.items() if m in rules and not isinstance(r, Exception)]
        if rows:
            table = pd.DataFrame([{
                "verifier": rule_name(m),
                "E[τ]": r.expected_accepted,
                "E[τ] as a fraction": text.fraction(r.expected_accepted, integers=True) or "",
                "block efficiency E[τ]+1": r.block_efficiency,
                "TV from q (measured)": text.clean(r.fidelity_tv),
                "lossless?": "yes" if r.is_lossless else "NO",
                # a lossy rule's share of what lossless verifiers can reach compares nothing
                "% of own-law LP": 100 * r.expected_accepted / own if own and r.is_lossless else None,
                "% of i.i.d.-chains LP": 100 * r.expected_accepted / iid if iid and r.is_lossless else None,
            } for m, r in rows])
            table = table.dropna(axis=1, how="all")
            st.dataframe(table, hide_index=True, width="stretch", key="trees_table", placeholder=text.DASH,
                         column_config={"E[τ]": st.column_config.NumberColumn(format="%.6f"),
                                        "block efficiency E[τ]+1": st.column_config.NumberColumn(format="%.6f"),
                                        "TV from q (measured)": st.column_config.NumberColumn(format="%.3g"),
                                        "% of own-law LP": st.column_config.NumberColumn(format="%.2f"),
                                        "% of i.i.d.-chains LP": st.column_config.NumberColumn(format="%.2f")})
            lossy = [rule_name(m) for m, r in rows if not r.is_lossless]
            if lossy:
                st.warning(f"Not lossless here: {', '.join(lossy)} (TV from q above {LOSSLESS_TOL:g}): its output "
                           "is not distributed as q, so its E[τ] is not comparable with the lossless rules' nor "
                           "with the LPs.")
            if own is not None and iid is not None:
                gain = own / iid if iid > 0 else float("inf")
                st.caption(f"{law} on {shape.label}: its own optimum is {gain:.4f}× the i.i.d.-chains optimum at "
                           f"the same budget.")

# ------------------------------------------------------------------------------------------------
toy_config.copy_configuration(
    cfg, ["rrs", "traversal", "lp_optimal"], ["lp"], key="trees_copy", drafts=toy_config.tree_flags(shape, law),
    label="Copy this configuration: the command lines that reproduce these numbers",
    caption="The i.i.d.-chains LP at the same budget: `python -m core bound --draft p.json --target q.json "
            f"--K n/L --L {shape.L} --kind lp`. This page's address also holds the configuration.")
