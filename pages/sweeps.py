"""Sweeps: block efficiency and speedup against K, L or T for chosen methods on the real pair, drafting
K chains of length L by a draft law (i.i.d. by default), with t-based 95% confidence bands where a
point has two runs or more and, where it applies, the exact expectation given the drafts; CSV and
JSON with readable column names.  Static and dynamic trees, whose K and L are fixed by their shape,
are the live decoder's (its comparison runs them side by side)."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import streamlit as st

from core.analysis.intervals import bounded_t_interval
from core.data.laws import IID_LAW, LAWS
from core.errors import DecodingError
from core.decoding.plans import StaticPlan, check_plan
from core.rules.registry import COMPARED, REGISTRY, lossless_tree_rules
from pages.ui import charts, error_boundary, generation, pair_picker, routing, text
from pages.ui.figures.runs import sweep_lines
from pages.ui.toy_config import law_label

routing.router_guard()

AXES = {"K": "number of drafts K", "L": "draft length L", "T": "temperature T"}
#: The default sweep is chosen for bands a back row can read: three values per axis, 64 new tokens and
#: 3 prompts × 6 seeds = 18 runs per point.  Measured on the bundled pair (BV, SpecTr-GBV, RBV; K = 1,
#: 2, 4; L = 4; T = 1): a run's block efficiency has a standard deviation of 0.4 to 0.55 at 64 tokens
#: (0.4 to 0.7 at 32), so 18 runs give 95% bands of ±0.21 to ±0.25 around means of 3.1 to 3.7, and
#: RBV's gain over BV at K = 2 and 4 (about 0.45) shows; 6 runs of 32 tokens gave ±0.4 to ±0.7, and 3
#: runs (t = 4.3) bands from about 1 to L + 1.  Its 162 speculative generations took 77 s on two busy cores.
DEFAULT_VALUES = {"K": "1, 2, 4", "L": "1, 2, 4", "T": "0, 0.5, 1"}
#: The values each knob takes, as on every other page (the live decoder's sliders): K and L whole.
LIMITS = {"K": (1, 8), "L": (1, 8), "T": (0.0, 2.0)}
#: Readable names of a run's columns (in the CSV and JSON); the others keep theirs.
RUN_NAMES = {"block_efficiency": "block efficiency", "tokens_per_second": "tokens per second",
             "tokens": "tokens generated", "iterations": "target calls", "drafts_drawn": "drafts drawn",
             "exact_given_drafts": "1 + E[τ | drafts]", "alpha_star_root": "root α*(K), mean over iterations"}


def ci_names(what: str) -> dict[str, str]:
    """Readable names of a summary's mean and interval columns for the quantity ``what``."""
    return {"mean": what, "lo": f"{what}, 95% CI low", "hi": f"{what}, 95% CI high"}


def parse_values(text_: str, axis: str) -> tuple[list, str | None]:
    """The values of ``axis`` written in ``text_`` (commas or semicolons), sorted with repeats merged,
    and a sentence naming the merged repeats (None if none); ValueError with the sentence to show
    for a value that is not a number within ``LIMITS``."""
    lo, hi = LIMITS[axis]
    whole = axis in ("K", "L")
    rule = (f"whole numbers from {lo} to {hi}" if whole else f"numbers from {lo:g} to {hi:g}")
    try:
        values = [float(v) for v in text_.replace(";", ",").split(",") if v.strip()]
    except ValueError:
        values = None
    if not values or any(not math.isfinite(v) or (whole and v != int(v)) for v in values):
        raise ValueError(f"Write the values of {axis} as {rule}, separated by commas.")
    outside = [v for v in values if not lo <= v <= hi]
    if outside:
        raise ValueError(f"{axis} goes from {lo:g} to {hi:g} here, as on the other pages; "
                         f"{', '.join(f'{v:g}' for v in outside)} is outside. Write {rule}.")
    values = [int(v) if whole else v for v in values]
    merged = sorted(set(values))
    repeats = [v for v in merged if values.count(v) > 1]
    note = (f"Repeated values merged: {', '.join(f'{axis} = {v:g}' for v in repeats)} runs once."
            if repeats else None)
    return merged, note


