"""Leaderboard: how close each verification rule comes to the optimal lossless verifier (E/LP) over
seeded families of toy instances, run live on the embedded Dask cluster (``core.sweep``) or on a
scheduler named in the sidebar, or read from a results folder; with draft laws and budgets, how the
laws compare at an equal budget (each law's own optimum over the i.i.d. optimum, each rule's share
of its own law's optimum, the best shape); the instances where a rule does worst open in the toy
laboratory."""
from __future__ import annotations

import os
import tempfile
from contextlib import nullcontext
from pathlib import Path

import pandas as pd
import streamlit as st

from core.data.laws import is_iid_chains
from core.rules.registry import CHALLENGER
from core.sweep.config import (DRAFT_LAWS, FAMILIES, V_RANGE, SweepConfig, SweepError, check_config,
                               default_methods)
from core.sweep.engine import SCHEDULER_ENV, dask_client, is_loopback, run_sweep
from core.sweep.store import ResultsStore, read_results
from core.sweep.summary import TIE, describe, law_gains, leaderboard, row_shape
from core.sweep.work import DRAFT_COLUMNS, KEY_COLUMNS, group_columns
from pages.ui import charts, error_boundary, results_root, routing, text, toy_config
from pages.ui.figures.laws import law_gain_boxes
from pages.ui.figures.leaderboard import rule_scatter, score_boxes
from pages.ui.text import all_methods

routing.router_guard()

ss = st.session_state
SOURCES = ("Run a small sweep now", "Open the example sweep", "Open a results folder", "Upload results")
#: The sweep the page proposes: 60 instances, about 10 s on two cores once the cluster is up.
ss.setdefault("lb_families", ["iid", "markov", "near"])
ss.setdefault("lb_V", [2])
ss.setdefault("lb_K", [2, 3])
ss.setdefault("lb_L", [1, 2])
ss.setdefault("lb_n", 5)
ss.setdefault("lb_seed", 0)
ss.setdefault("lb_methods", list(default_methods()))
ss.setdefault("lb_laws", [])
ss.setdefault("lb_budgets", [])
ss.setdefault("lb_scheduler", os.environ.get(SCHEDULER_ENV, ""))
#: Where the example sweep's results say they come from.
EXAMPLE_ORIGIN = "Results read from the example sweep shipped with the app."


@st.cache_data(show_spinner=False)
def example_results() -> pd.DataFrame:
    """The example sweep's rows (``results_root.read_example``), read once per server."""
    return results_root.read_example()


#: The results' sources as a link names them.
SOURCE_NAMES = dict(zip(("run", "example", "folder", "upload"), SOURCES))
V_OPTIONS, K_OPTIONS, L_OPTIONS, BUDGETS = (list(range(V_RANGE[0], 7)), list(range(1, 5)), list(range(1, 4)),
                                            list(range(1, 9)))


def _source(text: str) -> str:
    return SOURCE_NAMES[routing.choice(SOURCE_NAMES)(text)]


#: The page's link (``routing.read_link``): where the results come from, the sweep's settings, a
#: results folder under the results root (opened when a link names it; anywhere else is refused in
#: one sentence, as a typed name is), and the views' choices.  The Dask scheduler is never in a link:
#: a link must not choose where this server connects.
LINK_PARAMS: routing.LinkParams = {
    "source": ("lb_source", _source),
    "families": ("lb_families", routing.choices(FAMILIES)),
    "V": ("lb_V", routing.choices(V_OPTIONS, int)),
    "K": ("lb_K", routing.choices(K_OPTIONS, int)),
    "L": ("lb_L", routing.choices(L_OPTIONS, int)),
    "n": ("lb_n", routing.number(int, 1, 200)),
    "seed": ("lb_seed", routing.number(int, 0, 10**9)),
    "methods": ("lb_methods", routing.choices(all_methods())),
    "laws": ("lb_laws", routing.choices(DRAFT_LAWS)),
    "budgets": ("lb_budgets", routing.choices(BUDGETS, int)),
    "path": ("lb_path", str),
    "T": ("lb_T", float),
    "a": ("lb_a", routing.choice(all_methods())),
    "b": ("lb_b", routing.choice(all_methods())),
    "rule": ("lb_rule", routing.choice(all_methods())),
}
opens_folder = routing.is_new_link() and st.query_params.get("source") == "folder" and "path" in st.query_params
unapplied = routing.read_link(LINK_PARAMS)

