"""Live decoder: a real draft/target pair generating text, streamed iteration by iteration, with the
accepted draft tokens and the extra token coloured, live metrics, any iteration's draft tree and time
split, and a comparison of methods and drafts on the same prompt and seed.

The draft is a plan of ``core.decoding.plans``: K chains of length L, a static tree b, or EAGLE-2's
dynamic tree, drafted by a law; a method that cannot verify it is refused in one sentence
(``check_plan``) before anything runs."""
from __future__ import annotations

import time

import numpy as np
import pandas as pd
import streamlit as st

from core.data.laws import IID_LAW, LAWS, TOPK_LAW
from core.errors import DecodingError
from core.decoding.plans import DynamicPlan, StaticPlan, check_plan, draft_plan, tree_rules
from core.decoding.iteration_trace import tree_from_trace
from core.rules.registry import DECODER_COMPARED, DEFAULT_RULE, lossless_tree_rules, tree_label, tree_rule
from pages.ui import charts, error_boundary, generation, lazy, pair_picker, routing, text, token_text
from pages.ui.figures.runs import PHASE_COLORS, acceptance_per_position, time_split
from pages.ui.figures.trees import draft_tree, token_tree
from pages.ui.toy_config import law_label

routing.router_guard()

#: The draft's shape: K chains of length L, a static tree b typed as the command line's --tree, or
#: EAGLE-2's dynamic tree (a budget of n nodes, depth L, K nodes expanded per depth).
SHAPES = {"chains": "chains K×L", "tree": "static tree b", "dynamic": "dynamic tree (EAGLE-2)"}
#: The most tokens one iteration drafts here (chains 8×8): a larger tree is slow and unreadable.
MAX_DRAFTED, MAX_DEPTH = 64, 8
#: Drafts the comparison offers beside the one chosen above, by the name a link gives them: the
#: command line's side-by-side suite (``python -m core bench --suite trees``): i.i.d. chains, the
#: static tree (2, 2, 1, 1) by each law, and EAGLE-2's dynamic tree of 16 nodes.
COMPARE_DRAFTS = {"chains": StaticPlan.chains(4, 4),
                  **{f"tree-{law.name}": StaticPlan.tree((2, 2, 1, 1), law) for law in LAWS.values()},
                  "dynamic": DynamicPlan(16, 4, 4)}
#: The comparison's option for the draft chosen above.
ABOVE = "above"

st.title("Live decoder: speculative decoding on a real model pair")
st.markdown(
    "A small **draft** model p proposes continuations, the **target** q scores them all in one call, "
    "and the chosen verification rule keeps what it can. The draft is K chains of L tokens, a static "
    "token tree, or the dynamic tree EAGLE-2 grows from the draft's own probabilities. Watch the text "
    "grow: each iteration's accepted draft tokens are green (two shades alternate between iterations), "
    "and the extra token the verifier adds is yellow where it corrects a rejected draft token and orange "
    "where it is a bonus after the whole draft was accepted. Block efficiency is tokens per target call.")
st.markdown(token_text.LEGEND_HTML, unsafe_allow_html=True)

methods = generation.decoder_methods()
on_trees = tree_rules(methods)
any_tree = ", ".join(tree_label(m, known_as="short") for m in on_trees)
#: The rule a draft that is not K i.i.d. chains switches to when the chosen rule cannot verify it.
TREE_RULE = tree_rule(on_trees)


def _b(text_: str) -> tuple[int, ...]:
    """The branching vector typed in "b", e.g. 2,2,1: whole numbers with commas (``Shape.tree``
    checks each b_d ≥ 1).  The sentence names the field, not the command line's --tree."""
    try:
        return tuple(int(x) for x in text_.replace(" ", "").split(","))
    except ValueError:
        raise DecodingError(f"b must be whole numbers with commas, such as 2,2,1, not {text_.strip()!r}") from None


def _branching(text_: str) -> str:
    """A branching vector as a link holds it: whole numbers ≥ 1 with commas, a tree this page drafts."""
    try:
        shape = StaticPlan.tree(_b(text_)).shape
    except DecodingError:
        raise ValueError(text_) from None
    if shape.L > MAX_DEPTH or shape.budget > MAX_DRAFTED:
        raise ValueError(text_)
    return ",".join(map(str, shape.branching))


