"""The Draft trees page and one iteration on token trees (issue 26, item 5), with what they read from
core: which children a law fixes, the q(s) of a top-k tree, and the S each traversal visit is tested
against.

The exact values are the spec's test vectors on the two toys (binary: p = (2/3, 1/3), q = (1/3, 2/3);
three-token: p = (1/2, 1/3, 1/6), q = (1/6, 1/3, 1/2)), each derived there by hand in rational
arithmetic; the round-by-round numbers are recomputed here from p and q with numpy, not read back
from the page's own code."""
from __future__ import annotations

import re

from fractions import Fraction

import numpy as np
import pytest

pytest.importorskip("streamlit")
from core.analysis.exact import exact_analysis  # noqa: E402
from core.analysis.toy_drafts import draw_tree  # noqa: E402
from core.bounds.closed_form import topk_tree_value  # noqa: E402
from core.data.coins import RandomCoins  # noqa: E402
from core.data.laws import LAWS  # noqa: E402
from core.data.shapes import Shape  # noqa: E402
from core.rules.registry import REGISTRY, get_verifier  # noqa: E402
from core.rules.traversal_walk import traversal_walk  # noqa: E402
from core.data.laws import depth_policies  # noqa: E402
from pages.ui import figures  # noqa: E402
from tests.apptest import figure, figures_json, no_errors, open_page, reveal  # noqa: E402
from toy_models.presets import PRESETS  # noqa: E402

BIN, TRI = PRESETS["binary-toy"], PRESETS["three-token-toy"]


def _frac(x: float) -> Fraction:
    return Fraction(x).limit_denominator(100_000)


# ------------------------------------------------------------------------------------------------
# Core: what the pages read
# ------------------------------------------------------------------------------------------------

def test_each_law_says_which_draws_it_fixes():
    assert LAWS["iid"].deterministic_draws(3) == (False,) * 3
    assert LAWS["wor"].deterministic_draws(2) == (False, False)
    assert LAWS["topk"].deterministic_draws(2) == (True, True)
    assert LAWS["greedy"].deterministic_draws(3) == (False, True, True)      # X, then Top
    assert LAWS["greedy"].deterministic_draws(1) == (False,)                 # one draw: a sample


@pytest.mark.parametrize("law", ["iid", "wor", "topk", "greedy"])
def test_token_tree_tells_deterministic_children_and_path_probabilities(law):
    p, q = TRI.draft, TRI.target
    for shape in (Shape.tree((2, 2)), Shape.chains_of(2, 2)):
        tree = draw_tree(p, q, shape, law, 3)
        for u in tree.nodes()[1:]:
            parent = u[:-1]
            fixed = (law == "topk" or (law == "greedy" and tree.draws[parent][0] != u[-1])) and \
                not (shape.chains and parent)            # chains go on i.i.d. below the root
            assert tree.deterministic(u) is fixed, (shape, law, u)
            want = np.prod([float(q.cond(u[:i])[u[i]]) for i in range(len(u))])
            assert tree.q_joint(u) == pytest.approx(want, abs=1e-15)
            assert tree.p_joint(u) == pytest.approx(np.prod([float(p.cond(u[:i])[u[i]]) for i in range(len(u))]))


def test_a_traversal_visit_carries_the_S_it_is_tested_against():
    tree = draw_tree(TRI.draft, TRI.target, Shape.tree((3, 1)), "wor", 0)
    out = traversal_walk(tree, RandomCoins(1), depth_policies(tree.shape, "wor"), tree.table())
    visits = [s for s in out.trace.steps if s.event == "visit"]
    assert visits
    seen: dict[tuple, set] = {}
    for s in visits:
        u, c = s.node[:-1], s.node[-1]
        P = np.asarray(tree.p[u], dtype=np.float64).copy()
        P[list(seen.get(u, ()))] = 0.0                  # wor: p without the children visited before
        assert s.vector == pytest.approx(P / P.sum(), abs=1e-15)
        assert s.vector[c] == s.values["S"]
        seen.setdefault(u, set()).add(c)


@pytest.mark.parametrize("toy,b,value", [(BIN, (2, 1), Fraction(4, 3)), (TRI, (2, 2), Fraction(3, 4)),
                                         (TRI, (3, 1), Fraction(7, 6))])
