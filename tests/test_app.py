"""The app, page by page, with Streamlit's AppTest: every page runs without an exception, and changing
a widget changes what is shown (asserted on the data: table values, figure traces, tree nodes)."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

from pages.ui import figures  # noqa: E402
from tests.apptest import (APP, figure, figures_json, markdown_table, no_errors, open_box, open_page,  # noqa: E402
                           pair_state, reveal, section, slider)

# ------------------------------------------------------------------------------------------------
# Start
# ------------------------------------------------------------------------------------------------

def test_start_page_renders_picture_and_links():
    from core.rules.registry import REGISTRY
    at = open_page("pages/start.py")
    no_errors(at)
    assert at.title[0].value.startswith("Speculative decoding")
    tree = figure(at, "One iteration: K = ")
    names = [t.get("name") for t in tree["data"] if t.get("showlegend") is not False]
    assert "accepted sub-block" in names and "extra token (correction or bonus)" in names   # the legend
    links = [el for el in at.get("page_link")]
    assert len(links) >= 3
    # The methods' table is drawn once its box is opened: one row per registered rule.
    box = next(e for e in at.expander if e.label.startswith("What each of the"))
    assert box.label == f"What each of the {len(REGISTRY)} methods does, and where it comes from"
    assert not any(m.value.startswith("| method |") for m in at.markdown)
    open_box(at, "start_methods")
    [table] = [m.value for m in at.markdown if m.value.startswith("| method | what it does | source |")]
    assert len(table.splitlines()) == 2 + len(REGISTRY)
    for rule in REGISTRY.values():
        assert f"**{rule.short}** — {rule.label} | {rule.summary}" in table


# ------------------------------------------------------------------------------------------------
# Toy laboratory
# ------------------------------------------------------------------------------------------------

def _lab_table(at: AppTest):
    return at.dataframe[[i for i, d in enumerate(at.dataframe) if "E[τ]" in d.value.columns][0]].value


def test_lab_binary_toy_preset_matches_the_paper():
    """The Start page's link (?preset=binary-toy) loads the binary toy: SD 10/9, BV 11/9, acausal 12/9."""
    at = open_page("pages/toy_lab.py", query={"preset": "binary-toy"})
    no_errors(at)
    assert at.session_state["toy_source"] == "Preset" and at.session_state["toy_preset"] == "binary-toy"
    table = _lab_table(at).set_index("method")
    assert table.loc["SD", "E[τ]"] == pytest.approx(10 / 9, abs=1e-9)
    assert table.loc["BV", "E[τ]"] == pytest.approx(11 / 9, abs=1e-9)
    assert table.loc["SpecTr-GBV", "E[τ]"] == pytest.approx(4 / 3, abs=1e-9)
    assert table.loc["SpecTr-GBV", "lossless?"] == "NO"
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["Acausal bound"]) == pytest.approx(12 / 9, abs=1e-4)
    assert float(metrics["LP optimum"]) == pytest.approx(11 / 9, abs=1e-4)


def test_start_binary_toy_link_opens_the_two_draft_case_it_describes():
    """Issue 32, item 7: the Start page's binary-toy link opens at K = 2 with a label short enough
    for its column (the browser test checks that it is not cut), and the page it opens shows the
    numbers the caption gives.  By hand: SD's α = Σ min(p, q) = ⅓ + ⅓ = ⅔ and E[τ] = α + α² = 10/9
    whatever K; OTV attains the LP optimum, which core's LP solves (a second computation)."""
    from core import bounds
    from toy_models import PRESETS
    start = open_page("pages/start.py")
    link = next(p.proto for p in start.get("page_link") if p.proto.query_string.startswith("preset=binary-toy"))
    assert link.query_string == "preset=binary-toy&K=2" and link.label == "The binary toy, two drafts"
    caption = next(c.value for c in start.caption if c.value.startswith("The block-verification paper's toy"))
    assert "115/81" in caption and "131/81" in caption
    at = open_page("pages/toy_lab.py", query={"preset": "binary-toy", "K": "2"})
    no_errors(at)
    assert at.session_state["toy_K"] == 2 and not any("not applied" in w.value for w in at.warning)
    table = _lab_table(at).set_index("method")
    pr = PRESETS["binary-toy"]
    lp = bounds.optimal_lp(pr.draft, pr.target, 2, 2).value
    assert table.loc["SD", "E[τ] as a fraction"] == "10/9" and table.loc["RBV", "E[τ] as a fraction"] == "115/81"
    assert table.loc["OTV", "E[τ]"] == pytest.approx(lp, abs=1e-9) and table.loc["OTV", "E[τ] as a fraction"] == "131/81"


def test_lab_offers_every_registered_rule_at_first():
    """A first visit shows all the registered rules that take K i.i.d. drafts, the
    LP-optimal verifier and typical acceptance included, in the table and as bars."""
    from core.rules.registry import REGISTRY, chains_rules
    at = open_page("pages/toy_lab.py")
    no_errors(at)
    shorts = [REGISTRY[m].short for m in chains_rules()]
    assert list(_lab_table(at)["method"]) == shorts
    assert {"LP-optimal", "Typical"} <= {t["name"].split(" = ")[0] for t in figure(at, "Expected accepted tokens")["data"]}


def test_lab_says_why_td_optimal_sits_below_bv_at_K_1():
    """Issue 32, item 7: at K = 1 the best top-down rule is SD (its plan at one draft is min(p, q),
    SD's test; td_optimal's docstring), so on the binary toy TD-optimal = SD = 10/9 < BV = 11/9."""
    at = open_page("pages/toy_lab.py", query={"preset": "binary-toy"})
    no_errors(at)
    table = _lab_table(at).set_index("method")
    assert table.loc["TD-optimal", "E[τ] as a fraction"] == table.loc["SD", "E[τ] as a fraction"] == "10/9"
    note = next(c.value for c in at.caption if c.value.startswith("At K = 1 the best top-down rule is token-level SD"))
    assert "TD-optimal (10/9) equals SD here, SD's E[τ] = 10/9; BV (11/9)" in note
    slider = next(s for s in at.sidebar.slider if s.key == "toy_K")
    slider.set_value(2).run()
    assert not any(c.value.startswith("At K = 1 the best") for c in at.caption)


def test_lab_changing_K_changes_table_and_figures():
    at = open_page("pages/toy_lab.py")
    no_errors(at)
    before = _lab_table(at).set_index("method")["E[τ]"]
    bars = figure(at, "Expected accepted tokens")
    assert {"SD", "BV", "SpecTr", "SpecTr-GBV"} <= {t["name"] for t in bars["data"]}
    vs_k = figure(section(at, "drafts"), "against the number of drafts K")
    assert any(t["name"].startswith("LP optimum") for t in vs_k["data"])
    heat = figure(section(at, "coupling"), "Optimal lossless verifier")
    assert heat["data"][0]["type"] == "heatmap"
    assert figure(section(at, "monte-carlo"), "Law of τ")

    section(at, "methods")
    slider(at, "toy_K").set_value(3).run()
    no_errors(at)
    after = _lab_table(at).set_index("method")["E[τ]"]
    assert after["SD"] == pytest.approx(before["SD"])          # single draft: unchanged
    assert after["SpecTr"] > before["SpecTr"]                   # more drafts help SpecTr
    bars_after = figure(at, "Expected accepted tokens")
    assert bars_after["data"][2]["y"] != bars["data"][2]["y"]


def test_lab_method_selection_and_temperature():
    at = open_page("pages/toy_lab.py")
    at.sidebar.multiselect[0].set_value(["bv", "rbv"]).run()
    no_errors(at)
    assert list(_lab_table(at)["method"]) == ["BV", "RBV"]
    names = [t["name"] for t in figure(at, "Expected accepted tokens")["data"] if t.get("showlegend") is False]
    assert names == ["BV", "RBV"]
    e1 = _lab_table(at).set_index("method").loc["BV", "E[τ]"]
    slider(at, "toy_T").set_value(0.0).run()        # greedy: the block is accepted iff argmaxes agree
    no_errors(at)
    e0 = _lab_table(at).set_index("method").loc["BV", "E[τ]"]
    assert e0 != pytest.approx(e1)
    assert float(e0).is_integer()


def test_lab_bad_json_is_one_sentence():
    at = open_page("pages/toy_lab.py", state={"toy_source": "JSON", "toy_json_p": "{not json",
                                              "toy_json_q": '{"kind": "iid", "probs": [0.5, 0.5]}'})
    assert not at.exception
    assert len(at.error) == 1
    msg = at.error[0].value
    assert "JSON" in msg and "\n" not in msg and "Traceback" not in msg


def test_lab_edit_table_and_random_models():
    at = open_page("pages/toy_lab.py", state={"toy_source": "Edit p and q (table)", "toy_edit_V": 2,
                                              "toy_K": 1, "toy_L": 2})
    no_errors(at)
    table = _lab_table(at).set_index("method")
    assert table.loc["BV", "E[τ]"] == pytest.approx(11 / 9, abs=1e-9)   # the binary toy by default
    at = open_page("pages/toy_lab.py", state={"toy_source": "Seeded random", "toy_kind": "table",
                                              "toy_V": 2, "toy_K": 2, "toy_L": 2})
    no_errors(at)
    assert (_lab_table(at)["fidelity error (TV)"] >= 0).all()


