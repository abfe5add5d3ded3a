"""The claims page (issue 12 items 8 and 10): the counterexample search's counts per claim with a
filter, V / T / model families chosen for the search, the O(|Ω|) verdict labelled as a measurement,
best-of-K + BV's drop in K explained where the page shows monotonicity, charts exportable and the
command line that reproduces the verdicts."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("streamlit")
from core.claims import spectr_gbv as claims  # noqa: E402
from pages.ui import cached, figures  # noqa: E402
from tests.apptest import figure, markdown_table, no_errors, open_box, open_page  # noqa: E402

#: A seeded random Markov pair (V = 3) on which best-of-K + BV's E[τ] drops with K at L = 1.
DROPS = {"source": "Seeded random", "kind": "markov", "V": "3", "alpha": "0.5", "mix": "0.3", "seed": "4",
         "K": "2", "L": "1", "T": "1", "tab": "live"}


def _text(at) -> str:
    return " ".join(m.value for m in [*at.markdown, *at.caption, *at.info, *at.subheader])


def test_monotonicity_explains_best_of_k_and_timing_is_labelled_a_measurement():
    at = open_page("pages/claims.py", query=DROPS)
    no_errors(at)
    mono = figure(at, "against the number of drafts K")
    best = next(t for t in mono["data"] if t.get("name") == figures.short("best_of_k_bv"))
    assert best["y"][1] < best["y"][0] - 1e-3                         # it drops from K = 1 to K = 2
    drop = next(i.value for i in at.info if "Best-of-K + BV's E[τ] drops" in i.value)
    assert f"{best['y'][0]:.4f} at K = 1" in drop and "property of the rule as defined, not a bug" in drop
    timing = next(h.value for h in at.subheader if h.value.startswith("Verification in O(|Ω|)"))
    assert timing.endswith("(measured)")
    assert "wall-clock measurement on this machine, not an exact verdict" in _text(at)
    summary = markdown_table(at, "| claim | verdict | how |")          # claim -> [verdict, how]
    assert summary["Verification in O(|Ω|)"][1].startswith("a wall-clock measurement")
    assert summary["Lossless"][1] == "exact"


def test_every_chart_exports_and_the_commands_carry_temperature_and_models():
    at = open_page("pages/claims.py", query={**DROPS, "T": "0.7"})
    no_errors(at)
    charts = at.get("plotly_chart")
    assert len(charts) >= 3
    for c in charts:
        assert json.loads(c.proto.config)["toImageButtonOptions"] == figures.CHART_CONFIG["toImageButtonOptions"]
    assert not at.code                                  # drawn only once the reader opens a box
    open_box(open_box(at, "claims_copy"), "claims_repro")
    code = [c.value for c in at.code]
    assert any(json.loads(c).get("configuration") for c in code if c.startswith("{\n"))
    commands = next(c for c in code if "python -m core exact" in c)
    assert "--temperature 0.7" in commands and "--kind lp" in commands and "--kind cic" in commands
    assert "--draft p.json --target q.json" in commands
    assert any(json.loads(c).get("kind") == "markov" for c in code if c.startswith("{"))


def test_search_uses_the_chosen_V_temperature_and_families_and_counts_per_claim():
    at = open_page("pages/claims.py", query={"preset": "binary-toy", "tab": "search"})
    at.slider(key="claims_trials").set_value(6)
    at.slider(key="claims_search_V").set_value((2, 4))
    at.slider(key="claims_search_T").set_value(0.5)
    at.multiselect(key="claims_search_kinds").set_value(["iid"])
    at.button(key="claims_search").click().run()
    no_errors(at)
    found = at.session_state["claims_found"]
    expected = [claims.search_one(c, lp_limit=cached.LP_AUTO).as_dict()
                for c in claims.search_configs(0, 6, kinds=("iid",), V_range=(2, 4), temperature=0.5)]
    assert found == expected
    assert {r["kind"] for r in found} == {"iid"} and {r["T"] for r in found} == {0.5}
    counts = next(d.value for d in at.dataframe if "configurations that break it" in d.value.columns)
    counts = counts.set_index("claim")["configurations that break it"]
    for claim, start in (("Lossless", "not lossless"), ("Attains its stated E_CIC", "E[τ]")):
        assert counts[claim] == sum(start in r["claims broken"] for r in found) == sum(
            r[f"breaks: {claim}"] for r in found)
    assert counts["Lossless"] >= 1
    at.multiselect(key="claims_filter").set_value(["Lossless"]).run()
    no_errors(at)
    table = next(d.value for d in at.dataframe if "claims broken" in d.value.columns)
    assert len(table) == counts["Lossless"]
    assert all("not lossless" in b for b in table["claims broken"])


def test_every_registered_claim_is_listed_by_source_with_its_verdict_and_a_link():
    """The registry's claims, grouped by source, every verdict at once (the family verdicts as shipped:
    no button, no wait), each with where it is tested (one instance, or a family and its regime), its
    numbers in words, and its instance's link (the laboratory or the Draft trees page)."""
    from core.claims.base import decide
    from core.claims.registry import CLAIMS, SOURCES

    at = open_page("pages/claims.py")
    no_errors(at)
    assert at.session_state["toy_preset"] == "gbv-lossless"        # a plain /claims: the binary toy, K = 2
    assert not [b for b in at.button if b.key == "claims_families"]
    text = " ".join(m.value for m in at.markdown)
    for source in SOURCES.values():                  # titles as written, Markdown's escapes aside
        assert source.title.split(",")[0] in text.replace("\\", "")
    shown = at.session_state["claims_registry"]
    assert set(shown) == {c.key for c in CLAIMS}
    assert shown["greedy-multipath/bv-optimal-k1"] == "holds here"
    for key, words in (("delayed-expansion/delayed-beats-root-premise", "holds on 20 of 20 instances"),
                       ("delayed-expansion/delayed-beats-root", "holds on 0 of 16 instances")):
        fam = next(c for c in CLAIMS if c.key == key)
        assert shown[key] == decide(fam).words == words
    assert "not computed yet" not in text
    assert "(draft_trees?source=JSON" in text and "(toy_lab?source=Preset&preset=binary-toy" in text
    delayed = [line for m in at.markdown for line in m.value.splitlines()
               if line.startswith("| Delaying the branching point improves")]
    # the source's premise first, then a generic family beside it, each labelled
    assert [line.split(" | ")[2].split(":")[0] for line in delayed] == ["the source's premise", "generic"]
    assert "the source's premise: a first token that draft and target share with probability 0.96" in text
    # the numbers read as words, never as the fields the code names them by
    for field in ("over_emission", "min_F", "unattainable", "fidelity_tv", "expected_accepted", "= True", "= False"):
        assert field not in text, field
    assert "E[τ] at K = 1, 2, 3, 4" in text.replace("\\", "")     # "never decreases as K grows" shows its numbers


