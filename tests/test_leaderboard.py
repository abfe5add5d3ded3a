"""The Leaderboard page (``pages/leaderboard.py``) with Streamlit's AppTest: a tiny sweep run live on
the embedded Dask cluster gives the serial rows, its figures carry the summary's numbers, an instance
opens in the toy laboratory, a corrupt results folder is one sentence; and the claims page's
counterexample search gives the same rows on the cluster as serially."""
from __future__ import annotations

import json
import re
import tempfile
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("streamlit")
pytest.importorskip("distributed")

from core.claims import spectr_gbv as claims  # noqa: E402
from core.data.laws import is_iid_chains  # noqa: E402
from core.sweep.config import SweepConfig, default_methods  # noqa: E402
from core.claims.spectr_gbv import search_one  # noqa: E402
from core.sweep.engine import map_batches, run_sweep  # noqa: E402
from core.sweep.store import read_results  # noqa: E402
from core.sweep.summary import law_gains, leaderboard, row_shape  # noqa: E402
from core.sweep.work import KEY_COLUMNS, group_columns  # noqa: E402
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
def server_temp(tmp_path_factory) -> Path:
    """The temporary folder of the server while the tiny sweep runs (``tempfile.tempdir``)."""
    return tmp_path_factory.mktemp("server-temp")


@pytest.fixture(scope="module")
def swept(server_temp):
    """The page after running the tiny sweep (shared: the cluster starts once), with the server's
    temporary folders made in ``server_temp``."""
    at = open_page("pages/leaderboard.py", state=TINY)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tempfile, "tempdir", str(server_temp))
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


def test_a_live_sweep_leaves_no_folder_behind_and_shows_no_server_path(swept, server_temp):
    """The sweep's results folder is the app's own, removed once its rows are read, and the page
    names no folder of the server (it named a mkdtemp folder, never removed, on every click)."""
    left = sorted(p.name for p in server_temp.iterdir() if p.name != "dask-scratch-space")   # Dask's own, removed as it stops
    assert left == []
    [origin] = [s.value for s in swept.success]
    assert re.fullmatch(r"4 instances computed in \d+\.\d s on \d+ Dask workers of the cluster inside this app\.",
                        origin), origin


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


DRAFT_METHODS = ["specinfer", "traversal", "bv"]
DRAFT_STATE = {"lb_families": ["iid"], "lb_V": [3], "lb_K": [2], "lb_L": [2], "lb_n": 2, "lb_seed": 7,
               "lb_methods": DRAFT_METHODS, "lb_laws": ["iid", "topk", "greedy"], "lb_budgets": [4]}
DRAFT_CONFIG = SweepConfig(("iid",), (3,), (), (2,), 2, tuple(DRAFT_METHODS), bounds=("lp",), seed=7,
                           laws=("iid", "topk", "greedy"), budgets=(4,))


def table_with(at, column: str) -> pd.DataFrame:
    """The page's one table with this column (AppTest finds dataframes by position only)."""
    [table] = [d.value for d in at.dataframe if column in d.value.columns]
    return table