#: What a link to this page holds: parameter → (session-state key, parser raising ValueError when the
#: text is no value the control offers); the pair picker's own are ``pair_picker.pair_link_params``.
LINK = {**pair_picker.pair_link_params("dec"),
        "prompt": ("dec_prompt", str),
        "shape": ("dec_shape", routing.choice(SHAPES)),
        "b": ("dec_b", _branching),
        "law": ("dec_law", routing.choice(LAWS)),
        "K": ("dec_K", routing.number(int, 1, 8)),
        "width": ("dec_width", routing.number(int, 1, 8)),
        "L": ("dec_L", routing.number(int, 1, MAX_DEPTH)),
        "budget": ("dec_budget", routing.number(int, 1, MAX_DRAFTED)),
        "method": ("dec_method", routing.choice(methods)),
        "T": ("dec_T", routing.number(float, 0.0, 2.0)),
        "tokens": ("dec_max", routing.number(int, 8, 1024)),
        "seed": ("dec_seed", routing.number(int, 0, 10**9)),
        "compare": ("dec_compare", routing.choices(methods)),
        "drafts": ("dec_compare_drafts", routing.choices([ABOVE, *COMPARE_DRAFTS])),
        "baseline": ("dec_baseline", lambda text_: routing.choice(("0", "1"))(text_) == "1")}

unapplied = routing.link_warning(routing.read_link(LINK), "the page shows its settings above instead")
if unapplied:
    st.warning(text.escape_markdown(unapplied))

ss = st.session_state
# The comparison's controls are drawn only once a generation is shown, and Streamlit forgets a
# widget's value after a run that did not draw it: a pair switch (whose run stops at "Press
# Generate") emptied "Methods".  Re-assigned here, on every run, they are the session's own values;
# so are the chains' K and L and the dynamic tree's width and depth (a static tree shows b's own K and
# L) and the law the dynamic tree does not draw by.
for _key in ("dec_compare", "dec_compare_drafts", "dec_baseline", "dec_K", "dec_L", "dec_width", "dec_law"):
    if _key in ss:
        ss[_key] = ss[_key]
ss.setdefault("dec_prompt", "import os\n\n\ndef main():\n")
ss.setdefault("dec_method", DEFAULT_RULE if DEFAULT_RULE in methods else methods[0])
ss.setdefault("dec_shape", "chains")
ss.setdefault("dec_b", "2,2,1")
ss.setdefault("dec_law", IID_LAW.name)
# The dynamic tree of the command line's side-by-side suite, EAGLE-2's small setting: 16 of the
# 4 + 3·4² = 52 candidates of depth 4 and width 4.
ss.setdefault("dec_budget", 16)
ss.setdefault("dec_width", 4)
ss.setdefault("dec_K", 2)
ss.setdefault("dec_L", 4)
# T = 0.6: on the bundled pair and this prompt, seeds 0 and 1 give 64 tokens that read as Python
# (def, return, docstrings, indented blocks); at T = 1 they are word salad ("f_createcol Meriptup"),
# at 0.5 seed 1 already loops on "test_helper.import_helper", and at 0.3 both seeds loop.
ss.setdefault("dec_T", 0.6)
ss.setdefault("dec_max", 32)
ss.setdefault("dec_seed", 0)


def chosen_plan():
    """The draft plan the controls name (``draft_plan``, as the command line builds it), or
    ``DecodingError`` with the sentence that refuses it.  The dynamic tree's budget is taken down to
    the candidates its depth and width give (said under the controls), so every budget runs."""
    if ss.dec_shape == "chains":
        plan = draft_plan(K=int(ss.dec_K), L=int(ss.dec_L), law=ss.dec_law)
    elif ss.dec_shape == "tree":
        plan = draft_plan(tree=_b(ss.dec_b), law=ss.dec_law)
    else:
        most = DynamicPlan(1, int(ss.dec_L), int(ss.dec_width)).candidates
        plan = draft_plan(budget=min(int(ss.dec_budget), most), L=int(ss.dec_L), K=int(ss.dec_width))
    if plan.L > MAX_DEPTH or plan.budget > MAX_DRAFTED:
        raise DecodingError(f"{plan.label} drafts {plan.budget} tokens at depth {plan.L}; this page drafts at "
                            f"most {MAX_DRAFTED} tokens an iteration, at depth at most {MAX_DEPTH}")
    return plan


