"""Live decoder: a real draft/target pair generating text, streamed iteration by iteration, with the
accepted draft tokens and the extra token coloured, live metrics, any iteration's draft tree, and a
comparison of methods on the same prompt and seed."""
from __future__ import annotations

import time

import numpy as np
import pandas as pd
import streamlit as st

from pages.ui import charts, errors, figures, lazy, pair_picker, routing, text

routing.router_guard()

st.title("Live decoder: speculative decoding on a real model pair")
st.markdown(
    "A small **draft** model p proposes K continuations of L tokens, the **target** q scores them in "
    "one call, and the chosen verification rule keeps what it can. Watch the text grow: each "
    "iteration's accepted draft tokens are green (two shades alternate between iterations), the extra "
    "token the verifier adds is gold. Block efficiency is tokens per target call.")
st.markdown(pair_picker.LEGEND_HTML, unsafe_allow_html=True)

methods = pair_picker.decoder_methods()
ss = st.session_state
# The comparison's controls are drawn only once a generation is shown, and Streamlit forgets a
# widget's value after a run that did not draw it: a pair switch (whose run stops at "Press
# Generate") emptied "Methods".  Re-assigned here, on every run, they are the session's own values.
for _key in ("dec_compare", "dec_baseline"):
    if _key in ss:
        ss[_key] = ss[_key]
ss.setdefault("dec_prompt", "import os\n\n\ndef main():\n")
ss.setdefault("dec_method", "rbv" if "rbv" in methods else methods[0])
ss.setdefault("dec_K", 2)
ss.setdefault("dec_L", 4)
ss.setdefault("dec_T", 1.0)
ss.setdefault("dec_max", 32)
ss.setdefault("dec_seed", 0)

# The controls come before the pair check: a widget not drawn in a run loses its value, so a pair
# error would reset them.
prompt = st.text_area("Prompt", key="dec_prompt", height=150)
c1, c2, c3, c4, c5, c6 = st.columns([2, 1, 1, 1, 1, 1])
method = c1.selectbox("Method", methods, key="dec_method", format_func=lambda m: f"{figures.short(m)}: {text.label(m)}")
K = c2.slider("Drafts K", 1, 8, key="dec_K")
L = c3.slider("Length L", 1, 8, key="dec_L")
T = c4.slider("Temperature T", 0.0, 2.0, step=0.1, key="dec_T")
max_new = c5.number_input("New tokens", 8, 1024, step=8, key="dec_max")
seed = c6.number_input("Seed", 0, 10**9, step=1, key="dec_seed")

pair = pair_picker.pair_picker("dec")
if pair is None:
    st.stop()
for name in ("dec_result", "dec_compare_result"):   # results of another pair are not this pair's
    if name in ss and ss[name]["pair"] != pair_picker.pair_id(pair):
        del ss[name]

config = dict(method=method, K=int(K), L=int(L), T=float(T), max_new=int(max_new), seed=int(seed),
              prompt=prompt, pair=pair_picker.pair_id(pair))


def _segments(gen) -> list[tuple[list[str], str, bool]]:
    """Per iteration: (accepted token texts, extra token text, bonus?), cut where generation stopped."""
    texts = pair_picker.token_texts(pair, gen.tokens)
    out, i = [], 0
    for it in gen.iterations:
        acc = texts[i:i + it.tau]
        i += len(acc)
        extra = texts[i] if i < len(texts) and len(acc) == it.tau else ""
        i += 1 if extra else 0
        out.append((acc, extra, it.is_bonus))
        if i >= len(texts):
            break
    return out


def _metrics_row(m) -> dict:
    return {"method": figures.short(m.method) if m.method != "autoregressive" else "Target alone",
            "block efficiency": m.block_efficiency, "tokens": m.tokens_generated,
            "iterations (target calls)": m.iterations, "tokens/s": m.tokens_per_second,
            "root 1 − TV(p, q)": m.mean_root_acceptance if m.method != "autoregressive" else None,
            "draft s": m.time_draft_s, "target s": m.time_target_s, "verify s": m.time_verify_s,
            "other s": m.time_other_s}


go = st.button("Generate", type="primary", key="dec_go")
text_box = st.empty()
live = st.empty()
live_chart = st.empty()

