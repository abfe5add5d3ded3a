"""The toy laboratory reads the LP optimum in node form: its "% of LP optimum" past the per-set LP's
limits, E[τ] against K to K = 64, and what loss buys against the loss-gain frontier.  Expected values
come from the library called directly (``core.bounds``) and from the contract's fractions."""
from __future__ import annotations

import pytest

pytest.importorskip("streamlit")

from core.analysis.exact import LOSSLESS_TOL  # noqa: E402
from core.bounds import check_size, lp_optimum  # noqa: E402
from core.bounds.frontier import frontier  # noqa: E402
from core.bounds.sizes import BoundsTooLarge  # noqa: E402
from toy_models import PRESETS  # noqa: E402
from tests.apptest import figure, no_errors, open_page, section  # noqa: E402

BIN = PRESETS["binary-toy"]


def test_the_optimum_is_shown_past_the_per_set_limits():
    """V = 2, K = 8, L = 4 (the binary toy): 490,314 draft multisets, past the per-set LP's limits
    (the acausal bound is refused, in one sentence), but 31 nodes for the node form: the LP optimum
    and every rule's share of it are shown at once."""
    with pytest.raises(BoundsTooLarge):
        check_size(2, 8, 4)
    at = open_page("pages/toy_lab.py", query={"preset": "binary-toy", "K": "8", "L": "4", "methods": "sd,bv"})
    no_errors(at)
    lp = lp_optimum(BIN.draft, BIN.target, 8, 4).value
    metrics = {m.label: m.value for m in at.metric}
    assert any(v == f"{lp:.4f}" for v in metrics.values()), metrics
    table = at.dataframe[[i for i, d in enumerate(at.dataframe) if "E[τ]" in d.value.columns][0]].value
    shares = dict(zip(table["method"], table["% of LP optimum"]))
    assert shares["SD"] == pytest.approx(100 * (130 / 81) / lp, abs=0.01)
    said = " ".join(i.value for i in at.info)
    assert "The acausal bound is not shown" in said and "The LP optimum is not shown" not in said


def test_e_tau_against_K_draws_the_optimum_to_64():
    at = open_page("pages/toy_lab.py", query={"preset": "binary-toy", "methods": "sd,bv,rbv", "kmax": "64",
                                              "section": "drafts"})
    no_errors(at)
    assert at.query_params["kmax"] == "64"                # the view is a link
    fig = figure(at, "against the number of drafts K")
    lp = next(t for t in fig["data"] if t["name"].startswith("LP optimum"))
    assert list(lp["x"]) == [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 48, 64]
    assert lp["y"][1] == pytest.approx(131 / 81, abs=1e-9) and lp["y"][-1] == pytest.approx(2.0, abs=1e-9)
    assert fig["layout"]["xaxis"]["type"] == "log"
    rbv = next(t for t in fig["data"] if t["name"].startswith("RBV"))
    assert all(e <= v + 1e-9 for K, e in zip(rbv["x"], rbv["y"]) for x, v in zip(lp["x"], lp["y"]) if x == K)


def test_what_loss_buys_against_the_frontier():
    """Binary toy, K = 2, L = 2: the frontier starts at the LP optimum 131/81; typical's two knobs are
    curves of points, HSD and SpecTr-GBV single points, and none lies above the frontier at its TV."""
    at = open_page("pages/toy_lab.py", query={"preset": "binary-toy", "K": "2",
                                              "methods": "sd,bv,rbv,typical,hsd,spectr_gbv"})
    no_errors(at)
    fig = figure(section(at, "loss"), "What loss buys")
    traces = {t["name"]: t for t in fig["data"]}
    front = next(t for name, t in traces.items() if name.startswith("frontier"))
    assert front["x"][0] == 0 and front["y"][0] == pytest.approx(131 / 81, abs=1e-9)
    assert {"Typical: epsilon", "Typical: delta", "HSD", "SpecTr-GBV", "RBV"} <= set(traces)
    for name, t in traces.items():
        if name.startswith("frontier"):
            continue
        for tv, e in zip(t["x"], t["y"]):
            assert e <= frontier(BIN.draft, BIN.target, 2, 2, min(1.0, tv)).upper + 1e-9, name
    assert traces["RBV"]["x"][0] <= LOSSLESS_TOL
    gap = next(m.value for m in at.markdown if "the frontier reaches" in m.value)
    hsd = frontier(BIN.draft, BIN.target, 2, 2, traces["HSD"]["x"][0]).value
    assert f"{hsd:.4f}" in gap


def test_a_large_configuration_says_why_the_frontier_waits():
    at = open_page("pages/toy_lab.py", query={"V": "9", "L": "3", "K": "1", "methods": "sd,typical"})
    no_errors(at)
    section(at, "loss")
    assert any("frontier" in i.value for i in at.info)