def verifies(method_: str, plan_) -> bool:
    try:
        check_plan(method_, plan_)
        return True
    except DecodingError:
        return False


plan = refusal = None
try:
    plan = chosen_plan()
except DecodingError as exc:
    refusal = exc
# A draft the chosen rule cannot verify switches the rule to one that can, and says so; back on K
# i.i.d. chains, the rule the reader had chosen comes back.
switched = ss.get("dec_switched")
if switched and (ss.dec_method != switched[1] or plan is not None and plan.iid_chains):
    if ss.dec_method == switched[1]:       # not chosen by the reader since: theirs comes back
        ss.dec_method = switched[0]
    del ss["dec_switched"]
    switched = None
if plan is not None and not verifies(ss.dec_method, plan):
    ss["dec_switched"] = switched = (ss.dec_method, TREE_RULE)
    ss.dec_method = TREE_RULE
offered = methods if plan is None or plan.iid_chains else [m for m in on_trees if verifies(m, plan)]

# The comparison offers the rules that run on at least one of its drafts; a choice left empty by a
# change of the draft above falls back to the rules that verify it.
compare_plans = {p_.label: p_ for d in ss.get("dec_compare_drafts", [ABOVE])
                 for p_ in ([plan] if d == ABOVE else [COMPARE_DRAFTS[d]]) if p_ is not None}
compare_offered = [m for m in methods if any(verifies(m, p_) for p_ in compare_plans.values())]
compare_default = ([x for x in DECODER_COMPARED if x in methods]
                   if plan is None or plan.iid_chains else lossless_tree_rules(on_trees))
if "dec_compare" in ss:
    kept = [m for m in ss.dec_compare if m in compare_offered]
    if kept != ss.dec_compare:
        ss.dec_compare = kept or [m for m in compare_default if m in compare_offered]

# The controls come before the pair check: a widget not drawn in a run loses its value, so a pair
# error would reset them.  The same holds for a control the chosen shape does not use: it is shown
# disabled, not hidden.
prompt = st.text_area("Prompt", key="dec_prompt", height=150)
d1, d2, d3, d4 = st.columns([3, 1, 2, 1], vertical_alignment="bottom")
shape = d1.radio("Draft shape", list(SHAPES), key="dec_shape", format_func=SHAPES.get, horizontal=True,
                 help="Chains: K drafts of L tokens (the law draws the K first tokens, each chain goes on "
                      "i.i.d.). Static tree: a node of depth d receives b_(d+1) draws by the law, at every depth. "
                      "Dynamic tree: EAGLE-2's, rebuilt every iteration from the draft's probabilities: at each "
                      "depth the K nodes of highest cumulative draft log-probability propose their K most probable "
                      "tokens, and the n best candidates of all depths form the tree (docs/decoder.md).")
b_text = d2.text_input("b (comma-separated)", key="dec_b", disabled=shape != "tree",
                       help="b₁,…,b_L with every b_d ≥ 1, e.g. 2,2,1 (the command line's --tree).")
LAW_HELP = ("How the tokens at a node are drawn from p: with replacement (iid), without (wor), the k most probable "
            "(topk), or the k − 1 most probable and one sampled (greedy). The dynamic tree always takes each node's "
            "most probable tokens (topk): it is deterministic given the draft.")
if shape == "dynamic":      # shown as what it drafts by; the law chosen for the other shapes is kept
    d3.selectbox("Draft law", [TOPK_LAW.name], key="dec_law_dynamic", format_func=law_label, disabled=True,
                 help=LAW_HELP)
    law = ss.dec_law
else:
    law = d3.selectbox("Draft law", list(LAWS), key="dec_law", format_func=law_label, help=LAW_HELP)
budget = d4.number_input("Budget n", 1, MAX_DRAFTED, step=1, key="dec_budget", disabled=shape != "dynamic",
                         help="The dynamic tree's size: the n candidates of highest cumulative draft "
                              "log-probability are drafted (the command line's --budget), at most the "
                              "K + (L − 1)·K² candidates of depth L and width K.")