if go:
    texts = pair_picker.TokenTexts(pair)
    colored = pair_picker.ColoredText(prompt)
    t0 = time.perf_counter()
    last = [0.0, 0.0]
    n_redraws = [0]
    taus: list[int] = []
    chart: list = []   # the live figure, built once: a redraw only sets its bars (a build costs ~0.07 s)

    split = {"draft": 0.0, "target": 0.0, "verify": 0.0}

    def on_iteration(it) -> None:
        """Called by the decoder after each iteration with its ``IterationTrace``."""
        new = texts.extend([*it.accepted, it.extra])
        colored.add(new[:it.tau], new[it.tau], bool(it.is_bonus))
        taus.append(it.tau)
        split["draft"] += it.draft_s
        split["target"] += it.target_s
        split["verify"] += it.verify_s
        now = time.perf_counter()
        if now - last[0] > pair_picker.LIVE_TEXT_EVERY_S:
            last[0] = now
            # st.html, not st.markdown: the text is HTML already, and Markdown's parser ran over all
            # of it on every redraw (about 0.5 s of the browser's time per generation of 256 tokens).
            text_box.html(colored.html())
            n = len(taus)
            busy = sum(split.values()) or 1.0
            live.markdown(f"**Iteration {n}** · block efficiency so far **{(sum(taus) + n) / n:.3f}** "
                          f"· {len(texts.tokens) / (now - t0):.1f} tokens/s · {len(texts.tokens)} tokens · time in "
                          f"draft {split['draft'] / busy:.0%}, target {split['target'] / busy:.0%}, "
                          f"verify {split['verify'] / busy:.0%}")
        if now - last[1] > pair_picker.LIVE_CHART_EVERY_S:
            last[1] = now
            rates = [float(np.mean([t >= i for t in taus])) for i in range(1, int(L) + 1)]
            if not chart:
                chart.append(figures.acceptance_per_position({method: rates}))
            chart[0].data[0].y = rates
            # A redraw is a new element: its key must be new too (an unkeyed one repeats its id).
            charts.draw(live_chart, chart[0], key=f"dec_live_{n_redraws[0]}")
            n_redraws[0] += 1

    try:
        with st.spinner("Generating…"):
            gen = pair_picker.generate(pair, method, K, L, T, prompt, max_new, seed, on_iteration=on_iteration)
        ss["dec_result"] = {"config": config, "pair": config["pair"], "generation": gen,
                            "segments": _segments(gen)}
    except Exception as exc:  # noqa: BLE001
        errors.show(exc, "the generation")
    live.empty()
    live_chart.empty()

result = ss.get("dec_result")
if result is None:
    st.info("Press **Generate** to start.")
    st.stop()
gen = result["generation"]
if result["config"] != config:
    st.caption("Showing the last generation; the settings above have changed since. Press Generate to rerun.")
text_box.html(pair_picker.colored_text_html(result["config"]["prompt"], result["segments"]))

m = gen.metrics
st.header("How it went")
c = st.columns(5)
c[0].metric("Block efficiency (tokens per target call)", f"{m.block_efficiency:.3f}")
c[1].metric("Tokens per second", f"{m.tokens_per_second:.1f}")
c[2].metric("Tokens generated", f"{m.tokens_generated}")
c[3].metric("Iterations", f"{m.iterations}")
c[4].metric("Stopped because", gen.stop_reason)
left, right = st.columns(2)
with left:
    charts.chart(figures.acceptance_per_position({result["config"]["method"]: m.acceptance_per_position}),
                 key="dec_accept")
with right:
    charts.chart(figures.time_split({result["config"]["method"]: {
        "draft": m.time_draft_s, "target": m.time_target_s, "verify": m.time_verify_s,
        "other": m.time_other_s}}), key="dec_time")

