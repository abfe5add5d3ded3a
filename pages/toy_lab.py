"""Toy laboratory: every method's exact E[τ], block efficiency and fidelity error next to the bounds;
E[τ] against K; the optimal coupling; Monte Carlo against the exact laws."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import streamlit as st

from core.analysis.depth_gain import depth_rows
from core.analysis.exact import LOSSLESS_TOL
from core.analysis.montecarlo import output_law_test
from core.rules.registry import BASELINE, BEST_SINGLE_DRAFT, REGISTRY, STORY_RULES, TOP_DOWN_OPTIMUM
from pages.ui import cached, charts, error_boundary, routing, text, toy_config
from pages.ui.figures.style import BOUND_SHORT, BOUND_STYLE
from pages.ui.figures.toy_lab import (coupling_heatmap, expected_tau_chart, gain_by_depth, loss_gain_chart, tau_curves,
                                      tau_histograms)

routing.router_guard()

BOUND_KEYS = ["lp_optimum", "acausal", "claimed_cic", "greedy"]
BOUND_HELP = {
    "lp_optimum": "Largest E[τ] of any lossless verifier with K i.i.d. drafts (linear program).",
    "acausal": "E[max LCP] under the best coupling of drafts and target text: an upper bound that no verifier "
               "reaches in general.",
    "claimed_cic": "The value the SpecTr-GBV paper says its rule attains: Σ_s q(s)·[1 − (1 − m(s))^K].",
    "greedy": "Σ W̄(s), W̄(s·y) = min(q(y|s)·W̄(s), 1 − (1 − p(s·y))^K): a cheap upper bound on the LP.",
}

cfg = toy_config.toy_config(monte_carlo=True)
st.title("Toy laboratory: every method, computed exactly")
st.markdown(
    "Choose a draft model **p** and a target model **q** on a small vocabulary in the sidebar, then "
    "slide **K** (drafts), **L** (draft length) and **T** (temperature). Every number below is "
    "**exact**: it sums over every possible set of drafts and every coin a verifier tosses. "
    "A method is lossless when its fidelity error is 0; the LP optimum is the best E[τ] any lossless "
    "verifier can reach.")
if cfg is None:
    st.stop()
st.markdown(toy_config.config_caption(cfg))
st.page_link(routing.draft_trees(), label="Other draft laws and tree shapes on these models: the Draft trees page",
             icon=":material/park:", query_params=toy_config.trees_link(),
             help="Top-k, without replacement, greedy and static trees b, each verified exactly against the best "
                  "lossless verifier for its own law and the i.i.d. optimum at the same budget.")
with st.expander("Show p and q at the start of the block"):
    st.dataframe(toy_config.root_table(cfg), width="stretch")
    st.caption("p(·|∅) and q(·|∅) after temperature. For Markov and table models the later "
               "conditionals depend on the prefix.")

methods = list(cfg.methods)
if not methods:
    st.info("Pick at least one method in the sidebar.")
    st.stop()

too_large = cached.refused(cfg.V, cfg.K, cfg.L, methods)
if too_large:  # past core's hard limit: no button can compute these, so none is offered
    # a rule whose E[τ] has a closed form on these models gives it, with no estimate of a computation
    draft, target = cfg.models
    closed = {m: REGISTRY[m].model_expected_tau(draft, target, cfg.K, cfg.L) for m in too_large
              if hasattr(REGISTRY[m], "model_expected_tau")}
    closed = {m: v for m, v in closed.items() if v is not None}
    if [m for m in too_large if m not in closed]:
        st.warning(cached.refusal_note(cfg.V, cfg.K, cfg.L, [m for m in too_large if m not in closed]))
    for m, value in closed.items():
        st.info(f"{text.short(m)}: E[τ] = {value:.4f}, in closed form (the sum over depths i of the chance "
                f"that its walk reaches depth i). Its whole output law, over V^(L+1) = {cfg.V ** (cfg.L + 1):,} "
                "sequences, is too large to compute here, so its fidelity error and its row below are not shown.")
    methods = [m for m in methods if m not in too_large]
if not methods:
    st.info("None of the chosen methods can be computed exactly on this configuration; lower V, K or L.")
    st.stop()

key = hashlib.sha1(f"{cfg.spec}|{cfg.K}|{cfg.L}".encode()).hexdigest()[:12]
approved = st.session_state.setdefault("lab_approved", set())
note = cached.cost_note(cfg.V, cfg.K, cfg.L, methods)
if note and key not in approved:
    st.warning(note)
    if st.button("Compute anyway", type="primary", key="lab_go"):
        approved.add(key)
        st.rerun()
    st.stop()

# the LP optimum in node form (its cost grows with the nodes, not with K); the acausal bound and the
# optimal coupling's plan in the per-set form (one block per draft set)
opt_why = cached.optimum_refusal(cfg.V, cfg.L)
opt_auto = cached.optimum_auto(cfg.V, cfg.L) or f"lp{key}" in approved
lp_size = cached.lp_size(cfg.V, cfg.K, cfg.L)
lp_why = cached.lp_refusal(cfg.V, cfg.K, cfg.L)
lp_ok = lp_why is None
lp_auto = lp_size <= cached.LP_AUTO or f"lp{key}" in approved

# ------------------------------------------------------------------------------------------------
jobs = [(m, (lambda m=m: cached.exact(cfg.spec, m, cfg.K, cfg.L))) for m in methods]
jobs += [("claimed_cic", lambda: cached.bound(cfg.spec, "claimed_cic", cfg.K, cfg.L)),
         ("greedy", lambda: cached.bound(cfg.spec, "greedy", cfg.K, cfg.L))]
if opt_why is None and opt_auto:
    jobs += [("lp_optimum", lambda: cached.bound(cfg.spec, "lp_optimum", cfg.K, cfg.L))]
if lp_ok and lp_auto:
    jobs += [("acausal", lambda: cached.bound(cfg.spec, "acausal", cfg.K, cfg.L))]
# a configuration the reader approved as large shows its bar at once; others only if they linger
results = cached.run_with_progress(jobs, "Computing exact laws and bounds",
                                   after_s=0.0 if note else cached.PROGRESS_AFTER_S)

rows, problems = [], []
for m in methods:
    r = results[m]
    if isinstance(r, Exception):
        problems.append(f"{text.short(m)}: {error_boundary.explain(r, 'its exact law')}")
        continue
    rows.append({"method": m, "expected_accepted": r.expected_accepted,
                 "block_efficiency": r.block_efficiency, "fidelity_tv": r.fidelity_tv,
                 "tau_pmf": r.tau_pmf})
bounds = {}
for b in BOUND_KEYS:
    v = results.get(b)
    bounds[b] = None if v is None or isinstance(v, Exception) else float(v)
    if isinstance(v, Exception):
        problems.append(f"{BOUND_STYLE[b][0]}: {error_boundary.explain(v, 'this bound')}")

exact_tau = {r["method"]: r["expected_accepted"] for r in rows}


def top_down_optimum_note(tau: dict[str, float]) -> str:
    """Why the optimal top-down rule sits below the best single-draft rule at K = 1, with the values on
    the page (``tau``: E[τ] by rule)."""
    def value(m: str) -> str:
        return text.fraction(tau[m]) or text.fmt(tau[m])
    sd, bv, td = (REGISTRY[m].short for m in (BASELINE, BEST_SINGLE_DRAFT, TOP_DOWN_OPTIMUM))
    baseline = f", {sd}'s E[τ] = {value(BASELINE)}" if BASELINE in tau else ""
    block = (f"{bv} ({value(BEST_SINGLE_DRAFT)}) reads the whole block before it decides, which no top-down rule "
             "does, and can sit above it." if BEST_SINGLE_DRAFT in tau else f"Block rules such as {bv} read the "
             "whole block before they decide, which no top-down rule does, and can do better.")
    return (f"At K = 1 the best top-down rule is token-level {sd}: a top-down rule settles each token at its node "
            "before it sees the rest of the draft, and with one draft the most it can accept there is "
            f"min(p, q), {sd}'s test. So {td} ({value(TOP_DOWN_OPTIMUM)}) equals {sd} here{baseline}; {block}")


# ------------------------------------------------------------------------------------------------
# One section at a time: only the open tab is computed and drawn (``toy_config.LAB_SECTIONS`` says
# why), and the URL names it, so a link opens the same tab.
tab_methods, tab_drafts, tab_temperature, tab_length, tab_coupling, tab_mc, tab_depth, tab_loss = st.tabs(
    list(toy_config.LAB_SECTIONS.values()), key="lab_section", on_change="rerun")
st.session_state.setdefault("lab_kmax", min(8, max(4, cfg.K)))   # kept across tabs (routing.PERSISTENT_KEYS)
open_section = toy_config.lab_section_name(st.session_state.lab_section)
toy_config.write_page_url({"section": open_section, **({"every": "1"} if st.session_state.lab_every else {}),
                           **({"kmax": str(st.session_state.lab_kmax)} if open_section == "drafts" else {})})

if tab_methods.open:
    with tab_methods:
        st.header("1. Exact E[τ] of every method, next to the bounds")
        for e in problems:
            st.error(text.escape_markdown(e))

        cols = st.columns(4)
        for c, b in zip(cols, BOUND_KEYS):
            c.metric(BOUND_SHORT[b], text.fmt(bounds[b]), help=f"{BOUND_STYLE[b][0]}: {BOUND_HELP[b]}")
        exact_bounds = [f"{BOUND_STYLE[b][0]} = {text.fraction(v)}" for b, v in bounds.items()
                        if text.fraction(v)]
        if exact_bounds:
            st.caption("As exact fractions: " + "; ".join(exact_bounds) + ".")
        if opt_why is not None:
            st.info(text.escape_markdown(f"The LP optimum is not shown: {opt_why}"))
        if not lp_ok:
            st.info(text.escape_markdown(f"The acausal bound is not shown: {lp_why}"))
        if (opt_why is None and not opt_auto) or (lp_ok and not lp_auto):
            what = [f"the LP optimum takes up to about {cached.optimum_seconds(cfg.V, cfg.L):,.0f} s"] \
                if opt_why is None and not opt_auto else []
            what += [f"the acausal bound needs an LP of size {lp_size:,}"] if lp_ok and not lp_auto else []
            st.info(text.escape_markdown("; ".join(what).capitalize() + "."))
            if st.button("Solve the LPs", key="lab_lp"):
                approved.add(f"lp{key}")
                st.rerun()

        if rows:
            lp = bounds.get("lp_optimum")
            # a lossy rule is never crowned: the lossless ones ranked by E[τ], the lossy ones apart
            ranked = sorted((r for r in rows if results[r["method"]].is_lossless), key=lambda r: -r["expected_accepted"])
            rank = {r["method"]: str(i + 1) for i, r in enumerate(ranked)}
            table = pd.DataFrame([{
                "rank": rank.get(r["method"], "lossy: not ranked"),
                "method": text.short(r["method"]),
                "E[τ]": r["expected_accepted"],
                "E[τ] as a fraction": text.fraction(r["expected_accepted"]) or "",
                "block efficiency E[τ]+1": r["block_efficiency"],
                "fidelity error (TV)": text.clean(r["fidelity_tv"]),
                "lossless?": "yes" if results[r["method"]].is_lossless else "NO",
                "% of LP optimum": (100 * r["expected_accepted"] / lp) if lp else None,
            } for r in rows])
            if not lp:
                table = table.drop(columns=["% of LP optimum"])
            st.dataframe(table, hide_index=True, width="stretch", key="lab_table", height="content",
                         column_config={"E[τ]": st.column_config.NumberColumn(format="%.6f"),
                                        "block efficiency E[τ]+1": st.column_config.NumberColumn(format="%.6f"),
                                        "fidelity error (TV)": st.column_config.NumberColumn(format="%.3g"),
                                        "% of LP optimum": st.column_config.NumberColumn(format="%.2f")})
            charts.chart(expected_tau_chart(rows, bounds), key="lab_bars")
            with st.expander("What am I looking at?"):
                st.markdown(text.note(
                    "One mark per method: its exact E[τ] on this configuration. A bar starts at 0, so its length "
                    "is its value; where the values are close they are dots instead, on an axis that spans them, "
                    "so that their differences show. Methods that are not lossless on this configuration are "
                    "drawn apart, on the right, on their own axis: they accept more by changing the output law, "
                    "so their E[τ] is no fair comparison. The horizontal lines are the bounds; a lossless method "
                    "can never rise above the LP optimum.",
                    ["τ", "E[τ]", "lossless", "LP optimum", "acausal bound", "E_CIC", "greedy relaxation"]))
            if cfg.K == 1 and TOP_DOWN_OPTIMUM in exact_tau:
                st.caption(top_down_optimum_note(exact_tau))
            below = [m for m, v in exact_tau.items() if REGISTRY[m].below_baseline and BASELINE in exact_tau
                     and v < exact_tau[BASELINE] - LOSSLESS_TOL]
            if below:
                st.caption(f"Below {text.short(BASELINE)} ({text.fmt(exact_tau[BASELINE])}) here, by construction: "
                           + "; ".join(f"{text.short(m)} ({text.fmt(exact_tau[m])}), since {REGISTRY[m].below_baseline}"
                                       for m in below) + ".")
            lossy = [text.short(r["method"]) for r in rows if not results[r["method"]].is_lossless]
            above = [text.short(r["method"]) for r in rows if lp and r["expected_accepted"] > lp + LOSSLESS_TOL]
            if lossy:
                its, law, differs, is_ = ("Its", "output law", "differs", "is") if len(lossy) == 1 else \
                    ("Their", "output laws", "differ", "are")
                st.warning(f"Not lossless on this configuration: {', '.join(lossy)}. {its} {law} {differs} "
                           f"from q, so {its.lower()} E[τ] {is_} not comparable with the lossless methods'"
                           + (f" (above the LP optimum: {', '.join(above)})." if above else "."))
            st.download_button("Download these results (JSON)", key="lab_download", mime="application/json",
                               file_name="toy_lab_results.json",
                               data=json.dumps({"configuration": cfg.source, "bounds": bounds,
                                                "methods": [{k: (v.tolist() if isinstance(v, np.ndarray) else v)
                                                             for k, v in r.items()} for r in rows]}, indent=2))


#: The temperatures E[τ] is drawn at (both models tempered alike).
TEMPERATURES = [round(0.1 * i, 1) for i in range(1, 21)]


def spec_at(T: float) -> str:
    """The configuration's models at temperature ``T`` (``cached.model_spec`` of the same models)."""
    spec = json.loads(cfg.spec)
    return json.dumps({**spec, "T": float(T)}, sort_keys=True)


