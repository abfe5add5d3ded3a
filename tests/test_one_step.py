"""The "One iteration, step by step" page: the traversal rules' walk revealed step by step with the
trace's own numbers, no spoiler before the last step, the extra token's law told as it is (bonus or
residual), and draft trees whose labels and star can be read (issue 12 items 2 and 4, issue 13 part 3)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("streamlit")
from core.analysis.toy_drafts import draw_block  # noqa: E402
from core.data.token_tree import TokenTree  # noqa: E402
from core.rules.registry import get_verifier  # noqa: E402
from pages.ui import figures  # noqa: E402
from tests.apptest import figure, figures_json, no_errors, open_page, reveal, slider  # noqa: E402
from toy_models.presets import PRESETS  # noqa: E402

EXTRA = "extra token (correction or bonus)"
RING = "blue ring: the latest step revealed"


def _verdict(method: str, K: int, seed: int, coin: int):
    """What the page computes, recomputed from core: the binary toy's drafts and one verification."""
    pr = PRESETS["binary-toy"]
    block = draw_block(pr.draft.with_temperature(1.0), pr.target.with_temperature(1.0), K, pr.L, seed)
    return block, get_verifier(method).verify(block, np.random.default_rng(coin))


def _page(method: str, K: int, seed: int, coin: int):
    at = open_page("pages/one_step.py", query={"preset": "binary-toy"})
    slider(at, "toy_K").set_value(K).run()
    at.selectbox(key="step_method").set_value(method).run()
    at.number_input(key="step_seed").set_value(seed).run()
    at.number_input(key="step_coin").set_value(coin).run()
    no_errors(at)
    return at


def _log_row(at) -> dict:
    table = next(d.value for d in at.dataframe if "S(c)" in d.value.columns)
    return table.iloc[-1].to_dict()


def _markdown(at) -> str:
    return " ".join(m.value for m in at.markdown)


def test_otv_walk_shows_each_step_with_the_trace_numbers():
    # K = 3 drafts (0 0), (1 0), (0 1): OTV visits 1 first, rejects the leaf 1 0, then accepts 1 itself
    block, verdict = _verdict("otv", 3, seed=2, coin=0)
    steps, tests = verdict.trace.steps, verdict.trace.tests
    assert [s.event for s in steps] == ["enter", "visit", "enter", "visit", "residual"]
    assert [(t.node, t.passed) for t in tests] == [((1, 0), False), ((1,), True)]
    at = _page("otv", 3, seed=2, coin=0)
    assert at.session_state["step_pos"] == 0          # of 5 steps of the trace + 2 tests: none shown yet

    reveal(at, 2)                                     # visit of child 1 from the root (w = 1)
    no_errors(at)
    row, visit = _log_row(at), steps[1].values
    assert row["node"] == "1" and row["step"] == "visit"
    assert row["w (parent)"] == 1.0 and row["T(c)"] == pytest.approx(visit["T"], abs=1e-12)
    assert row["S(c)"] == pytest.approx(visit["S"], abs=1e-12)
    assert row["w"] == pytest.approx(visit["w"], abs=1e-12)
    assert row["w"] == pytest.approx(min(1.0, row["w·T(c)"] / row["S(c)"]), abs=1e-12)
    assert "ratio order" in _markdown(at)

    reveal(at, 4)                                     # visit of the leaf 1 0 from node 1 (w = w of 1)
    row, visit = _log_row(at), steps[3].values
    assert row["node"] == "1 0"
    assert row["w (parent)"] == pytest.approx(steps[1].values["w"], abs=1e-12)
    assert row["w·T(c)"] == pytest.approx(steps[1].values["w"] * visit["T"], abs=1e-12)
    assert (row["S(c)"], row["w"]) == pytest.approx((visit["S"], visit["w"]), abs=1e-12)
    tree = figure(at, "after step 4")
    ring = next(t for t in tree["data"] if t.get("name") == RING)
    assert ring["x"] == [2.0]                         # the ring sits on the leaf being visited
    assert not any(t.get("name") == EXTRA for t in tree["data"])

    reveal(at, 5)                                     # the leaf's test
    row = _log_row(at)
    assert row["step"] == "test" and row["result"] == "rejected"
    assert row["w"] == pytest.approx(tests[0].prob, abs=1e-12)

    reveal(at, 6)                                     # the residual the rejection leaves at node 1
    row, res = _log_row(at), steps[4]
    assert row["step"] == "residual" and row["node"] == "1"
    assert (row["A"], row["w"]) == pytest.approx((res.values["A"], res.values["w"]), abs=1e-12)
    bars = figure(at, "after rejecting 0")
    by_name = {t["name"]: t["y"] for t in bars["data"]}
    assert by_name["T: what b still owes after the rejection"] == pytest.approx(list(res.vector), abs=1e-12)
    assert by_name["p(·|b) (draft)"] == pytest.approx(list(block.p[(1,)]), abs=1e-12)
    assert by_name["q(·|b) (target)"] == pytest.approx(list(block.q[(1,)]), abs=1e-12)
    assert "Why can" not in _markdown(at)

    reveal(at, 7)                                     # node 1 passes although its leaf was rejected
    no_errors(at)
    row = _log_row(at)
    assert (row["node"], row["result"]) == ("1", "passed") and row["w"] == pytest.approx(tests[1].prob)
    assert "Why can `1` pass when its own children were rejected?" in _markdown(at)
    assert f"w = {tests[1].prob:.4f}" in _markdown(at)
    tree = figure(at, "OTV: τ = 1 accepted")
    star = next(t for t in tree["data"] if t.get("name") == EXTRA)
    assert star["x"] == [2.0]                         # the extra token sits at depth τ + 1