# -- one iteration's draft tree -----------------------------------------------------------------
st.header("Open any iteration's draft tree")
# Drawn only while open: a finished generation then draws its two charts, not three (a chart costs
# the browser a full Plotly draw each time its figure changes), and the page is done sooner.
tree_box = lazy.expander("Show the draft tree of an iteration", key="dec_tree_open")
if tree_box is not None and gen.iterations:
    with tree_box, errors.guard("the draft tree"):
        n_it = len(gen.iterations)
        i = st.slider("Iteration", 1, n_it, 1, key=f"dec_iter_{n_it}") if n_it > 1 else 1
        it = gen.iterations[i - 1]
        block, trace = pair_picker.block_from_trace(it, pair.vocab_size)
        token = lambda t: pair_picker.visible(pair.decode([int(t)]))  # noqa: E731
        charts.chart(figures.draft_tree(
            block, trace, accepted=it.accepted, extra=it.extra, token_text=token,
            title=f"Iteration {i}: τ = {it.tau} accepted, extra token {token(it.extra)!r}"
                  f"{' (bonus)' if it.is_bonus else ''}"), key="dec_tree")
        cols = st.columns(3)
        cols[0].metric("E[τ | these drafts]", text.fmt(it.expected_tau),
                       help="Exact over the verifier's coins, where the rule has a closed form.")
        cols[1].metric("Single-token optimum α* at the root", text.fmt(it.alpha_star_root),
                       help="Best possible acceptance probability of the first token with K drafts (docs/maths.md, the single-token optimum).")
        cols[2].metric("1 − TV(p, q) at the root", text.fmt(it.acceptance_root))
        st.dataframe(pd.DataFrame([{"token": repr(pair.decode([t])), "probability": pr}
                                   for t, pr in it.residual_top]), hide_index=True, key="dec_residual",
                     column_config={"probability": st.column_config.NumberColumn(format="%.4f")})
        st.caption("Top of the distribution the extra token was drawn from (the residual, or q for a bonus).")

# -- compare methods ----------------------------------------------------------------------------
st.header("Compare methods on the same prompt and seed")
ss.setdefault("dec_compare", [x for x in ("bv", "spectr", "spectr_gbv", "rbv") if x in methods])
ss.setdefault("dec_baseline", True)
chosen = st.multiselect("Methods", methods, key="dec_compare", format_func=figures.short)
baseline = st.checkbox("Include the target alone (for the speedup)", key="dec_baseline")
if not chosen:
    st.info("Choose at least one method under *Methods* to compare.")
if st.button("Compare", key="dec_compare_go", disabled=not chosen):
    runs = [(figures.short(x), x) for x in chosen] + ([("Target alone", "autoregressive")] if baseline else [])
    bar = st.progress(0.0, text="Comparing")
    out = {}
    for j, (name, x) in enumerate(runs):
        bar.progress(j / max(1, len(runs)), text=f"Running {name} ({j + 1}/{len(runs)})")
        try:
            out[x] = pair_picker.generate(pair, x, K, L, T, prompt, max_new, seed).metrics
        except Exception as exc:  # noqa: BLE001
            errors.show(exc, "the generation", prefix=f"{name}: ")
    bar.empty()
    ss["dec_compare_result"] = {"pair": pair_picker.pair_id(pair), "metrics": out}
cmp_ = ss["dec_compare_result"]["metrics"] if "dec_compare_result" in ss else None
if cmp_:
    rows = [_metrics_row(x) for x in cmp_.values()]
    base = cmp_.get("autoregressive")
    for r, x in zip(rows, cmp_.values()):
        r["speedup vs target alone"] = (x.tokens_per_second / base.tokens_per_second) if base else None
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="dec_compare_table", placeholder=text.DASH,
                 column_config={k: st.column_config.NumberColumn(format="%.3f") for k in
                                ("block efficiency", "tokens/s", "draft s", "target s", "verify s", "other s",
                                 "speedup vs target alone")})
    spec_runs = {k: v for k, v in cmp_.items() if k != "autoregressive"}
    a, b = st.columns(2)
    with a:
        if spec_runs:
            charts.chart(figures.acceptance_per_position({k: v.acceptance_per_position for k, v in spec_runs.items()}),
                         key="dec_cmp_accept")
        else:     # every method failed: no acceptance to draw (an empty chart read as a −1..1 axis)
            st.info("No speculative run finished, so there is no acceptance per position to draw.")
    with b:
        charts.chart(figures.time_split({k: {"draft": v.time_draft_s, "target": v.time_target_s,
                                              "verify": v.time_verify_s, "other": v.time_other_s}
                                          for k, v in cmp_.items()}), key="dec_cmp_time")
    st.caption("Same prompt, seed, K, L and T for every method. With T > 0 the texts differ between "
               "methods (their coins differ) but every lossless method samples from the target's law.")