def test_the_top_k_tree_carries_q_of_each_path_and_they_sum_to_e_tau(toy, b, value):
    shape = Shape.tree(b)
    tree = draw_tree(toy.draft, toy.target, shape, "topk", 0)
    fig = figures.token_tree(tree, path_q=True).to_plotly_json()
    labels = next(t for t in fig["data"] if t["name"].startswith("q(s)"))
    assert len(labels["customdata"]) == len(tree.nodes()) - 1 == shape.budget
    assert _frac(sum(labels["customdata"])) == value                               # spec §5
    assert sum(labels["customdata"]) == pytest.approx(topk_tree_value(toy.draft, toy.target, shape), abs=1e-15)
    exact = exact_analysis("rrs", toy.draft, toy.target, shape=shape, law="topk")
    assert sum(labels["customdata"]) == pytest.approx(exact.expected_accepted, abs=1e-12)
    squares = next(t for t in fig["data"] if t["name"].startswith("deterministic"))
    assert len(squares["x"]) == shape.budget and squares["marker"]["symbol"] == "square"
    assert not [t for t in fig["data"] if t["name"].startswith("sampled")]


def test_the_tree_figure_marks_sampled_draws_and_iid_multiplicities():
    # b = (3): three i.i.d. draws on the binary toy; seed 0 draws a repeated token
    for seed in range(20):
        tree = draw_tree(BIN.draft, BIN.target, Shape.tree((3,)), "iid", seed)
        if any(tree.multiplicity(u) > 1 for u in tree.nodes()[1:]):
            break
    fig = figures.token_tree(tree).to_plotly_json()
    many = next(t for t in fig["data"] if t["name"] == "multiplicities")
    assert many["text"] == [f"×{tree.multiplicity(u)}" for u in tree.nodes()[1:] if tree.multiplicity(u) > 1]
    assert next(t for t in fig["data"] if t["name"] == "sampled edges")["line"]["dash"] == "dot"
    assert next(t for t in fig["data"] if t["name"].startswith("sampled from p"))["marker"]["symbol"] == "circle"


# ------------------------------------------------------------------------------------------------
# The Draft trees page
# ------------------------------------------------------------------------------------------------

def _trees(query: dict):
    at = open_page("pages/draft_trees.py", query={"preset": "binary-toy", **query})
    no_errors(at)
    return at


def _table(at) -> dict[str, str]:
    """The lossless rules' E[τ] as fractions, each checked lossless (TV from q below 1e-12); any lossy
    rule (``typical``, an engine's port) checked marked so, with its TV shown and no share of an LP."""
    table = next(d.value for d in at.dataframe if "fraction" in d.value.columns)
    lossless = table["lossless?"] == "yes"
    assert (table.loc[lossless, "TV from q"].abs() <= 1e-12).all()
    lossy = table[~lossless]
    assert (lossy["TV from q"] > 1e-9).all() and lossy["% own LP"].isna().all()
    # Medusa's typical acceptance, and the engines' released rules that are lossy on these drafts
    assert set(lossy["verifier"].str.split(" ").str[0]) <= {"typical"} | {
        n for n, c in REGISTRY.items() if c.released_port and not c.lossless_by_theory}
    return dict(zip(table.loc[lossless, "verifier"].str.split(" ").str[0], table.loc[lossless, "fraction"]))


def _metrics(at) -> dict[str, str]:
    """The two LP metrics by name, as the exact values the caption under them gives (the fraction
    where certified); each metric itself shows the decimal a slide reads (never a bare 72331/46656)."""
    shown = {m.label.split(":")[0].split(" at ")[0]: m.value for m in at.metric}
    line = next(c.value for c in at.caption if "LP = " in c.value and ("exactly" in c.value or "solver" in c.value))
    exact = {}
    for part in line.rstrip(".").split("; "):
        name, value = part.split(" = ", 1)
        name = {"own-law LP": "Own-law LP", "i.i.d.-chains LP": "i.i.d.-chains LP"}.get(
            name[:1].lower() + name[1:] if name.startswith("Own") else name, name)
        exact[name] = value.split(" ")[0]
    for name, value in exact.items():
        number = float(Fraction(value)) if "/" in value or value.isdigit() else float(value)
        assert shown[name] == f"{number:.4f}" and "/" not in shown[name], (name, shown[name], value)
    return exact