def curves_section(axis: str, points: list[tuple[float, str, int, int]], every_bound: bool) -> None:
    """E[τ] against ``axis`` (K, T or L): every point (x, spec, K, L) of ``points`` computed exactly
    for the methods drawn and the LP optimum (and, with ``every_bound``, the other bounds), where it
    answers quickly (the rest listed under the chart); lossy points drawn open; then whether each
    method's E[τ] ever drops as x grows.  With many methods chosen the chart opens on the few that
    tell the story (``STORY_RULES``), a toggle away from the rest."""
    story = [m for m in STORY_RULES if m in methods]
    crowded = len(methods) > len(story) + 2
    every = st.toggle(f"Draw every chosen method ({len(methods)}) and every bound", key="lab_every",
                      help=f"Off: {', '.join(text.short(m) for m in story)} and the LP optimum, the curves that "
                           "tell the story; the others stay a click away in the legend.") if crowded else True
    drawn = methods if every else story
    kinds = (BOUND_KEYS if every_bound else ["lp_optimum"]) if every else ["lp_optimum"]
    current = {"K": cfg.K, "T": cfg.T, "L": cfg.L}[axis]
    jobs, skipped = [], []
    for x, spec, K, L in points:
        here = (K, L, spec) == (cfg.K, cfg.L, cfg.spec)
        for m in drawn:
            if not here and (cached.exact_seconds(cfg.V, K, L, m) > cached.EXACT_AUTO_SECONDS or
                             (REGISTRY[m].optimal_lp and cached.lp_size(cfg.V, K, L) > cached.LP_AUTO)):
                skipped.append(f"{text.short(m)} at {axis} = {x:g}")
                continue
            # a single-draft rule reads draft 1 only: its law is the same at every K
            k_law = 1 if REGISTRY[m].single_draft else K
            jobs.append((f"{m}@{x}", (lambda m=m, spec=spec, k=k_law, L=L: cached.exact(spec, m, k, L))))
        for b in kinds:
            if (b == "acausal" and cached.lp_size(cfg.V, K, L) > cached.LP_AUTO) or \
                    (b == "lp_optimum" and not (cached.optimum_auto(cfg.V, L) and cached.optimum_refusal(cfg.V, L) is None)):
                skipped.append(f"{BOUND_STYLE[b][0]} at {axis} = {x:g}")
                continue
            jobs.append((f"{b}@{x}", (lambda b=b, spec=spec, K=K, L=L: cached.bound(spec, b, K, L))))
    results = cached.run_with_progress(jobs, f"E[τ] for every {axis}")
    curves: dict[str, list] = {m: [] for m in drawn}
    bcurves: dict[str, list] = {b: [] for b in kinds}
    lossy: dict[str, list] = {}
    for name, v in results.items():
        what, x = name.rsplit("@", 1)
        x = float(x) if axis == "T" else int(float(x))
        if isinstance(v, Exception):
            skipped.append(f"{text.short(what) if what in curves else BOUND_STYLE[what][0]} at {axis} = {x:g}")
            continue
        if what in curves:
            curves[what].append((x, float(v.expected_accepted)))
            if not v.is_lossless:
                lossy.setdefault(what, []).append(x)
        else:
            bcurves[what].append((x, float(v)))
    charts.chart(tau_curves(axis, curves, bcurves, current=current, lossy=lossy), key=f"lab_vs{axis}")
    with st.expander("What am I looking at?"):
        st.markdown(text.note(
            f"E[τ] of each method as {CURVE_WORDS[axis]} changes, the rest of the configuration as in the sidebar, "
            "with the LP optimum (the best any lossless verifier can do) as grey diamonds; the dotted vertical line "
            f"marks the sidebar's {axis}. An open mark is a point where the method is not lossless: it accepts more "
            "by changing the output law, so that value is no fair comparison. A point is missing where it would "
            "take too long to compute (listed under the chart).",
            ["K, L", "τ", "E[τ]", "LP optimum", "lossless"]))
    if axis == "T":     # nothing says E[τ] should rise or fall with T: where it is largest, per method
        st.info(text.best_temperature(curves))
    else:
        kind, verdict = text.monotonicity(curves, LOSSLESS_TOL, axis)
        {"drops": st.warning, "holds": st.success, "unchecked": st.info}[kind](verdict)
    if not every:
        st.caption(f"Drawn: {', '.join(text.short(m) for m in story)} and the LP optimum. The toggle above draws "
                   f"every chosen method ({len(methods)}) and every bound.")
    if skipped:
        st.caption("Left out to keep the page fast: " + ", ".join(skipped) + ".")


