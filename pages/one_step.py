"""One iteration, step by step: draw K drafts (or a token tree of any shape and draft law), see the
draft tree, reveal the verification one test (or round) at a time, with S_i, the law each visited
child is tested against, beside T, what is left of the target, see the residual and the extra token,
and run every method on the same drafts and coins."""
from __future__ import annotations

import itertools

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import streamlit as st

from core.data.laws import is_iid_chains
from core.data.outcome import Step, Test
from core.rules.registry import ALIASES, DEFAULT_RULE, Verifier, display_name, resolve
from pages.ui import cached, charts, error_boundary, routing, rule_params, text, toy_config
from pages.ui.figures.trees import draft_tree, token_tree, tokens_str
from pages.ui.figures.step import compare_methods_bar, residual_bars, round_bars, traversal_step

routing.router_guard()

KIND = {"token": "token", "sub-block": "sub-block", "full-block": "full block"}


@dataclass(frozen=True)
class Event:
    """One step of a traversal walk as the page shows it: ``kind`` is enter, visit, test or residual;
    ``row`` its numbers for the log table; ``step`` / ``test`` the trace entry it comes from."""

    kind: str
    node: tuple
    row: dict
    text: str
    step: Step | None = None
    test: Test | None = None
    child: int | None = None    # for a residual: the rejected child's token; for a visit or a round, the child's
    law: np.ndarray | None = None     # a visit's or a round's S: the law of the visited child
    owed: np.ndarray | None = None    # what the parent still owes when it is tested: w·T (traversal), T (rrs)
    after: np.ndarray | None = None   # a rejected round's new T (rrs)


def walk_events(trace, L: int, rule: str, q) -> list[Event]:
    """The walk in the order it happened: the trace's enter, visit and residual steps, each acceptance
    test put where the recursion makes it (a leaf's right after its visit, an inner node's right after
    its last residual update, i.e. once all its children are rejected), each visit given the weight
    w of its parent at that moment (a visit's own w is min(1, w·T(c)/S(c))), its S (the step's
    vector) and w·T, T being what the parent still owes: q(·|parent) (``q``, by node) until a
    residual step replaces it."""
    tests = {t.node: t for t in trace.tests}
    last_residual = {s.node: i for i, s in enumerate(trace.steps) if s.event == "residual"}
    weight: dict[tuple, float] = {}
    owed: dict[tuple, np.ndarray] = {}
    visited: dict[tuple, int] = {}    # the child of each node visited last
    out: list[Event] = []

    def add(kind, node, text, step=None, test=None, child=None, law=None, T=None, **row):
        out.append(Event(kind, node, {"#": len(out) + 1, "step": kind, "node": tokens_str(node), **row},
                         text, step, test, child, law, T))

    def add_test(node):
        t = tests[node]
        outcome = "passed" if t.passed else "rejected"
        where = "the leaf" if len(node) == L else "the sub-block"
        add("test", node, f"Test {where} `{tokens_str(node)}`: accept it with probability its weight "
            f"w = {t.prob:.4f}: **{outcome}**.", test=t, w=t.prob, result=outcome)

    for i, s in enumerate(trace.steps):
        b = s.node
        if s.event == "enter":
            weight[b], owed[b] = s.values["w"], np.asarray(q[b], dtype=np.float64)
            order = ""
            if "draft_first" in s.values:         # a rule that chooses its children's order per node
                order = (f" {text.short(rule)} visits its children draft-first (the first draft's token, then best "
                         "q/p first)." if s.values["draft_first"] else
                         f" {text.short(rule)} visits its children in ratio order (best q/p first).")
            add("enter", b, f"Enter `{tokens_str(b)}` with weight w = {s.values['w']:.4f} and "
                f"{int(s.values['k'])} draft(s) below it.{order}", step=s, w=s.values["w"],
                result=f"k = {int(s.values['k'])}")
        elif s.event == "visit":
            w_parent, v = weight[b[:-1]], s.values
            visited[b[:-1]] = b[-1]
            wT = w_parent * v["T"]
            add("visit", b, f"Visit `{tokens_str(b)}` (drafted {int(v['multiplicity'])} time(s)): "
                f"w·T(c) = {w_parent:.4f} × {v['T']:.4f} = {wT:.4f} against S(c) = {v['S']:.4f}, so its weight is "
                f"w = min(1, w·T(c)/S(c)) = {v['w']:.4f}.", step=s, child=b[-1], law=s.vector,
                T=w_parent * owed[b[:-1]], **{"w (parent)": w_parent, "T(c)": v["T"], "w·T(c)": wT,
                                               "S(c)": v["S"], "w": v["w"]})
            if len(b) == L:
                add_test(b)
        else:
            w_before = weight[b]
            weight[b], owed[b] = s.values["w"], s.vector
            rule_w = ("at the root it stays 1" if not b else "w = 0, since A = 0" if s.values["A"] <= 0.0 else
                      f"w = A/(A + 1 − w) = {s.values['A']:.4f}/({s.values['A']:.4f} + 1 − {w_before:.4f}) = {s.values['w']:.4f}")
            c = visited[b]
            add("residual", b, f"Child `{tokens_str(b + (c,))}` was rejected, so `{tokens_str(b)}` "
                f"keeps what it still owes: T = (w·T − S)₊ / A with A = {s.values['A']:.4f}; its weight: {rule_w}.",
                step=s, child=c, A=s.values["A"], w=s.values["w"], result=f"T updated without {c}")
            if last_residual[b] == i and b in tests:
                add_test(b)
            elif not b and i == len(trace.steps) - 1:
                out[-1] = replace(out[-1], text=out[-1].text + " Every child of the root is rejected; the root "
                                  "itself always accepts, so τ = 0 and the extra token is drawn from this T.")
    if sum(e.kind == "test" for e in out) != len(trace.tests):
        raise ValueError("the trace's acceptance tests do not follow its steps, so the walk cannot be replayed.")
    return out


