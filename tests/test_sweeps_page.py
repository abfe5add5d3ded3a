"""The Sweeps page on a tiny random Llama pair: how many runs each point has, intervals only where
a point has two runs or more and then t-based, readable column names without None cells, and the
prompt text in the downloads (asserted on the table, the figure's traces and the downloaded files)."""
from __future__ import annotations

import io
import json
import math

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("streamlit")
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage  # noqa: E402
from tests.apptest import figure, no_errors, open_page, pair_state  # noqa: E402

PROMPTS = ["def main():\n", "import os\n"]


@pytest.fixture
def downloads(monkeypatch) -> dict[str, str]:
    """The text of every file the page offers for download, by file name."""
    files: dict[str, str] = {}
    load = MemoryMediaFileStorage.load_and_get_id

    def record(self, path_or_data, mimetype, kind, filename=None):
        if filename is not None and isinstance(path_or_data, bytes):
            files[filename] = path_or_data.decode()
        return load(self, path_or_data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    return files


def run_sweep(tiny_pair, values: str, prompts: list[str], seeds: int, baseline: bool, methods=("bv",)):
    at = open_page("pages/sweeps.py", state={**pair_state(tiny_pair), "sw_tokens": 8, "sw_seeds": seeds,
                                             "sw_T": 1.0, "sw_methods": list(methods), "sw_baseline": baseline,
                                             "sw_prompts": "\n".join(p.replace("\n", "\\n") for p in prompts)})
    at.text_input(key="sw_values_K").set_value(values).run()
    at.button(key="sw_go").click().run()
    no_errors(at)
    return at


def lines_and_bands(at, title: str):
    fig = figure(at, title)
    return ([t for t in fig["data"] if t.get("mode") == "lines+markers"],
            [t for t in fig["data"] if t.get("showlegend") is False and t.get("legendgroup")])   # band edges


def captions(at) -> str:
    return " ".join(c.value for c in at.caption)


def test_one_run_per_point_shows_no_interval_and_says_so(tiny_pair):
    at = run_sweep(tiny_pair, "1, 2", PROMPTS[:1], seeds=1, baseline=True)
    table = at.dataframe[-1].value
    assert list(table.columns) == ["method", "K", "runs", "block efficiency", "block efficiency, 95% CI low",
                                   "block efficiency, 95% CI high", "1 + E[τ | drafts]", "speedup",
                                   "speedup, 95% CI low", "speedup, 95% CI high"]
    assert list(table["runs"]) == [1, 1]
    for col in [c for c in table.columns if "95% CI" in c]:
        assert list(table[col]) == ["—", "—"]                  # a dash, not a collapsed interval
    assert not table.isna().any().any() and "None" not in table.astype(str).to_numpy()
    for title in ("Block efficiency against", "Speedup over the target alone"):
        lines, bands = lines_and_bands(at, title)
        assert bands == []
        assert [t["text"] for t in lines] == [["runs: 1", "runs: 1"]]
    text = captions(at)
    assert "Each point averages 1 run" in text and "no confidence interval" in text
    assert "A dash marks a value that does not exist" in text


def test_interval_is_t_based_with_readable_downloads(tiny_pair, downloads):
    at = run_sweep(tiny_pair, "1, 2", PROMPTS, seeds=1, baseline=False)
    runs = pd.DataFrame(at.session_state["sw_result"]["rows"])
    stats = runs.groupby("K")["block_efficiency"].agg(["mean", "std", "count"])
    assert list(stats["count"]) == [2, 2] and (stats["std"] > 0).any()   # a spread to put an interval on
    half = math.tan(0.475 * math.pi) * stats["std"] / math.sqrt(2)   # t_(0.975, 1) = tan(π·0.475): Cauchy
    table = at.dataframe[-1].value
    assert list(table["runs"]) == [2, 2]
    assert [float(v) for v in table["block efficiency, 95% CI low"]] == pytest.approx(stats["mean"] - half, abs=6e-4)
    assert [float(v) for v in table["block efficiency, 95% CI high"]] == pytest.approx(stats["mean"] + half, abs=6e-4)
    lines, bands = lines_and_bands(at, "Block efficiency against")
    assert sorted(v for t in bands for v in t["y"]) == pytest.approx(
        sorted([*(stats["mean"] - half), *(stats["mean"] + half)]))
    assert all(t.startswith("runs: 2<br>95% CI: ") for t in lines[0]["text"])
    assert "Student's t with n − 1 degrees of freedom" in captions(at)
    assert "Each point averages 2 runs" in captions(at)

    csv = pd.read_csv(io.StringIO(downloads["sweep_K.csv"]), keep_default_na=False)
    assert {"method", "K", "prompt", "seed", "block efficiency", "tokens per second", "target calls",
            "1 + E[τ | drafts]"} <= set(csv.columns)
    assert not any("_" in c for c in csv.columns)
    assert sorted(set(csv["prompt"])) == sorted(PROMPTS)                   # the text, not an index

    def no_nan(word):
        raise AssertionError(f"{word} in the JSON")
    data = json.loads(downloads["sweep_K.json"], parse_constant=no_nan)
    assert list(data["summary"][0]) == list(table.columns)
    assert data["summary"][0]["block efficiency, 95% CI low"] == pytest.approx(stats["mean"].iloc[0] - half.iloc[0], abs=1e-9)
    assert sorted({r["prompt"] for r in data["runs"]}) == sorted(PROMPTS)


def test_the_interval_is_students_with_n_minus_one_degrees_of_freedom(tiny_pair, downloads):
    """32 runs per point: mean − t_(0.975, 31)·s/√32, s the sample standard deviation."""
    stats_t = pytest.importorskip("scipy.stats")
    at = run_sweep(tiny_pair, "1", PROMPTS, seeds=16, baseline=False)
    be = pd.DataFrame(at.session_state["sw_result"]["rows"])["block_efficiency"]
    assert len(be) == 32 and be.std() > 0
    lo = json.loads(downloads["sweep_K.json"])["summary"][0]["block efficiency, 95% CI low"]
    assert (be.mean() - lo) / (be.std() / np.sqrt(32)) == pytest.approx(stats_t.t.ppf(0.975, 31), abs=1e-6)