def test_lab_computes_and_draws_only_the_open_section():
    """Issue 12, item 11: one tab per section, and only the open one is computed and drawn, so a
    slider change redraws one chart, not four; a link names its tab; an unknown one says so."""
    at = open_page("pages/toy_lab.py")
    no_errors(at)
    assert [t.label for t in at.tabs] == ["1. Every method", "2. Do more drafts help?", "3. Temperature",
                                          "4. Draft length", "5. Optimal coupling", "6. Monte Carlo", "7. Gain by depth",
                                          "8. What loss buys"]
    titles = lambda: [f["layout"]["title"]["text"] for f in figures_json(at)]  # noqa: E731
    assert len(titles()) == 1 and "Expected accepted tokens" in titles()[0]
    assert at.query_params["section"] == "methods"
    for name, title in (("drafts", "against the number of drafts K"), ("temperature", "against the temperature T"),
                        ("length", "against the draft length L"), ("coupling", "Optimal lossless verifier"),
                        ("monte-carlo", "Law of τ"), ("depth", "Gain by depth")):
        section(at, name)
        assert len(titles()) == 1 and title in titles()[0], titles()
        assert at.query_params["section"] == name
        assert not [d for d in at.dataframe if "E[τ] as a fraction" in d.value.columns]   # section 1 is not drawn
    linked = open_page("pages/toy_lab.py", query={"section": "coupling"})
    assert "Optimal lossless verifier" in figures_json(linked)[0]["layout"]["title"]["text"]
    wrong = open_page("pages/toy_lab.py", query={"section": "no-such-tab"})
    said = [w.value for w in wrong.warning if "section=no-such-tab" in w.value]
    assert len(said) == 1 and "\n" not in said[0]
    assert "Expected accepted tokens" in figures_json(wrong)[0]["layout"]["title"]["text"]


def test_lab_large_configuration_warns_before_solving():
    at = open_page("pages/toy_lab.py", state={"toy_V": 8, "toy_K": 5, "toy_L": 2})
    assert not at.exception
    assert any("large configuration" in w.value for w in at.warning)
    assert not at.get("plotly_chart")
    assert any(b.label == "Compute anyway" for b in at.button)


def test_lab_too_large_offers_no_button_and_no_verdict_on_uncomputed_methods():
    """Issue 12, item 1: past core's hard limit nothing offers "Compute anyway"; times are in human
    units; the monotonicity sentence names exactly the methods it covers."""
    from core.rules.registry import REGISTRY, chains_rules
    # the engines' ports on one chain (exact match, FlashInfer's, vLLM's and transformers' chains) are
    # left out: each exact law is a programme over the V^L paths of one chain, large here but
    # computable ("Compute anyway" for some of them alone), and none is what this refusal is about.
    methods = [m for m in chains_rules() if not (REGISTRY[m].single_draft and REGISTRY[m].released_port)]
    at = open_page("pages/toy_lab.py", state={"toy_V": 12, "toy_K": 8, "toy_L": 4, "lab_kmax": 3,
                                              "lab_mc_n": 100, "toy_methods": methods, "lab_every": True})
    no_errors(at)
    assert not any(b.label == "Compute anyway" for b in at.button)
    refusal = next(w.value for w in at.warning if "Too large" in w.value)
    assert "more than a year" in refusal and "e+" not in refusal and "SpecTr-GBV" in refusal
    assert list(_lab_table(at)["method"]) == ["SD", "BV", "Best-of-K+BV", "EAGLE"]
    section(at, "drafts")
    said = " ".join(e.value for e in [*at.success, *at.warning, *at.info])
    assert "Every method" not in said and "every method" not in said
    verdict = next(e.value for e in [*at.success, *at.warning] if "in K" in e.value)
    assert "SD (K = 1, 2, 3)" in verdict and "BV (K = 1, 2, 3)" in verdict and "Best-of-K+BV" in verdict
    assert "SpecTr" not in verdict and "RBV" not in verdict


def test_lab_several_drafts_preset_shows_every_method_and_the_lp_at_every_K():
    """Issue 12, item 2: the Start page's flagship preset shows the LP optimum and every registered
    method at K = 1..4, without a button: the curves that tell the story (SD, BV, SpecTr, Traversal and
    the LP optimum) at first, a 19-line chart being unreadable on a slide, and every chosen method and
    bound with the toggle (``every=1`` in the address)."""
    from core.rules.registry import REGISTRY, STORY_RULES, chains_rules
    at = open_page("pages/toy_lab.py", query={"preset": "several-drafts"},
                   state={"toy_methods": chains_rules()})
    no_errors(at)
    assert not any(b.key in ("lab_go", "lab_lp") for b in at.button)
    table = _lab_table(at)
    assert list(table["method"]) == [REGISTRY[m].short for m in chains_rules()]
    metrics = {m.label: m.value for m in at.metric}
    assert all(v != "—" for v in metrics.values()), metrics

    def lines(at):
        fig = figure(at, "against the number of drafts K")
        return {figures.own_name(t["name"]).replace(figures.LOSSY_MARK, ""): list(t["x"]) for t in fig["data"]}

    story = lines(section(at, "drafts"))
    assert set(story) == {REGISTRY[m].short for m in STORY_RULES} | {"LP optimum (best lossless verifier)"}
    assert all(x == [1, 2, 3, 4] for x in story.values())
    assert "every" not in at.query_params
    at.toggle(key="lab_every").set_value(True).run()
    every = lines(at)
    for m in chains_rules():
        assert every[REGISTRY[m].short] == [1, 2, 3, 4]
    assert next(v for k, v in every.items() if k.startswith("LP optimum")) == [1, 2, 3, 4]
    assert len(every) == len(chains_rules()) + 4 and at.query_params["every"] == "1"
    # a rule that is not lossless here has its points drawn open and its name marked so
    marked = {figures.own_name(t["name"]).replace(figures.LOSSY_MARK, "")
              for t in figure(at, "against the number of drafts K")["data"] if figures.LOSSY_MARK in t["name"]}
    lossy = set(table[table["lossless?"] == "NO"]["method"])
    assert lossy and lossy <= marked and "SpecTr-GBV" in marked
    assert not any("Left out" in c.value for c in at.caption)
    linked = open_page("pages/toy_lab.py", query={"preset": "several-drafts", "section": "drafts", "every": "1"},
                       state={"toy_methods": list(REGISTRY)})
    assert len(lines(linked)) == len(chains_rules()) + 4


def test_lab_draws_e_tau_against_temperature_and_length_one_link_each():
    """What does temperature do, and do longer drafts help?  One link each opens E[τ] against T
    (0.1 to 2 and the sidebar's T) and against L (1 to 4): every point exact, the same values as the
    laboratory's first tab at that T or L, with the LP optimum; a point where a rule is not lossless is
    drawn open and its name says so."""
    from core.analysis.exact import exact_analysis
    from core.bounds import optimal_lp
    from toy_models import PRESETS
    binary = PRESETS["binary-toy"]
    at = open_page("pages/toy_lab.py", query={"preset": "binary-toy", "K": "2", "section": "temperature",
                                              "methods": "sd,traversal,typical"})
    no_errors(at)
    fig = figure(at, "against the temperature T")
    by = {figures.own_name(t["name"]): t for t in fig["data"]}
    assert [round(x, 1) for x in by["SD"]["x"]] == [round(0.1 * i, 1) for i in range(1, 21)]
    for T in (0.3, 1.0, 1.7):
        p, q = binary.draft.with_temperature(T), binary.target.with_temperature(T)
        i = [round(x, 1) for x in by["SD"]["x"]].index(T)
        assert by["SD"]["y"][i] == pytest.approx(exact_analysis("sd", p, q, 1, 2).expected_accepted, abs=1e-12)
        assert by["Traversal"]["y"][i] == pytest.approx(exact_analysis("traversal", p, q, 2, 2).expected_accepted,
                                                        abs=1e-12)
        lp = by["LP optimum (best lossless verifier)"]
        assert lp["y"][i] == pytest.approx(optimal_lp(p, q, 2, 2).value, abs=1e-9)
    typical = next(t for t in fig["data"] if t["name"].startswith("Typical"))
    assert typical["name"].endswith(figures.LOSSY_MARK) and "-open" in " ".join(typical["marker"]["symbol"])
    assert at.query_params["section"] == "temperature"
    length = figure(open_page("pages/toy_lab.py", query={"preset": "binary-toy", "K": "2", "section": "length",
                                                         "methods": "sd,traversal"}), "against the draft length L")
    sd = next(t for t in length["data"] if t["name"] == "SD")
    assert list(sd["x"]) == [1, 2, 3, 4]
    p, q = binary.draft.with_temperature(1.0), binary.target.with_temperature(1.0)
    assert sd["y"] == pytest.approx([exact_analysis("sd", p, q, 1, L).expected_accepted for L in (1, 2, 3, 4)],
                                    abs=1e-12)
    assert sd["y"][1] == pytest.approx(10 / 9, abs=1e-12)          # the paper's SD at L = 2


def test_lab_binary_toy_shows_exact_fractions_and_clean_zeros():
    """Issue 12, item 3: small rationals are shown as fractions next to the decimals; round-off
    around 0 is shown as 0."""
    at = open_page("pages/toy_lab.py", query={"preset": "binary-toy"})
    no_errors(at)
    table = _lab_table(at).set_index("method")
    assert table.loc["BV", "E[τ] as a fraction"] == "11/9"
    assert table.loc["SD", "E[τ] as a fraction"] == "10/9"
    assert table.loc["SpecTr-GBV", "E[τ] as a fraction"] == "4/3"
    lossless = table[table["lossless?"] == "yes"]["fidelity error (TV)"]
    assert len(lossless) >= 2 and (lossless == 0.0).all() and not any(str(x).startswith("-") for x in lossless)
    fractions = next(c.value for c in at.caption if c.value.startswith("As exact fractions"))
    assert "LP optimum (best lossless verifier) = 11/9" in fractions
    assert "Acausal coupling bound = 4/3" in fractions