#: How each axis is said in a sentence.
CURVE_WORDS = {"K": "the number of drafts K", "T": "the temperature T of both models", "L": "the draft length L"}
K_GRID = toy_config.K_GRID


if tab_drafts.open:
    with tab_drafts:
        st.header("2. Do more drafts help? E[τ] against K")
        st.markdown("A method that uses its drafts well never gets worse with more of them. Single-draft "
                    "methods (SD, BV) are flat by construction.")
        k_hi = st.select_slider("Show K from 1 to", K_GRID, key="lab_kmax",
                                help="Past K = 8 the LP optimum (whose cost does not grow with K) is drawn at "
                                     "every K shown; a rule only where its exact law answers quickly.")
        curves_section("K", [(K, cfg.spec, K, cfg.L) for K in K_GRID if K <= k_hi], every_bound=True)


if tab_temperature.open:
    with tab_temperature:
        st.header("3. What does temperature do? E[τ] against T")
        st.markdown("Temperature T reshapes both models alike (p_T ∝ p^(1/T)): a low T makes them peaked, so "
                    "the draft's guesses and the target's choices agree more or less often than at T = 1, "
                    "depending on whether their most likely tokens agree. Every value below is exact, at T = "
                    f"{TEMPERATURES[0]:g} to {TEMPERATURES[-1]:g} in steps of 0.1 and at the sidebar's T, with "
                    f"K = {cfg.K} and L = {cfg.L}.")
        curves_section("T", [(T, spec_at(T), cfg.K, cfg.L) for T in sorted({*TEMPERATURES, cfg.T})],
                       every_bound=False)