def test_a_sweep_with_laws_compares_them_at_an_equal_budget():
    """Issue 26, item 4: the page runs a draft sweep (every shape of budget 4 at L = 2, three laws) and
    shows each law's own optimum over the i.i.d. optimum and each rule's share of its own law's
    optimum, with the summary's numbers, and the best shape per budget and law."""
    rows: list[dict] = []
    run_sweep(DRAFT_CONFIG, None, sink=rows.extend)
    serial = pd.DataFrame(rows)
    serial = serial.sort_values([*group_columns(serial), "method"], kind="stable").reset_index(drop=True)
    at = open_page("pages/leaderboard.py", state=DRAFT_STATE)
    assert "--law iid topk greedy --budget 4 --L 2" in at.caption[0].value
    at.button(key="lb_go").click().run()
    no_errors(at)
    frame = at.session_state["lb_result"]["frame"]
    pd.testing.assert_frame_equal(frame, serial, check_exact=True)
    board = leaderboard(serial)
    assert [h.value for h in at.header][2:] == ["3. Draft laws at an equal budget", "4. Two rules, instance by instance",
                                                "5. Where a rule does worst"]
    # each law's own optimum over the i.i.d. optimum: one box per law at n = 4, the pairs' ratios
    fig = figure(at, "Each law's own optimum over the i.i.d. optimum")
    [trace] = [t for t in fig["data"] if t["type"] == "box"]
    assert trace["name"] == "n = 4 drafted tokens" and trace["x"] == ["iid"] * 2 + ["topk"] * 2 + ["greedy"] * 2
    gains = law_gains(serial)
    for law in ("iid", "topk", "greedy"):
        ys = [y for x, y in zip(trace["x"], trace["y"]) if x == law]
        assert ys == gains[gains.law == law].gain.tolist()
        assert all(abs(g - l / i) < 1e-15 for g, l, i in zip(ys, gains[gains.law == law].lp, gains[gains.law == law].lp_iid))
    iid = gains[gains.law == "iid"]
    assert (iid.gain == 1.0).all()            # i.i.d. chains are among iid's shapes of budget 4: the gain is 1
    own = table_with(at, "every shape: mean").set_index("law")
    for e in board["laws"]["own_over_iid"]:
        assert own.loc[e["law"], "mean"] == e["best_shape"]["mean"] and own.loc[e["law"], "min"] == e["best_shape"]["min"]
        assert own.loc[e["law"], "every shape: mean"] == e["per_shape"]["mean"]
    # each rule's share of its own law's optimum: E[τ] over the own-law LP, by law
    shares = figure(at, "E/LP per rule, by law")
    for trace in shares["data"]:
        method = next(m for m in DRAFT_METHODS if figures.short(m) == trace["name"])
        mine = serial[serial.method == method]
        assert trace["x"] == mine.law.tolist() and trace["y"] == mine.ratio_lp.tolist()
    assert {t["name"] for t in shares["data"]} == {figures.short(m) for m in DRAFT_METHODS}
    table = table_with(at, "analyses")
    for e in board["laws"]["shares"]:
        row = table[(table.law == e["law"]) & (table.rule == figures.short(e["method"]))].iloc[0]
        assert row["mean E/LP"] == e["mean"] and row["analyses"] == e["n"]
    topk = next(e for e in board["laws"]["shares"] if (e["law"], e["method"]) == ("topk", "specinfer"))
    assert topk["max_tv"] < 1e-12 and topk["lossless_share"] == 1.0
    bv = [e["law"] for e in board["laws"]["shares"] if e["method"] == "bv"]
    assert bv == ["iid"]                                           # a chains-only rule: iid rows only
    best = table_with(at, "best shape")
    expected = [(e["law"], "LP (ceiling)" if w == "lp" else figures.short(w), " = ".join(v["tied"]), v["mean"])
                for e in board["laws"]["best_shapes"] for w, v in e["by"].items()]
    assert list(zip(best.law, best["of"], best["best shape"], best["mean E[τ]"])) == expected
    iid_ceiling = next(x[2] for x in expected if x[:2] == ("iid", "LP (ceiling)"))
    assert set(iid_ceiling.split(" = b")) == {"chains 2×2", " = (2, 1)"}    # the two draft alike under iid
    # a row that is not K i.i.d. chains says what the laboratory will open
    at.selectbox(key="lb_rule").set_value("traversal").run()
    worst = table_with(at, "mismatch")
    assert worst["E/LP"].tolist() == sorted(serial[serial.method == "traversal"].ratio_lp)[:10]
    chains = [is_iid_chains(row_shape(s, b), law) for s, b, law in zip(worst["shape"], worst["branching"], worst["law"])]
    for i in (chains.index(True), chains.index(False)):
        at.selectbox(key="lb_pick").set_value(i).run()
        assert any("drafts K i.i.d. chains" in c.value for c in at.caption) is not chains[i]