def test_walk_log_shows_blank_cells_not_none():
    """A step without a value (an "enter" has no S(c), a "test" no A) shows an empty cell, and the
    numbers four decimals; the table's data stay numbers (checked above)."""
    import pyarrow as pa

    at = reveal(_page("otv", 3, seed=2, coin=0), 7)
    no_errors(at)
    table = next(d for d in at.dataframe if "S(c)" in d.value.columns)
    assert table.value["S(c)"].isna().any()                      # there are missing values to show
    shown = pa.ipc.open_stream(table.proto.arrow_data.styler.display_values).read_all().to_pandas()
    cells = shown.astype(str).to_numpy().ravel().tolist()
    assert not {"None", "nan", "NaN", "<NA>"} & set(cells)
    assert shown["S(c)"].iloc[0] == "" and shown["w"].iloc[1] == f"{table.value['w'].iloc[1]:.4f}"


def test_traversal_walk_reveals_tests_leaves_first():
    block, verdict = _verdict("traversal", 3, seed=0, coin=0)
    at = _page("traversal", 3, seed=0, coin=0)
    n = len(verdict.trace.steps) + len(verdict.trace.tests)
    reveal(at, n)
    table = next(d.value for d in at.dataframe if "S(c)" in d.value.columns)
    tested = table[table["step"] == "test"]
    assert list(tested["node"]) == [figures.tokens_str(t.node) for t in verdict.trace.tests]
    assert list(tested["w"]) == pytest.approx([t.prob for t in verdict.trace.tests], abs=1e-12)
    assert tested["node"].iloc[0] == "0 0"            # the first draft's leaf comes first


def test_every_method_is_hidden_until_the_ending():
    at = open_page("pages/one_step.py", query={"preset": "several-drafts"})
    at.button(key="step_all").click().run()
    assert figure(at, "same drafts")                  # all revealed: the comparison is there
    reveal(at, 0)
    no_errors(at)
    titles = [f["layout"]["title"]["text"] for f in figures_json(at)]
    assert not any("same drafts" in t for t in titles)
    assert not any(d.value.columns.tolist().count("τ") for d in at.dataframe)
    assert any("gives away the ending" in i.value for i in at.info)
    at.toggle(key="step_spoil").set_value(True).run()
    no_errors(at)
    assert figure(at, "same drafts")
    partial = figure(at, "before the first test")
    assert any(t.get("name") == "not tested" for t in partial["data"])


def _find(method: str, want) -> tuple[int, object]:
    for seed in range(200):
        _, v = _verdict(method, 1, seed, seed)
        if want(v):
            return seed, v
    raise AssertionError("no such seed")