if tab_length.open:
    with tab_length:
        st.header("4. Longer drafts? E[τ] against L")
        st.markdown("A longer draft can be accepted further, but its last tokens count only if every token "
                    f"before them was accepted. Every value below is exact, with K = {cfg.K} and T = {cfg.T:g}.")
        curves_section("L", [(L, cfg.spec, cfg.K, L) for L in range(1, 5)], every_bound=False)


if tab_coupling.open:
    with tab_coupling:
        st.header("5. The optimal coupling: what the best lossless verifier does")
        st.markdown("The LP optimum is itself a verifier: for each multiset of drafts it emits an accepted "
                    "prefix s and an extra token y with the probabilities below (rows sum to 1). Darker = more "
                    "likely. A row that puts its mass on long prefixes is a draft set the optimum trusts.")
        if lp_ok and lp_auto:
            with error_boundary.guard("the optimal coupling"):  # a solver failure raises LPFailed: one sentence
                plan = cached.lp_plan(cfg.spec, cfg.K, cfg.L)
                charts.chart(coupling_heatmap(plan.multisets, plan.probabilities, plan.plans),
                             key="lab_heatmap")
                with st.expander("What am I looking at?"):
                    st.markdown(text.note(
                        "Row m: one multiset of drafts (the order of the drafts does not matter), with its "
                        "probability P(m) = K!/Π c_x! · Π_k p(x⁽ᵏ⁾). Column s·y: an output, the accepted prefix s "
                        "followed by the extra token y. Cell: π(m, s, y)/P(m), the probability that the best "
                        "lossless verifier emits s·y when it sees m. Its E[τ], Σ_(m, s, y) π(m, s, y)·|s|, is "
                        "the LP optimum.",
                        ["p, q", "K, L", "extra token", "lossless", "LP optimum"]))
                st.caption(f"{len(plan.multisets):,} draft multisets; the {min(25, len(plan.multisets))} most "
                           f"likely are shown. LP: {plan.n_variables:,} variables, {plan.n_constraints:,} "
                           f"constraints, optimum E[τ] = {plan.value:.6f}.")
        else:
            st.info("The optimal coupling needs the LP (see section 1).")