st.title("Sweeps: block efficiency and speedup against K, L and T")
st.markdown(
    "Run the real pair many times while one knob moves, and see how every chosen method responds. "
    "Each run drafts K chains of L tokens, by the chosen draft law (the law draws the K first tokens, each "
    "chain goes on i.i.d.); token trees are the live decoder's. "
    "Each point averages over prompts and seeds; the shaded band, where a point has two runs or "
    "more, is a 95% confidence interval for that average; it narrows as 1/√n with the n runs of a point, "
    "so halving it takes four times the seeds. "
    "The dashed line, where the rule has one, is 1 + E[τ | drafts]: the exact expectation over the "
    "verifier's coins given the drafts actually drawn (less noisy than the measured value). "
    "Speedup is tokens per second relative to the target model generating alone.")

ss = st.session_state
methods = generation.decoder_methods()


def _whole(text_: str) -> bool:
    if text_ not in ("0", "1"):
        raise ValueError(text_)
    return text_ == "1"


#: The page's link (``routing.read_link``): its settings, the sweep's values (of the axis the link
#: names), and the pair (``pair_picker.pair_link_params``).  A link opens the settings; the sweep
#: runs when the reader presses the button.
SWEEP_PARAMS: routing.LinkParams = {
    "axis": ("sw_axis", routing.choice(AXES)),
    "methods": ("sw_methods", routing.choices(methods)),
    "law": ("sw_law", routing.choice(LAWS)),
    "K": ("sw_K", routing.number(int, *LIMITS["K"])),
    "L": ("sw_L", routing.number(int, *LIMITS["L"])),
    "T": ("sw_T", routing.number(float, *LIMITS["T"])),
    "tokens": ("sw_tokens", routing.number(int, 8, 512)),
    "seeds": ("sw_seeds", routing.number(int, 1, 20)),
    "prompts": ("sw_prompts", str),
    "baseline": ("sw_baseline", _whole),
    **pair_picker.pair_link_params("dec"),
}
new_link = routing.is_new_link()
unapplied = routing.read_link(SWEEP_PARAMS)
if new_link and "values" in st.query_params:
    # the values belong to the axis the link names; a bad list is refused below, as a typed one is
    ss[f"sw_values_{ss.get('sw_axis', 'K')}"] = st.query_params["values"]
ss.setdefault("sw_axis", "K")
ss.setdefault("sw_methods", [m for m in COMPARED if m in methods])
ss.setdefault("sw_prompts", "import os\\n\ndef main():\\n\nclass Config:\\n")
ss.setdefault("sw_tokens", 64)
ss.setdefault("sw_seeds", 6)
ss.setdefault("sw_K", 2)
ss.setdefault("sw_L", 4)
ss.setdefault("sw_T", 1.0)
ss.setdefault("sw_law", IID_LAW.name)
ss.setdefault("sw_baseline", True)



def _on_law_change() -> None:
    """Every law offered runs: under a law other than iid the K first tokens are not i.i.d., which the
    token-tree rules verify, and a single-draft rule still reads its one chain; the other rules are
    taken out of the methods, and the lossless token-tree rules come in where no chosen rule reads
    several drafts, said in one line."""
    def verifies(m: str) -> bool:         # the drafts it gets: one chain, or K ≥ 2 chains by the law
        try:
            check_plan(m, StaticPlan.chains(1 if REGISTRY[m].single_draft else 2, 1, ss.sw_law))
        except DecodingError:
            return False
        return True

    kept = [m for m in ss.sw_methods if verifies(m)]
    out = [m for m in ss.sw_methods if m not in kept]
    added = [] if any(not REGISTRY[m].single_draft for m in kept) else \
        [m for m in lossless_tree_rules(methods) if m not in kept]
    ss.sw_methods = kept + added
    if out:
        names = ", ".join(text.short(m) for m in out)
        ss.sw_law_note = (f"{ss.sw_law} drafts are K chains whose first tokens are not i.i.d.: {names} "
                          f"{'verifies' if len(out) == 1 else 'verify'} only i.i.d. ones and left the methods"
                          + (f"; {', '.join(text.short(m) for m in added)} came in" if added else "") + ".")


