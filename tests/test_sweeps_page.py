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
    # cut to what a mean can be: block efficiency from 1 to L + 1 = 5 (issue 24, item 4)
    low, high = np.maximum(stats["mean"] - half, 1.0), np.minimum(stats["mean"] + half, 5.0)
    table = at.dataframe[-1].value
    assert list(table["runs"]) == [2, 2]
    assert [float(v) for v in table["block efficiency, 95% CI low"]] == pytest.approx(low, abs=6e-4)
    assert [float(v) for v in table["block efficiency, 95% CI high"]] == pytest.approx(high, abs=6e-4)
    lines, bands = lines_and_bands(at, "Block efficiency against")
    assert sorted(v for t in bands for v in t["y"]) == pytest.approx(sorted([*low, *high]))
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
    assert data["summary"][0]["block efficiency, 95% CI low"] == pytest.approx(low.iloc[0], abs=1e-9)
    assert sorted({r["prompt"] for r in data["runs"]}) == sorted(PROMPTS)


def test_the_interval_is_students_with_n_minus_one_degrees_of_freedom(tiny_pair, downloads):
    """32 runs per point: mean − t_(0.975, 31)·s/√32, s the sample standard deviation."""
    stats_t = pytest.importorskip("scipy.stats")
    at = run_sweep(tiny_pair, "1", PROMPTS, seeds=16, baseline=False)
    be = pd.DataFrame(at.session_state["sw_result"]["rows"])["block_efficiency"]
    assert len(be) == 32 and be.std() > 0
    lo = json.loads(downloads["sweep_K.json"])["summary"][0]["block efficiency, 95% CI low"]
    assert (be.mean() - lo) / (be.std() / np.sqrt(32)) == pytest.approx(stats_t.t.ppf(0.975, 31), abs=1e-6)


# ------------------------------------------------------------------------------------------------
# Issue 24, item 4: values within the other pages' limits, intervals within what is possible,
# one draft for a single-draft rule
# ------------------------------------------------------------------------------------------------

def _fake_generate(monkeypatch, block_efficiency, tokens_per_second):
    """Replace the decoder with one whose runs have the given block efficiency and tokens/s (by
    method and seed; "autoregressive" for the target alone); returns the list of (method, K) asked."""
    from types import SimpleNamespace

    from pages.ui import generation
    asked = []

    def generate(pair, method, plan, T, prompt, max_new, seed, **kw):
        asked.append((method, 1 if plan is None else plan.K))
        be = 1.0 if method == "autoregressive" else block_efficiency[method][seed]
        metrics = SimpleNamespace(block_efficiency=be, tokens_per_second=tokens_per_second[method][seed],
                                  tokens_generated=8, iterations=4)
        return SimpleNamespace(metrics=metrics, iterations=[SimpleNamespace(expected_tau=None, alpha_star_root=0.5)])

    monkeypatch.setattr(generation, "generate", generate)
    return asked


def test_intervals_are_cut_at_what_a_mean_can_be_and_say_so(tiny_pair, monkeypatch, downloads):
    """BV's block efficiencies 1, 1, 1, 2 over 4 seeds: mean 1.25, s = 0.5, so the t-interval
    1.25 ± t_(0.975, 3)·0.5/2 = 1.25 ± 0.7956 would reach 0.454; it is cut at 1 (a target call yields
    at least one token), its high end 2.0456 kept.  Speedups 0.04, 0.001, 0.001, 0.001 (tokens/s over
    the target alone's 10): mean 0.01075 whose t-interval reaches below 0, cut at 0."""
    from scipy.stats import t

    asked = _fake_generate(monkeypatch, {"bv": [1.0, 1.0, 1.0, 2.0]},
                           {"bv": [0.4, 0.01, 0.01, 0.01], "autoregressive": [10.0] * 4})
    at = run_sweep(tiny_pair, "1", PROMPTS[:1], seeds=4, baseline=True)
    assert ("bv", 1) in asked
    row = at.dataframe[-1].value.iloc[0]
    half = t.ppf(0.975, 3) * 0.5 / 2
    assert float(row["block efficiency"]) == pytest.approx(1.25, abs=5e-4)
    assert float(row["block efficiency, 95% CI low"]) == 1.0
    assert float(row["block efficiency, 95% CI high"]) == pytest.approx(1.25 + half, abs=5e-4)   # 2.046
    speedups = np.array([0.04, 0.001, 0.001, 0.001])
    sp_half = t.ppf(0.975, 3) * speedups.std(ddof=1) / 2
    assert speedups.mean() - sp_half < 0                                  # what the uncut interval says
    assert float(row["speedup, 95% CI low"]) == 0.0
    assert float(row["speedup, 95% CI high"]) == pytest.approx(speedups.mean() + sp_half, abs=5e-4)
    for title, low in (("Block efficiency against", 1.0), ("Speedup over the target alone", 0.0)):
        _, bands = lines_and_bands(at, title)
        assert min(v for v in bands[0]["y"] if v is not None) == low
    text = captions(at)
    assert "Cut at a bound (the block efficiency interval reached below 1 or above L + 1): BV at K = 1." in text
    assert "Cut at a bound (the speedup interval reached below 0): BV at K = 1." in text
    assert "keeps the t-interval's coverage" in text
    assert len(json.loads(downloads["sweep_K.json"])["intervals_cut"]) == 2