def rrs_events(trace, q) -> list[Event]:
    """The rounds of rrs on a token tree (``core.rules.specinfer.rrs_walk``), one event per round: its
    'visit' step (S_i as the vector; S_i(c), T(c), the acceptance probability min(1, T(c)/S_i(c)) and
    the multiplicity as values), its acceptance test, the T it was tested against (q(·|u) at a node's
    first round, then the last residual there) and, after a rejection, the new T (the 'residual'
    step that follows the visit)."""
    steps, tests = trace.steps, list(trace.tests)
    owed: dict[tuple, np.ndarray] = {}
    out: list[Event] = []
    for i, s in enumerate(steps):
        if s.event != "visit":
            continue
        t = tests[len(out)]
        u, c = s.node[:-1], s.node[-1]
        T = owed.get(u, np.asarray(q[u], dtype=np.float64))
        after = None
        if not t.passed:
            after = owed[u] = steps[i + 1].vector
        v = s.values
        outcome = "passed" if t.passed else "rejected"
        then = (f"descend into `{tokens_str(s.node)}`" if t.passed else
                "T ← (T − S_i)₊ / Σ(T − S_i)₊, and the next child at this node is tested against it")
        text = (f"At `{tokens_str(u)}`, child `{c}` (drawn {int(v['multiplicity'])} time(s)): "
                f"S_i(c) = {v['S']:.4f}, T(c) = {v['T']:.4f}, accepted with probability min(1, T(c)/S_i(c)) = "
                f"{v['w']:.4f}: **{outcome}**; {then}.")
        out.append(Event("round", s.node, {"#": len(out) + 1, "at node": tokens_str(u), "child": c,
                                           "drawn": int(v["multiplicity"]), "S_i(c)": v["S"], "T(c)": v["T"],
                                           "accept with": v["w"], "result": outcome},
                         text, s, t, c, s.vector, T, after))
    if len(out) != len(tests):
        raise ValueError("the trace's rounds do not match its acceptance tests, so the walk cannot be replayed.")
    return out


def parent_accepts_note(event: Event) -> str:
    """The one sentence a student needs where an inner node passes after its children were rejected."""
    node = tokens_str(event.node)
    return (f"Why can `{node}` pass when its own children were rejected? A rejected child does not reject "
            f"its parent: it only takes that child's share out of what `{node}` still owes the target (the "
            f"residual T, now 0 on the rejected token), and `{node}` keeps the weight w = {event.test.prob:.4f}, "
            f"the probability of stopping at `{node}` given that everything below it was rejected, so it passes "
            f"with that probability and the extra token is drawn from T.")