def test_chains_greedy_on_the_binary_toy_reach_16_9_and_the_lp_17_9():
    at = _trees({"K": "2", "shape": "chains", "law": "greedy"})
    # eagle's values on this page: tests/test_eagle.py, by Σ_v q(v)·P(v drafted) over every drafted tree
    assert _table(at) == {"rrs": "5/3", "traversal": "16/9", "lp_optimal": "17/9", "eagle": "13/9"}
    assert _metrics(at) == {"Own-law LP": "17/9", "i.i.d.-chains LP": "131/81"}
    assert figure(at, "chains 2×2 drafted by greedy")
    assert at.query_params["law"] == "greedy" and at.query_params["shape"] == "chains"


def test_a_static_tree_iid_and_its_link():
    at = _trees({"shape": "tree", "b": "2,2", "law": "iid"})
    assert _table(at) == {"rrs": "346/243", "traversal": "1072/729", "lp_optimal": "1271/729", "eagle": "842/729"}
    assert _metrics(at) == {"Own-law LP": "1271/729", "i.i.d.-chains LP": "1351/729"}     # K = 6/2 = 3
    assert at.text_input(key="tree_b").value == "2,2" and at.session_state["tree_law"] == "iid"
    at.selectbox(key="tree_law").set_value("wor").run()
    no_errors(at)
    # the complete tree: every token is a child, so even TensorRT-LLM's rule (every sibling against the
    # same q) is lossless here (sglang_tree does not run on wor trees: SGLang drafts top-k)
    assert _table(at) == {"rrs": "2", "traversal": "2", "lp_optimal": "2", "eagle": "2", "trtllm_tree": "2"}
    assert at.query_params["b"] == "2,2" and at.query_params["law"] == "wor"


def test_eagle_is_named_with_the_release_it_runs_and_not_called_lossy_at_half_temperature():
    """The page runs EAGLE's current release (its default), whose bonus is the tempered target: lossless
    at every T (core/rules/eagle.py), so at T = 1/2 its row says release = current, no temperature (that
    release never reads it) and no "lossy", and its TV is 0; the eagle2 release at T = 1/2 is lossy by
    theory (its bonus softmax(logits) is q_T^T renormalised, not q_T) and names its temperature."""
    from core.rules.eagle import Eagle
    from pages.draft_trees import rule_name, rule_settings

    at = _trees({"shape": "tree", "b": "2,2", "law": "iid", "T": "0.5"})
    table = next(d.value for d in at.dataframe if "fraction" in d.value.columns)
    eagle = table[table["verifier"].str.startswith("eagle")]
    assert eagle["verifier"].tolist() == ["eagle"]           # short, so every column fits; its release below
    assert any("eagle with release = current" in c.value for c in at.caption)
    assert eagle["lossless?"].tolist() == ["yes"] and abs(eagle["TV from q"].iloc[0]) <= 1e-12
    assert not [w.value for w in at.warning if "eagle" in w.value]
    assert rule_name("eagle", Shape.tree((2, 2))) == "eagle" and rule_settings("eagle") == "release = current"
    assert Eagle("eagle2", 0.5).settings() == {"release": "eagle2", "temperature": 0.5}
    assert not Eagle("eagle2", 0.5).lossless()
    assert Eagle("eagle2", 1.0).lossless() and Eagle("eagle2", 0.0).lossless() and Eagle("current", 0.5).lossless()


def test_three_token_toy_tree_greedy_and_the_widgets():
    at = open_page("pages/draft_trees.py", query={"preset": "three-token-toy", "shape": "tree", "b": "3,1",
                                                  "law": "greedy"})
    no_errors(at)
    assert _table(at) == {"rrs": "5/3", "traversal": "65/36", "lp_optimal": "17/9", "eagle": "23/18"}
    tree = figure(at, "b = (3, 1) drafted by greedy")
    names = {t["name"] for t in tree["data"]}
    assert any(n.startswith("deterministic") for n in names) and any(n.startswith("sampled") for n in names)
    at.radio(key="tree_kind").set_value("chains").run()                    # the preset's K = 2, L = 2
    no_errors(at)
    assert figure(at, "chains 2×2 drafted by greedy") and at.text_input(key="tree_b").disabled
    assert _table(at) == {"rrs": "25/18", "traversal": "53/36", "lp_optimal": "3/2", "eagle": "115/162"}
    assert _metrics(at) == {"Own-law LP": "3/2", "i.i.d.-chains LP": "1861/1296"}


