"""Sweeps: block efficiency and speedup against K, L or T for chosen methods on the real pair, with
95% confidence bands and, where it applies, the exact expectation given the drafts; CSV and JSON."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import streamlit as st

from pages.ui import errors, figures, pair_picker, routing

routing.router_guard()

AXES = {"K": "number of drafts K", "L": "draft length L", "T": "temperature T"}
DEFAULT_VALUES = {"K": "1, 2, 3, 4", "L": "1, 2, 4, 6", "T": "0, 0.5, 1"}

st.title("Sweeps: block efficiency and speedup against K, L and T")
st.markdown(
    "Run the real pair many times while one knob moves, and see how every chosen method responds. "
    "Each point averages over prompts and seeds; the shaded band is a 95% confidence interval. "
    "The dashed line, where the rule has one, is 1 + E[τ | drafts]: the exact expectation over the "
    "verifier's coins given the drafts actually drawn (less noisy than the measured value). "
    "Speedup is tokens per second relative to the target model generating alone.")

ss = st.session_state
methods = pair_picker.decoder_methods()
ss.setdefault("sw_axis", "K")
ss.setdefault("sw_methods", [m for m in ("bv", "spectr_gbv", "rbv") if m in methods])
ss.setdefault("sw_prompts", "import os\\n\ndef main():\\n\nclass Config:\\n")
ss.setdefault("sw_tokens", 32)
ss.setdefault("sw_seeds", 2)
ss.setdefault("sw_K", 2)
ss.setdefault("sw_L", 4)
ss.setdefault("sw_T", 1.0)

c1, c2 = st.columns([1, 2])
axis = c1.radio("Sweep over", list(AXES), key="sw_axis", format_func=AXES.get, horizontal=True)
values_text = c2.text_input(f"Values of {axis} (comma-separated)", value=DEFAULT_VALUES[axis], key=f"sw_values_{axis}")
chosen = st.multiselect("Methods", methods, key="sw_methods", format_func=figures.short)
f1, f2, f3, f4, f5 = st.columns(5)
K = f1.slider("K (when fixed)", 1, 8, key="sw_K", disabled=axis == "K")
L = f2.slider("L (when fixed)", 1, 8, key="sw_L", disabled=axis == "L")
T = f3.slider("T (when fixed)", 0.0, 2.0, step=0.1, key="sw_T", disabled=axis == "T")
n_tokens = f4.number_input("New tokens per run", 8, 512, step=8, key="sw_tokens")
n_seeds = f5.number_input("Seeds per prompt", 1, 20, key="sw_seeds")
prompts_text = st.text_area("Prompts (one per line; write \\n for a newline)", key="sw_prompts", height=90)
baseline = st.checkbox("Measure the target alone for the speedup", value=True, key="sw_baseline")

# The pair comes after the controls: a widget not drawn in a run loses its value.
pair = pair_picker.pair_picker("dec")
if pair is None:
    st.stop()
if "sw_result" in ss and ss["sw_result"]["pair"] != pair_picker.pair_id(pair):
    del ss["sw_result"]      # a sweep of another pair is not this pair's

error = None
try:
    values = [float(v) for v in values_text.replace(";", ",").split(",") if v.strip()]
    if not values:
        raise ValueError
    if axis in ("K", "L"):
        if any(v != int(v) or v < 1 for v in values):
            raise ValueError
        values = [int(v) for v in values]
    elif any(v < 0 for v in values):
        raise ValueError
except ValueError:
    error = f"Write the values of {axis} as numbers separated by commas" + (
        " (whole numbers ≥ 1)." if axis in ("K", "L") else " (≥ 0).")
prompts = [p.replace("\\n", "\n") for p in prompts_text.splitlines() if p.strip()]
if error:
    st.error(error)
    st.stop()
if not prompts:
    st.error("Write at least one prompt.")
    st.stop()
if not chosen:
    st.info("Pick at least one method.")
    st.stop()

runs = len(values) * len(chosen) * len(prompts) * int(n_seeds)
base_runs = (len(values) if axis == "T" else 1) * len(prompts) * int(n_seeds) if baseline else 0
st.caption(f"{runs + base_runs} generations of up to {int(n_tokens)} tokens "
           f"({runs} speculative, {base_runs} target-alone).")

if st.button("Run sweep", type="primary", key="sw_go"):
    bar = st.progress(0.0, text="Sweeping")
    rows, base_rows = [], []
    total = runs + base_runs
    done = [0]

    def tick(text: str) -> None:
        done[0] += 1
        bar.progress(min(1.0, done[0] / total), text=f"{text} ({done[0]}/{total})")

    for v in values:
        k, l, t = (v if axis == "K" else K), (v if axis == "L" else L), (v if axis == "T" else T)
        for m in chosen:
            for pi, prompt in enumerate(prompts):
                for s in range(int(n_seeds)):
                    try:
                        g = pair_picker.generate(pair, m, int(k), int(l), float(t), prompt, int(n_tokens), s)
                    except Exception as exc:  # noqa: BLE001
                        errors.show(exc, "the run", prefix=f"{figures.short(m)} at {axis} = {v}: ")
                        tick("skipped")
                        continue
                    exp = [it.expected_tau for it in g.iterations if it.expected_tau is not None]
                    rows.append({"method": m, "K": int(k), "L": int(l), "T": float(t), "prompt": pi, "seed": s,
                                 "block_efficiency": g.metrics.block_efficiency,
                                 "tokens_per_second": g.metrics.tokens_per_second,
                                 "tokens": g.metrics.tokens_generated, "iterations": g.metrics.iterations,
                                 "exact_given_drafts": 1 + float(np.mean(exp)) if exp else None,
                                 "alpha_star_root": float(np.mean([it.alpha_star_root for it in g.iterations]))})
                    tick(f"{figures.short(m)}, {axis} = {v}")
    if baseline:
        for t in (values if axis == "T" else [T]):
            for pi, prompt in enumerate(prompts):
                for s in range(int(n_seeds)):
                    try:
                        g = pair_picker.generate(pair, "autoregressive", 1, 1, float(t), prompt, int(n_tokens), s)
                        base_rows.append({"T": float(t), "prompt": pi, "seed": s,
                                          "tokens_per_second": g.metrics.tokens_per_second})
                    except Exception as exc:  # noqa: BLE001
                        errors.show(exc, "the run", prefix="Target alone: ")
                    tick("target alone")
    bar.empty()
    ss["sw_result"] = {"axis": axis, "rows": rows, "base": base_rows, "pair": pair_picker.pair_id(pair),
                       "config": {"axis": axis, "values": values, "methods": chosen, "K": K, "L": L, "T": T,
                                  "prompts": prompts, "seeds": int(n_seeds), "new_tokens": int(n_tokens),
                                  "pair": [pair.target_name, pair.draft_name]}}

res = ss.get("sw_result")
if not res or not res["rows"]:
    st.info("Press **Run sweep** to start.")
    st.stop()

ax = res["axis"]
df = pd.DataFrame(res["rows"])
base = pd.DataFrame(res["base"])
if not base.empty:
    ar = base.groupby("T")["tokens_per_second"].mean()
    df["speedup"] = df["tokens_per_second"] / df["T"].map(ar)


def summarize(col: str) -> pd.DataFrame:
    g = df.groupby(["method", ax], sort=False)[col]
    out = g.agg(["mean", "std", "count"]).reset_index()
    half = 1.96 * out["std"].fillna(0.0) / np.sqrt(out["count"])
    out["lo"], out["hi"] = out["mean"] - half, out["mean"] + half
    return out


be = summarize("block_efficiency")
theory = df.groupby(["method", ax], sort=False)["exact_given_drafts"].mean().reset_index()
be = be.merge(theory, on=["method", ax], how="left")
st.plotly_chart(figures.sweep_lines(be, ax, "mean", "lo", "hi", theory="exact_given_drafts",
                                    title=f"Block efficiency against {AXES[ax]}", xlab=AXES[ax],
                                    ylab="block efficiency (tokens per target call)"), key="sw_be")
summary = be.rename(columns={"mean": "block_efficiency", "lo": "be_lo", "hi": "be_hi",
                             "exact_given_drafts": "be_exact_given_drafts"}).drop(columns=["std"])
if "speedup" in df:
    sp = summarize("speedup")
    st.plotly_chart(figures.sweep_lines(sp, ax, "mean", "lo", "hi", title=f"Speedup over the target alone against {AXES[ax]}",
                                        xlab=AXES[ax], ylab="speedup (tokens/s ÷ target-alone tokens/s)"), key="sw_speedup")
    summary = summary.merge(sp.rename(columns={"mean": "speedup", "lo": "speedup_lo", "hi": "speedup_hi"})
                            [["method", ax, "speedup", "speedup_lo", "speedup_hi"]], on=["method", ax])
st.dataframe(summary.assign(method=summary["method"].map(figures.short)), hide_index=True, width="stretch",
             key="sw_summary")
d1, d2 = st.columns(2)
d1.download_button("Download all runs (CSV)", df.to_csv(index=False), file_name=f"sweep_{ax}.csv",
                   mime="text/csv", key="sw_csv")
d2.download_button("Download summary and settings (JSON)",
                   json.dumps({"config": res["config"], "summary": summary.to_dict(orient="records"),
                               "runs": res["rows"], "target_alone": res["base"]}, indent=2, default=float),
                   file_name=f"sweep_{ax}.json", mime="application/json", key="sw_json")