st.title("Leaderboard: which rule comes closest to the optimum?")
st.markdown(
    "Every rule is analysed **exactly** on many seeded toy instances, and scored by **E/LP**: its expected "
    "number of accepted tokens E[τ] divided by that of the best lossless verifier there is (the optimal "
    "LP). A score of 1 means the rule is optimal on that instance; a lossy rule (SpecTr-GBV) can score "
    "above 1, because it pays in fidelity instead. The instances run as tasks on a Dask cluster started "
    "inside this app (or on the scheduler named in the sidebar); the same sweep runs at scale with "
    "`python -m core sweep` (docs/sweeps.md).")

# 1. The sweep -------------------------------------------------------------------------------------------
st.header("1. Choose a sweep")
if unapplied:
    st.warning(routing.link_warning(unapplied))
source = st.radio("Results", SOURCES, key="lb_source", horizontal=True)
link = {"source": next(k for k, v in SOURCE_NAMES.items() if v == source)}
if source == SOURCES[0]:
    c1, c2, c3, c4 = st.columns(4)
    families = c1.multiselect("Families", FAMILIES, key="lb_families",
                              help="iid, markov, table: a Dirichlet target and a draft mixed with noise; "
                                   "near: a draft within ε of the target; confident: a markov pair whose first token "
                                   "is one token with probability 0.96 under both models.")
    Vs = c2.multiselect("Vocabulary sizes V", V_OPTIONS, key="lb_V")
    Ks = c3.multiselect("Drafts K", K_OPTIONS, key="lb_K")
    Ls = c4.multiselect("Draft lengths L", L_OPTIONS, key="lb_L")
    c5, c6, c7 = st.columns([1, 1, 4])
    n = c5.number_input("Instances per cell n", 1, 200, key="lb_n")
    seed = c6.number_input("Seed", 0, 10**9, key="lb_seed")
    methods = c7.multiselect("Rules", all_methods(), key="lb_methods", format_func=text.short)
    c8, c9 = st.columns([3, 2])
    laws = c8.multiselect("Draft laws (none: K i.i.d. chains)", DRAFT_LAWS, key="lb_laws",
                          help="Each shape drafted by each law: iid, wor (without replacement), topk (the k most "
                               "probable tokens), greedy (the k − 1 most probable and one sampled). Rules defined on "
                               "K i.i.d. chains only run on those; rrs (SpecInfer), traversal and the LP on every "
                               "draft.")
    budgets = c9.multiselect("Budgets n (none: chains K×L)", BUDGETS, key="lb_budgets",
                             help="Every tree of n drafted tokens at each L, and the chains (n/L)×L; "
                                  "in place of K. The LP of i.i.d. chains of the same n is the baseline.")
    address = st.sidebar.text_input(
        "Dask scheduler for the sweep", key="lb_scheduler", placeholder="tcp://127.0.0.1:8786",
        help="Empty: the cluster inside this app. Or a scheduler on this machine, or the one the server's "
             f"{SCHEDULER_ENV} names; its workers need this app's requirements, not its code "
             "(docs/sweeps.md).").strip()
    link.update(families=",".join(families), V=",".join(map(str, Vs)), K=",".join(map(str, Ks)),
                L=",".join(map(str, Ls)), n=str(int(n)), seed=str(int(seed)), methods=",".join(methods),
                laws=",".join(laws), budgets=",".join(map(str, budgets)))
    routing.write_link(link)
    config = SweepConfig(tuple(families), tuple(sorted(Vs)), () if budgets else tuple(sorted(Ks)),
                         tuple(sorted(Ls)), int(n), tuple(methods), bounds=("lp",), seed=int(seed),
                         laws=tuple(laws), budgets=tuple(sorted(budgets)))
    drafts = (f" --law {' '.join(laws)}" if laws else "") + \
        (f" --budget {' '.join(map(str, config.budgets))}" if budgets else f" --K {' '.join(map(str, config.Ks))}")
    st.caption(f"{len(config.instances())} {'units (a pair of models at one budget)' if config.drafts else 'instances'}"
               f" × {len(methods)} rules{' × shapes × laws' if config.drafts else ''}, each optimal LP solved once. "
               f"The same sweep on the command line: `python -m core sweep --family {' '.join(families)} "
               f"--V {' '.join(map(str, config.Vs))}{drafts} --L {' '.join(map(str, config.Ls))} --n {config.n} "
               f"--seed {config.seed} --bounds lp --methods {','.join(methods)} --out sweep.parquet`")
    if st.button("Run the sweep", type="primary", key="lb_go"):
        if not (families and Vs and (Ks or budgets) and Ls):
            st.error("Choose at least one family, one V, one K (or a budget) and one L.")
            st.stop()
        try:
            check_config(config)
            # A Dask client unpickles what the cluster sends back: a hosted app connects only to this
            # machine or to the scheduler its operator named, never wherever a visitor types.
            if address and not (is_loopback(address) or address == os.environ.get(SCHEDULER_ENV, "").strip()):
                raise SweepError(f"this app runs sweeps only on a scheduler on this machine (127.0.0.1) or on the "
                                 f"one its server names in {SCHEDULER_ENV}; {address} is neither")
            cluster = dask_client(address) if address else nullcontext(routing.sweep_client())
            bar = st.progress(0.0, text="Starting")

            def progress(done: int, total: int, elapsed: float) -> None:
                eta = elapsed / done * (total - done)
                bar.progress(done / total, text=f"{done} of {total} instances · {elapsed:.0f} s elapsed · "
                                                f"about {eta:.0f} s left")

            # The rows go through a results folder, read back as every other source is; the folder
            # is the app's own and is removed once read (a rerun that stops the sweep removes it too).
            with cluster as client, tempfile.TemporaryDirectory(prefix="explorer-sweep-") as folder:
                out = Path(folder) / "sweep.parquet"
                report = run_sweep(config, ResultsStore(out, config), client=client, progress=progress)
                workers = len(client.scheduler_info()["workers"])
                frame = read_results(out)
            bar.empty()
            where = f"the scheduler at {address}" if address else "the cluster inside this app"
            ss["lb_result"] = {"frame": frame, "origin": f"{report.computed} instances computed in "
                               f"{report.seconds:.1f} s on {workers} Dask workers of {where}."}
        except Exception as exc:  # noqa: BLE001
            error_boundary.show(exc, "the sweep")