if tab_mc.open:
    with tab_mc:
        st.header("6. Monte Carlo against the exact law of τ")
        st.markdown("Run the methods for real, many times, and compare the frequencies with the exact law. "
                    "The exact bars should sit inside the 95% intervals about 95% of the time.")
        c1, c2 = st.columns(2)
        n = c1.select_slider("Iterations per method", toy_config.MC_ITERATIONS, key="lab_mc_n")  # default: toy_config
        seed = c2.number_input("Monte Carlo seed", 0, 10**9, key="lab_mc_seed")
        exact_pmfs = {r["method"]: r["tau_pmf"] for r in rows}
        mc_jobs = [(m, (lambda m=m: cached.monte_carlo(cfg.spec, m, cfg.K, cfg.L, int(n), int(seed)))) for m in exact_pmfs]
        mc = cached.run_with_progress(mc_jobs, "Monte Carlo")
        mc_data, mc_rows = {}, []
        for m, r in mc.items():
            if isinstance(r, Exception):
                error_boundary.show(r, "the Monte Carlo run", prefix=f"{text.short(m)}: ")
                continue
            lo, hi = r.tau_interval()
            mc_data[m] = (r.tau_pmf, lo, hi)
            ex = results[m].expected_accepted
            law = output_law_test(r, results[m].output_law)
            mc_rows.append({"method": text.short(m), "exact E[τ]": ex, "MC mean": r.tau_mean,
                            "± 95%": r.tau_mean_halfwidth,
                            "in the interval?": "yes" if abs(r.tau_mean - ex) <= r.tau_mean_halfwidth else "no",
                            "χ² p-value": law.p_value,
                            "law matches?": "yes" if law.agrees() else "no",
                            "TV to exact law": law.tv})
        if exact_pmfs:
            charts.chart(tau_histograms(exact_pmfs, mc_data, int(n)), key="lab_hist")
            with st.expander("What am I looking at?"):
                st.markdown(text.note(
                    "One panel per method. Bars: the exact law P(τ = i). Points: the fraction of the Monte Carlo "
                    "iterations that accepted i tokens, with a 95% Wilson interval; an exact bar outside its "
                    "interval happens about 1 time in 20 by chance, much more often means a bug.",
                    ["τ", "E[τ]"]))
            # short headers, each explained on hover: every column fits the main column of a 1280-px window
            helps = {"MC mean": "The Monte Carlo mean of τ.", "± 95%": "Half the width of its 95% interval.",
                     "in the interval?": "Is the exact E[τ] inside the Monte Carlo mean's 95% interval?",
                     "χ² p-value": "Pearson's chi-square test of the sampled outputs s·y against the method's own "
                                   "exact output law.",
                     "law matches?": "yes when the chi-square p-value is at least 0.05.",
                     "TV to exact law": "Total-variation distance of the sampled outputs' frequencies from the "
                                        "method's exact output law."}
            st.dataframe(pd.DataFrame(mc_rows), hide_index=True, width="stretch", key="lab_mc_table", height="content",
                         column_config={c: st.column_config.NumberColumn(format="%.4f", help=helps.get(c))
                                        if c in ("exact E[τ]", "MC mean", "± 95%", "χ² p-value", "TV to exact law")
                                        else st.column_config.TextColumn(help=helps.get(c)) for c in
                                        ("exact E[τ]", "MC mean", "± 95%", "in the interval?", "χ² p-value",
                                         "law matches?", "TV to exact law")})
            st.caption(
                "Two checks per method. *In the interval?* compares the mean only: the exact E[τ] "
                "against the Monte Carlo mean's 95% interval. *Law matches?* tests the whole law "
                "of what the method emits, every accepted sub-block with its extra token s·y, against "
                "the method's own exact law: Pearson's chi-square, outputs expected fewer than 5 times "
                "pooled, \"yes\" when p ≥ 0.05 (so about 1 method in 20 says \"no\" by chance). Both "
                "say whether the sampler agrees with the exact computation, not whether the method is "
                "lossless: a lossy rule (SpecTr-GBV) matches its own law, which is not the target's "
                "(its fidelity error in section 1).")

