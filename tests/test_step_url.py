"""The One-step page keeps its step in the URL (issue 12 item 7): the draft seed, coin seed, method
and reveal position are written to the query string and restored from it, so a refresh or a copied
link shows the same step; the page offers the command line for its configuration (item 8)."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("streamlit")
from pages.ui import figures  # noqa: E402
from tests.apptest import figure, figures_json, no_errors, open_box, open_page, reveal  # noqa: E402

STEP = {"preset": "several-drafts", "method": "spectr_gbv", "draft_seed": "5", "coin_seed": "2", "shown": "1"}


def _shown(at) -> int:
    return at.session_state["step_pos"]


def test_a_link_opens_the_step_it_names():
    at = open_page("pages/one_step.py", query=STEP)
    no_errors(at)
    assert not at.warning
    assert at.selectbox(key="step_method").value == "spectr_gbv"
    assert at.number_input(key="step_seed").value == 5 and at.number_input(key="step_coin").value == 2
    assert _shown(at) == 1
    assert figure(at, "after test 1")                                # one test revealed, not the ending
    assert not any("same drafts" in f["layout"]["title"]["text"] for f in figures_json(at))
    assert {k: at.query_params[k][0] if isinstance(at.query_params[k], list) else at.query_params[k]
            for k in STEP} == STEP


def test_a_refresh_restores_the_step_after_changes():
    at = open_page("pages/one_step.py", query=STEP)
    at.number_input(key="step_coin").set_value(4).run()
    at.selectbox(key="step_method").set_value("bv").run()
    reveal(at, 0)
    no_errors(at)
    url = {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    assert (url["method"], url["coin_seed"], url["draft_seed"], url["shown"]) == ("bv", "4", "5", "0")
    assert figure(at, "before the first test")
    drafts = at.dataframe[0].value["tokens"].tolist()
    again = open_page("pages/one_step.py", query=url)                  # the refresh: a new session
    no_errors(again)
    assert again.selectbox(key="step_method").value == "bv"
    assert again.number_input(key="step_coin").value == 4
    assert _shown(again) == 0
    assert again.dataframe[0].value["tokens"].tolist() == drafts
    assert figure(again, "before the first test")


def test_a_reveal_position_beyond_the_tests_shows_them_all_and_a_bad_method_is_named():
    at = open_page("pages/one_step.py", query={**STEP, "shown": "999"})
    no_errors(at)
    assert at.button(key="step_next").disabled and at.success[0].value.startswith("Accepted sub-block")  # the ending
    bad = open_page("pages/one_step.py", query={**STEP, "method": "nope"})
    assert any("method=nope" in w.value for w in bad.warning)


def test_the_step_page_exports_charts_and_gives_its_command_line():
    at = open_page("pages/one_step.py", query={**STEP, "shown": "999"})
    no_errors(at)
    charts = at.get("plotly_chart")
    assert len(charts) >= 3
    assert all(json.loads(c.proto.config)["toImageButtonOptions"] == figures.CHART_CONFIG["toImageButtonOptions"]
               for c in charts)
    assert not at.code                                  # drawn only once the reader opens the box
    commands = next(c.value for c in open_box(at, "step_copy").code if c.value.startswith("python -m core exact"))
    assert commands == "python -m core exact --draft p.json --target q.json --K 3 --L 3 --temperature 1 " \
                       "--method spectr_gbv"