def test_the_engines_sources_are_listed_under_their_own_heading_after_the_papers():
    """The sources of group ``engines`` (the verification code serving engines ship) come under an
    "Engines" heading after the papers' and trackers', each with its claims; whatever sources have that
    group are listed there, read from the registry."""
    from core.claims.registry import SOURCES

    at = open_page("pages/claims.py")
    no_errors(at)
    headings = [h.value for h in at.subheader]
    assert headings[:2] == ["Papers and trackers", "Engines"]
    engines = [s for s in SOURCES.values() if s.group == "engines"]
    assert {"trtllm", "sglang", "sglang-rocm", "llamacpp", "flashinfer"} <= {s.id for s in engines}
    text = [m.value for m in at.markdown]
    # every engine's title after every paper's: the group's order on the page
    first_engine = min(i for i, t in enumerate(text) for s in engines if t.startswith(f"**{s.title.split(',')[0]}"))
    last_paper = max(i for i, t in enumerate(text) for s in SOURCES.values() if s.group == "papers"
                     and t.startswith(f"**{s.title.split(',')[0]}"))
    assert last_paper < first_engine
    assert any(c.value.startswith("The verification code serving engines ship") for c in at.caption)


def test_the_claims_that_fail_are_one_link():
    """Which recent claims fail?  ``/claims?show=fails`` lists only the claims whose verdict fails here
    (a family's: on some instance), and says how many of how many."""
    from core.claims.base import FAILS, decide
    from core.claims.registry import CLAIMS

    at = open_page("pages/claims.py", query={"show": "fails"})
    no_errors(at)
    n = sum(decide(c).status == FAILS for c in CLAIMS)
    text = " ".join(m.value for m in at.markdown)
    assert f"**{n} of {len(CLAIMS)} claims fail here**" in text and n > 10
    listed = [line for m in at.markdown for line in m.value.splitlines() if line.startswith("| ") and "claim |" not in line]
    assert len(listed) == n and all(":red[" in line for line in listed)
    assert at.query_params["show"] == "fails"