elif source == SOURCES[1]:
    # The app's own sweep, shipped with it: a link opens a leaderboard on a fresh checkout at once.
    routing.write_link(link)
    st.caption("The sweep this page proposes (60 instances: families iid, markov and near, V = 2, K = 2 and 3, "
               "L = 1 and 2, seed 0, the default rules), computed once and shipped with the app "
               "(toy_models/sweeps/README.md): nothing to run.")
    if ss.get("lb_result", {}).get("origin") != EXAMPLE_ORIGIN:
        try:
            ss["lb_result"] = {"frame": example_results(), "origin": EXAMPLE_ORIGIN}
        except Exception as exc:  # noqa: BLE001
            ss.pop("lb_result", None)
            error_boundary.show(exc, "the example sweep")
elif source == SOURCES[2]:
    # Only under the results root: a hosted app must not open the server's other files.
    path = st.text_input(f"Results folder under `{results_root.shown_root()}` (written by `python -m core sweep "
                         f"--out {results_root.shown_root()}NAME`)", key="lb_path",
                         help=f"A name under the server's results root ({results_root.ENV}); a path "
                              "elsewhere, \"..\" or a link out of it is refused. Upload your own results instead.")
    link["path"] = path
    routing.write_link(link)
    if st.button("Open", type="primary", key="lb_open") or opens_folder:
        try:
            ss["lb_result"] = {"frame": results_root.read(path), "origin": f"Results read from `{path.strip()}`."}
        except Exception as exc:  # noqa: BLE001
            ss.pop("lb_result", None)
            error_boundary.show(exc, "the results folder")
else:
    routing.write_link(link)
    files = st.file_uploader("Parquet files of a sweep (e.g. every part-….parquet of a results folder)",
                             type=["parquet"], accept_multiple_files=True, key="lb_upload")
    if files and st.button("Open", type="primary", key="lb_open_upload"):
        try:
            ss["lb_result"] = {"frame": results_root.read_uploads((f.name, f.getvalue()) for f in files),
                               "origin": f"Results read from {len(files)} uploaded file{'s' * (len(files) > 1)}: "
                                         + ", ".join(f"`{f.name}`" for f in files) + "."}
        except Exception as exc:  # noqa: BLE001
            ss.pop("lb_result", None)
            error_boundary.show(exc, "the uploaded results")

result = ss.get("lb_result")
if not result:
    st.info("Run a sweep, open a results folder or upload results to see the leaderboard.")
    st.stop()

frame: pd.DataFrame = result["frame"]
board = leaderboard(frame)
score = board["score"]
name = "E/LP" if score == "ratio_lp" else "E[τ]"
# a rule of one's own that failed on some instances: its rows say why, and are never scored
failed = [m for m in board["methods"] if m.get("failures")]
if "failure" in frame.columns:
    frame = frame[frame["failure"].isna()]
scored = [m for m in board["methods"] if m["n"]]
order = [m["method"] for m in scored]
# A view's choice from a link that these results do not have falls back to the view's default.
for key, options in (("lb_a", order), ("lb_b", order), ("lb_rule", order),
                     ("lb_T", sorted(set(frame["temperature"])))):
    if key in ss and ss[key] not in options:
        del ss[key]