if tab_depth.open:
    with tab_depth:
        st.header("7. Gain by depth: where each method earns its tokens")
        with error_boundary.guard("the gain by depth"):
            depth = depth_rows({r["method"]: results[r["method"]] for r in rows}, cached.exact(cfg.spec, BASELINE, 1, cfg.L))
            charts.chart(gain_by_depth(depth), key="lab_depth")
            st.markdown(text.markdown_table([{"method": text.short(d["method"]), "d": d["depth"],
                                              **{c: text.number(d[c]) for c in ("P(τ ≥ d)", "SD's P(τ ≥ d)", "gain",
                                                                                "a_d", "a_d gain")}} for d in depth]))
            st.caption("P(τ ≥ d): the chance that the d-th drafted position is accepted. a_d = P(τ ≥ d)/P(τ ≥ d − 1) "
                       "is the chance of accepting it once d − 1 are; its gain over SD's says whether a method "
                       "gains near the root (optimal-transport verifiers) or deeper (Thomas et al., arXiv 2602.16994).")


# ------------------------------------------------------------------------------------------------
toy_config.copy_configuration(
    cfg, methods, ["lp", "acausal", "cic", "relaxation"] if lp_ok else ["cic", "relaxation"], key="lab_copy",
    monte_carlo=(int(st.session_state.lab_mc_n), int(st.session_state.lab_mc_seed)),
    caption="This page's address also holds the configuration: copy it to share this view.")