def test_a_single_draft_rule_draws_one_draft_whatever_K(tiny_pair, monkeypatch, downloads):
    asked = _fake_generate(monkeypatch, {m: [1.5] for m in ("bv", "rbv", "sd")},
                           {"bv": [5.0], "rbv": [5.0], "sd": [5.0], "autoregressive": [10.0]})
    at = run_sweep(tiny_pair, "1, 2, 3", PROMPTS[:1], seeds=1, baseline=True, methods=("bv", "rbv"))
    assert sorted(k for m, k in asked if m == "bv") == [1, 1, 1]          # one draft at K = 1, 2, 3
    assert sorted(k for m, k in asked if m == "rbv") == [1, 2, 3]
    csv = pd.read_csv(io.StringIO(downloads["sweep_K.csv"]))
    assert csv[csv.method == "bv"][["K", "drafts drawn"]].values.tolist() == [[1, 1], [2, 1], [3, 1]]
    assert csv[csv.method == "rbv"][["K", "drafts drawn"]].values.tolist() == [[1, 1], [2, 2], [3, 3]]
    assert "BV checks one draft, so it draws one whatever K is" in captions(at)       # one rule, singular
    at = run_sweep(tiny_pair, "1, 2", PROMPTS[:1], seeds=1, baseline=False, methods=("sd", "bv"))
    assert "SD and BV check one draft, so they draw one whatever K is" in captions(at)


@pytest.mark.parametrize("axis,values,message", [
    ("K", "2, 100", "K goes from 1 to 8 here, as on the other pages; 100 is outside. Write whole numbers from 1 to 8."),
    ("K", "0", "K goes from 1 to 8 here"),
    ("K", "1.5", "Write the values of K as whole numbers from 1 to 8, separated by commas."),
    ("L", "9", "L goes from 1 to 8 here"),
    ("T", "2.5", "T goes from 0 to 2 here, as on the other pages; 2.5 is outside. Write numbers from 0 to 2."),
    ("T", "x", "Write the values of T as numbers from 0 to 2, separated by commas."),
])
def test_values_outside_the_other_pages_limits_are_refused_in_one_sentence(tiny_pair, axis, values, message):
    at = open_page("pages/sweeps.py", state={**pair_state(tiny_pair), "sw_axis": axis})
    at.text_input(key=f"sw_values_{axis}").set_value(values).run()
    assert not at.exception
    [error] = [e.value for e in at.error]
    assert error.startswith(message) and "\n" not in error
    assert not at.button                                  # nothing to run


def test_repeated_values_are_merged(tiny_pair, monkeypatch):
    asked = _fake_generate(monkeypatch, {"bv": [1.5]}, {"bv": [5.0], "autoregressive": [10.0]})
    at = run_sweep(tiny_pair, "2, 2, 2, 1", PROMPTS[:1], seeds=1, baseline=False)
    assert "Repeated values merged: K = 2 runs once." in captions(at)
    assert "2 generations of up to 8 tokens (2 speculative, 0 target-alone)." in captions(at)
    assert [k for m, k in asked] == [1, 1]                # BV draws one draft at K = 1 and at K = 2
    assert list(at.dataframe[-1].value["K"]) == [1, 2]


def _url(at) -> dict[str, str]:
    return {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}