def test_the_top_k_tree_shows_its_closed_form_on_the_tree():
    at = _trees({"shape": "tree", "b": "2,1", "law": "topk"})
    tree = figure(at, "closed form")
    assert "E[τ] = Σ q(s) = 1.3333 (= 4/3)" in tree["layout"]["title"]["text"]          # a decimal, its fraction beside
    # a tree top-k drafts at every node is the only one: not "one sampled tree", no seed, no "New tree"
    assert "1. The tree top-k drafts (the only one)" in [h.value for h in at.header]
    assert not [b for b in at.button if b.key == "trees_new"] and "seed" not in tree["layout"]["title"]["text"]
    assert "tree_seed" not in at.query_params
    labels = next(t for t in tree["data"] if t["name"].startswith("q(s)"))
    assert sorted(labels["text"]) == ["q = 1/3", "q = 1/9", "q = 2/3", "q = 2/9"]
    assert _frac(sum(labels["customdata"])) == Fraction(4, 3)
    # SGLang's tree sampling at its defaults is EAGLE's rule on distinct children: lossless here too
    assert _table(at) == {"rrs": "4/3", "traversal": "4/3", "lp_optimal": "4/3", "eagle": "4/3", "sglang_tree": "4/3"}
    table = next(d.value for d in at.dataframe if "fraction" in d.value.columns)
    typical = table[table["verifier"].str.startswith("typical")]
    if len(typical):        # Medusa's typical acceptance measured lossy here: 23/27 (tests/test_typical.py, by hand)
        assert _frac(typical["TV from q"].iloc[0]) == Fraction(23, 27)
        assert typical["verifier"].iloc[0] == "typical (lossy)"
        assert any("typical with epsilon = 0.09, delta = 0.3, extra_token = greedy" in c.value for c in at.caption)


def test_refusals_are_one_sentence():
    at = open_page("pages/draft_trees.py", query={"preset": "binary-toy", "shape": "tree", "b": "3,1", "law": "wor"})
    assert not at.exception
    assert [e.value for e in at.error] == [
        "The wor law needs 3 distinct tokens at node ∅ but p gives only 2 tokens positive probability there; "
        "draw fewer tokens at that depth or use the iid law."]
    assert not [d for d in at.dataframe if "fraction" in d.value.columns]
    at.text_input(key="tree_b").set_value("2,0").run()
    assert not at.exception
    assert [e.value for e in at.error] == ["This shape cannot be drafted: b\\_2 must be an integer ≥ 1, got 0."]
    at.text_input(key="tree_b").set_value("two").run()
    assert [e.value for e in at.error][0].startswith("This shape cannot be drafted: a tree's branching b must be comma-separated")


def test_new_tree_draws_another_seeded_tree():
    at = _trees({"shape": "tree", "b": "2,2", "law": "iid"})
    first = figure(at, "seed 0")
    at.button(key="trees_new").click().run()
    no_errors(at)
    assert at.session_state["trees_seed"] == 1 and at.query_params["tree_seed"] == "1"
    second = figure(at, "seed 1")
    tree = draw_tree(BIN.draft, BIN.target, Shape.tree((2, 2)), "iid", 1)
    nodes = [c for t in second["data"] if t.get("mode") == "markers+text" for c in t["customdata"]]
    assert sorted(nodes) == sorted(figures.tokens_str(u) for u in tree.nodes())
    assert first["data"] != second["data"] or tree.draws == draw_tree(
        BIN.draft, BIN.target, Shape.tree((2, 2)), "iid", 0).draws


# ------------------------------------------------------------------------------------------------
# One iteration on a token tree
# ------------------------------------------------------------------------------------------------

def _positive(x: np.ndarray) -> np.ndarray:
    r = np.maximum(x, 0.0)
    return r / r.sum()