#: The total variations at which the loss-gain frontier is drawn (up to the largest a rule shows).
FRONTIER_TVS = (0.0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5)


def knob_series(rule: str) -> dict[str, list[tuple[str, str, object]]]:
    """A lossy rule's knobs (``Param.sweep``): a series name "rule: parameter" → (spec, label, value)
    for each swept value, the other parameters as the sidebar sets them."""
    from core.rules.params import declared

    out = {}
    for param in declared(REGISTRY[rule]):
        if param.sweep:
            out[f"{rule}: {param.name}"] = [(cached.with_setting(cfg.spec, rule, param.name, v),
                                              f"{param.name} = {param.text(v)}", v) for v in param.sweep]
    return out


if tab_loss.open:
    with tab_loss:
        st.header("8. What loss buys: E[τ] against the distance from q")
        st.markdown(
            "A lossy rule accepts more by changing what the text says. How much of its gain is real? The grey "
            "line is the **loss-gain frontier**: the largest E[τ] any verifier of these drafts reaches while its "
            "completed output stays within total variation ε of q (an LP, exact; at ε = 0 it is the LP optimum). "
            "Each lossy rule with a knob is a dotted curve, one point per setting; every other rule a point at its "
            "own TV. A point on the frontier buys the most a loss can buy; the gap below it is acceptance paid "
            "for with loss and never received.")
        if opt_why is not None or not cached.optimum_auto(cfg.V, cfg.L):
            st.info(text.escape_markdown(opt_why or "The frontier is an LP as large as the LP optimum's, which "
                                                    "takes a while here; lower V or L."))
        else:
            lossy_rules = [m for m in methods if not REGISTRY[m].lossless_by_theory]
            series = {name: pts for m in lossy_rules for name, pts in knob_series(m).items()}
            jobs = [(f"{name}@{i}", (lambda spec=spec, m=name.split(":")[0]: cached.exact(spec, m, cfg.K, cfg.L)))
                    for name, pts in series.items() for i, (spec, _, _) in enumerate(pts)
                    if cached.exact_seconds(cfg.V, cfg.K, cfg.L, name.split(":")[0]) <= cached.EXACT_AUTO_SECONDS]
            jobs += [(m, (lambda m=m: cached.exact(cfg.spec, m, cfg.K, cfg.L))) for m in methods]
            found = cached.run_with_progress(jobs, "Every rule's loss and gain")
            knobs: dict[str, list] = {}
            for name, pts in series.items():
                for i, (_, label, _) in enumerate(pts):
                    r = found.get(f"{name}@{i}")
                    if r is not None and not isinstance(r, Exception):
                        knobs.setdefault(name, []).append((r.fidelity_tv, r.expected_accepted, label))
            points = {m: (r.fidelity_tv, r.expected_accepted) for m, r in found.items()
                      if "@" not in m and not isinstance(r, Exception)}
            largest = max([tv for pts in knobs.values() for tv, _, _ in pts] + [tv for tv, _ in points.values()] + [0.05])
            tvs = [tv for tv in FRONTIER_TVS if tv <= 1.05 * largest] + [min(1.0, largest)]
            front = cached.run_with_progress([(f"{tv}", (lambda tv=tv: cached.frontier(cfg.spec, cfg.K, cfg.L, tv)))
                                              for tv in sorted(set(tvs))], "The loss-gain frontier")
            frontier_pts = sorted((float(tv), v) for tv, v in front.items() if not isinstance(v, Exception))
            charts.chart(loss_gain_chart(frontier_pts, knobs, points), key="lab_loss")
            below = [(text.short(m), e, tv) for m, (tv, e) in points.items() if tv > LOSSLESS_TOL]
            if below:
                gaps = []
                for name, e, tv in below:
                    best = cached.frontier(cfg.spec, cfg.K, cfg.L, min(1.0, tv))
                    gaps.append(f"{name}: E[τ] {text.fmt(e)} at TV {text.number(tv)}, where the frontier reaches "
                                f"{text.fmt(best)}")
                st.markdown(text.escape_markdown("At the sidebar's settings: " + "; ".join(gaps) + "."))
            with st.expander("What am I looking at?"):
                st.markdown(text.note(
                    "x: the total variation of a rule's completed output law from q (0 = lossless). y: its exact "
                    "E[τ]. The frontier solves the optimal-verifier LP with the losslessness rows replaced by "
                    "\"TV ≤ ε\" (python -m core bound --kind frontier --tv ε). No verifier lies above it; a lossless "
                    "rule sits on the y axis, at or below the LP optimum.",
                    ["E[τ]", "lossless", "LP optimum", "K, L"]))