def test_a_corrupt_or_missing_results_folder_is_one_sentence(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLORER_RESULTS_ROOT", str(tmp_path))     # the page opens results there only
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


# ------------------------------------------------------------------------------------------------
# Issue 24, item 10: results only from the results root, or uploaded
# ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def results_root_folder(tmp_path_factory):
    """A results root holding the tiny sweep as ``tiny.parquet/`` (written serially, no Dask), and a
    folder outside it with a secret and a results folder of its own."""
    from core.sweep.store import ResultsStore
    base = tmp_path_factory.mktemp("server")
    root = base / "results"
    root.mkdir()
    run_sweep(CONFIG, ResultsStore(root / "tiny.parquet", CONFIG))
    outside = base / "private"
    outside.mkdir()
    (outside / "secret.txt").write_text("not for students")
    run_sweep(CONFIG, ResultsStore(outside / "theirs.parquet", CONFIG))
    return root.resolve(), outside.resolve()


def test_results_paths_resolve_under_the_root_only(results_root_folder, tmp_path):
    """Unit tests of the path check: names under the root are read; "..", absolute paths elsewhere
    and symbolic links out of the root (the folder, or an entry inside it) are refused before
    anything outside is read."""
    from pages.ui import results_root as rr
    root, outside = results_root_folder
    assert rr.resolve("tiny.parquet", root) == root / "tiny.parquet"
    assert rr.resolve(str(root / "tiny.parquet"), root) == root / "tiny.parquet"       # absolute, inside
    assert rr.resolve(" ./tiny.parquet ", root) == root / "tiny.parquet"
    for name, words in (("../private/theirs.parquet", 'names a folder above the results root'),
                        ("tiny.parquet/../../private", 'without ".."'),
                        (str(outside / "theirs.parquet"), "is outside the results root"),
                        ("/etc/passwd", "is outside the results root"),
                        ("", "Name a results folder")):
        with pytest.raises(rr.OutsideResults, match=re.escape(words)):
            rr.resolve(name, root)
    link = tmp_path / "root"
    link.mkdir()
    (link / "theirs.parquet").symlink_to(outside / "theirs.parquet")           # a link to a folder outside
    (link / "secret.txt").symlink_to(outside / "secret.txt")                   # a link to a file outside
    mixed = link / "mixed.parquet"
    mixed.mkdir()
    (mixed / "part-x.parquet").symlink_to(outside / "secret.txt")              # a link inside a folder
    for name in ("theirs.parquet", "secret.txt"):
        with pytest.raises(rr.OutsideResults, match="is outside the results root"):
            rr.resolve(name, link)
    with pytest.raises(rr.OutsideResults, match="holds a link to a file outside the results root"):
        rr.resolve("mixed.parquet", link)
    (link / "again.parquet").symlink_to(link / "mixed.parquet")                 # a link within the root: fine
    with pytest.raises(rr.OutsideResults, match="holds a link"):
        rr.resolve("again.parquet", link)                                        # …but its content is checked
    frame = rr.read("tiny.parquet", root)
    pd.testing.assert_frame_equal(frame, read_results(root / "tiny.parquet"))


def test_the_results_root_is_the_variable_or_results_under_the_working_folder(tmp_path, monkeypatch):
    from pages.ui import results_root as rr
    monkeypatch.delenv(rr.ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert rr.root() == (tmp_path / "results").resolve() and rr.shown_root() == "results/"
    monkeypatch.setenv(rr.ENV, str(tmp_path / "elsewhere"))
    assert rr.root() == (tmp_path / "elsewhere").resolve() and rr.shown_root() == "$EXPLORER_RESULTS_ROOT/"


def test_the_page_opens_results_under_the_root_and_refuses_the_rest_in_one_sentence(results_root_folder,
                                                                                   monkeypatch, tmp_path):
    from pages.ui import text
    root, outside = results_root_folder
    monkeypatch.setenv("EXPLORER_RESULTS_ROOT", str(root))
    at = open_page("pages/leaderboard.py", state={"lb_source": "Open a results folder"})
    assert "results root" in at.text_input(key="lb_path").help
    link = root / "link.parquet"
    if not link.exists():
        link.symlink_to(outside / "theirs.parquet")
    for name, words in (("../private/theirs.parquet", "above the results root"),
                        (str(outside / "theirs.parquet"), "is outside the results root"),
                        ("/etc/passwd", "is outside the results root"),
                        ("link.parquet", "is outside the results root")):
        at.text_input(key="lb_path").set_value(name).run()
        at.button(key="lb_open").click().run()
        assert not at.exception
        [error] = [e.value for e in at.error]
        assert words in error and "\n" not in error and "not for students" not in error
        assert "lb_result" not in at.session_state and not at.dataframe
    at.text_input(key="lb_path").set_value("tiny.parquet").run()
    at.button(key="lb_open").click().run()
    no_errors(at)
    frame = at.session_state["lb_result"]["frame"]
    assert len(frame) == 4 * len(METHODS)                                   # 2 K × 2 instances × 4 rules
    # a lossless rule's round-off (4e-17) is the 0 it is, never 0.0000000000000000x nor 4e-17
    tiny = frame[(frame.fidelity_tv > 0) & (frame.fidelity_tv < 1e-12)]
    rule = tiny.method.iloc[0]
    at.selectbox(key="lb_rule").set_value(rule).run()
    worst = next(d.value for d in at.dataframe if "TV" in d.value.columns)
    mine = frame[frame.method == rule].sort_values("ratio_lp", kind="stable")
    assert worst["TV"].tolist() == [text.number(v) for v in mine["fidelity_tv"]]
    assert not [v for v in worst["TV"] if re.search(r"e-1[3-9]", v)] and "0" in worst["TV"].tolist()
    board = at.dataframe[0].value.set_index("rule")
    assert board.loc[figures.short(rule), "max TV"] == text.number(mine["fidelity_tv"].max())
    lossy = frame[frame.fidelity_tv > 1e-3].fidelity_tv.iloc[0]              # a real TV keeps its digits
    assert text.number(lossy) == f"{lossy:.4f}"


def test_an_uploaded_results_file_opens_and_anything_else_is_one_sentence(results_root_folder, tmp_path):
    root, _ = results_root_folder
    parts = sorted((root / "tiny.parquet").glob("part-*.parquet"))
    at = open_page("pages/leaderboard.py", state={"lb_source": "Upload results"})
    assert not at.get("text_input")                       # no path to type on this source
    upload = at.get("file_uploader")[0]
    upload.set_value([(p.name, p.read_bytes(), "application/octet-stream") for p in parts]).run()
    at.button(key="lb_open_upload").click().run()
    no_errors(at)
    pd.testing.assert_frame_equal(at.session_state["lb_result"]["frame"], read_results(root / "tiny.parquet"))
    assert at.success[0].value.startswith(f"Results read from {len(parts)} uploaded file")

    import pyarrow as pa
    import pyarrow.parquet as pq
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"x": [1, 2]}), other)
    no_models = tmp_path / "no_models.parquet"
    pq.write_table(pa.Table.from_pandas(read_results(root / "tiny.parquet").drop(columns=["draft"])), no_models)
    for name, data, words in (("../../etc/evil.parquet", b"PAR1 not parquet", "is not a readable sweep results file"),
                              ("other.parquet", other.read_bytes(), "is not a sweep results file (no column"),
                              ("no_models.parquet", no_models.read_bytes(), "(no column 'draft')")):
        at.get("file_uploader")[0].set_value((name, data, "application/octet-stream")).run()
        at.button(key="lb_open_upload").click().run()
        assert not at.exception
        [error] = [e.value for e in at.error]
        assert words in error and "\n" not in error and "explorer-upload-" not in error
        assert "lb_result" not in at.session_state
    assert not list(Path(tempfile.gettempdir()).glob("explorer-upload-*"))         # nothing left behind