c1, c2 = st.columns([1, 2])
axis = c1.radio("Sweep over", list(AXES), key="sw_axis", format_func=AXES.get, horizontal=True)
ss.setdefault(f"sw_values_{axis}", DEFAULT_VALUES[axis])
values_text = c2.text_input(f"Values of {axis} (comma-separated)", key=f"sw_values_{axis}")
m1, m2 = st.columns([3, 1])
chosen = m1.multiselect("Methods", methods, key="sw_methods", format_func=text.short)
law = m2.selectbox("Draft law", list(LAWS), key="sw_law", format_func=law_label, on_change=_on_law_change,
                   help="How the K first tokens are drawn from p: with replacement (iid: K i.i.d. drafts, which every "
                        "rule verifies), without (wor), the K most probable (topk), or the K − 1 most probable and one "
                        "sampled (greedy), which only the token-tree rules (rrs = SpecInfer, traversal) verify.")
if "sw_law_note" in ss:
    st.caption(ss.pop("sw_law_note"))
f1, f2, f3, f4, f5 = st.columns(5)
K = f1.slider("K (when fixed)", *LIMITS["K"], key="sw_K", disabled=axis == "K")
L = f2.slider("L (when fixed)", *LIMITS["L"], key="sw_L", disabled=axis == "L")
T = f3.slider("T (when fixed)", *LIMITS["T"], step=0.1, key="sw_T", disabled=axis == "T")
n_tokens = f4.number_input("New tokens per run", 8, 512, step=8, key="sw_tokens")
n_seeds = f5.number_input("Seeds per prompt", 1, 20, key="sw_seeds")
prompts_text = st.text_area("Prompts (one per line; write \\n for a newline)", key="sw_prompts", height=90)
baseline = st.checkbox("Measure the target alone for the speedup", key="sw_baseline")

# The pair comes after the controls: a widget not drawn in a run loses its value.
pair = pair_picker.pair_picker("dec")
routing.write_link({"axis": axis, "values": values_text, "methods": ",".join(chosen), "law": law, "K": str(K),
                    "L": str(L), "T": f"{T:g}", "tokens": str(int(n_tokens)), "seeds": str(int(n_seeds)),
                    "prompts": prompts_text, "baseline": str(int(baseline)), **pair_picker.pair_link("dec")})
if unapplied:
    st.warning(routing.link_warning(unapplied))
if pair is None:
    st.stop()
if "sw_result" in ss and ss["sw_result"]["pair"] != pair_picker.pair_id(pair):
    del ss["sw_result"]      # a sweep of another pair is not this pair's

try:
    values, merged_note = parse_values(values_text, axis)
except ValueError as exc:
    st.error(str(exc))
    st.stop()
if merged_note:
    st.caption(merged_note)
prompts = [p.replace("\\n", "\n") for p in prompts_text.splitlines() if p.strip()]
if not prompts:
    st.error("Write at least one prompt.")
    st.stop()
if not chosen:
    st.info("Pick at least one method.")
    st.stop()


def drafts(v, m) -> StaticPlan:
    """The chains that method ``m`` verifies at value ``v`` of the axis.  A single-draft rule checks
    draft 1 only: drawing K drafts would only cost it time, and its speedup would fall with K for
    nothing.  It draws one, whatever K is."""
    k, l = (v if axis == "K" else K), (v if axis == "L" else L)
    return StaticPlan.chains(1 if REGISTRY[m].single_draft else int(k), int(l), law)


try:   # a rule that cannot verify these drafts is refused before anything runs, in one sentence
    for v in values:
        for m in chosen:
            check_plan(m, drafts(v, m))
