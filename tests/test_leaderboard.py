"""The Leaderboard page (``pages/leaderboard.py``) with Streamlit's AppTest: a tiny sweep run live on
the embedded Dask cluster gives the serial rows, its figures carry the summary's numbers, an instance
opens in the toy laboratory, a corrupt results folder is one sentence; and the claims page's
counterexample search gives the same rows on the cluster as serially."""
from __future__ import annotations

import json
from functools import partial

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("streamlit")
pytest.importorskip("distributed")

from core.analysis import claims  # noqa: E402
from core.sweep.config import SweepConfig, default_methods  # noqa: E402
from core.analysis.claims import search_one  # noqa: E402
from core.sweep.engine import map_batches, run_sweep  # noqa: E402
from core.sweep.summary import leaderboard  # noqa: E402
from core.sweep.work import KEY_COLUMNS  # noqa: E402
from pages.ui import figures, routing  # noqa: E402
from tests.apptest import figure, no_errors, open_page  # noqa: E402

METHODS = ["sd", "bv", "rbv", "spectr_gbv"]
TINY = {"lb_families": ["iid"], "lb_V": [2], "lb_K": [1, 2], "lb_L": [1], "lb_n": 2, "lb_seed": 7, "lb_methods": METHODS}
CONFIG = SweepConfig(("iid",), (2,), (1, 2), (1,), 2, tuple(METHODS), bounds=("lp",), seed=7)


@pytest.fixture(scope="module")
def serial() -> pd.DataFrame:
    """The tiny sweep computed in this process without Dask: the reference rows."""
    rows: list[dict] = []
    run_sweep(CONFIG, None, sink=rows.extend)
    return pd.DataFrame(rows).sort_values([*KEY_COLUMNS, "method"], kind="stable").reset_index(drop=True)


@pytest.fixture(scope="module")
def swept():
    """The page after running the tiny sweep (shared: the cluster starts once)."""
    at = open_page("pages/leaderboard.py", state=TINY)
    at.button(key="lb_go").click().run()
    no_errors(at)
    return at


def test_the_page_renders_and_proposes_a_small_sweep():
    at = open_page("pages/leaderboard.py")
    no_errors(at)
    assert at.title[0].value.startswith("Leaderboard")
    assert any("Run a sweep" in i.value for i in at.info)
    assert at.caption[0].value.startswith(f"60 instances × {len(default_methods())} rules")
    assert not at.get("plotly_chart")


def test_a_live_sweep_gives_the_serial_rows_and_the_summary_numbers(swept, serial):
    at = swept
    frame = at.session_state["lb_result"]["frame"]
    pd.testing.assert_frame_equal(frame, serial, check_exact=True)   # cluster rows = serial rows
    board = leaderboard(serial)
    order = [m["method"] for m in board["methods"]]
    table = at.dataframe[0].value
    assert table["rule"].tolist() == [figures.short(m) for m in order]
    np.testing.assert_array_equal(table["mean E/LP"].to_numpy(), [m["mean"] for m in board["methods"]])
    for by in ("K", "L"):
        fig = figure(at, f"E/LP per rule, by {by}")
        assert [t["name"] for t in fig["data"]] == [figures.short(m) for m in order]
        for trace, m in zip(fig["data"], order):
            rows = serial[serial.method == m]
            assert trace["y"] == rows.ratio_lp.tolist() and trace["x"] == rows[by].tolist()
            for value in set(trace["x"]):                   # the box's mean is the summary's mean
                ys = [y for x, y in zip(trace["x"], trace["y"]) if x == value]
                assert np.mean(ys) == pytest.approx(board["by"][by][str(value)][m], abs=1e-15)
    scatter = figure(at, "per instance")
    a, b = at.session_state["lb_a"], at.session_state["lb_b"]
    assert (a, b) == (order[0], "spectr_gbv")
    points = [t for t in scatter["data"] if t.get("mode") == "markers"]
    xs = [x for t in points for x in t["x"]]
    assert sorted(xs) == sorted(serial[serial.method == a].ratio_lp.tolist())
    assert sum(len(t["y"]) for t in points) == 4                      # 2 K × 2 instances


def test_the_worst_instances_table_starts_with_the_summary_worst(swept, serial):
    at = swept
    at.selectbox(key="lb_rule").set_value("spectr_gbv").run()
    no_errors(at)
    table = at.dataframe[1].value
    mine = serial[serial.method == "spectr_gbv"]
    assert table["E/LP"].tolist() == sorted(mine.ratio_lp.tolist())
    worst = next(m for m in leaderboard(serial)["methods"] if m["method"] == "spectr_gbv")["worst"]
    assert {c: table.iloc[0][c] for c in KEY_COLUMNS} == worst


def test_opening_an_instance_sets_the_toy_configuration_and_switches_to_the_lab(swept, serial):
    at = swept
    at.selectbox(key="lb_rule").set_value("bv").run()
    at.selectbox(key="lb_pick").set_value(1).run()
    second = serial[serial.method == "bv"].sort_values("ratio_lp", kind="stable").iloc[1]
    at.button(key="lb_open_lab").click().run()
    no_errors(at)
    assert at.title[0].value.startswith("Toy laboratory")
    ss = at.session_state
    assert ss["toy_source"] == "JSON" and (ss["toy_K"], ss["toy_L"]) == (second.K, second.L)
    assert json.loads(ss["toy_json_p"]) == json.loads(second.draft)
    assert json.loads(ss["toy_json_q"]) == json.loads(second.target)
    assert "bv" in ss["toy_methods"]
    assert at.get("plotly_chart")


def test_a_corrupt_or_missing_results_folder_is_one_sentence(tmp_path):
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 this is not parquet")
    at = open_page("pages/leaderboard.py", state={"lb_source": "Open a results folder"})
    for path, message in [(bad, "is not a readable sweep results file"), (tmp_path / "missing", "No results at")]:
        at.text_input(key="lb_path").set_value(str(path)).run()
        at.button(key="lb_open").click().run()
        assert not at.exception
        assert len(at.error) == 1 and "\n" not in at.error[0].value and message in at.error[0].value
        assert not at.get("plotly_chart")


def test_the_counterexample_search_gives_the_same_rows_on_the_cluster_as_serially():
    configs = claims.search_configs(3, 8)
    serial = claims.search_counterexamples(3, 8, lp_limit=6_000)
    seen = []
    row = partial(search_one, lp_limit=6_000)
    on_cluster = map_batches(row, configs, client=routing.sweep_client(), batch_size=3,
                             progress=lambda done, total, s: seen.append((done, total)))
    assert on_cluster == serial == map_batches(row, configs)
    assert len(seen) == 3 and {t for _, t in seen} == {8} and max(seen)[0] == 8   # batches of 3, 3, 2
    assert any(r.broken for r in serial) and not all(r.broken for r in serial)