ss.setdefault("lb_b", CHALLENGER if CHALLENGER in order else order[-1])
drafts = "analyses" in board
sections = iter(range(3, 10))
st.success(result["origin"])

# 2. The leaderboard -------------------------------------------------------------------------------------
st.header("2. The leaderboard")
counted = (f"{board['instances']} pairs of models, {board['analyses']} analyses (a pair, a shape and a law); "
           f"{name} is E[τ] over the best any lossless verifier does **with the same drafts** (the own-law LP)"
           if drafts else f"{board['instances']} instances")
st.markdown(f"{counted}; the mean {name} of each rule with its 95% confidence interval, "
            f"its lowest {name}, the share of instances where it is the best lossless rule (ties all count), "
            f"and its largest fidelity error TV(output law, target). A lossy rule is never ranked: its {name} "
            f"is bought with loss.")
ranks = iter(range(1, len(scored) + 1))
st.dataframe(pd.DataFrame([{
    "rank": str(next(ranks)) if m["lossless"] else "lossy: not ranked",
    "rule": text.short(m["method"]), f"mean {name}": m["mean"], "95% CI": f"[{m['ci_low']:.4f}, {m['ci_high']:.4f}]",
    f"min {name}": m["min"], "best on": f"{100 * m['best_share']:.0f}%", "max TV": text.number(m["max_tv"]),
    "worst instance": describe(m["worst"])} for m in scored]),
    hide_index=True, width="stretch", key="lb_board")
for m in failed:
    st.error(text.escape_markdown(f"{text.short(m['method'])} failed on {m['failures']} analyses, which are not "
                                  f"scored; the first: {m['failure']}"))

bys = ("budget", "L") if drafts else ("K", "L")
st.subheader(f"{name} by {bys[0]} and by {bys[1]}")
st.markdown("Each box spans the middle half of the instances, the dashed line is the mean, the points are "
            "the instances themselves.")
for by in bys:
    charts.chart(score_boxes(frame, by, score, name, order), key=f"lb_box_{by}")

# 3. Draft laws at an equal budget (a sweep with laws or budgets) -------------------------------------------
if board.get("laws"):
    st.header(f"{next(sections)}. Draft laws at an equal budget")
    temperatures = sorted(set(frame["temperature"]))
    T = st.selectbox("Temperature", temperatures, key="lb_T") if len(temperatures) > 1 else temperatures[0]
    at_T = frame[frame["temperature"] == T]
    laws_shown = [law for law in DRAFT_LAWS if law in set(at_T["law"])]
    st.markdown("How much does a draft law gain over K i.i.d. drafts, and how much of it do the rules keep? For "
                "each pair of models and each budget n (drafted tokens), the **own-law optimum** of a law is "
                "the best E[τ] any lossless verifier reaches with that law's drafts (an LP), taken at the "
                "law's best shape of budget n; it is divided by the optimum for i.i.d. chains of the same n "
                "and length (n/L chains). Above 1 the law's drafts carry more than i.i.d. drafts can.")
    charts.chart(law_gain_boxes(law_gains(at_T), laws_shown), key="lb_law_gain")
    own = [e for e in board["laws"]["own_over_iid"] if e["temperature"] == T]
    st.dataframe(pd.DataFrame([{
        "law": e["law"], "pairs × budgets": e["best_shape"]["n"], "mean": e["best_shape"]["mean"],
        "median": e["best_shape"]["median"], "min": e["best_shape"]["min"], "max": e["best_shape"]["max"],
        "every shape: mean": e["per_shape"]["mean"], "every shape: min": e["per_shape"]["min"]} for e in own]),
        hide_index=True, width="stretch", key="lb_law_own",
        column_config={c: st.column_config.NumberColumn(format="%.4f")
                       for c in ("mean", "median", "min", "max", "every shape: mean", "every shape: min")})
    st.subheader("Each rule's share of its own law's optimum")
    st.markdown(f"{name} per rule and law: E[τ] over the own-law LP of the same shape and law, so 1 is the best "
                "any lossless verifier can do with those drafts. Rules defined on K i.i.d. chains only appear "
                "under iid.")
    charts.chart(score_boxes(at_T, "law", score, name, order), key="lb_box_law")
    shares = [e for e in board["laws"]["shares"] if e["temperature"] == T]
    st.dataframe(pd.DataFrame([{
        "law": e["law"], "rule": text.short(e["method"]), "analyses": e["n"], f"mean {name}": e["mean"],
        "95% CI": f"[{e['ci_low']:.4f}, {e['ci_high']:.4f}]", f"min {name}": e["min"],
        "max TV": text.number(e["max_tv"])} for e in shares]),
        hide_index=True, width="stretch", key="lb_law_shares",
        column_config={c: st.column_config.NumberColumn(format="%.4f") for c in (f"mean {name}", f"min {name}")})
    st.subheader("The best shape per budget and law")
    st.markdown("Per vocabulary size V, depth L, budget n and law (\"any\": every law at once), the shape with "
                "the highest mean over the pairs: of the own-law LP (the ceiling), and of E[τ] under each rule "
                "defined on every draft; \"best on\" is the share of pairs where that shape is best.")
    st.dataframe(pd.DataFrame([{
        "V": e["V"], "L": e["L"], "n": e["budget"], "law": e["law"],
        "of": "LP (ceiling)" if what == "lp" else text.short(what), "best shape": " = ".join(v["tied"]),
        "mean E[τ]": v["mean"], "best on": f"{100 * v['wins']:.0f}%"}
        for e in board["laws"]["best_shapes"] if e["temperature"] == T for what, v in e["by"].items()]),
        hide_index=True, width="stretch", key="lb_law_best",
        column_config={"mean E[τ]": st.column_config.NumberColumn(format="%.4f")})