def test_one_iteration_shows_each_rrs_round_S_beside_T():
    """Chains 2×2 drafted by greedy on the binary toy: the root's sampled child X ~ p on Ω∖Top is
    tested against T = q(·|∅) with S_1 = δ_1 (Top = {0}, so X = 1), then Top = 0 with S_2 = δ_0.
    A coin seed where X is rejected shows round 2 against the new T = (q − δ_1)₊ normalised = δ_0."""
    p, q = np.asarray(BIN.draft.cond(())), np.asarray(BIN.target.cond(()))
    rrs = get_verifier("rrs")
    for coin in range(50):
        tree = draw_tree(BIN.draft, BIN.target, Shape.chains_of(2, 2), "greedy", 0)
        verdict = rrs.verify(tree, np.random.default_rng(coin))
        if not verdict.trace.tests[0].passed:
            break
    at = open_page("pages/one_step.py", query={"preset": "binary-toy", "K": "2", "shape": "chains",
                                               "law": "greedy", "coin_seed": str(coin)})
    no_errors(at)
    assert at.selectbox(key="step_method").value == "specinfer"
    assert at.session_state["step_pos"] == 0 and figure(at, "rrs: before the first round")
    assert not at.success                                              # nothing of the ending yet
    reveal(at, 1)
    one = figure(at, "Round 1 at u = ∅")
    series = {t["name"]: t["y"] for t in one["data"]}
    S1 = np.where(np.arange(2) == 1, 1.0, 0.0)                         # X: p on Ω∖{0}, normalised
    assert series["S_i: the law of the visited child"] == pytest.approx(S1.tolist(), abs=1e-15)
    assert series["T: what u still owes q"] == pytest.approx(q.tolist(), abs=1e-15)
    after = _positive(q - S1)
    assert series["T after the rejection: (T − S_i)₊, normalised"] == pytest.approx(after.tolist(), abs=1e-15)
    log = next(d.value for d in at.dataframe if "S_i(c)" in d.value.columns)
    assert log.iloc[0]["accept with"] == pytest.approx(min(1.0, q[1] / 1.0))      # 2/3
    reveal(at, 2)
    two = figure(at, "Round 2 at u = ∅")
    series = {t["name"]: t["y"] for t in two["data"]}
    assert series["S_i: the law of the visited child"] == pytest.approx([1.0, 0.0], abs=1e-15)   # Top: δ_0
    assert series["T: what u still owes q"] == pytest.approx(after.tolist(), abs=1e-15)
    assert p[0] > p[1]                                                  # token 0 is p's top token


def test_one_iteration_traversal_on_a_wor_tree_charts_S_against_wT():
    at = open_page("pages/one_step.py", query={"preset": "three-token-toy", "shape": "tree", "b": "2,1",
                                               "law": "wor", "method": "traversal"})
    no_errors(at)
    assert figure(at, "Traversal: before the first step")
    reveal(at, 2)                                   # enter ∅, visit its first child
    chart = figure(at, "visiting")
    series = {t["name"].split(":")[0]: t["y"] for t in chart["data"]}
    q0 = np.asarray(TRI.target.cond(()), dtype=np.float64)
    assert series["S_i"] == pytest.approx(np.asarray(TRI.draft.cond(())).tolist(), abs=1e-15)   # first wor draw: p
    assert series["w·T"] == pytest.approx(q0.tolist(), abs=1e-15)                                # w = 1 at the root
    at.button(key="step_all").click().run()
    no_errors(at)
    assert figure(at, "Traversal: τ = ") and figure(at, "same drafts")
    compare = figure(at, "same drafts")
    assert {"SpecInfer", "Traversal", "LP-optimal"} <= set(compare["data"][0]["x"])


def test_one_iteration_shows_specinfer_on_iid_chains_round_by_round():
    """K i.i.d. chains (the page's default drafts): SpecInfer is rrs, every draw a round against
    S = p(·|u); the first round at the root is tested against T = q(·|∅)."""
    pr = PRESETS["several-drafts"]
    at = open_page("pages/one_step.py", query={"preset": "several-drafts", "method": "specinfer"})
    no_errors(at)
    assert figure(at, "SpecInfer: before the first round")
    reveal(at, 1)
    series = {t["name"]: t["y"] for t in figure(at, "Round 1 at u = ∅")["data"]}
    assert series["S_i: the law of the visited child"] == pytest.approx(list(pr.draft.cond(())), abs=1e-15)
    assert series["T: what u still owes q"] == pytest.approx(list(pr.target.cond(())), abs=1e-15)
    at.button(key="step_all").click().run()
    no_errors(at)
    n = at.session_state["step_pos"]
    assert f"The verification ended after {n} round{'s' * (n != 1)}." in " ".join(m.value for m in at.markdown)