def test_bonus_shows_q_alone_and_a_correction_shows_the_residual():
    seed, v = _find("bv", lambda v: v.is_bonus)
    at = _page("bv", 1, seed, seed)
    at.button(key="step_all").click().run()
    bars = figure(at, "Extra token")
    assert "bonus, drawn from q(·|s)" in bars["layout"]["title"]["text"]
    assert [t["name"] for t in bars["data"]] == ["q(·|s) (target): the bonus token's law"]
    assert bars["data"][0]["y"] == pytest.approx(list(v.residual), abs=1e-12)
    caption = " ".join(c.value for c in at.caption)
    assert "bonus drawn from the target's own next-token law q(·|s)" in caption
    assert "residual at s" not in caption
    assert f"emits {v.tau + 1} tokens for one target call" in at.success[0].value

    seed, v = _find("bv", lambda v: v.tau == 0)
    at = _page("bv", 1, seed, seed)
    at.button(key="step_all").click().run()
    bars = figure(at, "Extra token")
    assert "a correction, drawn from the residual" in bars["layout"]["title"]["text"]
    names = [t["name"] for t in bars["data"]]
    assert names == ["p (draft)", "q (target)", "residual: the correction token's law"]
    assert bars["data"][2]["y"] == pytest.approx(list(v.residual), abs=1e-12)
    assert "BV's residual at s" in " ".join(c.value for c in at.caption)
    assert "emits 1 token for one target call" in at.success[0].value     # not "1 tokens"


def test_draft_tree_labels_drafts_spaced_tokens_and_star_depth():
    V = 12
    uniform = lambda s: np.full(V, 1.0 / V)  # noqa: E731
    block = TokenTree.chains_from_models([[11, 3], [11, 5], [2, 10]], uniform, uniform)
    fig = figures.draft_tree(block, accepted=(11,), extra=7).to_plotly_json()
    nodes = {c: h for t in fig["data"] if t.get("mode") == "markers+text" and t["name"] != EXTRA
             for c, h in zip(t["customdata"], t["hovertext"])}
    assert set(nodes) == {"∅", "11", "11 3", "11 5", "2", "2 10"}     # never "113" or "210"
    assert nodes["11 5"].startswith("node 11 5") and "draft 2 (1 in all)" in nodes["11 5"]
    assert "the empty prefix" in nodes["∅"]
    edges = next(t for t in fig["data"] if t.get("name") == "drafts on each branch")
    assert sorted(x for x in edges["text"] if x) == ["draft 1", "draft 2", "draft 3", "drafts 1, 2"]
    assert "drafts 1, 2 go from ∅ to 11" in edges["hovertext"]
    star = next(t for t in fig["data"] if t.get("name") == EXTRA)
    assert list(star["x"]) == [2.0]                   # depth τ + 1 = 2
    node_rows = [y for t in fig["data"] if t.get("mode") == "markers+text" and t["name"] != EXTRA
                 for x, y in zip(t["x"], t["y"]) if x == 2.0]
    assert all(abs(star["y"][0] - y) >= 0.5 for y in node_rows)    # clear of the depth-2 nodes
    lines = fig["layout"]["title"]["text"].count("<br>") + 1           # the title's lines fit the top margin
    assert fig["layout"]["title"]["yref"] == "container" and fig["layout"]["margin"]["t"] >= 24 + 26 * lines
    bonus = figures.draft_tree(block, accepted=(11, 3), extra=0).to_plotly_json()
    assert list(next(t for t in bonus["data"] if t.get("name") == EXTRA)["x"]) == [3.0]
    assert figures.tokens_str((1, 3, 2, 1)) == "1 3 2 1" and figures.tokens_str(()) == "∅"


def test_walk_log_tells_the_grid_to_draw_missing_cells_blank_and_fits_its_results():
    """Issue 24, item 8: the browser's grid draws a null cell as "None" whatever the styler sends;
    the log sets the grid's placeholder to an empty string, and gives the result column room for
    "T updated without 0" (tests/test_browser.py checks what the browser draws)."""
    import json

    at = reveal(_page("otv", 3, seed=2, coin=0), 7)
    table = next(d for d in at.dataframe if "S(c)" in d.value.columns)
    assert table.proto.HasField("placeholder") and table.proto.placeholder == ""
    assert json.loads(table.proto.columns)["result"]["width"] == "medium"
    assert "T updated without 0" in table.value["result"].tolist()


def _everything_shown(at) -> str:
    """Every text of the page a reader sees, chart titles included."""
    texts = [m.value for m in [*at.markdown, *at.caption, *at.info, *at.success, *at.header, *at.subheader]]
    return " ".join(texts + [f["layout"]["title"]["text"] for f in figures_json(at)])