# Two rules, instance by instance ------------------------------------------------------------------------
st.header(f"{next(sections)}. Two rules, instance by instance")
c1, c2 = st.columns(2)
a = c1.selectbox("Rule A (x-axis)", order, key="lb_a", format_func=text.short)
b = c2.selectbox("Rule B (y-axis)", order, key="lb_b", format_func=text.short)
keys = group_columns(frame)
paired = frame.pivot(index=keys, columns="method", values=score).dropna(subset=[a, b])
hover = [describe(dict(zip(keys, key))) for key in paired.index]
charts.chart(rule_scatter(paired[a], paired[b], a, b, name, hover, TIE), key="lb_scatter")

# Where a rule does worst --------------------------------------------------------------------------------
st.header(f"{next(sections)}. Where a rule does worst")
rule = st.selectbox("Rule", order, key="lb_rule", format_func=text.short)
routing.write_link({**link, **({"T": f"{ss['lb_T']:g}"} if "lb_T" in ss else {}), "a": a, "b": b, "rule": rule})
columns = [*KEY_COLUMNS, *(c for c in DRAFT_COLUMNS if drafts), "mismatch", "expected_accepted",
           *(c for c in ("lp", "ratio_lp") if c in frame), "fidelity_tv"]
worst = frame[frame["method"] == rule].sort_values(score, kind="stable").head(10)[columns + ["draft", "target", "temperature"]]
st.markdown(f"The {len(worst)} instances with the lowest {name} of {text.short(rule)}, lowest first "
            f"(mismatch: m for iid, markov and table, ε for near).")
st.dataframe(worst[columns].rename(columns={"expected_accepted": "E[τ]", "ratio_lp": "E/LP", "lp": "LP",
                                            "fidelity_tv": "TV"}).assign(TV=lambda t: t["TV"].map(text.number)),
             hide_index=True, width="stretch", key="lb_worst",
             column_config={c: st.column_config.NumberColumn(format="%.4f") for c in ("mismatch", "E[τ]", "LP", "E/LP")})
rows = worst.to_dict("records")
pick = st.selectbox("Open an instance in the toy laboratory", range(len(rows)), key="lb_pick",
                    format_func=lambda i: describe(rows[i]) + f": {name} = {rows[i][score]:.4f}")
if drafts and not is_iid_chains(row_shape(rows[pick]["shape"], rows[pick]["branching"]), rows[pick]["law"]):
    st.caption("The toy laboratory drafts K i.i.d. chains: it opens this instance's models with K = b₁ = "
               f"{rows[pick]['K']} chains of length L, not this shape and law.")


def _open(row: dict = rows[pick], method: str = rule) -> None:
    """The instance's models as the toy configuration's JSON source, at its K, L and temperature."""
    ss.toy_source = "JSON"
    ss.toy_json_p, ss.toy_json_q = row["draft"], row["target"]
    ss.toy_K, ss.toy_L, ss.toy_T = int(row["K"]), int(row["L"]), float(row["temperature"])
    shown = ss.get("toy_methods") or toy_config.all_methods()
    ss.toy_methods = shown if method in shown else [*shown, method]
    ss["lb_goto_lab"] = True


st.button("Open in the laboratory", key="lb_open_lab", on_click=_open)
if ss.pop("lb_goto_lab", False):
    st.switch_page(routing.toy_lab())