# ------------------------------------------------------------------------------------------------
# The budget chart (core.analysis.budget's tables)
# ------------------------------------------------------------------------------------------------

def _curves(at) -> dict[str, dict[int, Fraction]]:
    fig = figure(at, "against the budget")
    return {t["name"].split(" (")[0]: {int(x): _frac(y) for x, y in zip(t["x"], t["y"]) if y is not None}
            for t in fig["data"]}


def test_the_budget_chart_gives_each_laws_best_shape_per_budget():
    """Budgets 4 to 6 at L = 2 on the binary toy.  Every shape of those budgets, listed by hand:
    n = 4: chains 2×2, b = (1, 3), (2, 1); n = 5: (1, 4) (only iid exists: wor, topk and greedy need
    4 distinct tokens); n = 6: chains 3×2, (1, 5), (2, 2), (3, 1) (wor, topk and greedy exist on
    (2, 2) only).  A law's point at n is its best shape of at most n tokens that it drafts at every
    node: wor and greedy give 16/9 at n = 4 and 5 (the spec's vectors; their n = 4 tree fits a budget
    of 5) and 2 on the complete (2, 2); they coincide, so they are one line, named once.  Chains 2×2
    "by topk" sample below the root (topk's own single draw is p's top token), so topk's line has its
    trees only: b = (2, 1), whose two paths carry q = 1/3·1/3 + 2/3·... = Σ q(s) = 4/3 (the top-k tree's
    value), and 2 on (2, 2); below the best top-k tree of any shape (Sequoia: 5/3, 2), as it must be.
    The i.i.d.-chains LP (131/81, 1351/729); iid's point at n is the maximum of exact_analysis over the
    shapes of budgets up to n above."""
    at = _trees({"shape": "tree", "b": "2,2", "law": "iid", "chart_max": "6", "chart": "traversal"})
    curves = _curves(at)
    assert curves["wor = greedy"] == {4: Fraction(16, 9), 5: Fraction(16, 9), 6: Fraction(2)}
    assert curves["topk"] == {4: Fraction(4, 3), 5: Fraction(4, 3), 6: Fraction(2)}
    assert all(curves["topk"][n] <= curves["best top-k tree of any shape"][n] for n in (4, 5, 6))
    names = [t["name"] for t in figure(at, "against the budget")["data"]]
    assert sum("greedy" in n for n in names) == 1                          # the coincident laws: one line
    by_hand = {4: [Shape.chains_of(2, 2), Shape.tree((1, 3)), Shape.tree((2, 1))], 5: [Shape.tree((1, 4))],
               6: [Shape.chains_of(3, 2), Shape.tree((1, 5)), Shape.tree((2, 2)), Shape.tree((3, 1))]}
    iid = {n: max(exact_analysis("traversal", BIN.draft, BIN.target, shape=s, law="iid").expected_accepted
                  for s in shapes) for n, shapes in by_hand.items()}
    assert curves["iid"] == {n: _frac(max(v for m, v in iid.items() if m <= n)) for n in iid}
    assert curves["iid"][4] == Fraction(115, 81)                       # spec: chains 2×2 = (2, 1)
    assert curves["i.i.d.-chains LP"] == {4: Fraction(131, 81), 6: Fraction(1351, 729)}
    assert {n: v for n, v in curves["best top-k tree of any shape"].items() if n != 5} == \
        {4: Fraction(5, 3), 6: Fraction(2)}
    winners = next(d.value for d in at.dataframe if "best (shape, law)" in d.value.columns)
    assert dict(zip(winners["n"], winners["as a fraction"])) == {4: "16/9", 5: str(_frac(iid[5])), 6: "2"}
    assert "chains 2×2 wor" in winners["best (shape, law)"].iloc[0]
    captions = " ".join(c.value for c in at.caption)
    # computed from the node-set laws: on chains 2×2 and b = (2, 2) the three draw both tokens at every
    # node they branch at; on b = (2, 1) topk's child is p's top token, wor's and greedy's a draw
    assert "**wor = greedy** is one line: they draft the same trees" in captions
    assert "(b = (2, 1), b = (2, 2), chains 2×2)" in captions
    assert "At V = 2, wor and greedy draft the same trees" in captions

    at.radio(key="trees_chart_rule").set_value("lp").run()               # the same tables, another column
    no_errors(at)
    curves = _curves(at)
    assert curves["wor = greedy"] == {4: Fraction(17, 9), 5: Fraction(17, 9), 6: Fraction(2)}  # the LP ceiling
    assert curves["iid"][4] == Fraction(131, 81) and at.query_params["chart"] == "lp"