def test_quantities(trace, t: Test) -> str:
    """The node quantities a rule logged for a test (``trace.quantities``), as a clause: ρ* at the
    parent node (SpecTr logs it), C and D at the node itself (SpecTr-GBV); "" where neither is logged."""
    if "rho" in trace.quantities.get(t.node[:-1], {}):
        return f" (ρ* = {trace.quantities[t.node[:-1]]['rho']:.4f} at `{tokens_str(t.node[:-1])}`)"
    if "C" in trace.quantities.get(t.node, {}):
        v = trace.quantities[t.node]
        return f" (C = {v['C']:.4f}, D = {v['D']:.4f})"
    return ""


def block_test_line(t: Test, rule: type[Verifier]) -> str:
    """One test of block verification with its formula and the numbers the rule used (``t.values``):
    w = min(1, w_before·q(x)/p(x)) and, for a sub-block, h = A/(A + 1 − w) with
    A = Σ_x (w·q(x|node) − p(x|node))₊; the full block passes with h = w, p being the rule's
    ``tested_law``.  A rule that ``carries_residual`` (RBV) tests the first token after its start
    node against T, the residual the drafts before it left there."""
    v, node = t.values, tokens_str(t.node)
    q_name = "T(x)" if rule.carries_residual and int(v["i"]) == 1 else "q(x)"
    p_name = f"{rule.tested_law}(x)"
    weight = (f"w = min(1, w_before·{q_name}/{p_name}) = min(1, {v['w_prev']:.4f} × {v['q']:.4f}/{v['p']:.4f}) "
              f"= {v['w']:.4f}")
    if t.kind == "full-block":
        stop = f"the whole block passes with probability h = w = {t.prob:.4f}"
    else:
        stop = (f"A = Σ_y (w·q(y|{node}) − p(y|{node}))₊ = {v['A']:.4f} (the mass a stop here leaves to "
                f"correct), so it passes with probability h = A/(A + 1 − w) = {v['A']:.4f}/({v['A']:.4f} + 1 − "
                f"{v['w']:.4f}) = {t.prob:.4f}")
    return f"Draft {t.draft + 1} offers the {KIND.get(t.kind, t.kind)} `{node}`: {weight}; {stop}"


def block_log_row(number: int, t: Test, rule: str) -> dict:
    """A block-verification test as a row of the log table (the trace's numbers)."""
    v = t.values
    return {"#": number, "draft": t.draft + 1, "node": tokens_str(t.node), "p(x)": v["p"],
            "q(x) or T(x)": v["q"], "w before": v["w_prev"], "w": v["w"], "A": v.get("A"),
            "h: passes with": t.prob, "result": "passed" if t.passed else "rejected"}


def draft_done(t: Test) -> bool:
    """Whether block verification is over for this test's draft: a pass decides, and so does a
    rejection of its first token (the coins are tossed from the block's end down)."""
    return t.passed or int(t.values["i"]) == 1


def carried_residual_lines(trace, draft: int, short: str) -> list[str]:
    """The lines of a rule that ``carries_residual`` (RBV, its legend name ``short``) once draft
    ``draft`` (0-based) is done: the residual it leaves (its 'residual' step, against which the next
    draft is tested) and the drafts skipped before the next one tested ('skip' steps: they do not pass
    through the node the rule stands at), each one sentence with the trace's numbers."""
    later = [t.draft for t in trace.tests if t.draft > draft]
    upto = min(later) if later else float("inf")
    out = []
    for s in trace.steps:
        k = int(s.values["draft"])
        if s.event == "residual" and k == draft:
            where = tokens_str(s.node)
            law = ", ".join(f"T({y}) = {x:.4f}" for y, x in enumerate(s.vector)) if len(s.vector) <= 12 else ""
            out.append(f"Draft {k + 1} stops at `{where}` after {int(s.values['tau'])} of its tokens there: {short} "
                       f"stands at `{where}` now, with T ← BV's residual, ∝ (w·T − p(·|{where}))₊ with the w and T "
                       f"this draft had at `{where}`" + (f": {law}." if law else "."))
        elif s.event == "skip" and draft < k < upto:
            out.append(f"Draft {k + 1} does not pass through `{tokens_str(s.node)}`, so {short} skips it.")
    if out and not later:
        out.append("No draft is left to test: the extra token is drawn from this T.")
    return out