except DecodingError as exc:
    st.error(text.escape_markdown(f"This sweep is refused: {str(exc).strip().rstrip('.')}."))
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
            plan = drafts(v, m)
            for prompt in prompts:
                for s in range(int(n_seeds)):
                    try:
                        g = generation.generate(pair, m, plan, float(t), prompt, int(n_tokens), s)
                    except Exception as exc:  # noqa: BLE001
                        error_boundary.show(exc, "the run", prefix=f"{text.short(m)} at {axis} = {v}: ")
                        tick("skipped")
                        continue
                    exp = [it.expected_tau for it in g.iterations if it.expected_tau is not None]
                    rows.append({"method": m, "K": int(k), "drafts_drawn": plan.K, "law": law, "L": int(l), "T": float(t),
                                 "prompt": prompt, "seed": s,
                                 "block_efficiency": g.metrics.block_efficiency,
                                 "tokens_per_second": g.metrics.tokens_per_second,
                                 "tokens": g.metrics.tokens_generated, "iterations": g.metrics.iterations,
                                 "exact_given_drafts": 1 + float(np.mean(exp)) if exp else None,
                                 "alpha_star_root": float(np.mean([it.alpha_star_root for it in g.iterations]))})
                    tick(f"{text.short(m)}, {axis} = {v}")
    if baseline:
        for t in (values if axis == "T" else [T]):
            for prompt in prompts:
                for s in range(int(n_seeds)):
                    try:
                        g = generation.generate(pair, "autoregressive", None, float(t), prompt, int(n_tokens), s)
                        base_rows.append({"T": float(t), "prompt": prompt, "seed": s,
                                          "tokens_per_second": g.metrics.tokens_per_second})
                    except Exception as exc:  # noqa: BLE001
                        error_boundary.show(exc, "the run", prefix="Target alone: ")
                    tick("target alone")
    bar.empty()
    ss["sw_result"] = {"axis": axis, "rows": rows, "base": base_rows, "pair": pair_picker.pair_id(pair),
                       "config": {"axis": axis, "values": values, "methods": chosen, "K": K, "L": L, "T": T, "law": law,
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


#: What each summarized quantity can be: (its name, lowest, highest given L, the bounds in words).
BOUNDS = {"block_efficiency": ("block efficiency", 1.0, lambda L: L + 1.0, "below 1 or above L + 1"),
          "speedup": ("speedup", 0.0, lambda L: np.inf, "below 0")}


def summarize(col: str) -> pd.DataFrame:
    """Per method and x: the mean of ``col`` over its n runs ("count") and, where n ≥ 2, the 95%
    confidence interval mean ± t_{0.975, n−1}·s/√n, s the sample standard deviation, cut to the
    values the mean can take (``BOUNDS``: block efficiency 1 to L + 1, speedup ≥ 0;
    ``core.analysis.intervals.bounded_t_interval`` says why); "cut" marks the points where a bound
    moved an end.  lo and hi are NaN where n = 1 (no spread is seen, so no interval is claimed)."""
    out = df.groupby(["method", ax], sort=False)[col].agg(["mean", "std", "count"]).reset_index()
    _, lower, upper, _ = BOUNDS[col]
    Ls = out[ax].to_numpy() if ax == "L" else np.full(len(out), df["L"].iloc[0])
    out["lo"], out["hi"], out["cut"] = bounded_t_interval(out["mean"], out["std"], out["count"], lower=lower,
                                                          upper=np.array([upper(L) for L in Ls]))
    return out


def cut_note(col: str, frame: pd.DataFrame) -> str:
    """One sentence naming the points whose interval was cut at a bound; "" when none was."""
    cut = frame[frame["cut"]]
    if cut.empty:
        return ""
    name, _, _, bounds = BOUNDS[col]
    where = ", ".join(f"{text.short(m)} at {ax} = {x:g}" for m, x in zip(cut["method"], cut[ax]))
    return f"Cut at a bound (the {name} interval reached {bounds}): {where}."


def shown(v) -> str:
    """A summary value as the table shows it: three decimals, or a dash where there is none."""
    return text.DASH if pd.isna(v) else f"{v:.3f}"


def records(frame: pd.DataFrame) -> list[dict]:
    """The rows of ``frame`` as dicts, NaN as None (JSON's null: NaN is not JSON)."""
    return frame.astype(object).where(frame.notna(), None).to_dict(orient="records")


be = summarize("block_efficiency")
theory = df.groupby(["method", ax], sort=False)["exact_given_drafts"].mean().reset_index()
be = be.merge(theory, on=["method", ax], how="left")
charts.chart(sweep_lines(be, ax, "mean", "lo", "hi", theory="exact_given_drafts",
                                 title=f"Block efficiency against {AXES[ax]}", xlab=AXES[ax],
                                 ylab="block efficiency (tokens per target call)", runs="count"), key="sw_be")
notes = [cut_note("block_efficiency", be)]
summary = be.rename(columns={"count": "runs", "exact_given_drafts": RUN_NAMES["exact_given_drafts"],
                             **ci_names("block efficiency")}).drop(columns=["std", "cut"])
single = [m for m in res["config"]["methods"] if getattr(REGISTRY.get(m), "single_draft", False)]
if "speedup" in df:
    sp = summarize("speedup")
    notes.append(cut_note("speedup", sp))
    charts.chart(sweep_lines(sp, ax, "mean", "lo", "hi", title=f"Speedup over the target alone against {AXES[ax]}",
                                     xlab=AXES[ax], ylab="speedup (tokens/s ÷ target-alone tokens/s)",
                                     runs="count"), key="sw_speedup")
    names = ci_names("speedup")
    summary = summary.merge(sp.rename(columns=names)[["method", ax, *names.values()]], on=["method", ax])
if single and ax == "K":
    one = len(single) == 1
    st.caption(f"{' and '.join(text.short(m) for m in single)} {'checks' if one else 'check'} one draft, so "
               f"{'it draws' if one else 'they draw'} one whatever K is (the column “drafts drawn” of the CSV): "
               f"{'its' if one else 'their'} points at every K are runs of the same decoder, flat up to noise. "
               f"Drawing K drafts for {'it' if one else 'them'} would only make {'it' if one else 'them'} slower "
               "as K grows.")
n_lo, n_hi = int(summary["runs"].min()), int(summary["runs"].max())
runs_text = f"{n_lo} run{'s' * (n_lo > 1)}" if n_lo == n_hi else f"between {n_lo} and {n_hi} runs"
st.caption(
    f"Each point averages {runs_text} (prompts × seeds, less any skipped; the column “runs”). "
    + ("With one run a point has no spread to measure, so it gets no confidence interval: add seeds or "
       "prompts for one. " if n_lo == 1 else "")
    + "The 95% confidence interval is mean ± t·s/√n, with n the runs, s their sample standard deviation "
    "and t the 97.5% quantile of Student's t with n − 1 degrees of freedom; it treats the runs as "
    "independent draws, prompts "
    "included. It is cut to what a mean can be (block efficiency from 1 to L + 1 tokens per target call, a "
    "speedup from 0): the true mean is always inside those bounds, so the cut interval keeps the t-interval's "
    "coverage and never names an impossible value. "
    + " ".join(n for n in notes if n) + (" " if any(notes) else "")
    + "A dash marks a value that does not exist: no interval where a point has one run, no "
    "1 + E[τ | drafts] for a rule without a closed form for it, no speedup where the target alone "
    "failed. The CSV leaves those cells empty; the JSON writes null.")
numbers = [c for c in summary.columns if c not in ("method", ax, "runs")]
summary = summary[["method", ax, "runs", *numbers]]
st.dataframe(summary.assign(method=summary["method"].map(text.short),
                            **{c: summary[c].map(shown) for c in numbers}),
             hide_index=True, width="stretch", key="sw_summary")
runs_df, base_df = df.rename(columns=RUN_NAMES), base.rename(columns=RUN_NAMES)
d1, d2 = st.columns(2)
d1.download_button("Download all runs (CSV)", runs_df.to_csv(index=False), file_name=f"sweep_{ax}.csv",
                   mime="text/csv", key="sw_csv")
d2.download_button("Download summary and settings (JSON)",
                   json.dumps({"config": res["config"], "summary": records(summary), "runs": records(runs_df),
                               "target_alone": records(base_df), "intervals_cut": [n for n in notes if n]},
                              indent=2, default=float, allow_nan=False),
                   file_name=f"sweep_{ax}.json", mime="application/json", key="sw_json")
