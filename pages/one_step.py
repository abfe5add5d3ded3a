"""One iteration, step by step: draw K drafts, see the draft tree, reveal the verification one test at
a time, see the residual and the extra token, and run every method on the same drafts and coins."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from pages.ui import cached, errors, figures, routing, text, toy_config

routing.router_guard()

KIND = {"token": "token", "sub-block": "sub-block", "full-block": "full block"}

cfg = toy_config.toy_config(methods=False)
st.title("One iteration, step by step")
st.markdown(
    "One round of speculative decoding, slowed down. The draft model **p** writes **K** drafts of "
    "**L** tokens; drafts that begin alike share nodes of the **draft tree**. The verifier then makes "
    "its acceptance tests one by one. Move the slider to reveal them: each test passes or fails with "
    "the probability shown on hover, the failed sub-blocks form the set **H**, and at the end the "
    "accepted sub-block is followed by **one extra token** from the residual (or a bonus token from q).")
if cfg is None:
    st.stop()
st.markdown(toy_config.config_caption(cfg))


def _new_drafts() -> None:
    st.session_state.step_seed = int(st.session_state.get("step_seed", 0)) + 1


methods = text.all_methods()
default = "spectr_gbv" if "spectr_gbv" in methods else methods[0]
st.session_state.setdefault("step_method", default)
if st.session_state.step_method not in methods:
    st.session_state.step_method = default
c1, c2, c3, c4 = st.columns([2, 1, 1, 1], vertical_alignment="bottom")
method = c1.selectbox("Method to watch", methods, key="step_method",
                      format_func=lambda m: f"{figures.short(m)}: {text.label(m)}")
st.session_state.setdefault("step_seed", 0)
st.session_state.setdefault("step_coin", 0)
seed = c2.number_input("Draft seed", 0, 10**9, key="step_seed")
coin = c3.number_input("Coin seed", 0, 10**9, key="step_coin",
                       help="Seeds the verifier's random coins and the extra-token draw.")
c4.button("New drafts", on_click=_new_drafts, key="step_new")

if cfg.K * cfg.L > 64:
    st.error("K·L is too large to draw a readable tree; use K·L ≤ 64.")
    st.stop()

with errors.guard("the drafts"):
    block = cached.draw(cfg.spec, cfg.K, cfg.L, int(seed))
    st.session_state["step_nodes"] = len(block.nodes())

    st.header("1. The drafts")
    rows = []
    for k in range(block.K):
        x = block.draft(k)
        px, qx = block.p_joint(x), block.q_joint(x)
        rows.append({"draft": k + 1, "tokens": " ".join(map(str, x)), "p(draft)": px, "q(draft)": qx,
                     "q/p": qx / px if px > 0 else float("inf")})
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="step_drafts",
                 column_config={c: st.column_config.NumberColumn(format="%.4g") for c in ("p(draft)", "q(draft)", "q/p")})
    st.caption(f"{len(block.nodes()) - 1} distinct tree nodes below the root for {block.K} drafts of "
               f"length {block.L} (at most {block.K * block.L}); q/p > 1 means the target likes the draft "
               f"more than the draft model does.")

    st.header(f"2. Verification by {figures.short(method)}, test by test")
    verdict = cached.verify(cfg.spec, method, block, int(coin))
    tests = list(verdict.trace.tests)
    if tests:
        upto = st.slider("Tests revealed", 0, len(tests), len(tests), key=f"step_upto_{len(tests)}",
                         help="Slide back to replay the verification from the first test.")
    else:
        upto = 0
        st.caption("This method made no random acceptance test on these drafts.")
    complete = upto >= len(tests)
    title = (f"{figures.short(method)}: τ = {verdict.tau} accepted, extra token {verdict.extra}"
             if complete else f"{figures.short(method)}: after {upto} of {len(tests)} tests")
    st.plotly_chart(figures.draft_tree(block, verdict.trace, upto=upto, accepted=verdict.accepted,
                                       extra=verdict.extra, title=title), key="step_tree")

    lines = []
    H: list = []
    for i, t in enumerate(tests[:upto], start=1):
        node = figures.tokens_str(t.node)
        outcome = "**passed**" if t.passed else "**rejected**"
        odd = "" if -1e-12 <= t.prob <= 1.0 + 1e-12 else f" (the rule's ratio is {t.prob:.4g}, outside [0, 1], " \
            "so the coin always " + ("fails" if t.prob < 0 else "passes") + ")"
        shown = min(max(t.prob, 0.0), 1.0)
        lines.append(f"{i}. draft {t.draft + 1} offers the {KIND.get(t.kind, t.kind)} `{node}`, which "
                     f"passes with probability {shown:.4f}{odd}: {outcome}.")
        if not t.passed:
            H.append(node)
    if lines:
        st.markdown("\n".join(lines))
    st.markdown(f"Rejected so far (the set H): {{{', '.join(f'`{h}`' for h in H)}}}" if H else
                "Rejected so far (the set H): none.")

    if complete:
        st.header("3. The accepted sub-block and the extra token")
        s = tuple(verdict.accepted)
        kind = "a bonus token from q(·|block), since the whole block was accepted" if verdict.is_bonus \
            else "a correction token drawn from the residual at that node"
        st.success(f"Accepted sub-block `{figures.tokens_str(s)}` (τ = {verdict.tau}"
                   + (f", from draft {verdict.draft + 1}" if verdict.draft >= 0 else "")
                   + f"), then extra token **{verdict.extra}**: {kind}. This iteration emits "
                   f"{verdict.tau + 1} tokens for one target call.")
        p_at = block.p.get(s)
        q_at = block.q[s]
        st.plotly_chart(figures.residual_bars(p_at, q_at, verdict.residual, verdict.extra,
                                              figures.tokens_str(s), verdict.is_bonus), key="step_residual")
        st.caption("The residual puts its mass where q exceeds what the drafts already cover; drawing "
                   "the extra token from it is what keeps a lossless method's output distributed as q.")

    st.header("4. Every method on the same drafts and coin seed")
    compare = [m for m in methods if m != "lp_optimal" or cached.lp_size(cfg.V, cfg.K, cfg.L) <= cached.LP_AUTO]
    rows = []
    for m in compare:
        try:
            v = cached.verify(cfg.spec, m, block, int(coin))
        except Exception as exc:  # noqa: BLE001
            errors.show(exc, "its verification", prefix=f"{figures.short(m)}: ")
            continue
        rows.append({"method": m, "accepted": figures.tokens_str(v.accepted), "tau": v.tau,
                     "extra": v.extra, "bonus?": "bonus" if v.is_bonus else "correction",
                     "tests": len(v.trace.tests),
                     "expected_tau_given_drafts": cached.expected_tau_given(cfg.spec, m, block)})
    st.plotly_chart(figures.compare_methods_bar(rows), key="step_compare")
    st.dataframe(pd.DataFrame([{**r, "method": figures.short(r["method"])} for r in rows]).rename(
        columns={"tau": "τ", "expected_tau_given_drafts": "E[τ | these drafts]"}),
        hide_index=True, width="stretch", key="step_compare_table",
        column_config={"E[τ | these drafts]": st.column_config.NumberColumn(format="%.4f")})
    st.caption("τ depends on the coins; E[τ | these drafts] averages over every coin exactly (empty "
               "where a method has no closed form and too many coin outcomes).")