c1, c2, c3, c4, c5, c6 = st.columns([2, 1, 1, 1, 1, 1])
method = c1.selectbox("Method", offered, key="dec_method", format_func=lambda m: f"{text.short(m)}: {text.label(m)}",
                      help=f"Every rule verifies K i.i.d. chains (the iid law on chains); any other draft is verified "
                           f"by the rules defined on token trees, the only ones offered then: {any_tree}.")
if shape == "tree":      # b fixes K and L: shown as b gives them, the chains' own are kept
    fixed = "b fixes K = b₁ and L = the length of b."
    bK, bL = (plan.K, plan.L) if plan is not None else (ss.dec_K, ss.dec_L)
    K = c2.slider("Drafts K", 1, max(8, bK), value=bK, disabled=True, help=fixed)
    L = c3.slider("Length L", 1, max(MAX_DEPTH, bL), value=bL, disabled=True, help=fixed)
else:
    if shape == "dynamic":
        K = c2.slider("Width K", 1, 8, key="dec_width",
                      help="Nodes expanded per depth, each proposing its K most probable tokens.")
    else:
        K = c2.slider("Drafts K", 1, 8, key="dec_K", help="Chains drafted per iteration.")
    L = c3.slider("Depth L" if shape == "dynamic" else "Length L", 1, MAX_DEPTH, key="dec_L",
                  help="Draft tokens per chain (the tree's depth).")
T = c4.slider("Temperature T", 0.0, 2.0, step=0.05, key="dec_T")
max_new = c5.number_input("New tokens", 8, 1024, step=8, key="dec_max")
seed = c6.number_input("Seed", 0, 10**9, step=1, key="dec_seed")

if refusal is not None:   # one sentence, never a traceback; kept as written (a method's name is lower case)
    st.error(text.escape_markdown(f"This draft is refused: {str(refusal).strip().rstrip('.')}."))
else:
    if switched and method == switched[1]:
        st.info(f"{text.short(switched[0])} is defined on K i.i.d. chains only: {text.short(method)}, "
                f"a lossless rule on token trees, verifies this draft.")
    how = plan.law.summary if shape != "dynamic" else "Each node's most probable tokens, chosen afresh every iteration."
    fewer = (f" The budget {int(budget)} is more than the {plan.candidates} candidates of depth {plan.L} and width "
             f"{plan.K}: the tree drafts them all." if shape == "dynamic" and plan.budget < int(budget) else "")
    st.caption(f"Draft: {plan.label}, at most {plan.budget} tokens an iteration.{fewer} {how} "
               + ("Every rule verifies it." if plan.iid_chains else f"Verified by {any_tree}.")
               + (" At T = 0 wor and greedy draft as topk, their T → 0 limit."
                  if plan.law_at_temperature(T) is not plan.law else "")
               + (" A top-k child is no sample of p but a fixed token, so the verifier accepts the child of rank k "
                  "with q(x_k), what the target still gives it, not with min(1, q/p): at T = 1 q spreads its mass "
                  "and a top-k tree accepts less than an i.i.d. one, at low T q concentrates and it catches up."
                  if plan.law is TOPK_LAW and T > 0 else ""))

pair = pair_picker.pair_picker("dec")


def link_values() -> dict[str, str]:
    """The page's settings as its link (``LINK``): only those the chosen shape and pair source read."""
    values = {**pair_picker.pair_link("dec"), "prompt": prompt, "shape": shape}
    if shape == "chains":
        values.update(K=str(int(K)), L=str(int(L)), law=law)
    elif shape == "tree":
        try:
            values.update(b=_branching(b_text.strip()))
        except ValueError:      # refused above; a link keeps the shape and law
            pass
        values["law"] = law
    else:
        values.update(budget=str(int(budget)), L=str(int(L)), width=str(int(K)))
    values.update(method=method, T=f"{float(T):g}", tokens=str(int(max_new)), seed=str(int(seed)))
    if "dec_compare" in ss:
        values.update(compare=",".join(ss.dec_compare), drafts=",".join(ss.dec_compare_drafts),
                      baseline="1" if ss.dec_baseline else "0")
    return values


routing.write_link(link_values())
# Generate stays on the page whatever is refused (the draft, or the pair: its sentence is above).
go = st.button("Generate", type="primary", key="dec_go", disabled=plan is None or pair is None,
               help="Choose a draft that the method verifies (the sentence above says why not)." if plan is None else
               "Choose a model pair that loads (the sentence above says why not)." if pair is None else None)
