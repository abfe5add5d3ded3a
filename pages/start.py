"""Start: what speculative decoding is, what each method does, one picture, and links with presets."""
from __future__ import annotations

import streamlit as st

from core.rules.registry import DEFAULT_RULE, REGISTRY, STORY_RULES
from pages.ui import cached, charts, error_boundary, lazy, routing, text
from pages.ui.figures.trees import draft_tree
from toy_models import PRESETS

routing.router_guard()

#: The binary toy at K = 2 (the toy laboratory's link; the preset itself opens at K = 1).
BINARY_TOY_K2 = {"preset": "binary-toy", "K": "2"}

st.title("Speculative decoding with several drafts: learn it, check it")
st.markdown(
    """
**Speculative decoding** makes a large *target* model **q** generate faster without changing what it
generates. A small *draft* model **p** proposes **K** continuations of **L** tokens each; the target
scores all of them in one parallel call; a **verifier** then keeps the longest piece it can accept
(τ tokens) and adds **one extra token** of its own, so every target call yields τ + 1 tokens.
A verifier is **lossless** when the text it produces has exactly the target's distribution.
The whole game is to make the expected accepted length **E[τ]** as large as possible while staying lossless.
"""
)

left, right = st.columns([3, 2], gap="large")
with left:
    with error_boundary.guard("the example picture"):
        preset = PRESETS["several-drafts"]
        spec = cached.model_spec(preset.draft, preset.target, 1.0)
        block = cached.draw(spec, preset.K, preset.L, seed=6)  # three branches, τ = 2: every colour shows
        verdict = cached.verify(spec, DEFAULT_RULE, block, coin_seed=1)    # the rule the step page opens on
        fig = draft_tree(
            block, verdict.trace, accepted=verdict.accepted, extra=verdict.extra,
            title=f"One iteration: K = {preset.K} drafts of L = {preset.L} tokens<br>"
                  f"<sup>verified by {REGISTRY[DEFAULT_RULE].short}: τ = {verdict.tau} tokens accepted, "
                  f"then one extra token</sup>",
            height=400)
        charts.chart(fig, key="start_tree")
        st.caption("Drafts that share a prefix share a node. Green: the accepted sub-block; red: "
                   "rejected sub-blocks; gold star: the extra token drawn by the verifier. Hover a node "
                   "for p, q and the acceptance quantities.")
        with st.expander("What am I looking at?"):
            st.markdown(text.note(
                "Each path from the root (the text so far) is one draft of L tokens sampled from p. "
                "The verifier accepts the green path, τ tokens long, then adds one extra token (the gold "
                "star), so this call of the target produced τ + 1 tokens; on average E[τ] + 1, the "
                "block efficiency.",
                ["p, q", "K, L", "τ", "E[τ]", "block efficiency", "extra token", "residual", "lossless"]))
with right:
    st.subheader("Where to start")
    st.page_link(routing.toy_lab(), label="The binary toy, two drafts", icon=":material/science:",
                 query_params=BINARY_TOY_K2,
                 help="The block-verification paper's binary toy, V = 2, L = 2, opened at K = 2 drafts; "
                      "slide K to 1 for the paper's single-draft case (SD 10/9, BV 11/9).")
    st.caption("The block-verification paper's toy: p = (2/3, 1/3), q = (1/3, 2/3), L = 2. With one draft BV "
               "(11/9) beats SD (10/9) by checking the block; with K = 2 drafts, RBV reaches 115/81 and OTV the "
               "LP optimum 131/81.")
    st.page_link(routing.toy_lab(), label="Why several drafts help", icon=":material/account_tree:",
                 query_params={"preset": "several-drafts", "section": "drafts"},
                 help="A noisy draft of a peaked Markov target: watch E[τ] grow with K.")
    story = [REGISTRY[m].short for m in STORY_RULES]
    st.caption(f"A noisy draft of a peaked Markov target: E[τ] against K for {', '.join(story[:-1])} and "
               f"{story[-1]} beside the LP optimum; every other method one click away.")
    st.page_link(routing.claims(), label="Is SpecTr-GBV lossless?", icon=":material/gavel:",
                 query_params={"preset": "gbv-lossless", "tab": "live"},
                 help="The binary toy with K = 2: the output law is measured exactly against q.")
    st.caption("The binary toy with K = 2: every claim of the paper, with a verdict computed live.")

st.header("The methods")
# Drawn once opened: twelve rows of dense text on the first render cost a fresh browser about 0.2 s
# while it is busy with Plotly's script (docs/app.md, "Page speed").
if (box := lazy.expander(f"What each of the {len(REGISTRY)} methods does, and where it comes from",
                         key="start_methods")) is not None:
    with box:
        rows = [{"method": f'<span style="color:{rule.color}">●</span> **{rule.short}** — {rule.label}',
                 "what it does": rule.summary, "source": rule.source} for rule in REGISTRY.values()]
        st.markdown(text.markdown_table(rows, raw=("method", "what it does", "source")), unsafe_allow_html=True)
        st.caption("The dot is the method's colour, the same on every page.")

st.header("The pages")
c1, c2, c3 = st.columns(3)
with c1:
    st.page_link(routing.toy_lab())
    st.markdown("Pick or edit p and q, slide K, L and T: exact E[τ], block efficiency and fidelity "
                "error of every method next to the LP optimum and the bounds; E[τ] against K; the "
                "optimal coupling; Monte Carlo against the exact law.")
    st.page_link(routing.draft_trees())
    st.markdown("Token trees as deployed systems draft them (top-k, without replacement, greedy; chains or "
                "a static tree b): one sampled tree, every tree verifier exactly against its own law's "
                "optimum, and which law wins at each budget.")
    st.page_link(routing.one_step())
    st.markdown("Draw K drafts or a token tree, see the draft tree, reveal the verification one test at a "
                "time, and run every method on the same drafts and coins.")
with c2:
    st.page_link(routing.live_decoder())
    st.markdown("A real draft/target pair generating text: accepted tokens coloured per iteration, "
                "block efficiency and tokens/s live, any iteration's draft tree.")
    st.page_link(routing.sweeps())
    st.markdown("Block efficiency and speedup against K, L and T on the real pair, with confidence "
                "bands and theory curves; CSV and JSON downloads.")
with c3:
    st.page_link(routing.claims())
    st.markdown("Lossless? Optimal? Attains E_CIC? Monotone in K? Reduces to BV at K = 1? O(|Ω|)? "
                "Each with a verdict computed live, and a seeded search for counterexamples.")
    st.page_link(routing.leaderboard())
    st.markdown("Every rule against the LP optimum over a family of random toy instances, run live "
                "on a local Dask cluster: where each rule comes close, and where it breaks.")

st.divider()
st.caption("Notation: p = draft, q = target (some papers swap the letters; this tool never does). "
           "τ = accepted draft tokens per iteration; block efficiency = E[τ] + 1 tokens per target call. "
           "The mathematics, every rule and why it is lossless, is in docs/maths.md of the repository.")
