"""The released-rule ports where the user sees them: the toy laboratory's table (binary toy) and the
One-step page running each of them."""
import pytest

from core.rules.registry import REGISTRY
from tests.apptest import figure, no_errors, open_page

PORTS = ["hsd", "eagle", "exact_match"]


def test_lab_table_shows_the_ports_exact_numbers():
    at = open_page("pages/toy_lab.py", query={"preset": "binary-toy"}, state={"toy_methods": ["bv", *PORTS]})
    no_errors(at)
    table = next(d.value for d in at.dataframe if "E[τ]" in d.value.columns).set_index("method")
    # test_hsd, test_exact_match, test_eagle derive these: HSD 4/3 with TV 1/9; on one chain EAGLE
    # and exact match both accept 4/9 + (4/9)² = 52/81, losslessly
    assert table.loc["HSD", "E[τ] as a fraction"] == "4/3"
    assert table.loc["HSD", "fidelity error (TV)"] == pytest.approx(1 / 9, abs=1e-9)
    assert table.loc["HSD", "lossless?"] != "yes"
    for short in ("EAGLE", "Match"):
        assert table.loc[short, "E[τ] as a fraction"] == "52/81" and table.loc[short, "lossless?"] == "yes"


@pytest.mark.parametrize("method", PORTS)
def test_one_step_runs_each_port(method):
    at = open_page("pages/one_step.py", query={"preset": "several-drafts"})
    at.selectbox(key="step_method").set_value(method).run()
    at.button(key="step_all").click().run()
    no_errors(at)
    assert figure(at, f"{REGISTRY[method].short}: τ")      # the step's result, under the rule's name
    assert figure(at, "Extra token")