if pair is None:
    st.stop()
for name in ("dec_result", "dec_compare_result"):   # results of another pair are not this pair's
    if name in ss and ss[name]["pair"] != pair_picker.pair_id(pair):
        del ss[name]

config = dict(method=method, draft=None if plan is None else plan.label, T=float(T), max_new=int(max_new),
              seed=int(seed), prompt=prompt, pair=pair_picker.pair_id(pair))


def _segments(gen) -> list[tuple[list[str], str, bool]]:
    """Per iteration: (accepted token texts, extra token text, bonus?), cut where generation stopped."""
    texts = token_text.token_texts(pair, gen.tokens)
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


def _phases(m) -> dict[str, float]:
    """A run's time per phase of its iterations (``DecodeMetrics``), in seconds."""
    return {"draft": m.time_draft_s, "target": m.time_target_s, "verify": m.time_verify_s,
            "cache": m.time_cache_s, "other": m.time_other_s}


def _metrics_row(m, draft: str | None) -> dict:
    """One run of the comparison as its table's row: what the comparison is for first (the speedup is
    set beside it), eight columns that fit the page's main column; the time per phase is the chart
    beside the table."""
    alone = m.method == "autoregressive"
    return {"method": "Target alone" if alone else text.short(m.method), "draft": draft,
            "block efficiency": m.block_efficiency, "tokens/s": m.tokens_per_second,
            "target calls": m.iterations, "tokens": m.tokens_generated,
            "root acceptance": None if alone else m.mean_root_acceptance}


text_box = st.empty()
live = st.empty()
live_chart = st.empty()

if go and plan is not None:
    texts = token_text.TokenTexts(pair)
    colored = token_text.ColoredText(prompt)
    t0 = time.perf_counter()
    last = [0.0, 0.0]
    n_redraws = [0]
    taus: list[int] = []
    chart: list = []   # the live figure, built once: a redraw only sets its bars (a build costs ~0.07 s)

    split = dict.fromkeys(PHASE_COLORS, 0.0)

    def on_iteration(it) -> None:
        """Called by the decoder after each iteration with its ``IterationTrace``."""
        new = texts.extend([*it.accepted, it.extra])
        colored.add(new[:it.tau], new[it.tau], bool(it.is_bonus))
        taus.append(it.tau)
        for phase, seconds in it.seconds.items():
            split[phase] += seconds
        now = time.perf_counter()
        if now - last[0] > generation.LIVE_TEXT_EVERY_S:
            last[0] = now
            # st.html, not st.markdown: the text is HTML already, and Markdown's parser ran over all
            # of it on every redraw (about 0.5 s of the browser's time per generation of 256 tokens).
            text_box.html(colored.html())
            n = len(taus)
            busy = sum(split.values()) or 1.0
            live.markdown(f"**Iteration {n}** · block efficiency so far **{(sum(taus) + n) / n:.3f}** "
                          f"· {len(texts.tokens) / (now - t0):.1f} tokens/s · {len(texts.tokens)} tokens · time in "
                          + ", ".join(f"{k} {v / busy:.0%}" for k, v in split.items() if k != "other"))
        if now - last[1] > generation.LIVE_CHART_EVERY_S:
            last[1] = now
            rates = [float(np.mean([t >= i for t in taus])) for i in range(1, plan.L + 1)]
            if not chart:
                chart.append(acceptance_per_position({method: rates}))
            chart[0].data[0].y = rates
            # A redraw is a new element: its key must be new too (an unkeyed one repeats its id).
            charts.draw(live_chart, chart[0], key=f"dec_live_{n_redraws[0]}")
            n_redraws[0] += 1

    try:
        with st.spinner("Generating…"):
            gen = generation.generate(pair, method, plan, T, prompt, max_new, seed, on_iteration=on_iteration)
        ss["dec_result"] = {"config": config, "pair": config["pair"], "plan": plan, "generation": gen,
                            "segments": _segments(gen)}
    except Exception as exc:  # noqa: BLE001
        error_boundary.show(exc, "the generation")
    live.empty()
    live_chart.empty()

result = ss.get("dec_result")
if result is None:
    st.info("Press **Generate** to start.")
    st.stop()