def test_lab_percent_of_lp_optimum_column():
    """Issue 13 (asked in issue 12, item 5): E[τ]/LP optimum in percent, when the LP was solved."""
    at = open_page("pages/toy_lab.py", query={"preset": "binary-toy"})
    table = _lab_table(at).set_index("method")
    assert table.loc["BV", "% of LP optimum"] == pytest.approx(100.0, abs=1e-4)
    assert table.loc["SD", "% of LP optimum"] == pytest.approx(100 * 10 / 11, abs=1e-4)


def test_labels_symbols_notes_and_export_on_start_and_lab():
    """Issue 12, items 4 and 7: "short — label" from the metadata; a "What am I looking at?" note per
    figure defining its symbols; "lossless", never "valid"; every chart exports a PNG at slide scale."""
    from core.rules.registry import REGISTRY, chains_rules
    start = open_box(open_page("pages/start.py"), "start_methods")     # the methods' table, opened
    no_errors(start)
    md = " ".join(m.value for m in start.markdown)
    for cls in REGISTRY.values():
        assert f"**{cls.short}** — {cls.label}" in md
    lab = open_page("pages/toy_lab.py", query={"preset": "binary-toy"})
    no_errors(lab)
    options = next(m for m in lab.sidebar.multiselect if m.key == "toy_methods").options
    assert options == [f"{REGISTRY[m].short} — {REGISTRY[m].label}" for m in chains_rules()]
    for at, symbols in ((start, ["τ", "E[τ]", "block efficiency", "extra token", "residual"]),
                        (lab, ["E_CIC", "LP optimum", "acausal bound", "greedy relaxation", "lossless"])):
        charts = at.get("plotly_chart")
        notes = [e for e in at.expander if e.label == "What am I looking at?"]
        assert len(notes) == len(charts) >= 1
        said = " ".join(m.value for e in notes for m in e.markdown)
        for symbol in symbols:
            assert f"**{symbol}**:" in said
        for fig in figures_json(at):
            words = [fig["layout"].get("title", {}).get("text", "")] + [t.get("name") or "" for t in fig["data"]]
            assert not any("valid" in w for w in words), words
        for c in charts:
            config = json.loads(c.proto.config)
            assert config["toImageButtonOptions"]["format"] == "png"
            assert config["toImageButtonOptions"]["scale"] >= 3


def test_lab_url_holds_the_configuration_and_a_link_restores_it():
    """Issue 12, item 6: the URL holds models, K, L, T, methods and the Monte Carlo settings; opening
    it afresh (a refresh, a copied link) shows the same view; an unknown preset says so."""
    at = open_page("pages/toy_lab.py")
    no_errors(at)
    slider(at, "toy_K").set_value(3).run()
    slider(at, "toy_T").set_value(0.5).run()
    at.sidebar.number_input(key="toy_seed").set_value(4).run()
    next(m for m in at.sidebar.multiselect if m.key == "toy_methods").set_value(["bv", "rbv"]).run()
    table = _lab_table(at).set_index("method")["E[τ]"]
    section(at, "monte-carlo").select_slider(key="lab_mc_n").set_value(100).run()
    no_errors(at)
    url = dict(at.query_params)
    assert {k: url[k] for k in ("source", "seed", "K", "T", "methods", "mc_n", "section")} == {
        "source": "Seeded random", "seed": "4", "K": "3", "T": "0.5", "methods": "bv,rbv", "mc_n": "100",
        "section": "monte-carlo"}
    mc_table = at.dataframe[0].value

    again = open_page("pages/toy_lab.py", query=url)
    no_errors(again)
    for key, value in {"toy_source": "Seeded random", "toy_seed": 4, "toy_K": 3, "toy_T": 0.5,
                       "toy_methods": ["bv", "rbv"], "lab_mc_n": 100,
                       "lab_section": "6. Monte Carlo"}.items():
        assert again.session_state[key] == value
    pd.testing.assert_frame_equal(again.dataframe[0].value, mc_table)    # the same tab, the same numbers
    assert dict(again.query_params) == url
    pd.testing.assert_series_equal(_lab_table(section(again, "methods")).set_index("method")["E[τ]"], table)
    assert again.query_params["section"] == "methods" and again.session_state["lab_mc_n"] == 100

    unknown = open_page("pages/toy_lab.py", query={"preset": "no-such-preset"})
    assert not unknown.exception
    said = [w.value for w in unknown.warning if "no-such-preset" in w.value]
    assert len(said) == 1 and "no preset named" in said[0] and "\n" not in said[0]


def test_lab_copy_this_configuration_reproduces_the_numbers(tmp_path):
    """Issue 12, item 7: the command lines shown reproduce the table's numbers."""
    import os
    import subprocess
    import sys
    at = open_page("pages/toy_lab.py", query={"preset": "binary-toy", "methods": "sd,bv"})
    no_errors(at)
    assert not at.code                                  # drawn only once the reader opens the box
    open_box(at, "lab_copy")
    box = next(e for e in at.expander if e.label.startswith("Copy this configuration"))
    p_json, q_json, commands = (c.value for c in box.code)
    (tmp_path / "p.json").write_text(p_json)
    (tmp_path / "q.json").write_text(q_json)
    line = next(c for c in commands.splitlines() if c.startswith("python -m core exact") and "--method bv" in c)
    assert "--K 1 --L 2 --temperature 1" in line
    assert any("--kind lp" in c for c in commands.splitlines())
    out = subprocess.run([sys.executable, *line.split()[1:], "--json"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(Path(APP).parent)})
    assert out.returncode == 0, out.stderr
    table = _lab_table(at).set_index("method")
    assert json.loads(out.stdout)["expected_accepted"] == pytest.approx(table.loc["BV", "E[τ]"], abs=1e-12)


# ------------------------------------------------------------------------------------------------
# One iteration, step by step
# ------------------------------------------------------------------------------------------------

def _tree_nodes(fig: dict) -> int:
    return sum(len(t["x"]) for t in fig["data"] if t.get("mode") == "markers+text"
               and t.get("name") != "extra token (correction or bonus)")


def test_step_tree_nodes_follow_K_and_seed():
    at = open_page("pages/one_step.py", query={"preset": "several-drafts"})
    no_errors(at)
    tree = figure(at, "RBV:")
    n = _tree_nodes(tree)
    assert n == at.session_state["step_nodes"]
    assert 1 + 3 <= n <= 1 + 3 * 3                       # K = 3 drafts of length 3 share a root
    drafts_before = at.dataframe[0].value["tokens"].tolist()
    at.number_input(key="step_seed").set_value(5).run()
    no_errors(at)
    assert at.dataframe[0].value["tokens"].tolist() != drafts_before
    slider(at, "toy_K").set_value(1).run()
    no_errors(at)
    assert _tree_nodes(figure(at, "RBV:")) == 1 + 3   # one draft of length 3: a path


def test_step_reveal_and_compare_methods():
    at = open_page("pages/one_step.py", query={"preset": "several-drafts"})
    at.button(key="step_all").click().run()
    n_tests = at.session_state["step_pos"]
    assert n_tests >= 1
    full = figure(at, "RBV:")
    assert any(t.get("name") == "extra token (correction or bonus)" for t in full["data"])
    reveal(at, 0)
    no_errors(at)
    partial = figure(at, "before the first test")
    assert not any(t.get("name") == "extra token (correction or bonus)" for t in partial["data"])
    assert not any("same drafts" in f["layout"]["title"]["text"] for f in figures_json(at))  # no spoiler
    at.toggle(key="step_spoil").set_value(True).run()
    compare = figure(at, "same drafts")
    assert len(compare["data"][0]["x"]) >= 7
    at.selectbox(key="step_method").set_value("bv").run()
    no_errors(at)
    assert figure(at, "BV: before the first test")       # another verification to watch: hidden again
    at.button(key="step_all").click().run()
    assert figure(at, "BV: τ")
    assert figure(at, "Extra token")


# ------------------------------------------------------------------------------------------------
# Claims
# ------------------------------------------------------------------------------------------------

def test_claims_on_the_gbv_preset():
    at = open_page("pages/claims.py", query={"preset": "gbv-lossless", "tab": "live"})
    no_errors(at)
    v = at.session_state["claims_verdicts"]
    assert v["Lossless"] == "fails here"
    assert v["Reduces to block verification at K = 1"] == "fails here"
    assert v["Verification in O(|Ω|)"] in ("holds here", "fails here")
    assert figure(at, "against what the paper claims")
    assert figure(at, "Verification time")


def test_claims_change_with_configuration_and_search():
    at = open_page("pages/claims.py", query={"preset": "binary-toy", "tab": "live"})
    no_errors(at)
    v1 = dict(at.session_state["claims_verdicts"])
    assert v1["Attains its stated E_CIC"] == "holds here"          # 4/3 at K = 1 on the binary toy
    at.session_state["claims_tab"] = "3. Search for counterexamples"
    at.run()
    at.button(key="claims_search").click().run()
    no_errors(at)
    found = at.session_state["claims_found"]
    assert len(found) == 20 and any(r["claims broken"] != "none" for r in found)
    first_bad = next(r for r in found if r["claims broken"] != "none")
    at.button(key="claims_open").click().run()           # opens the first counterexample in the lab
    no_errors(at)
    assert at.title[0].value.startswith("Toy laboratory")
    assert at.session_state["toy_source"] == "Seeded random"
    assert at.session_state["toy_seed"] == first_bad["model seed"]
    assert at.session_state["toy_K"] == first_bad["K"] and at.session_state["toy_L"] == first_bad["L"]