@pytest.mark.parametrize("method,K,seed,coin", [("otv", 3, 2, 0), ("spectr_gbv", 3, 2, 0)])
def test_the_walk_starts_hidden_and_names_its_length_only_at_the_end(method, K, seed, coin):
    """Issue 24, item 6: a first visit and new drafts show nothing revealed; "Next" reveals one step at
    a time; no slider, title or sentence gives the number of steps before the last is revealed, and
    the ending (the extra token, every method's τ) stays hidden until then."""
    block, verdict = _verdict(method, K, seed, coin)
    n = len(verdict.trace.tests) + (len(verdict.trace.steps) if method == "otv" else 0)
    what = "step" if method == "otv" else "test"
    at = _page(method, K, seed, coin)
    assert not [s for s in at.slider if s.key.startswith("step_")]          # no slider with a maximum
    assert at.session_state["step_pos"] == 0 and figure(at, f"before the first {what}")
    assert at.button(key="step_back").disabled and not at.button(key="step_next").disabled
    for shown in range(1, n + 1):
        text = _everything_shown(at)
        assert f"{n} {what}s" not in text and f"of {n}" not in text
        assert not any("same drafts" in f["layout"]["title"]["text"] for f in figures_json(at))
        assert not at.success                                           # no accepted sub-block yet
        at.button(key="step_next").click().run()
        no_errors(at)
        assert at.session_state["step_pos"] == shown
        if shown < n:
            assert figure(at, f"after {what} {shown}")
    assert figure(at, f"τ = {verdict.tau} accepted, extra token {verdict.extra}")
    assert f"The verification ended after {n} {what}s." in _everything_shown(at)
    assert at.button(key="step_next").disabled and figure(at, "same drafts")
    at.button(key="step_back").click().run()
    assert at.session_state["step_pos"] == n - 1 and figure(at, f"after {what} {n - 1}")
    at.button(key="step_restart").click().run()
    assert at.session_state["step_pos"] == 0
    at.button(key="step_all").click().run()
    assert at.session_state["step_pos"] == n
    at.button(key="step_new").click().run()                             # new drafts: hidden again
    no_errors(at)
    assert at.number_input(key="step_seed").value == seed + 1
    assert at.session_state["step_pos"] == 0 and figure(at, f"before the first {what}")


def _first_seed(K: int, wanted) -> int:
    """The first draft seed whose binary-toy drafts (K of length 2) are ``wanted``, found with core."""
    pr = PRESETS["binary-toy"]
    return next(s for s in range(200)
                if [draw_block(pr.draft, pr.target, K, pr.L, s).draft(k) for k in range(K)] == wanted)


def _block_log(at):
    return next(d.value for d in at.dataframe if "h: passes with" in d.value.columns)


def test_the_page_opens_on_a_lossless_rule_and_drafts_that_differ():
    """Issue 32, item 6: the default rule to watch is lossless and the default seed draws distinct
    drafts (the several-drafts preset repeats a draft at seeds 0 to 5, core says; seed 6 does not)."""
    from core.rules.registry import REGISTRY
    at = open_page("pages/one_step.py")
    no_errors(at)
    method = at.selectbox(key="step_method").value
    assert method == "rbv" and REGISTRY[method].lossless_by_theory
    tokens = at.dataframe[0].value["tokens"].tolist()
    assert len(set(tokens)) == len(tokens) == 2
    pr = PRESETS["several-drafts"]
    repeats = [s for s in range(7) if len({draw_block(pr.draft, pr.target, pr.K, pr.L, s).draft(k)
                                            for k in range(pr.K)}) < pr.K]
    assert repeats == [0, 1, 2, 3, 4, 5]
    at = open_page("pages/one_step.py", query={"preset": "several-drafts"})
    no_errors(at)
    assert at.number_input(key="step_seed").value == 6
    tokens = at.dataframe[0].value["tokens"].tolist()
    assert len(set(tokens)) == len(tokens) == 3