def zero_residual_note(trace, t: Test) -> str | None:
    """Why a later RBV draft passes with probability 0: its first token after the start node has
    T(x) = 0 in the residual the drafts before it left, so every weight along it is 0."""
    first = next((u for u in trace.tests if u.draft == t.draft and int(u.values.get("i", 0)) == 1), None)
    if first is None or first.values["q"] > 0.0 or t.draft == trace.tests[0].draft:
        return None
    x, at = first.node[-1], tokens_str(first.node[:-1])
    earlier = [u for u in trace.tests if u.draft < t.draft and u.node == first.node and not u.passed]
    why = (f" Draft {earlier[-1].draft + 1} was rejected at that very token: its test there could fail only "
           f"with a weight below 1, i.e. w·T({x}) < p({x}), and the residual (w·T − p)₊ keeps nothing of {x}."
           if earlier else "")
    return (f"Draft {t.draft + 1} continues from `{at}` with token {x}, where the residual gives T({x}) = 0: "
            f"its weight is w = min(1, 1 × 0/p) = 0 and stays 0 all along, so each of its tests passes with "
            f"probability 0.{why}")


def distinct_drafts_seed(spec: str, K: int, L: int, tries: int = 100) -> int:
    """The first draft seed (0, 1, …) whose K drafts all differ, so that the page opens on drafts that
    each tell something; 0 when none of the first ``tries`` seeds gives that (V^L < K, or p peaked)."""
    for seed in range(tries):
        block = cached.draw(spec, K, L, seed)
        if len({block.draft(k) for k in range(block.K)}) == block.K:
            return seed
    return 0


def reveal_position(n: int, drafts: tuple) -> int:
    """How many of the ``n`` steps are revealed.  New drafts (``drafts``: the configuration, the two
    seeds and the method) and a first visit start at 0, nothing revealed; a position from the URL
    (``step_shown``, set by toy_config) is applied once, within range."""
    ss = st.session_state
    from_url = ss.pop("step_shown", None)
    if from_url is not None:
        ss.step_pos = min(int(from_url), n)
    elif ss.get("step_pos_for") != drafts:
        ss.step_pos = 0
    ss.step_pos_for = drafts
    ss.step_pos = min(int(ss.get("step_pos", 0)), n)
    return ss.step_pos


def _move(to: int) -> None:
    st.session_state.step_pos = max(0, int(to))


def reveal_buttons(n: int, what: str) -> None:
    """Next, back, start over and reveal all, with where the verification stands.  The total ``n`` is
    named only once the last step is revealed: before that it would tell how the verification ends
    (a Traversal walk of 5 steps on drafts of length 2 means that the first leaf passed)."""
    at = st.session_state.step_pos
    done = at >= n
    # one row of buttons as wide as their labels (a row of equal columns cut "Next round" to "Next r…")
    row = st.container(horizontal=True, vertical_alignment="center", gap="small")
    row.button(f"Next {what}", type="primary", key="step_next", disabled=done, on_click=_move, args=(at + 1,),
               icon=":material/skip_next:")
    row.button("Back", key="step_back", disabled=at == 0, on_click=_move, args=(at - 1,),
               icon=":material/skip_previous:")
    row.button("Start over", key="step_restart", disabled=at == 0, on_click=_move, args=(0,),
               icon=":material/replay:")
    row.button("Reveal all", key="step_all", disabled=done, on_click=_move, args=(n,),
               help=f"Reveal every {what} at once: this gives away the ending.")
    st.markdown(f"**The verification ended after {n} {what}{'s' * (n != 1)}.**" if done else
                f"**{what.capitalize()} {at} revealed**; press *Next {what}* for the next one." if at else
                f"Nothing revealed yet: press *Next {what}* to watch the first {what}.")