gen = result["generation"]
if result["config"] != config:
    st.caption("Showing the last generation; the settings above have changed since. Press Generate to rerun.")
text_box.html(token_text.colored_text_html(result["config"]["prompt"], result["segments"]))

m = gen.metrics
run_method = result["config"]["method"]
st.header("How it went")
c = st.columns(5)
c[0].metric("Block efficiency", f"{m.block_efficiency:.3f}", help="Tokens per target call.")
c[1].metric("Tokens per second", f"{m.tokens_per_second:.1f}")
c[2].metric("Tokens generated", f"{m.tokens_generated}")
c[3].metric("Iterations", f"{m.iterations}")
c[4].metric("Stopped because", gen.stop_reason)
drawn_by = "" if m.law == result["plan"].law.name else f" (drawn by {m.law}: at T = 0 {result['plan'].law.name} takes its T → 0 limit)"
st.caption(f"{text.short(run_method)} verified {m.draft}{drawn_by}: {m.mean_tree_nodes:.1f} drafted tokens per "
           f"iteration on average, scored by the target with {m.attention}.")
left, right = st.columns(2)
with left:
    charts.chart(acceptance_per_position({run_method: m.acceptance_per_position}), key="dec_accept")
with right:
    charts.chart(time_split({run_method: _phases(m)}), key="dec_time")

# -- one iteration's draft tree -----------------------------------------------------------------
st.header("Open any iteration's draft tree")
# Drawn only while open: a finished generation then draws its two charts, not four (a chart costs
# the browser a full Plotly draw each time its figure changes), and the page is done sooner.
tree_box = lazy.expander("Show the draft tree of an iteration", key="dec_tree_open")
if tree_box is not None and gen.iterations:
    with tree_box, error_boundary.guard("the draft tree"):
        n_it = len(gen.iterations)
        i = st.slider("Iteration", 1, n_it, 1, key=f"dec_iter_{n_it}") if n_it > 1 else 1
        it = gen.iterations[i - 1]
        run_plan = result["plan"]
        block, trace = tree_from_trace(it, pair.vocab_size, run_plan)
        token = lambda t: token_text.visible(pair.decode([int(t)]))  # noqa: E731
        draw = draft_tree if run_plan.iid_chains else token_tree
        charts.chart(draw(block, trace, accepted=it.accepted, extra=it.extra, token_text=token,
                          title=f"Iteration {i}: τ = {it.tau} accepted, extra token {token(it.extra)!r}"
                                f"{' (bonus)' if it.is_bonus else ''}"), key="dec_tree")
        st.caption("The accepted path is thick and green, the extra token the gold star at its end; hover a node "
                   "for p and q of its token. "
                   + ("Each branch is labelled with the drafts that take it." if run_plan.iid_chains else
                      f"Drawn by {it.law}: children on solid edges are deterministic (a rank of p), on dotted "
                      "edges sampled; ×m marks a token drawn m times."))
        cols = st.columns(3)
        cols[0].metric("E[τ | these drafts]", text.fmt(it.expected_tau),
                       help="Exact over the verifier's coins, where the rule has a closed form.")
        cols[1].metric("Single-token optimum α* at the root", text.fmt(it.alpha_star_root),
                       help="Best possible acceptance probability of the first token with the root's draws (docs/maths.md, the single-token optimum).")
        cols[2].metric("1 − TV(p, q) at the root", text.fmt(it.acceptance_root))
        left, right = st.columns(2)
        with left:
            charts.chart(time_split({run_method: {k: 1e3 * v for k, v in it.seconds.items()}},
                                            title=f"Iteration {i}: where its {1e3 * it.iteration_s:.2f} ms went",
                                            unit="ms"), key="dec_iter_time")
        with right:
            st.dataframe(pd.DataFrame([{"token": repr(pair.decode([t])), "probability": pr}
                                       for t, pr in it.residual_top]), hide_index=True, key="dec_residual",
                         column_config={"probability": st.column_config.NumberColumn(format="%.4f")})
            st.caption("Top of the distribution the extra token was drawn from (the residual, or q for a bonus).")