def test_bv_shows_each_test_with_its_weight_and_stopping_probability():
    """Issue 32, item 6: BV on the binary toy's draft 0 0, p = (2/3, 1/3), q = (1/3, 2/3).  By hand:
    w₁ = min(1, 1·(1/3)/(2/3)) = 1/2, w₂ = min(1, (1/2)·(1/3)/(2/3)) = 1/4, so the block passes with
    h₂ = w₂ = 1/4; at x≤1 = 0, A₁ = (½·⅓ − ⅔)₊ + (½·⅔ − ⅓)₊ = 0, so h₁ = 0/(0 + 1 − ½) = 0."""
    seed = _first_seed(1, [(0, 0)])
    at = open_page("pages/one_step.py", query={"preset": "binary-toy", "method": "bv", "draft_seed": str(seed),
                                                "coin_seed": "0", "shown": "2"})
    no_errors(at)
    said = _markdown(at)
    assert "How BV tests a block" in said and "h_i = A_i/(A_i + 1 − w_i)" in said
    assert ("1. Draft 1 offers the full block `0 0`: w = min(1, w_before·q(x)/p(x)) = min(1, 0.5000 × "
            "0.3333/0.6667) = 0.2500; the whole block passes with probability h = w = 0.2500") in said
    log = _block_log(at)
    full = log.iloc[0]
    assert (full["node"], full["w before"], full["w"], full["h: passes with"]) == ("0 0", pytest.approx(0.5),
                                                                                   pytest.approx(0.25), pytest.approx(0.25))
    if len(log) > 1:                                  # the block was rejected: the sub-block 0 is tested
        sub = log.iloc[1]
        assert (sub["w"], sub["A"], sub["h: passes with"]) == (pytest.approx(0.5), pytest.approx(0.0, abs=1e-15), 0.0)
        assert "h = A/(A + 1 − w) = 0.0000/(0.0000 + 1 − 0.5000) = 0.0000" in said


def test_rbv_shows_the_residual_and_why_an_identical_draft_passes_with_probability_0():
    """Issue 32, item 6: RBV on two identical binary-toy drafts 0 0.  Draft 1 as under BV (block 1/4,
    sub-block 0); once rejected, RBV stands at ∅ with the residual ∝ (1·q − p)₊ = ((⅓ − ⅔)₊, (⅔ − ⅓)₊)
    ∝ (0, 1): T(0) = 0, so draft 2's weight is min(1, 0/p(0)) = 0 and each of its tests passes with 0."""
    seed = _first_seed(2, [(0, 0), (0, 0)])
    pr = PRESETS["binary-toy"]
    block = draw_block(pr.draft, pr.target, 2, pr.L, seed)
    coin = next(c for c in range(50)                   # a coin seed on which draft 1's block is rejected
                if not get_verifier("rbv").verify(block, np.random.default_rng(c)).trace.tests[0].passed)
    at = open_page("pages/one_step.py", query={"preset": "binary-toy", "K": "2", "method": "rbv",
                                                "draft_seed": str(seed), "coin_seed": str(coin), "shown": "99"})
    no_errors(at)
    said = _markdown(at)
    assert "How RBV tests its drafts" in said
    assert "Draft 1 stops at `∅` after 0 of its tokens there" in said and "T(0) = 0.0000, T(1) = 1.0000" in said
    assert "where the residual gives T(0) = 0" in said and "passes with probability 0" in said
    assert "Draft 1 was rejected at that very token" in said
    log = _block_log(at)
    second = log[log["draft"] == 2]
    assert len(second) == 2 and (second["w"] == 0.0).all() and (second["h: passes with"] == 0.0).all()
    assert second.iloc[-1]["q(x) or T(x)"] == 0.0                # T(0), the first token's target


def test_other_rules_state_the_formula_of_their_tests():
    """Issue 32, item 6: every rule on chains says how its tests' probabilities are computed; SpecTr
    and SpecTr-GBV name the node quantities the trace logged (ρ*; C and D); best-of-K + BV's test
    lines divide by p*, the selected draft's law."""
    for method, words in (("sd", "min(1, q(x_i)/p(x_i))"), ("spectr", "ρ* = "), ("spectr_gbv", "(C = "),
                          ("specinfer", "min(1, T(c)/S_i(c))"),
                          ("best_of_k_bv", "w = min(1, w_before·q(x)/p*(x)) = ")):   # its tested_law, p*
        at = open_page("pages/one_step.py", query={"preset": "binary-toy", "K": "2", "method": method,
                                                    "draft_seed": "0", "coin_seed": "0", "shown": "99"})
        no_errors(at)
        assert words in _markdown(at), method


def test_a_tree_b_that_is_not_numbers_is_refused_without_command_line_syntax():
    """Issue 32, item 7: the page's error names the branching b, not the command line's flag."""
    at = open_page("pages/one_step.py", query={"shape": "tree", "b": "2,2"})
    at.text_input(key="tree_b").set_value("2,x").run()
    [error] = [e.value for e in at.error]
    assert "branching b must be comma-separated integers such as 2,2" in error and "--" not in error