def test_a_line_that_ends_says_why():
    """Budgets 4 to 7: wor, topk and greedy draw no shape of 7 tokens at V = 2 (b = (1, 6) needs 6
    distinct tokens at a node): their lines end at n = 6, their names say so, and the caption gives the
    refusal, naming the node as a path ("node 1"), never as a Python tuple ("node (1,)")."""
    at = _trees({"shape": "tree", "b": "2,2", "law": "iid", "chart_max": "7", "chart": "traversal"})
    no_errors(at)
    names = [t["name"] for t in figure(at, "against the budget")["data"]]
    assert "wor = greedy (ends at n = 6)" in names and "topk (ends at n = 6)" in names
    assert max(_curves(at)["iid"]) == 7
    captions = " ".join(c.value for c in at.caption)
    assert "Wor = greedy ends at n = 6: at n = 7, the wor law needs 6 distinct tokens at node 1 " in captions
    assert not re.search(r"\(\d+,\)", captions)


def test_budget_chart_markers_are_each_their_own():
    from pages.ui import figures
    fig = figures.budget_curves({law: [(4, 1.0 + i / 10, "s")] for i, law in enumerate(figures.LAW_STYLE)}, "r", 2,
                                {"a": [(4, 2.0)], "b": [(4, 2.1)]})
    marks = [t.marker.symbol for t in fig.data]
    assert len(marks) == 6 and len(set(marks)) == 6


def test_a_large_budget_chart_asks_first():
    at = _trees({"shape": "chains", "law": "iid", "chart_max": "16"})
    assert not [f for f in figures_json(at) if "against the budget" in f["layout"]["title"]["text"]]
    button = at.button(key="trees_chart_go")
    assert button.label.startswith("Compute the chart (about ")
    assert any("13 budgets" in i.value for i in at.info)


def test_which_laws_draft_the_same_trees_is_computed_from_their_node_sets():
    """``same_drafts`` on the binary toy (V = 2).  Chains 2×2: wor, topk and greedy each draw two
    distinct tokens at the root, so both tokens, and each chain goes on i.i.d. below the root: the
    same trees; iid can draw one token twice (probability p(0)² + p(1)² > 0), so it stands alone.
    b = (2, 1): topk's child at depth 2 is p's top token, always, while wor draws it from p(·|x),
    which gives both tokens positive probability on the binary toy: topk stands alone too."""
    from core.analysis.budget import budget_table, law_curves, same_drafts, same_everywhere, shared_drafts
    laws = ["iid", "wor", "topk", "greedy"]
    assert same_drafts(BIN.draft, Shape.chains_of(2, 2), laws) == [("iid",), ("wor", "topk", "greedy")]
    groups = same_drafts(BIN.draft, Shape.tree((2, 1)), laws)
    assert ("topk",) in groups and ("iid",) in groups
    assert all(0 < p < 1 for p in BIN.draft.cond((0,))) and all(0 < p < 1 for p in BIN.draft.cond((1,)))
    tables = {n: budget_table(BIN.draft, BIN.target, n, 2) for n in (4, 5, 6)}
    shared = shared_drafts(BIN.draft, tables)
    # a phrase only for laws together on every shape they can all draw: never topk here (b = (2, 1))
    phrase = same_everywhere(shared)
    assert phrase is None or "topk" not in phrase
    for curve in law_curves(tables, "traversal").values():           # a budget is a limit: never down
        values = [v for _, v, _ in curve.points]
        assert values == sorted(values)