# ------------------------------------------------------------------------------------------------
# Real-model pages (they must never show a traceback, with or without the bundled pair)
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("page", ["pages/live_decoder.py", "pages/sweeps.py"])
def test_real_model_pages_render(page):
    """With the bundled pair or without it (then one sentence says what to do), never a traceback."""
    at = open_page(page)
    assert not at.exception
    assert at.title
    for e in at.error:
        assert "\n" not in e.value and "Traceback" not in e.value


def test_live_decoder_generates_and_opens_a_tree(tiny_pair):
    at = open_page("pages/live_decoder.py", state={**pair_state(tiny_pair), "dec_max": 24, "dec_K": 2, "dec_L": 3})
    no_errors(at)
    assert any("Generate" in i.value for i in at.info)
    at.button(key="dec_go").click().run()
    no_errors(at)
    gen = at.session_state["dec_result"]["generation"]
    assert gen.metrics.tokens_generated >= 1 and gen.iterations
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["Block efficiency"]) == pytest.approx(gen.metrics.block_efficiency, abs=1e-3)
    assert len(figures_json(at)) == 2                # the tree is drawn only once its box is open
    assert [e.label for e in at.expander if e.label.startswith("Show the draft tree")]
    no_errors(open_box(at, "dec_tree_open"))        # as a click on the box does
    tree = figure(at, "Iteration 1:")
    n_nodes = sum(len(t["x"]) for t in tree["data"] if t.get("mode") == "markers+text"
                  and t.get("name") != "extra token (correction or bonus)")
    assert n_nodes == len(gen.iterations[0].nodes)
    assert figure(at, "Acceptance per draft position")
    assert figure(at, "Where the time goes")
    html = " ".join(h.value for h in at.get("html"))   # st.html: the text is HTML, never Markdown
    assert "background:#c7e9c0" in html and "white-space:pre-wrap" in html   # accepted tokens are coloured
    if len(gen.iterations) > 1:                    # another iteration, another tree
        next(s for s in at.slider if s.label == "Iteration").set_value(2).run()
        no_errors(at)
        assert figure(at, "Iteration 2:")
    at.multiselect(key="dec_compare").set_value(["bv", "rbv"]).run()
    at.button(key="dec_compare_go").click().run()
    no_errors(at)
    table = at.dataframe[-1].value
    assert list(table["method"]) == ["BV", "RBV", "Target alone"]
    assert table["speedup"].iloc[-1] == pytest.approx(1.0)
    assert list(table.columns)[:3] == ["method", "draft", "speedup"]     # never off the right edge
    assert len(table.columns) == 8                                       # every column fits the page's width
    root = table["root acceptance"]
    assert all(0 < x <= 1 for x in root.iloc[:2]) and pd.isna(root.iloc[-1])   # no draft, no root


def test_live_decoder_draws_its_charts_with_plotly(tiny_pair):
    """After a generation: the acceptance bars and the time split, then the draft tree and the
    iteration's time split once its box is opened, each a Plotly chart."""
    at = open_page("pages/live_decoder.py", state={**pair_state(tiny_pair), "dec_max": 12, "dec_K": 2, "dec_L": 3})
    at.button(key="dec_go").click().run()
    no_errors(at)
    titles = lambda: [f["layout"]["title"]["text"] for f in figures_json(at)]  # noqa: E731
    assert [t.split(":")[0] for t in titles()] == ["Acceptance per draft position", "Where the time goes"]
    no_errors(open_box(at, "dec_tree_open"))
    assert len(titles()) == 4 and titles()[2].startswith("Iteration 1: τ =")
    assert titles()[3].startswith("Iteration 1: where its")


def test_live_decoder_redraws_its_chart_every_iteration(tiny_pair, monkeypatch):
    """Each live redraw of the chart is a new element: identical figures must not collide
    (StreamlitDuplicateElementId)."""
    from pages.ui import generation
    monkeypatch.setattr(generation, "LIVE_CHART_EVERY_S", -1.0)
    at = open_page("pages/live_decoder.py", state={**pair_state(tiny_pair), "dec_max": 16, "dec_K": 1,
                                                    "dec_L": 1, "dec_T": 0.0, "dec_method": "bv"})
    at.button(key="dec_go").click().run()
    no_errors(at)
    assert len(at.session_state["dec_result"]["generation"].iterations) > 2


def test_live_decoder_controls_survive_a_pair_error(tiny_pair):
    at = open_page("pages/live_decoder.py", state={**pair_state(tiny_pair), "dec_K": 3, "dec_L": 5, "dec_T": 0.4,
                                                    "dec_prompt": "x = 1\n", "dec_method": "spectr"})
    at.sidebar.text_input(key="dec_target").set_value("/no/such/model").run()
    assert at.error and not at.exception
    assert at.button(key="dec_go").disabled                 # Generate stays, waiting for a pair
    at.sidebar.text_input(key="dec_target").set_value(tiny_pair[0]).run()
    no_errors(at)
    assert (slider(at, "dec_K").value, slider(at, "dec_L").value, slider(at, "dec_T").value) == (3, 5, 0.4)
    assert at.text_area(key="dec_prompt").value == "x = 1\n"
    assert at.selectbox(key="dec_method").value == "spectr"


def test_live_decoder_drops_results_of_another_pair(tiny_pair):
    """A generation of one pair is not shown (nor its tokens decoded) with another pair."""
    at = open_page("pages/live_decoder.py", state={**pair_state(tiny_pair), "dec_max": 8})
    at.button(key="dec_go").click().run()
    no_errors(at)
    assert "How it went" in [h.value for h in at.main.header]
    at.sidebar.radio(key="dec_source").set_value("Bundled pair").run()
    if at.error:                                   # no bundled pair here: nothing to compare with
        pytest.skip(at.error[0].value)
    no_errors(at)
    assert "dec_result" not in at.session_state
    assert not at.main.header and any("Generate" in i.value for i in at.info)


def test_sweeps_run_and_download(tiny_pair):
    at = open_page("pages/sweeps.py", state={**pair_state(tiny_pair), "sw_tokens": 8, "sw_seeds": 1,
                                             "sw_prompts": "def main():\\n", "sw_methods": ["bv", "rbv"]})
    no_errors(at)
    at.text_input(key="sw_values_K").set_value("1, 2").run()
    at.button(key="sw_go").click().run()
    no_errors(at)
    be = figure(at, "Block efficiency against number of drafts K")
    lines = [t for t in be["data"] if t.get("mode") == "lines+markers"]
    assert [t["name"] for t in lines] == ["BV", "RBV"] and all(list(t["x"]) == [1, 2] for t in lines)
    assert figure(at, "Speedup over the target alone")
    downloads = {b.proto.label for b in at.get("download_button")}
    assert downloads == {"SVG", "PNG", "Download all runs (CSV)", "Download summary and settings (JSON)"}
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels.count("SVG") == labels.count("PNG") == 2   # one each per chart
    at.text_input(key="sw_values_K").set_value("1, x").run()
    assert not at.exception and "whole numbers" in at.error[0].value


def test_sweeps_draft_chains_by_a_law_and_refuse_a_rule_that_cannot_verify_them(tiny_pair):
    at = open_page("pages/sweeps.py", state={**pair_state(tiny_pair), "sw_tokens": 8, "sw_seeds": 1, "sw_law": "wor",
                                             "sw_prompts": "def main():\\n", "sw_methods": ["bv", "rbv"],
                                             "sw_baseline": False})
    assert not at.exception
    [error] = [e.value for e in at.error]      # BV draws one chain (one sample: every rule takes it); RBV two
    assert error.startswith("This sweep is refused: rbv is defined on K i.i.d. chains only, not on chains 2×4, wor")
    assert not [b for b in at.button if b.key == "sw_go"]          # nothing to run
    at.multiselect(key="sw_methods").set_value(["bv", "traversal"]).run()
    at.text_input(key="sw_values_K").set_value("1, 2").run()
    at.button(key="sw_go").click().run()
    no_errors(at)
    runs = at.session_state["sw_result"]["rows"]
    assert {(r["method"], r["K"], r["drafts_drawn"], r["law"]) for r in runs} == {
        ("bv", 1, 1, "wor"), ("bv", 2, 1, "wor"), ("traversal", 1, 1, "wor"), ("traversal", 2, 2, "wor")}
    assert at.session_state["sw_result"]["config"]["law"] == "wor"


# ------------------------------------------------------------------------------------------------
# A tiny random model pair on disk (no download), for the real-model pages
# ------------------------------------------------------------------------------------------------

def test_pair_picker_lists_smollm2_and_hub_presets():
    """The picker offers the offline SmolLM2 pair and the hub presets; offline, a hub preset fails
    with one sentence, never a traceback."""
    at = open_page("pages/live_decoder.py", state={"dec_source": "Hub preset"})
    radio = next(r for r in at.sidebar.radio if r.key == "dec_source")
    assert "SmolLM2-135M (offline, distilled draft)" in radio.options
    presets = at.sidebar.selectbox(key="dec_hub")
    assert presets.value == "smollm2-360m"
    assert {"Qwen/Qwen2.5-1.5B ← Qwen/Qwen2.5-0.5B", "gpt2-medium ← gpt2"} <= set(presets.options)
    assert at.error and "\n" not in at.error[0].value and "Traceback" not in at.error[0].value