def _url(at) -> dict[str, str]:
    return {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}


def test_a_link_restores_the_sweep_settings_and_never_the_scheduler():
    """Issue 32, item 2: the sweep's settings are in the URL and a new session on it shows them; the
    Dask scheduler is never in a link (a link must not choose where the server connects); a bad
    value is named in one banner."""
    at = open_page("pages/leaderboard.py", state={**TINY, "lb_scheduler": "tcp://127.0.0.1:9"})
    no_errors(at)
    url = _url(at)
    assert {k: url[k] for k in ("source", "families", "V", "K", "L", "n", "seed", "methods", "laws", "budgets")} == {
        "source": "run", "families": "iid", "V": "2", "K": "1,2", "L": "1", "n": "2", "seed": "7",
        "methods": ",".join(METHODS), "laws": "", "budgets": ""}
    assert not any("scheduler" in k or "tcp" in v for k, v in url.items())
    again = open_page("pages/leaderboard.py", query={**url, "scheduler": "tcp://10.0.0.1:8786"})
    no_errors(again)
    assert not again.warning
    assert again.multiselect(key="lb_K").value == [1, 2] and again.number_input(key="lb_seed").value == 7
    assert again.multiselect(key="lb_methods").value == METHODS
    assert again.sidebar.text_input(key="lb_scheduler").value != "tcp://10.0.0.1:8786"
    bad = open_page("pages/leaderboard.py", query={**url, "K": "9", "source": "elsewhere"})
    [banner] = [w.value for w in bad.warning]
    assert "K=9 is not a value this page offers" in banner and "source=elsewhere" in banner