cfg = toy_config.toy_config(methods=False, page_params=tuple(toy_config.STEP_PARAMS) + tuple(toy_config.TREE_PARAMS))
st.title("One iteration, step by step")
st.markdown(
    "One round of speculative decoding, slowed down. The draft model **p** writes **K** drafts of "
    "**L** tokens; drafts that begin alike share nodes of the **draft tree**. The verifier then makes "
    "its acceptance tests one by one. Press *Next* to reveal them: each test passes or fails with "
    "the probability shown on hover, the failed sub-blocks form the set **H**, and at the end the "
    "accepted sub-block is followed by **one extra token** from the residual (or a bonus token from q). "
    "Choose another **shape** or **draft law** below to watch a token tree (top-k, without replacement, "
    "greedy, or a static tree b) verified round by round.")
if cfg is None:
    st.stop()
st.markdown(toy_config.config_caption(cfg))


def _new_drafts() -> None:
    st.session_state.step_seed = int(st.session_state.get("step_seed", 0)) + 1


picked = toy_config.tree_controls(cfg)
if picked is None:
    st.stop()
shape, law = picked
# K i.i.d. chains (however asked for) are drafts every method reads; any other shape or law is a token
# tree, which only the rules defined on every tree verify (``cached.tree_rules``).
as_tree = not is_iid_chains(shape, law)
K, L = shape.K, shape.L

methods = list(cached.tree_rules(shape, law)) if as_tree else text.all_methods()
# on a token tree the rule shown round by round, on chains the registry's default
default = next((m for m in methods if resolve(m).walk == "rounds"), methods[0]) if as_tree else \
    DEFAULT_RULE if DEFAULT_RULE in methods else methods[0]
st.session_state.setdefault("step_method", default)
if st.session_state.step_method not in methods:
    st.session_state.step_method = default
c1, c2, c3, c4 = st.columns([2, 1, 1, 1], vertical_alignment="bottom")
method = c1.selectbox("Method to watch", methods, key="step_method",
                      format_func=lambda m: f"{display_name(m, shape)}: top-down multi-round rejection "
                      f"({text.short(m)}'s rule on any tree)" if as_tree and resolve(m).walk == "rounds"
                      else f"{text.short(m)}: {text.label(m)}")
rule_params.controls([method], st.sidebar)          # the watched rule's own parameters, if it has any
if "step_seed" not in st.session_state:
    st.session_state.step_seed = 0 if as_tree else distinct_drafts_seed(cfg.spec, K, L)
st.session_state.setdefault("step_coin", 0)
seed = c2.number_input("Draft seed", 0, 10**9, key="step_seed")
coin = c3.number_input("Coin seed", 0, 10**9, key="step_coin",
                       help="Seeds the verifier's random coins and the extra-token draw.")
c4.button("New drafts", on_click=_new_drafts, key="step_new")
# a rule's legend name, but the name token trees give it where that differs (SpecInfer's rule is rrs there)
name = display_name(method, shape) if as_tree and display_name(method, shape) != method else text.short(method)
shown, what = 0, "test"
if as_tree:
    try:
        block = cached.draw_token_tree(cfg.spec, shape, law, int(seed))
    except Exception as exc:  # noqa: BLE001 - a law that does not exist at some node: one sentence
        error_boundary.show(exc, "the tree")
        st.stop()