def test_the_router_prewarms_the_imports_in_the_background():
    """Any first page starts, once per process, a thread that imports what the other pages need,
    torch and transformers' model classes last, so the live decoder does not wait 10-25 s for them
    (issue 15, item 7); it imports while no script runs (``pages.ui.prewarm``, issue 12, item 11)."""
    import sys

    at = AppTest.from_file(APP, default_timeout=120).run()
    no_errors(at)
    from pages.ui import prewarm
    thread = prewarm.start()
    assert thread is prewarm.start()                             # one thread per process
    thread.join(timeout=300)
    assert not thread.is_alive()
    assert all(name in sys.modules for name in prewarm.APP_IMPORTS + prewarm.DECODER_IMPORTS)


def test_a_fresh_server_loads_the_bundled_pair_beside_the_prewarm_thread():
    """In a fresh process the router's prewarm thread and the live decoder's model load both import
    from transformers, whose lazy names are not thread-safe; unserialised, the load failed every
    time with "Cannot import name 'AutoModelForCausalLM' from 'transformers'" (issue 15, item 1).
    A fresh process is needed: here transformers is already imported."""
    import os
    import subprocess
    import sys

    code = ("from streamlit.testing.v1 import AppTest\n"
            "from pages.ui import prewarm\n"
            "prewarm.QUIET_S = 0.0\n"               # the race needs the thread importing at once
            f"at = AppTest.from_file({APP!r}, default_timeout=600).run()\n"
            "at.switch_page('pages/live_decoder.py').run()\n"
            "print('ERRORS', [e.value for e in at.error] + [str(e.value) for e in at.exception])\n"
            "print('LOADED', any('Loaded' in c.value for c in at.sidebar.caption))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=str(Path(APP).parent), capture_output=True,
                         text=True, timeout=900, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert "ERRORS []" in out.stdout, out.stdout[-2000:] + out.stderr[-2000:]
    assert "LOADED True" in out.stdout, out.stdout[-2000:]


# ------------------------------------------------------------------------------------------------
# Issue 24: words that say what was checked
# ------------------------------------------------------------------------------------------------

def test_lab_monte_carlo_tests_the_output_law_and_says_what_each_check_covers():
    """Item 9: beside "in the interval?", each method's sampled outputs s·y are tested against its
    own exact output law (chi-square), with the numbers core gives for the same seed; the caption says
    that the E[τ] check covers the mean only and that agreeing with its own law is not losslessness."""
    from core.analysis.exact import exact_analysis
    from core.analysis.montecarlo import monte_carlo, output_law_test
    from pages.ui import figures
    from toy_models import PRESETS

    at = open_page("pages/toy_lab.py", query={"preset": "gbv-lossless", "section": "monte-carlo",
                                              "methods": "bv,spectr_gbv", "mc_n": "3000", "mc_seed": "0"})
    no_errors(at)
    table = next(d.value for d in at.dataframe if "χ² p-value" in d.value.columns).set_index("method")
    assert "agrees?" not in table.columns
    pr = PRESETS["gbv-lossless"]
    for m in ("bv", "spectr_gbv"):
        law = exact_analysis(m, pr.draft, pr.target, 2, 2).output_law
        test = output_law_test(monte_carlo(m, pr.draft, pr.target, 2, 2, 3000, 0), law)
        row = table.loc[figures.short(m)]
        assert row["χ² p-value"] == pytest.approx(test.p_value, abs=1e-12)
        assert row["TV to exact law"] == pytest.approx(test.tv, abs=1e-12)
        assert row["law matches?"] == ("yes" if test.p_value >= 0.05 else "no")
    assert table.loc["SpecTr-GBV", "law matches?"] == "yes"   # p = 0.09 at this seed
    caption = " ".join(c.value for c in at.caption)
    assert "compares the mean only" in caption and "not whether the method is lossless" in caption


def test_claims_timing_verdict_is_worded_as_a_measurement():
    """Item 9: the O(|Ω|) verdict is a wall-clock fit: its heading and the summary say "consistent
    with the timing" (or not), never "holds here"; the exact verdicts keep "holds here"/"fails here"."""
    at = open_page("pages/claims.py", query={"preset": "gbv-lossless", "tab": "live"})
    no_errors(at)
    heading = next(h.value for h in at.subheader if h.value.startswith("Verification in O(|Ω|)"))
    assert "holds here" not in heading and "fails here" not in heading
    assert "consistent with the timing" in heading and heading.endswith("(measured)")
    # The summary is a Markdown table (a claim, its verdict, how it was reached), one row per claim.
    summary = markdown_table(at, "| claim | verdict | how |")
    assert summary["Verification in O(|Ω|)"][0] in (
        "consistent with the timing", "not consistent with the timing")
    assert summary["Verification in O(|Ω|)"][1] == "a wall-clock measurement on this machine, not an exact verdict"
    assert summary["Lossless"] == ["fails here", "exact"]
    assert set(summary) == set(at.session_state["claims_verdicts"])
    body = " ".join(m.value for m in at.markdown)
    assert "least-squares fit of log time" in body and "This is a timing, not a proof" in body


# ------------------------------------------------------------------------------------------------
# Issue 24, item 7: presets and start links show the best rules
def test_lab_links_to_the_draft_trees_page_on_the_same_models():
    """Issue 26, item 5: the laboratory opens the Draft trees page on its own models, K and L (the
    default seeded Markov pair here): the same rule on the same K i.i.d. chains gives the same E[τ]."""
    from urllib.parse import parse_qsl
    at = open_page("pages/toy_lab.py")
    no_errors(at)
    [link] = [l.proto for l in at.get("page_link") if l.proto.page == "draft_trees"]
    query = dict(parse_qsl(link.query_string))
    assert query["source"] == "Seeded random" and query["shape"] == "chains" and query["law"] == "iid"
    lab = _lab_table(at).set_index("method")["E[τ]"]
    trees = open_page("pages/draft_trees.py", query=query)
    no_errors(trees)
    assert figure(trees, f"chains {query['K']}×{query['L']} drafted by iid")
    table = next(d.value for d in trees.dataframe if "fraction" in d.value.columns)
    shown = table.set_index(table["verifier"].str.split(" ").str[0])["E[τ]"]
    assert shown["traversal"] == pytest.approx(lab["Traversal"], abs=1e-12)
    assert shown["rrs"] == pytest.approx(lab["SpecInfer"], abs=1e-12)       # rrs is SpecInfer's rule


# ------------------------------------------------------------------------------------------------

BEST = ["Traversal", "OTV", "TD-optimal"]


def _start_links() -> dict[str, tuple[str, dict]]:
    """The start page's preset links: label → (page, query parameters)."""
    from urllib.parse import parse_qsl
    at = open_page("pages/start.py")
    return {l.proto.label: (l.proto.page, dict(parse_qsl(l.proto.query_string)))
            for l in at.get("page_link") if l.proto.query_string}


@pytest.mark.parametrize("preset", ["binary-toy", "several-drafts", "gbv-lossless"])
def test_every_preset_shows_traversal_otv_and_td_optimal_even_after_they_were_removed(preset):
    at = open_page("pages/toy_lab.py", query={"preset": preset})
    no_errors(at)
    table = _lab_table(at).set_index("method")
    assert set(BEST) <= set(table.index)
    assert all(table.loc[m, "lossless?"] == "yes" for m in BEST)
    at.sidebar.multiselect(key="toy_methods").set_value(["sd", "bv"]).run()
    assert set(_lab_table(at)["method"]) == {"SD", "BV"}
    again = open_page("pages/toy_lab.py", query={"preset": preset},
                      state={"toy_methods": ["sd", "bv"]})     # a session that had removed them
    assert list(_lab_table(again)["method"]) == ["SD", "BV", *BEST]


def test_start_links_open_with_the_best_rules_and_several_drafts_on_e_tau_against_K():
    links = _start_links()
    assert links["Why several drafts help"] == ("toy_lab", {"preset": "several-drafts", "section": "drafts"})
    page, query = links["Why several drafts help"]
    at = open_page(f"pages/{page}.py", query=query)
    no_errors(at)
    from pages.ui.toy_config import LAB_SECTIONS
    assert at.session_state["lab_section"] == LAB_SECTIONS["drafts"]
    vs_K = figure(at, "against the number of drafts K")
    # the few curves that tell the story, every K computed, and the rest a toggle away
    from core.rules.registry import REGISTRY, STORY_RULES
    names = [figures.own_name(t["name"]) for t in vs_K["data"]]      # "RBV = Traversal here": RBV
    assert names == [REGISTRY[m].short for m in STORY_RULES] + ["LP optimum (best lossless verifier)"]
    for t in vs_K["data"]:
        assert list(t["x"]) == list(range(1, at.session_state["lab_kmax"] + 1))      # every K shown, computed
    assert at.toggle(key="lab_every").value is False
    for label in ("The binary toy, two drafts", "Is SpecTr-GBV lossless?"):
        page, query = links[label]
        at = open_page(f"pages/{page}.py", query=query)
        no_errors(at)
        if page == "toy_lab":
            assert set(BEST) <= set(_lab_table(at)["method"])
        else:          # the claims page shows them for scale beside SpecTr-GBV's E[τ] against K
            assert set(BEST) <= {figures.own_name(t["name"])
                                 for t in figure(at, "against the number of drafts K")["data"]}


def test_binary_toy_configuration_line_names_L_once():
    at = open_page("pages/toy_lab.py", query={"preset": "binary-toy"})
    slider(at, "toy_L").set_value(3).run()
    no_errors(at)
    line = next(m.value for m in at.markdown if m.value.startswith("**Configuration:**"))
    assert "L = 3" in line and "L=2" not in line and "L = 2" not in line
    preset = at.sidebar.selectbox(key="toy_preset")
    assert preset.format_func("binary-toy").endswith("(opens at K = 1, L = 2)")


# ------------------------------------------------------------------------------------------------
# Issue 24, item 8: raw values
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("source,state,which", [
    ("JSON", {"toy_json_p": '{"kind": "iid", "probs": [0.6, 0.5]}'}, "Draft (p)"),
    ("JSON", {"toy_json_q": '{"kind": "iid", "probs": [0.6, 0.5]}'}, "Target (q)"),
])
def test_a_model_error_names_the_model_it_is_about(source, state, which):
    at = open_page("pages/toy_lab.py", state={"toy_source": source, **state})
    assert not at.exception
    [error] = [e.value for e in at.error]
    assert error == f"{which}: probs sums to 1.1, not 1."


def test_an_edited_table_with_a_negative_entry_names_the_model():
    import pandas as pd
    table = pd.DataFrame({"p (draft)": [0.5, 0.5], "q (target)": [-0.2, 1.2]}, index=["token 0", "token 1"])
    at = open_page("pages/toy_lab.py", state={"toy_source": "Edit p and q (table)", "toy_edit_V": 2,
                                              "toy_table_2": table, "toy_normalize": False})
    assert not at.exception
    [error] = [e.value for e in at.error]
    assert error.startswith("Target (q): ")


# ------------------------------------------------------------------------------------------------
# Issue 24, item 3: the live decoder's comparison
# ------------------------------------------------------------------------------------------------

def test_live_decoder_keeps_the_chosen_methods_across_a_pair_switch(tiny_pair, tmp_path):
    """Generate, switch to another pair (the run stops at "Press Generate", without the comparison's
    controls), Generate: "Methods" still holds the methods chosen before (the browser, where
    Streamlit forgets an undrawn widget's value, is tests/test_browser.py)."""
    from tests.apptest import make_tiny_pair
    other = make_tiny_pair(tmp_path / "other")
    at = open_page("pages/live_decoder.py", state={**pair_state(tiny_pair), "dec_max": 8})
    at.button(key="dec_go").click().run()
    at.multiselect(key="dec_compare").set_value(["bv", "otv"]).run()
    at.checkbox(key="dec_baseline").uncheck().run()
    at.sidebar.text_input(key="dec_target").set_value(other[0]).run()
    at.sidebar.text_input(key="dec_draft").set_value(other[1]).run()
    no_errors(at)
    assert not at.multiselect and any("Generate" in i.value for i in at.info)     # not drawn in this run
    at.button(key="dec_go").click().run()
    no_errors(at)
    assert at.session_state["dec_result"]["pair"][0] == other[0]
    assert at.multiselect(key="dec_compare").value == ["bv", "otv"]
    assert at.checkbox(key="dec_baseline").value is False
    at.button(key="dec_compare_go").click().run()
    no_errors(at)
    assert list(at.dataframe[-1].value["method"]) == ["BV", "OTV"]


def test_live_decoder_empty_comparison_gets_a_message_not_an_empty_chart(tiny_pair, monkeypatch):
    at = open_page("pages/live_decoder.py", state={**pair_state(tiny_pair), "dec_max": 8})
    at.button(key="dec_go").click().run()
    at.multiselect(key="dec_compare").set_value([]).run()
    no_errors(at)
    assert any("Choose at least one method" in i.value for i in at.info)
    assert at.button(key="dec_compare_go").disabled
    # every speculative run fails: the table keeps the target alone, and no empty acceptance chart
    from pages.ui import generation
    real = generation.generate

    def fails(pair, method, *args, **kw):
        if method != "autoregressive":
            raise RuntimeError("boom")
        return real(pair, method, *args, **kw)

    monkeypatch.setattr(generation, "generate", fails)
    at.multiselect(key="dec_compare").set_value(["bv"]).run()
    at.button(key="dec_compare_go").click().run()
    assert not at.exception and any(e.value.startswith("BV on chains 2×4, iid: ") and "RuntimeError" in e.value
                                    for e in at.error), [e.value for e in at.error]
    assert list(at.dataframe[-1].value["method"]) == ["Target alone"]
    assert any("No speculative run finished" in i.value for i in at.info)
    titles = [f["layout"]["title"]["text"] for f in figures_json(at)]
    assert sum("Acceptance per draft position" in t for t in titles) == 1   # the generation's own, not the comparison's


# ------------------------------------------------------------------------------------------------
# Issue 27, item 7: the live decoder drafts every shape and law
# ------------------------------------------------------------------------------------------------

def tree_nodes(fig: dict) -> dict[str, list]:
    """The node markers of a drawn draft tree, per legend group (the extra token's star left out)."""
    return {t["name"]: list(t["x"]) for t in fig["data"] if t.get("mode") == "markers+text"
            and t.get("name") != "extra token (correction or bonus)"}


def edge_count(fig: dict, name: str) -> int:
    """How many edges the tree's line trace ``name`` draws (each is x0, x1, None)."""
    return sum(len(t["x"]) // 3 for t in fig["data"] if t.get("name") == name and t.get("mode") == "lines")


def test_live_decoder_static_topk_tree_at_T0_is_the_targets_greedy_text(tiny_pair):
    """A static tree b = (2, 2, 1) drafted by topk, verified by rrs at T = 0, gives the target's own
    greedy tokens; any iteration's tree is drawn with every node, its accepted path, deterministic
    edges only, and its time split sums to the iteration's time."""
    from core.decoding import AutoregressiveDecoder, SamplingConfig, load_pair

    at = open_page("pages/live_decoder.py", state={**pair_state(tiny_pair), "dec_shape": "tree", "dec_b": "2,2,1",
                                                    "dec_law": "topk", "dec_T": 0.0, "dec_method": "specinfer",
                                                    "dec_max": 16, "dec_prompt": "def main():\n"})
    no_errors(at)
    assert any(c.value.startswith("Draft: b = (2, 2, 1), topk, at most 10 tokens") for c in at.caption)
    fixed = {s.label: s for s in at.slider if s.label in ("Drafts K", "Length L")}
    assert all(s.disabled for s in fixed.values())                          # b fixes them, as b gives them
    assert (fixed["Drafts K"].value, fixed["Length L"].value) == (2, 3)
    at.button(key="dec_go").click().run()
    no_errors(at)
    gen = at.session_state["dec_result"]["generation"]
    greedy = AutoregressiveDecoder(load_pair(*tiny_pair), SamplingConfig(0.0)).generate("def main():\n", 16, 0)
    assert gen.tokens == greedy.tokens and gen.metrics.draft == "b = (2, 2, 1), topk"
    assert gen.metrics.tokens_generated == 16
    no_errors(open_box(at, "dec_tree_open"))
    i = max(range(len(gen.iterations)), key=lambda j: gen.iterations[j].tau)   # the longest accepted path
    if i:
        next(s for s in at.slider if s.label == "Iteration").set_value(i + 1).run()
        no_errors(at)
    it = gen.iterations[i]
    tree = figure(at, f"Iteration {i + 1}: τ = {it.tau}")
    nodes = tree_nodes(tree)
    assert sum(map(len, nodes.values())) == len(it.nodes) == 1 + len(it.edges())
    assert len(nodes.get("accepted sub-block", [])) == it.tau == edge_count(tree, "accepted path")
    assert sorted(nodes.get("accepted sub-block", [])) == list(range(1, it.tau + 1))   # one per depth
    assert edge_count(tree, "sampled edges") == 0          # topk: every child is a rank of p
    split = figure(at, f"Iteration {i + 1}: where its")
    parts = {t["name"]: t["x"][0] for t in split["data"]}
    assert list(parts) == ["draft", "target", "verify", "cache", "other"]
    assert sum(parts.values()) == pytest.approx(1e3 * it.iteration_s)
    assert f"{1e3 * it.iteration_s:.2f} ms" in split["layout"]["title"]["text"]


def test_live_decoder_wor_tree_and_dynamic_tree_run_and_compare(tiny_pair):
    """A static tree drafted by wor at T = 0.7 runs (its children sampled: dotted edges), EAGLE-2's
    dynamic tree runs within its budget, and the comparison runs each method on each draft it is
    defined on, naming the pairs it did not run."""
    at = open_page("pages/live_decoder.py", state={**pair_state(tiny_pair), "dec_shape": "tree", "dec_b": "2,2",
                                                    "dec_law": "wor", "dec_T": 0.7, "dec_method": "traversal",
                                                    "dec_max": 12})
    at.button(key="dec_go").click().run()
    no_errors(at)
    gen = at.session_state["dec_result"]["generation"]
    assert gen.metrics.draft == "b = (2, 2), wor" and gen.metrics.law == "wor" and gen.metrics.tokens_generated == 12
    assert all(len(it.edges()) == 6 for it in gen.iterations)    # wor draws distinct tokens: 2 + 2·2 nodes
    no_errors(open_box(at, "dec_tree_open"))
    tree = figure(at, "Iteration 1: τ =")
    it = gen.iterations[0]
    assert edge_count(tree, "sampled edges") + edge_count(tree, "accepted path") == 6   # every child sampled

    at.radio(key="dec_shape").set_value("dynamic").run()
    at.number_input(key="dec_budget").set_value(6).run()
    no_errors(at)
    assert slider(at, "dec_width").label == "Width K"
    law = at.selectbox(key="dec_law_dynamic")
    assert law.disabled and law.value == "topk" and at.session_state["dec_law"] == "wor"   # kept for the other shapes
    at.button(key="dec_go").click().run()
    no_errors(at)
    gen = at.session_state["dec_result"]["generation"]
    assert gen.metrics.draft == "dynamic tree of 6 nodes, depth 4, top-4" and gen.metrics.law == "topk"
    assert all(1 <= len(it.edges()) <= 6 for it in gen.iterations)
    assert figure(at, "Iteration 1: τ =")                   # the box stays open: the new run's tree

    at.multiselect(key="dec_compare_drafts").set_value(["above", "chains"]).run()
    at.multiselect(key="dec_compare").set_value(["bv", "traversal"]).run()
    no_errors(at)
    assert any(i.value.startswith("Not run, the rule being defined on K i.i.d. chains only: "
                                  "BV on dynamic tree of 6 nodes") for i in at.info), [i.value for i in at.info]
    at.button(key="dec_compare_go").click().run()
    no_errors(at)
    table = at.dataframe[-1].value
    assert list(zip(table["method"], table["draft"].fillna(""))) == [
        ("Traversal", "dynamic tree of 6 nodes, depth 4, top-4"), ("BV", "chains 4×4, iid"),
        ("Traversal", "chains 4×4, iid"), ("Target alone", "")]
    compared = [f for f in figures_json(at) if f["layout"]["title"]["text"].startswith("Acceptance per")][-1]
    assert [t["name"] for t in compared["data"]] == [
        "Traversal · dynamic tree of 6 nodes, depth 4, top-4", "BV · chains 4×4, iid", "Traversal · chains 4×4, iid"]
    assert [t["marker"]["pattern"]["shape"] for t in compared["data"]] == ["", "/", "/"]   # a pattern per draft


def test_live_decoder_every_shape_runs_with_its_defaults(tiny_pair):
    """Each shape with the other controls at their defaults generates: RBV (the default rule) on
    i.i.d. chains 2×4; on the static tree b = (2, 2, 1) by iid and on EAGLE-2's dynamic tree of 16
    nodes (depth 4, width 4) the rule switches to traversal and says so in one line; the comparison
    then offers the token-tree rules and runs its default, the two lossless ones, with nothing "Not run"."""
    at = open_page("pages/live_decoder.py", state={**pair_state(tiny_pair), "dec_max": 8})
    no_errors(at)
    assert (slider(at, "dec_T").value, slider(at, "dec_T").proto.step) == (0.6, 0.05)
    for shape, method, draft in (("chains", "rbv", "chains 2×4, iid"), ("tree", "traversal", "b = (2, 2, 1), iid"),
                                 ("dynamic", "traversal", "dynamic tree of 16 nodes, depth 4, top-4")):
        at.radio(key="dec_shape").set_value(shape).run()
        no_errors(at)
        assert at.selectbox(key="dec_method").value == method
        switched = [i.value for i in at.info if "chains only" in i.value]
        assert switched == ([] if shape == "chains" else
                            ["RBV is defined on K i.i.d. chains only: Traversal, a lossless rule on token trees, "
                             "verifies this draft."])
        assert not at.button(key="dec_go").disabled
        at.button(key="dec_go").click().run()
        no_errors(at)
        assert at.session_state["dec_result"]["generation"].metrics.draft == draft
        assert at.button(key="dec_go")                    # Generate stays on the page
    assert at.multiselect(key="dec_compare").options == ["SpecInfer", "Traversal", "Typical", "EAGLE"]
    assert at.multiselect(key="dec_compare").value == ["specinfer", "traversal"]
    assert not [i.value for i in at.info if i.value.startswith("Not run")]
    at.checkbox(key="dec_baseline").uncheck().run()
    at.button(key="dec_compare_go").click().run()
    no_errors(at)
    assert list(at.dataframe[-1].value["method"]) == ["SpecInfer", "Traversal"]


def test_live_decoder_every_option_runs_with_the_other_controls_at_their_defaults(tiny_pair):
    """Every law on chains and on the static tree, and every width, depth and budget of the dynamic
    tree, taken alone, gives a draft the (possibly switched) rule verifies: no refusal, Generate on.
    A budget above the candidates is taken down to them and said: width 2 at depth 4 has
    2 + 3·2² = 14 candidates, width 1 has 1 + 3·1 = 4, depth 1 with width 4 has the root's 4."""
    at = open_page("pages/live_decoder.py", state=pair_state(tiny_pair))
    no_errors(at)
    defaults = dict(dec_shape="chains", dec_law="iid", dec_width=4, dec_L=4, dec_budget=16, dec_K=2, dec_method="rbv")
    assert {k: at.session_state[k] for k in defaults} == defaults
    cases = [dict(dec_shape=shape, dec_law=law) for shape in ("chains", "tree") for law in ("iid", "wor", "topk", "greedy")]
    cases += [dict(dec_shape="dynamic", dec_width=w) for w in range(1, 9)]
    cases += [dict(dec_shape="dynamic", dec_L=d) for d in range(1, 9)]
    cases += [dict(dec_shape="dynamic", dec_budget=n) for n in (1, 16, 52, 53, 64)]
    cases += [dict(dec_shape="chains", dec_K=k) for k in (1, 8)] + [dict(dec_shape="chains", dec_L=d) for d in (1, 8)]
    captions = {}
    for case in cases:
        for k in ("dec_shape", "dec_law", "dec_width", "dec_L", "dec_budget", "dec_K"):   # the page sets the rule
            at.session_state[k] = defaults[k]
        for k, v in case.items():
            at.session_state[k] = v
        at.run()
        no_errors(at)
        assert not at.button(key="dec_go").disabled, case
        assert at.selectbox(key="dec_method").value == ("rbv" if case.get("dec_shape") == "chains" and
                                                        case.get("dec_law", "iid") == "iid" else "traversal"), case
        captions[tuple(case.items())] = next(c.value for c in at.caption if c.value.startswith("Draft:"))
    said = lambda n, d, w: f"The budget 16 is more than the {n} candidates of depth {d} and width {w}: the tree drafts them all."  # noqa: E731
    assert said(14, 4, 2) in captions[(("dec_shape", "dynamic"), ("dec_width", 2))]
    assert said(4, 4, 1) in captions[(("dec_shape", "dynamic"), ("dec_width", 1))]
    assert said(4, 1, 4) in captions[(("dec_shape", "dynamic"), ("dec_L", 1))]
    assert "candidates" not in captions[(("dec_shape", "dynamic"), ("dec_width", 3))]    # 3 + 3·9 = 30 ≥ 16
    assert captions[(("dec_shape", "dynamic"), ("dec_budget", 53))].startswith(
        "Draft: dynamic tree of 52 nodes, depth 4, top-4")                                # 4 + 3·4² = 52
    topk = captions[(("dec_shape", "tree"), ("dec_law", "topk"))]
    assert "accepts the child of rank k with q(x_k)" in topk
    assert "q(x_k)" not in captions[(("dec_shape", "tree"), ("dec_law", "iid"))]


def test_live_decoder_every_rule_offered_generates_on_the_default_drafts(tiny_pair):
    """Every rule the Method box offers generates on the default chains (all of them) and on the
    default static tree (the token-tree rules), as do T = 0 and T = 2 with RBV."""
    from core.data.shapes import Shape
    from core.decoding.plans import tree_rules
    from core.rules.registry import REGISTRY
    from pages.ui import generation

    at = open_page("pages/live_decoder.py", state={**pair_state(tiny_pair), "dec_max": 8})
    runs = [("chains", m, None) for m in generation.decoder_methods()]
    runs += [("tree", m, None) for m in tree_rules(generation.decoder_methods())
             if REGISTRY[m].supports(Shape.tree((2, 2, 1)), "iid")]      # a released port: its engine's drafts
    runs += [("chains", "rbv", 0.0), ("chains", "rbv", 2.0)]
    for shape, method, T in runs:
        at.radio(key="dec_shape").set_value(shape).run()
        at.selectbox(key="dec_method").set_value(method).run()
        slider(at, "dec_T").set_value(0.6 if T is None else T).run()
        at.button(key="dec_go").click().run()
        no_errors(at)
        m = at.session_state["dec_result"]["generation"].metrics
        assert (m.method, m.draft) == (method, "chains 2×4, iid" if shape == "chains" else "b = (2, 2, 1), iid")
        assert 1 <= m.tokens_generated <= 8


def test_live_decoder_settings_are_a_link(tiny_pair):
    """The settings are written to the URL, and a fresh session opened on it shows them again: the
    static tree and the dynamic tree (the keys each shape reads), the comparison's choice too."""
    at = open_page("pages/live_decoder.py", state={**pair_state(tiny_pair), "dec_max": 8})
    at.radio(key="dec_shape").set_value("tree").run()
    at.text_input(key="dec_b").set_value("3,1").run()
    at.selectbox(key="dec_law").set_value("wor").run()
    at.selectbox(key="dec_method").set_value("specinfer").run()
    slider(at, "dec_T").set_value(0.35).run()
    at.number_input(key="dec_seed").set_value(7).run()
    at.button(key="dec_go").click().run()
    at.multiselect(key="dec_compare_drafts").set_value(["above", "chains"]).run()
    at.multiselect(key="dec_compare").set_value(["bv", "traversal"]).run()
    no_errors(at)
    url = {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    assert url == {"pair": "local", "target": tiny_pair[0], "draft": tiny_pair[1], "prompt": "import os\n\n\ndef main():\n",
                   "shape": "tree", "b": "3,1", "law": "wor", "method": "specinfer", "T": "0.35", "tokens": "8",
                   "seed": "7", "compare": "bv,traversal", "drafts": "above,chains", "baseline": "1"}
    again = open_page("pages/live_decoder.py", query=url)              # a fresh browser on the link
    no_errors(again)
    assert not again.warning
    assert (again.radio(key="dec_shape").value, again.text_input(key="dec_b").value, again.selectbox(key="dec_law").value,
            again.selectbox(key="dec_method").value, slider(again, "dec_T").value, again.number_input(key="dec_seed").value,
            again.number_input(key="dec_max").value) == ("tree", "3,1", "wor", "specinfer", 0.35, 7, 8)
    assert (again.session_state["dec_compare"], again.session_state["dec_compare_drafts"]) == (["bv", "traversal"],
                                                                                                ["above", "chains"])
    dynamic = {**url, "shape": "dynamic", "budget": "12", "L": "3", "width": "3", "method": "traversal"}
    again = open_page("pages/live_decoder.py", query=dynamic)
    no_errors(again)
    assert (slider(again, "dec_width").value, slider(again, "dec_L").value, again.number_input(key="dec_budget").value) == (3, 3, 12)
    assert any(c.value.startswith("Draft: dynamic tree of 12 nodes, depth 3, top-3") for c in again.caption)
    written = {k: (v[0] if isinstance(v, list) else v) for k, v in again.query_params.items()}
    assert {k: written[k] for k in ("shape", "budget", "L", "width")} == {"shape": "dynamic", "budget": "12", "L": "3", "width": "3"}
    assert "b" not in written and "law" not in written                    # what the dynamic tree does not read


def test_live_decoder_leaves_an_older_url_of_its_own_alone(tiny_pair):
    """A rerun that arrives with an older URL this session wrote (two quick edits: the browser sent
    the second before it had the first run's URL) keeps the controls as they are and writes them."""
    at = open_page("pages/live_decoder.py", state=pair_state(tiny_pair))
    slider(at, "dec_T").set_value(0.35).run()
    older = {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    at.number_input(key="dec_seed").set_value(7).run()
    for k, v in older.items():
        at.query_params[k] = v
    at.run()
    no_errors(at)
    assert (slider(at, "dec_T").value, at.number_input(key="dec_seed").value) == (0.35, 7)
    seed = at.query_params["seed"]
    assert (seed[0] if isinstance(seed, list) else seed) == "7"


def test_live_decoder_refuses_a_bad_link_value_in_one_banner(tiny_pair):
    """Values no control offers are named in one warning and left at their defaults; the rest of
    the link applies and the page runs."""
    query = {"pair": "local", "target": tiny_pair[0], "draft": tiny_pair[1], "shape": "pyramid", "T": "5",
             "method": "nope", "K": "3", "b": "2,x"}
    at = open_page("pages/live_decoder.py", query=query)
    no_errors(at)
    [banner] = [w.value for w in at.warning]
    for bad in ("shape=pyramid", "T=5", "method=nope", "b=2,x"):
        assert f"{bad} is not a value this page offers" in banner.replace("\\", ""), banner
    assert "\n" not in banner
    assert (at.radio(key="dec_shape").value, slider(at, "dec_T").value, slider(at, "dec_K").value) == ("chains", 0.6, 3)
    assert not at.button(key="dec_go").disabled


def test_live_decoder_switches_a_rule_that_cannot_verify_the_draft_and_refuses_a_bad_draft_in_one_sentence(tiny_pair):
    """A chains-only rule on a tree is switched to traversal in one line (the page offers only the
    token-tree rules then); a draft that cannot be drafted is refused in one sentence, and Generate
    stays on the page, disabled."""
    from pages.ui import figures, text
    at = open_page("pages/live_decoder.py", state={**pair_state(tiny_pair), "dec_shape": "tree", "dec_b": "2,2",
                                                    "dec_law": "wor", "dec_method": "bv"})
    no_errors(at)
    assert at.selectbox(key="dec_method").value == "traversal"
    # and TensorRT-LLM's released rule, which runs on trees drafted without replacement (SGLang's and
    # llama.cpp's run on i.i.d. or top-k children only)
    assert at.selectbox(key="dec_method").options == [f"{figures.short(m)}: {text.label(m)}"
                                                     for m in ("specinfer", "traversal", "typical", "eagle", "trtllm_tree")]
    assert [i.value for i in at.info][0] == ("BV is defined on K i.i.d. chains only: Traversal, a lossless rule on "
                                             "token trees, verifies this draft.")
    assert not at.button(key="dec_go").disabled
    for state, says in ((dict(dec_b="2,x"), "b must be whole numbers with commas, such as 2,2,1, not '2,x'."),
                        (dict(dec_b="2,0"), "b_2 must be an integer ≥ 1, got 0."),
                        (dict(dec_b="8,8"), "b = (8, 8), wor drafts 72 tokens")):
        for k, v in state.items():
            at.session_state[k] = v
        at.run()
        assert not at.exception
        [error] = [e.value.replace("\\", "") for e in at.error]          # shown escaped, as text
        assert error.startswith(f"This draft is refused: {says}") and "\n" not in error, error
        assert at.button(key="dec_go").disabled
    at.session_state["dec_shape"] = "chains"
    at.session_state["dec_law"] = "iid"
    at.run()
    assert at.selectbox(key="dec_method").value == "bv"       # back on i.i.d. chains: the reader's rule
    assert not [i.value for i in at.info if "chains only" in i.value]
    at.radio(key="dec_shape").set_value("tree").run()
    at.selectbox(key="dec_method").set_value("specinfer").run()   # the reader's choice on the tree
    at.radio(key="dec_shape").set_value("chains").run()
    no_errors(at)
    assert at.selectbox(key="dec_method").value == "specinfer"
    no_errors(at)                                          # i.i.d. chains: every rule
    assert not at.button(key="dec_go").disabled


def test_lab_gain_by_depth_tab_shows_each_method_beside_sd():
    """The gain-by-depth tab: P(τ ≥ d) of each method and SD's, as a chart and a table; BV on the
    binary toy at L = 2 gains 1/9 at depth 2 only (P(τ ≥ 2) = 11/9 − 2/3 = 5/9 against SD's 4/9)."""
    from pages.ui import figures

    at = open_page("pages/toy_lab.py", query={"preset": "binary-toy", "K": "2", "methods": "bv,traversal",
                                                "section": "depth"})
    no_errors(at)
    fig = figure(at, "Gain by depth")
    bv = next(t for t in fig["data"] if t.get("name") == figures.short("bv"))
    assert bv["y"] == pytest.approx([2 / 3, 5 / 9], abs=1e-12)
    sd = next(t for t in fig["data"] if t.get("name") == "SD (one draft)")
    assert sd["y"] == pytest.approx([2 / 3, 4 / 9], abs=1e-12)
    trav = next(t for t in fig["data"] if t.get("name") == figures.short("traversal"))
    assert sum(trav["y"]) == pytest.approx(115 / 81, abs=1e-12)       # E[τ] (docs/findings.md, K = 2)
    table = markdown_table(at, "| method | d |")     # the last row of each method: depth L = 2
    assert table[figures.short("bv")][:4] == ["2", "0.5556", "0.4444", "0.1111"]
    assert set(table) == {figures.short("bv"), figures.short("traversal")}


def test_lab_gives_sd_in_closed_form_where_its_exact_law_is_too_large():
    """Issue 32, item 7: at a huge V the refusal estimates no enumeration time for SD, whose E[τ] has
    a closed form; the page gives it.  By hand: p uniform on V = 4000 tokens, q = 2/V on the first
    half and 0 on the rest: α = Σ min(p, q) = 2000 · (1/4000) = 1/2, so E[τ] = α + α² = 0.75 at L = 2."""
    V = 4000
    p = json.dumps({"kind": "iid", "probs": [1 / V] * V})
    q = json.dumps({"kind": "iid", "probs": [2 / V] * (V // 2) + [0.0] * (V // 2)})
    at = open_page("pages/toy_lab.py", state={"toy_source": "JSON", "toy_json_p": p, "toy_json_q": q,
                                               "toy_K": 2, "toy_L": 2, "toy_methods": ["sd", "bv", "rbv"]})
    assert not at.exception
    [info] = [i.value for i in at.info if i.value.startswith("SD:")]
    assert info.startswith("SD: E[τ] = 0.7500, in closed form") and "64,000,000,000 sequences" in info
    [warning] = [w.value for w in at.warning if w.value.startswith("Too large")]
    assert "BV (" in warning and "RBV (" in warning and "SD (" not in warning


def test_sd_closed_form_agrees_with_the_exact_analysis():
    """The closed form against the exact law's E[τ] (the node recursion over every output), on
    context-independent and first-order Markov pairs, and the binary toy's 10/9 by hand."""
    from core.analysis.exact import exact_analysis
    from core.rules.token_level import SD
    from toy_models import PRESETS, random_pair
    pr = PRESETS["binary-toy"]
    assert SD.model_expected_tau(pr.draft, pr.target, 1, 2) == pytest.approx(10 / 9, abs=1e-15)
    for kind, V, L, T in (("iid", 4, 3, 1.0), ("markov", 3, 3, 1.0), ("markov", 4, 2, 0.7)):
        d, t = random_pair(kind, V, 0.5, 0.6, 3)
        d, t = d.with_temperature(T), t.with_temperature(T)
        assert SD.model_expected_tau(d, t, 2, L) == pytest.approx(exact_analysis("sd", d, t, 2, L).expected_accepted,
                                                                  abs=1e-12)
    d, t = random_pair("table", 3, 0.5, 0.6, 3)
    assert SD.model_expected_tau(d, t, 2, 2) is None