def test_a_link_opens_a_results_folder_under_the_root_and_refuses_one_outside(results_root_folder, monkeypatch):
    """Issue 32, item 2: a link naming a results folder under the root opens it with the views it
    names; one naming a folder outside the root is refused in one banner, nothing of it read."""
    root, outside = results_root_folder
    monkeypatch.setenv("EXPLORER_RESULTS_ROOT", str(root))
    at = open_page("pages/leaderboard.py", query={"source": "folder", "path": "tiny.parquet", "rule": "rbv",
                                                   "a": "sd", "b": "bv"})
    no_errors(at)
    assert len(at.session_state["lb_result"]["frame"]) == 4 * len(METHODS)
    assert (at.selectbox(key="lb_rule").value, at.selectbox(key="lb_a").value, at.selectbox(key="lb_b").value) == \
        ("rbv", "sd", "bv")
    url = _url(at)
    assert (url["source"], url["path"], url["rule"], url["a"], url["b"]) == ("folder", "tiny.parquet", "rbv", "sd", "bv")
    again = open_page("pages/leaderboard.py", query=url)                # the refresh: a new session
    no_errors(again)
    assert again.selectbox(key="lb_rule").value == "rbv"
    for path, words in (("../private/theirs.parquet", "above the results root"),
                        (str(outside / "theirs.parquet"), "is outside the results root")):
        bad = open_page("pages/leaderboard.py", query={"source": "folder", "path": path})
        [error] = [e.value for e in bad.error]
        assert words in error and "\n" not in error and "lb_result" not in bad.session_state


def test_a_fresh_checkout_opens_the_example_sweep_from_a_link(tmp_path, monkeypatch):
    """The lecture's leaderboard link needs no results folder: ``?source=example&rule=traversal`` opens
    the sweep shipped with the app at once, with an empty results root, and lists Traversal's ten
    worst instances, lowest E/LP first."""
    from core.sweep.store import ResultsStore  # noqa: F401  (the shipped folder is a store's folder)
    from pages.ui import results_root
    monkeypatch.setenv("EXPLORER_RESULTS_ROOT", str(tmp_path))          # nothing under it
    at = open_page("pages/leaderboard.py", query={"source": "example", "rule": "traversal"})
    no_errors(at)
    assert at.session_state["lb_source"] == "Open the example sweep"
    assert any("example sweep shipped with the app" in m.value for m in at.success)
    frame = results_root.read_example()
    assert len(frame) == 60 * len(default_methods()) and set(frame.method) == set(default_methods())
    worst = next(d.value for d in at.dataframe if "E/LP" in d.value.columns and "TV" in d.value.columns)
    mine = frame[frame.method == "traversal"].sort_values("ratio_lp", kind="stable").head(10)
    assert worst["E/LP"].tolist() == pytest.approx(mine["ratio_lp"].tolist(), abs=1e-12) and len(worst) == 10
    assert at.query_params["source"] == "example" and at.query_params["rule"] == "traversal"


def test_the_example_sweep_is_what_the_sweep_computes_now():
    """The shipped example sweep (toy_models/sweeps/README.md) is the lab's own: its configuration is the
    one the page proposes, and a few of its instances, recomputed now, give its rows (every rule's E[τ],
    TV and the LP optimum to 1e-9)."""
    from core.sweep.config import InstanceKey
    from core.sweep.store import ResultsStore
    from core.sweep.work import instance_rows
    from pages.ui import results_root
    shipped = results_root.read_example()
    config = ResultsStore(results_root.EXAMPLE, SweepConfig(("iid", "markov", "near"), (2,), (2, 3), (1, 2), 5,
                                                            tuple(default_methods()), bounds=("lp",), seed=0)).config
    assert config.n == 5 and config.families == ("iid", "markov", "near")
    for key in (InstanceKey("iid", 2, 2, 1, 0), InstanceKey("markov", 2, 3, 2, 4), InstanceKey("near", 2, 2, 2, 2)):
        rows = pd.DataFrame(instance_rows(config, key)).set_index("method")
        kept = shipped[(shipped.family == key.family) & (shipped.K == key.K) & (shipped.L == key.L)
                       & (shipped["index"] == key.index)].set_index("method")
        assert set(rows.index) == set(kept.index)
        for column in ("expected_accepted", "fidelity_tv", "lp"):
            assert rows[column].sort_index().tolist() == pytest.approx(kept[column].sort_index().tolist(), abs=1e-9)