with error_boundary.guard("the drafts"):
    if as_tree:
        nodes = block.nodes()
        st.session_state["step_nodes"] = len(nodes)
        st.header("1. The drafted tree")
        rows = [{"node": tokens_str(u), "law": block.law_at(len(u)).name,
                 "draws, in visit order": " ".join(f"{x}{'' if block.deterministic(u + (x,)) else '*'}"
                                                   for x in block.draws[u]),
                 "children": len(block.children(u))} for u in nodes if len(u) < L]
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="step_draws")
        st.caption(f"{shape.label} drafted by {law}: {len(nodes) - 1} nodes below the root for a budget of "
                   f"{shape.budget} drafted tokens. A star marks a sampled draw; the others are deterministic "
                   "(a rank of p). Each node's children are visited in the law's order, each against S_i, its "
                   "exact law given the children visited before it.")
    else:
        block = cached.draw(cfg.spec, K, L, int(seed))
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

    verdict = cached.tree_verify(cfg.spec, method, block, int(coin)) if as_tree else \
        cached.verify(cfg.spec, method, block, int(coin))
    tests = list(verdict.trace.tests)
    rounds_trace = verdict.trace if as_tree else None
    rule = resolve(method)
    by_rounds = rule.walk == "rounds"
    if by_rounds and not as_tree:
        # K i.i.d. chains: the same rule as rrs on their token tree, round for round and coin for coin
        # (docs/maths.md); that run's trace carries S_i and T, the chains' own only the tests
        same = cached.tree_verify(cfg.spec, method, block, int(coin))
        if [(t.node, t.passed) for t in same.trace.tests] == [(t.node, t.passed) for t in tests] \
                and same.tokens == verdict.tokens:
            rounds_trace = same.trace
    rounds = by_rounds and rounds_trace is not None
    walker = rule.walk == "leaf-to-root"
    what = "round" if rounds else "step" if walker else "test"
    st.header(f"2. Verification by {name}, " + ("round by round" if rounds else "test by test"))
    events = walk_events(verdict.trace, L, method, block.q) if walker else \
        rrs_events(rounds_trace, block.q) if rounds else []
    steps = events if walker or rounds else tests
    shown = reveal_position(len(steps), (cfg.spec, K, L, shape.chains, law, int(seed), int(coin), method))
    if steps:
        reveal_buttons(len(steps), what)
    else:
        st.caption("This method made no random acceptance test on these drafts.")
    toy_config.write_page_url({"method": method, "draft_seed": int(seed), "coin_seed": int(coin), "shown": shown})
    complete = shown >= len(steps)
    upto = sum(e.kind == "test" for e in events[:shown]) if walker else shown
    current = events[shown - 1].node if (walker or rounds) and 0 < shown < len(steps) else None
    title = (f"{name}: τ = {verdict.tau} accepted, extra token {verdict.extra}" if complete else
             f"{name}: after {what} {shown}" if shown else
             f"{name}: before the first {what}")
    picture = token_tree if as_tree else draft_tree
    charts.chart(picture(block, verdict.trace, upto=upto, accepted=verdict.accepted, extra=verdict.extra,
                         title=title, current=current), key="step_tree")
    st.caption("Node ∅ is the root: the empty prefix, i.e. the context before the block; every other node "
               "is labelled by its last token and stands for the whole path from the root. "
               + ("Solid edges lead to deterministic children, dotted ones to sampled children; ×m marks a "
                  "token drawn m times. " if as_tree else "Grey labels on the branches name the drafts that take them. ")
               + f"The blue ring marks the latest {what} revealed; the gold star is the extra token, at depth τ + 1.")

    H = [tokens_str(t.node) for t in tests[:upto] if not t.passed]
    if walker:
        st.markdown(rule.how_on_trees if as_tree else rule.how)
        lines = []
        for e in events[:shown]:
            line = f"{e.row['#']}. {e.text}"
            if e.kind == "test" and e.test.passed and len(e.node) < block.L:
                line += f"  \n   *{parent_accepts_note(e)}*"
            lines.append(line)
        if lines:
            st.markdown("\n".join(lines))
        if shown:
            columns = ["#", "step", "node", "w (parent)", "T(c)", "w·T(c)", "S(c)", "w", "A", "result"]
            numbers = ["w (parent)", "T(c)", "w·T(c)", "S(c)", "w", "A"]
            log = pd.DataFrame([e.row for e in events[:shown]], columns=columns)
            # A step that has no such value leaves its cell blank, not "None": the styler's na_rep for
            # the text it sends, the grid's placeholder for what the browser draws (it draws a null
            # cell as "None" whatever the styler says).  The numbers stay numbers; the result column
            # is wide enough for "T updated without 0".
            st.dataframe(log.style.format("{:.4f}", subset=numbers, na_rep="").format(na_rep="", subset=[
                c for c in columns if c not in numbers]), hide_index=True, width="stretch", key="step_walk_log",
                placeholder="", column_config={"result": st.column_config.TextColumn(width="medium")})
            visit = next((e for e in reversed(events[:shown]) if e.kind == "visit"), None)
            if visit is not None and visit.law is not None:
                b, v = visit.node[:-1], visit.row
                charts.chart(round_bars(
                    visit.law, visit.owed, visit.child,
                    f"At b = {tokens_str(b)}, visiting {visit.child} (outlined): S(c) = {v['S(c)']:.4f} "
                    f"against w·T(c) = {v['w·T(c)']:.4f}, weight {v['w']:.4f}",
                    T_name=f"w·T: what b still owes q, times its weight w = {v['w (parent)']:.4f}"), key="step_walk_round")
            last = next((e for e in reversed(events[:shown]) if e.kind == "residual"), None)
            if last is not None:
                b = last.node
                charts.chart(traversal_step(
                    block.p[b], block.q[b], last.step.vector, tokens_str(b), last.child,
                    last.step.values["A"], last.step.values["w"]), key="step_walk_residual")
    elif rounds:
        st.markdown(rule.how_on_trees)
        lines = [f"{e.row['#']}. {e.text}" for e in events[:shown]]
        if lines:
            st.markdown("\n".join(lines))
        if shown:
            columns = ["#", "at node", "child", "drawn", "S_i(c)", "T(c)", "accept with", "result"]
            log = pd.DataFrame([e.row for e in events[:shown]], columns=columns)
            st.dataframe(log, hide_index=True, width="stretch", key="step_rounds_log",
                         column_config={c: st.column_config.NumberColumn(format="%.4f")
                                        for c in ("S_i(c)", "T(c)", "accept with")})
            e = events[shown - 1]
            charts.chart(round_bars(
                e.law, e.owed, e.child,
                f"Round {e.row['#']} at u = {e.row['at node']}: child {e.child} (outlined), S_i(c) = "
                f"{e.row['S_i(c)']:.4f} against T(c) = {e.row['T(c)']:.4f}: {e.row['result']}",
                T_name="T: what u still owes q", after=e.after), key="step_round")
            st.caption("S_i is what the test is against: the law the visited child was drawn from, given the "
                       "children visited before it. T is what is left of the target at this node. The round "
                       "emits each token x with probability min(T(x), S_i(x)), which is why the node as a whole "
                       "emits q exactly.")
    elif rule.walk == "block" and not as_tree:
        st.markdown(rule.how)
        lines, noted = [], set()
        for i, t in enumerate(tests[:upto], start=1):
            outcome = "**passed**" if t.passed else "**rejected**"
            line = f"{i}. {block_test_line(t, rule)}: {outcome}."
            note = zero_residual_note(verdict.trace, t) if rule.carries_residual and t.draft not in noted else None
            if note:
                noted.add(t.draft)
                line += f"  \n   *{note}*"
            if rule.carries_residual and draft_done(t):
                line += "".join(f"  \n   {extra}"
                                for extra in carried_residual_lines(verdict.trace, t.draft, rule.short))
            lines.append(line)
        if lines:
            st.markdown("\n".join(lines))
        if upto:
            st.dataframe(pd.DataFrame([block_log_row(i, t, method) for i, t in enumerate(tests[:upto], start=1)]),
                         hide_index=True, width="stretch", key="step_block_log", placeholder="",
                         column_config={c: st.column_config.NumberColumn(format="%.4f") for c in (
                             "p(x)", "q(x) or T(x)", "w before", "w", "A", "h: passes with")})
    else:
        lines = []
        for i, t in enumerate(tests[:upto], start=1):
            node = tokens_str(t.node)
            outcome = "**passed**" if t.passed else "**rejected**"
            odd = "" if -1e-12 <= t.prob <= 1.0 + 1e-12 else f" (the rule's ratio is {t.prob:.4g}, outside [0, 1], " \
                "so the coin always " + ("fails" if t.prob < 0 else "passes") + ")"
            prob = min(max(t.prob, 0.0), 1.0)
            who = f"the tree offers the {KIND.get(t.kind, t.kind)}" if as_tree else \
                f"draft {t.draft + 1} offers the {KIND.get(t.kind, t.kind)}"
            extra = "" if as_tree else test_quantities(verdict.trace, t)
            lines.append(f"{i}. {who} `{node}`{extra}, which passes with probability {prob:.4f}{odd}: {outcome}.")
        if rule.how and not as_tree:
            st.markdown(rule.how)
        if lines:
            st.markdown("\n".join(lines))
    st.markdown(f"Rejected so far (the set H): {{{', '.join(f'`{h}`' for h in H)}}}" if H else
                "Rejected so far (the set H): none.")

    # sections 3 and 4 numbered as they show: the ending's section only once it is revealed
    sections = itertools.count(3)
    if complete:
        st.header(f"{next(sections)}. The accepted sub-block and the extra token")
        s = tuple(verdict.accepted)
        where = tokens_str(s)
        kind = ("a bonus token drawn from q(·|s), since the whole block was accepted" if verdict.is_bonus
                else f"a correction token drawn from {name}'s residual at s")
        emitted = verdict.tau + 1
        st.success(f"Accepted sub-block s = `{where}` (τ = {verdict.tau}"
                   + (f", from draft {verdict.draft + 1}" if verdict.draft >= 0 and not as_tree else "")
                   + f"), then extra token **{verdict.extra}**: {kind}. This iteration emits "
                   f"{emitted} token{'' if emitted == 1 else 's'} for one target call.")
        charts.chart(residual_bars(block.p.get(s), block.q[s], verdict.residual, verdict.extra,
                                           where, verdict.is_bonus), key="step_residual")
        if verdict.is_bonus:
            st.caption("Every draft token of the block was accepted, so nothing needs correcting: the extra "
                       "token is a bonus drawn from the target's own next-token law q(·|s), as if the target "
                       "had written it alone.")
        else:
            st.caption(f"A draft continuation of s was rejected, so the extra token is drawn from "
                       f"{name}'s residual at s (for single-draft SD it is "
                       "normalize((q − p)₊); each rule has its own): it puts its mass where q exceeds what "
                       "the drafts already cover, which keeps a lossless method's output distributed as q.")

    st.header(f"{next(sections)}. Every method on the same drafts and coin seed")
    ending = complete or st.toggle(
        "Show the ending now: every method's τ on these drafts", key="step_spoil",
        help="This gives away how the verification above ends; it is shown by itself once the last "
             + what + " is revealed.")
    if not ending:
        st.info(f"Reveal the last {what} above (or use the toggle) to compare every method on these "
                "drafts: the comparison gives away the ending.")
    else:
        if as_tree:
            compare = [m for m in methods if not resolve(m).optimal_lp or (
                cached.tree_lp_refusal(cfg.V, shape, law) is None and cached.tree_lp_size(cfg.V, shape, law) <= cached.LP_AUTO)]
        else:
            compare = [m for m in methods if not resolve(m).optimal_lp or cached.lp_size(cfg.V, K, L) <= cached.LP_AUTO]
        rows = []
        for m in compare:
            try:
                v = cached.tree_verify(cfg.spec, m, block, int(coin)) if as_tree else \
                    cached.verify(cfg.spec, m, block, int(coin))
            except Exception as exc:  # noqa: BLE001
                error_boundary.show(exc, "its verification", prefix=f"{text.short(m)}: ")
                continue
            rows.append({"method": m, "accepted": tokens_str(v.accepted), "tau": v.tau,
                         "extra": v.extra, "bonus?": "bonus" if v.is_bonus else "correction",
                         "tests": len(v.trace.tests),
                         "expected_tau_given_drafts": cached.tree_expected_tau(cfg.spec, m, block) if as_tree else
                         cached.expected_tau_given(cfg.spec, m, block)})
        charts.chart(compare_methods_bar(rows), key="step_compare")
        st.dataframe(pd.DataFrame([{**r, "method": text.short(r["method"])} for r in rows]).rename(
            columns={"tau": "τ", "expected_tau_given_drafts": "E[τ | these drafts]"}),
            hide_index=True, width="stretch", key="step_compare_table", placeholder=text.DASH, height="content",
            column_config={"E[τ | these drafts]": st.column_config.NumberColumn(format="%.4f")})
        st.caption("τ depends on the coins; E[τ | these drafts] averages over every coin exactly (a dash "
                   "where a method has no closed form and too many coin outcomes)."
                   + ("".join(f" {resolve(alias).short} is {alias} here." for alias in ALIASES) if as_tree else ""))

toy_config.copy_configuration(
    cfg, [method], [], key="step_copy", drafts=toy_config.tree_flags(shape, law) if as_tree else None,
    label="Copy this configuration: the command line that reproduces these numbers",
    caption=f"The command gives {name}'s exact law of τ over every draw of the drafts and "
            f"coins; this one iteration (draft seed {int(seed)}, coin seed {int(coin)}, {shown} "
            f"{what}{'s' * (shown != 1)} revealed) is in this page's address: copy it to share this exact step.")