def test_block_verification_logs_the_numbers_of_each_test():
    """What the page reads: each BV test carries w_(i−1), w_i, p, q, A_i and h_i, the same as
    ``block_quantities`` computes for the path (a second computation); RBV logs its residual."""
    from core.rules.block import block_quantities
    pr = PRESETS["several-drafts"]
    for seed in range(5):
        block = draw_block(pr.draft, pr.target, 3, 3, seed)
        x = block.draft(0)
        nodes = [x[:i] for i in range(4)]
        w, A, h = block_quantities(x, [block.p[u] for u in nodes[:-1]], [block.q[u] for u in nodes])
        for t in get_verifier("bv").verify(block, np.random.default_rng(seed)).trace.tests:
            i, v = len(t.node), t.values
            assert (v["i"], v["w_prev"], v["w"], v["h"]) == (i, w[i - 1], w[i], t.prob) and t.prob == h[i]
            assert (v["p"], v["q"]) == (block.p[x[:i - 1]][x[i - 1]], block.q[x[:i - 1]][x[i - 1]])
            assert v.get("A", A[i]) == A[i] and (("A" in v) == (i < 3))
        rbv = get_verifier("rbv").verify(block, np.random.default_rng(seed))
        residuals = [s for s in rbv.trace.steps if s.event == "residual"]
        if rbv.tau < 3:                              # the last residual is the one the extra token comes from
            assert residuals and np.array_equal(residuals[-1].vector, rbv.residual)


def test_rbv_says_where_it_stands_and_which_drafts_it_skips():
    """Issue 32, item 6: on the default pair (seeded Markov, V = 3), draft seed 3 draws 0 0 and 1 0;
    RBV accepts the sub-block 0 of draft 1 (core's trace: a residual step at 0, then a skip of draft
    2, which starts with 1), so the page says it now stands at 0, skips draft 2, and draws the extra
    token from T, the trace's residual vector."""
    from toy_models import random_pair
    d, t = random_pair("markov", 3, 0.5, 0.6, 1, depth=3)
    block = draw_block(d, t, 2, 2, 3)
    assert [block.draft(k) for k in range(2)] == [(0, 0), (1, 0)]
    trace = get_verifier("rbv").verify(block, np.random.default_rng(0)).trace
    assert [(s.event, s.node) for s in trace.steps] == [("residual", (0,)), ("skip", (0,))]
    at = open_page("pages/one_step.py", query={"method": "rbv", "draft_seed": "3", "coin_seed": "0", "shown": "99"})
    no_errors(at)
    said = _markdown(at)
    T = ", ".join(f"T({y}) = {x:.4f}" for y, x in enumerate(trace.steps[0].vector))
    assert "Draft 1 stops at `0` after 1 of its tokens there: RBV stands at `0` now" in said and T in said
    assert "Draft 2 does not pass through `0`, so RBV skips it." in said
    assert "No draft is left to test: the extra token is drawn from this T." in said


def test_the_default_tree_lets_the_rules_differ_and_sections_are_numbered_as_they_show():
    """On two tokens the former default b = (2, 2) drafted every continuation, so every lossless rule
    accepted it all: five identical bars.  The default tree b = (2, 1) leaves continuations out, and
    the rules' E[τ | these drafts] differ; the lecture's step (greedy drafting, draft seed 1, coin seed
    4) shows rrs and Traversal ending apart.  Sections are numbered 1, 2, 3 before the ending and 1 to
    4 after it, never 1, 2, 4."""
    from tests.apptest import figure
    at = open_page("pages/one_step.py", query={"preset": "binary-toy", "shape": "tree", "shown": "99"})
    no_errors(at)
    assert at.text_input(key="tree_b").value == "2,1"
    every = figure(at, "Every method on the same")
    exact = next(t for t in every["data"] if t["name"].startswith("E[τ | these drafts]"))
    assert len({round(v, 9) for v in exact["y"] if v is not None}) >= 3
    assert [h.value.split(".")[0] for h in at.header if h.value[:1].isdigit()] == ["1", "2", "3", "4"]
    hidden = open_page("pages/one_step.py", query={"preset": "binary-toy", "shape": "tree", "shown": "0"})
    assert [h.value.split(".")[0] for h in hidden.header if h.value[:1].isdigit()] == ["1", "2", "3"]
    lecture = open_page("pages/one_step.py", query={"preset": "binary-toy", "shape": "tree", "b": "2,1", "law": "greedy",
                                                    "method": "specinfer", "draft_seed": "1", "coin_seed": "4",
                                                    "shown": "99"})
    tau = next(t for t in figure(lecture, "Every method on the same")["data"] if t["name"] == "τ with these coins")
    taus = dict(zip(tau["x"], tau["y"]))
    assert taus["SpecInfer"] == 1 and taus["Traversal"] == 2