def test_the_settings_are_a_link_that_opens_them_in_a_new_session(tiny_pair):
    """Issue 32, item 2: the page writes its settings (axis, values, methods, law, fixed K/L/T, tokens,
    seeds, prompts, baseline and the pair) to the URL, and a new session opened on that URL shows
    them; a bad value in a link is named in one banner and the page keeps its own."""
    at = open_page("pages/sweeps.py", state=pair_state(tiny_pair))
    no_errors(at)
    at.radio(key="sw_axis").set_value("L").run()
    at.text_input(key="sw_values_L").set_value("1, 3").run()
    at.multiselect(key="sw_methods").set_value(["specinfer", "traversal"]).run()
    at.selectbox(key="sw_law").set_value("wor").run()
    at.slider(key="sw_K").set_value(3).run()
    at.number_input(key="sw_seeds").set_value(5).run()
    at.text_area(key="sw_prompts").set_value("x = 1\\n").run()
    at.checkbox(key="sw_baseline").uncheck().run()
    no_errors(at)
    url = _url(at)
    assert {k: url[k] for k in ("axis", "values", "methods", "law", "K", "seeds", "prompts", "baseline", "pair")} == {
        "axis": "L", "values": "1, 3", "methods": "specinfer,traversal", "law": "wor", "K": "3", "seeds": "5",
        "prompts": "x = 1\\n", "baseline": "0", "pair": "local"}
    assert (url["target"], url["draft"]) == tiny_pair
    again = open_page("pages/sweeps.py", query=url)                 # a fresh session on the link
    no_errors(again)
    assert not again.warning
    assert again.radio(key="sw_axis").value == "L" and again.text_input(key="sw_values_L").value == "1, 3"
    assert again.multiselect(key="sw_methods").value == ["specinfer", "traversal"]
    assert again.selectbox(key="sw_law").value == "wor" and again.slider(key="sw_K").value == 3
    assert again.number_input(key="sw_seeds").value == 5 and not again.checkbox(key="sw_baseline").value
    assert again.text_area(key="sw_prompts").value == "x = 1\\n"
    assert _url(again) == url
    bad = open_page("pages/sweeps.py", query={**url, "K": "99", "methods": "bv,nope"})
    [banner] = [w.value for w in bad.warning]
    assert "K=99 is not a value this page offers" in banner and "methods=bv,nope" in banner
    assert bad.slider(key="sw_K").value == 2                        # the page's own default


def test_the_default_sweep_has_eighteen_runs_per_point(tiny_pair):
    """Issue 32, item 5: the defaults are chosen for readable bands (pages/sweeps.py says how they were
    measured): K = 1, 2, 4; 64 new tokens; 3 prompts × 6 seeds = 18 runs per point.  BV, SpecTr-GBV
    and RBV at 3 values of K with 18 runs each: 3 · 3 · 18 = 162 speculative generations, and 18 of
    the target alone at the one T."""
    at = open_page("pages/sweeps.py", state=pair_state(tiny_pair))
    no_errors(at)
    assert at.text_input(key="sw_values_K").value == "1, 2, 4"
    assert (at.number_input(key="sw_tokens").value, at.number_input(key="sw_seeds").value) == (64, 6)
    assert at.multiselect(key="sw_methods").value == ["bv", "spectr_gbv", "rbv"]
    assert "180 generations of up to 64 tokens (162 speculative, 18 target-alone)." in captions(at)


def test_every_law_offered_runs_with_the_default_methods(tiny_pair):
    """Issue 32, item 1 on this page: choosing a law other than iid with the default methods (BV,
    SpecTr-GBV, RBV: rules on K i.i.d. chains only) takes them out for the token-tree rules, said in
    one line, instead of refusing the sweep."""
    from core.rules.registry import REGISTRY
    for law in ("wor", "topk", "greedy"):
        at = open_page("pages/sweeps.py", state=pair_state(tiny_pair))
        at.selectbox(key="sw_law").set_value(law).run()
        no_errors(at)
        chosen = at.multiselect(key="sw_methods").value
        # BV reads one chain: a sample of p under wor and greedy, but topk's is p's argmax
        out = "SpecTr-GBV, RBV verify" if law != "topk" else "BV, SpecTr-GBV, RBV verify"
        assert chosen == (["bv"] if law != "topk" else []) + ["specinfer", "traversal"]
        assert all(REGISTRY[m].token_trees or REGISTRY[m].single_draft for m in chosen)
        assert (f"{law} drafts are K chains whose first tokens are not i.i.d.: {out} only i.i.d. "
                "ones and left the methods; SpecInfer, Traversal came in.") in captions(at)
        assert not at.button(key="sw_go").disabled