# -- compare methods and drafts -----------------------------------------------------------------
st.header("Compare methods and drafts on the same prompt and seed")
ss.setdefault("dec_compare_drafts", [ABOVE])
ss.setdefault("dec_compare", [m for m in compare_default if m in compare_offered])
ss.setdefault("dec_baseline", True)
drafts = st.multiselect(
    "Drafts", [ABOVE, *COMPARE_DRAFTS], key="dec_compare_drafts",
    format_func=lambda d: (f"the draft above ({plan.label})" if plan is not None else "the draft above (refused)")
    if d == ABOVE else COMPARE_DRAFTS[d].label,
    help="Each method verifies each draft it is defined on: every rule on i.i.d. chains, the token-tree "
         f"rules ({any_tree}) on any draft. The other drafts are those of the command line's "
         "side-by-side suite (python -m core bench --suite trees).")
chosen = st.multiselect("Methods", compare_offered, key="dec_compare", format_func=text.short,
                        help="The rules that run on at least one of the drafts chosen above.")
baseline = st.checkbox("Include the target alone (for the speedup)", key="dec_baseline")
plans = compare_plans
runs, skipped = [], []
for p_ in plans.values():
    for x in chosen:
        try:
            check_plan(x, p_)
            runs.append((x, p_))
        except DecodingError:
            skipped.append(f"{text.short(x)} on {p_.label}")
if not chosen or not plans:
    st.info("Choose at least one method under *Methods* and one draft under *Drafts* to compare.")
elif skipped:
    st.info(f"Not run, the rule being defined on K i.i.d. chains only: {'; '.join(skipped)}."
            + ("" if runs else f" Add {any_tree} to verify these drafts."))
if st.button("Compare", key="dec_compare_go", disabled=not runs):
    jobs = [((x, p_.label), x, p_) for x, p_ in runs] + ([("autoregressive", "autoregressive", None)] if baseline else [])
    bar = st.progress(0.0, text="Comparing")
    out = {}
    for j, (key, x, p_) in enumerate(jobs):
        name = "Target alone" if p_ is None else f"{text.short(x)} on {p_.label}"
        bar.progress(j / max(1, len(jobs)), text=f"Running {name} ({j + 1}/{len(jobs)})")
        try:
            out[key] = generation.generate(pair, x, p_, T, prompt, max_new, seed).metrics
        except Exception as exc:  # noqa: BLE001
            error_boundary.show(exc, "the generation", prefix=f"{name}: ")
    bar.empty()
    ss["dec_compare_result"] = {"pair": pair_picker.pair_id(pair), "metrics": out}
cmp_ = ss["dec_compare_result"]["metrics"] if "dec_compare_result" in ss else None
if cmp_:
    base = cmp_.get("autoregressive")
    # the speedup first after the run's name: what the comparison is for, never off the table's right edge
    rows = [{**dict(list(r.items())[:2]), "speedup": (x.tokens_per_second / base.tokens_per_second)
             if base else None, **dict(list(r.items())[2:])}
            for r, x in ((_metrics_row(x, k[1] if isinstance(k, tuple) else None), x) for k, x in cmp_.items())]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="dec_compare_table", placeholder=text.DASH,
                 column_config={
                     "draft": st.column_config.TextColumn(width="medium"),
                     "speedup": st.column_config.NumberColumn(
                         format="%.2f×", help="Tokens per second over the target alone's, on this machine."),
                     "block efficiency": st.column_config.NumberColumn(format="%.3f", help="Tokens per target call."),
                     "tokens/s": st.column_config.NumberColumn(format="%.1f"),
                     "root acceptance": st.column_config.NumberColumn(
                         format="%.3f", help="1 − TV(p, q) at the first drafted position, averaged over the iterations.")})
    spec_runs = {k: v for k, v in cmp_.items() if k != "autoregressive"}
    a, b = st.columns(2)
    with a:
        if spec_runs:
            charts.chart(acceptance_per_position({k: v.acceptance_per_position for k, v in spec_runs.items()}),
                         key="dec_cmp_accept")
        else:     # every method failed: no acceptance to draw (an empty chart read as a −1..1 axis)
            st.info("No speculative run finished, so there is no acceptance per position to draw.")
    with b:
        charts.chart(time_split({k: _phases(v) for k, v in cmp_.items()}), key="dec_cmp_time")
    st.caption("Same prompt, seed and T for every run; each draft has its own shape, law and depth (the column "
               "“draft”). With T > 0 the texts differ between runs (their coins differ) but every lossless "
               "method samples from the target's law.")