def test_a_family_verdicts_worst_instance_opens_in_the_laboratory_with_its_numbers():
    """The link of greedy multi-path's worst instance, opened in the laboratory, shows the E[τ] the
    verdict reports for best-of-K + BV and BV (the same query as the page's link)."""
    from core.claims.base import decide
    from core.claims.registry import get_claim

    v = decide(get_claim("greedy-multipath/greedy-gain-family"))
    at = open_page("pages/toy_lab.py", query=v.instance.query())
    no_errors(at)
    table = next(d.value for d in at.dataframe if "E[τ] as a fraction" in d.value.columns).set_index("method")
    worst = v.numbers["worst"]
    assert table.loc[figures.short("best_of_k_bv"), "E[τ]"] == pytest.approx(worst["best_of_k_expected_accepted"], abs=1e-12)
    assert table.loc[figures.short("bv"), "E[τ]"] == pytest.approx(worst["bv_expected_accepted"], abs=1e-12)
    assert at.session_state["toy_K"] == worst["K"] and at.session_state["toy_source"] == "JSON"


def test_a_tree_claims_worst_instance_opens_on_the_draft_trees_page():
    """Delayed branching's worst instance opens on the Draft trees page with its tree b = (1, 3)
    drafted iid, the models the verdict ran on, and rrs's E[τ] as the verdict reports it."""
    from core.claims.base import decide
    from core.claims.registry import get_claim

    v = decide(get_claim("delayed-expansion/delayed-beats-root-premise"))
    at = open_page("pages/draft_trees.py", query=v.instance.query())
    no_errors(at)
    assert at.session_state["tree_kind"] == "tree" and at.session_state["tree_b"] == "1,3"
    assert at.session_state["tree_law"] == "iid" and at.session_state["toy_source"] == "JSON"
    table = next(d.value for d in at.dataframe if "verifier" in d.value.columns)
    rrs = table[table["verifier"].str.startswith("rrs")]["E[τ]"].iloc[0]
    assert rrs == pytest.approx(v.numbers["worst"]["delayed"], abs=1e-12)


def test_every_claims_link_is_a_query_its_page_accepts():
    """Each claim's instance (a family's worst one) as a link: every parameter is one its page reads
    (``toy_config.URL_PARAMS``) with a value the page offers; the gain-at-root claim opens the lab's
    gain-by-depth tab."""
    from core.claims.base import decide
    from core.claims.registry import CLAIMS
    from pages.ui.toy_config import URL_PARAMS

    for claim in CLAIMS:
        query = decide(claim).instance.query()
        for name, value in query.items():
            if name == "preset":
                continue
            _, parse = URL_PARAMS[name]
            parse(value)                                   # raises ValueError on a value the page refuses
    gain = decide(next(c for c in CLAIMS if c.key == "delayed-expansion/ot-gain-at-root"))
    assert gain.instance.query()["section"] == "depth"
