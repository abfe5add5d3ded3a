"""Every claim's link reproduces its numbers: each registered claim's verdict (a family's as shipped,
``core.claims.shipped``) opens its instance with its link (``Instance.query``) in the page the claims
page links to, and every number of the verdict that page shows (each rule's E[τ] and TV from q, the
LP optimum and the other bounds, the gains by depth) is found there, to the precision the page shows
it at.  The numbers no page shows (a derived gain or gap, a probability of one sequence, a timing,
the text of several iterations) are named in ``NOT_ON_A_PAGE`` with the reason.

A link carries every parameter of the rules it names (the EAGLE-2 release's claims open that release,
``params`` in the link); the numbers of another setting than the link opens (the other EAGLE
release's, beside) are listed in ``OTHER_SETTING``."""
from __future__ import annotations

import functools
import json
import re

import pytest

pytest.importorskip("streamlit")

from core.claims.base import decide  # noqa: E402
from core.claims.registry import CLAIMS, SOURCES  # noqa: E402
from core.claims import shipped  # noqa: E402
from pages.ui import figures  # noqa: E402
from tests.apptest import no_errors, open_page  # noqa: E402
from tests.browser import browser_page, chromium, playwright, results_dir, server  # noqa: E402,F401

#: Numbers a verdict gives that no page shows, by name, with the reason.
NOT_ON_A_PAGE = {
    "gain": "a difference of two E[τ] the page shows", "gap": "the LP optimum minus an E[τ] the page shows",
    "difference": "the LP optimum minus a closed form the page shows",
    "traversal_minus_best_ot": "a difference of two E[τ] the page shows", "margin": "a family's ordering only",
    "produced": "the rule's probability of one sequence z", "target": "q's probability of one sequence z",
    "min_F": "the worst prefix's over-emission (the claims page's own number)",
    "exponent": "a timing fit", "seconds": "a timing", "sizes": "the timing's vocabularies",
    "law_tv": "the distance between two rules' output laws", "rule_fidelity_tv": "SpecTr-GBV at K = 1 (the claims page)",
    "rule_expected_accepted": "SpecTr-GBV at K = 1 (the claims page)",
    "algorithm_clean_tv": "HSD's algorithm as written, not the release the page runs",
    "stream_tv": "the text of several iterations", "tokens_per_call": "several iterations",
    "bv_tokens_per_call": "several iterations", "repaired_tv": "several iterations, repaired",
    "repaired_tokens_per_call": "several iterations, repaired", "wor_optimum": "the LP of another draft law",
    "two_step_optimum": "a closed form (equal to the LP optimum the page shows)",
    "closed_form": "a closed form (equal to the LP optimum the page shows)",
    "root": "rrs on K chains from the root, beside the delayed tree the link opens",
    "same_K_delayed": "rrs on the delayed tree with the same K, beside the one the link opens",
    "largest_tv": "the worst of several mismatched laws (transformers' candidate generators)",
    "tv_by_mismatch": "the candidate generators' laws", "expected_accepted_by_mismatch": "the candidate generators' laws",
    "iid_optimum": "the i.i.d. LP at K, beside the without-replacement one",
    "frontier": "the loss-gain frontier at the rule's own TV (python -m core bound --kind frontier --tv EPS)",
}
#: Numbers a claim derives from others its page shows: (claim key, number name) → the reason.
DERIVED = {(f"delayed-expansion/traversal-gains-deeper{end}", "gain_by_depth"):
           "Traversal's a_d minus SpecInfer's, both in the gain-by-depth table (checked below)" for end in ("", "-premise")}
#: Numbers of another rule setting than the one the link opens: (claim key, number name) → the reason.
OTHER_SETTING = {("eagle/current-lossless", "eagle2_tv"): "the EAGLE-2 release's, beside the current one the link opens",
                 ("eagle/topk-lossless", "eagle2_tv"): "the EAGLE-2 release's, beside the current one the link opens",
                 ("sglang/t-acc-more-aggressive", "default_expected_accepted"):
                     "SGLang's E[τ] at the default thresholds, beside the lower one the link opens"}


def verdict_of(claim):
    return (shipped.verdict(claim) if claim.family is not None else None) or decide(claim)


def numbers_of(verdict) -> dict[str, float]:
    """The verdict's numbers a page can show: every float (and list of floats) but those in
    ``NOT_ON_A_PAGE``, a family's from its worst instance."""
    numbers = dict(verdict.numbers)
    numbers.update(numbers.pop("worst", None) or {})
    out = {}
    for key, value in numbers.items():
        if key in NOT_ON_A_PAGE or isinstance(value, (bool, str)) or key in ("held", "of", "V", "K", "L", "index",
                                                                           "budget", "points", "drop"):
            continue
        if isinstance(value, (list, tuple)):
            out.update({f"{key}[{i}]": float(v) for i, v in enumerate(value) if not isinstance(v, (list, tuple, str))})
        elif isinstance(value, (int, float)) or hasattr(value, "__float__"):
            out[key] = float(value)
    return out


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?(?:/\d+)?")


def shown_numbers(at) -> tuple[list[float], list[tuple[float, float]]]:
    """What the opened page shows: its tables' values exactly, and every number of its texts (metrics,
    captions, Markdown tables) at the precision it is shown at (``text_numbers``)."""
    exact = [float(v) for df in at.dataframe for v in df.value.select_dtypes("number").to_numpy().ravel()
             if v == v]
    texts = [m.value for m in at.metric] + [c.value for c in at.caption] + [m.value for m in at.markdown] \
        + [str(v) for df in at.dataframe for v in df.value.select_dtypes(include=["object", "str"]).to_numpy().ravel()]
    return exact, text_numbers(texts)


def text_numbers(texts) -> list[tuple[float, float]]:
    """Every number written in ``texts``, each with the half-unit of its last digit (the precision it
    is shown at); a fraction and a whole number exactly ("K = 2" is 2, not 2 ± 0.5)."""
    rounded = []
    for t in texts:
        for token in _NUMBER.findall(str(t)):
            if "/" in token:
                a, b = token.split("/")
                if float(b):
                    rounded.append((float(a) / float(b), 1e-12))
            elif "." not in token:
                rounded.append((float(token), 1e-12))
            else:
                digits = len(token.split(".")[1].split("e")[0])
                scale = 10.0 ** int(token.split("e")[1]) if "e" in token else 1.0
                rounded.append((float(token), 0.5 * 10.0 ** -digits * scale + 1e-12))
    return rounded


@functools.lru_cache(maxsize=None)
def opened(page: str, query: str) -> tuple[list[float], list[tuple[float, float]]]:
    """``shown_numbers`` of ``page`` opened on the link ``query`` (JSON): claims that share a link
    (a family and its instance, several claims on one preset) open it once."""
    at = open_page(page, query=json.loads(query))
    no_errors(at)
    return shown_numbers(at)


def missing(claim, verdict) -> list[str]:
    """The numbers of ``verdict`` its link's page does not show, as "name = value"."""
    page = "pages/draft_trees.py" if verdict.instance.page == "trees" else "pages/toy_lab.py"
    exact, rounded = opened(page, json.dumps(verdict.instance.query(), sort_keys=True))
    out = []
    for name, value in numbers_of(verdict).items():
        if (claim.key, name.split("[")[0]) in set(OTHER_SETTING) | set(DERIVED):
            continue
        found = any(abs(value - v) <= 1e-9 * max(1.0, abs(value)) for v in exact) or \
            any(abs(value - v) <= tol for v, tol in rounded) or (abs(value) <= 1e-12 and any(v == 0 for v in exact))
        if not found:
            out.append(f"{name} = {value!r}")
    return out


LINKED = [c for c in CLAIMS if not c.measured]


@pytest.mark.parametrize("claim", LINKED, ids=[c.key for c in LINKED])
def test_every_claims_link_shows_the_numbers_of_its_verdict(claim):
    verdict = verdict_of(claim)
    assert verdict.instance is not None
    assert not missing(claim, verdict), f"{claim.key}: {verdict.instance.query()}"


@pytest.mark.parametrize("key", ["eagle/eagle2-lossless", "eagle/eagle2-lossless-family"])
def test_the_eagle2_links_open_that_release(key):
    """A claim about the EAGLE-2 release opens the laboratory on that release (the link's ``params``),
    and the page shows the release's own TV and E[τ]; the current release's link shows the current
    one's (its numbers differ at T = 1/2: the bonus token is drawn at T or at 1)."""
    claim = next(c for c in CLAIMS if c.key == key)
    verdict = verdict_of(claim)
    assert "eagle.release:eagle2" in verdict.instance.query()["params"]
    at = open_page("pages/toy_lab.py", query=verdict.instance.query())
    exact, rounded = shown_numbers(at)
    numbers = dict(verdict.numbers)
    numbers.update(numbers.pop("worst", None) or {})
    for name in ("tv", "expected_accepted"):
        value = float(numbers[name])
        assert any(abs(value - v) <= 1e-9 for v in exact) or any(abs(value - v) <= t for v, t in rounded), name
    assert float(numbers["tv"]) > 1e-3                       # lossy: the release under test, not the current


@pytest.mark.parametrize("end", ["", "-premise"])
def test_traversals_gain_over_specinfer_by_depth_is_the_difference_of_two_shown_numbers(end):
    """The deeper-gain claim's numbers are Traversal's a_d minus SpecInfer's at each depth: its link's
    gain-by-depth table shows both a_d, and their differences are the verdict's numbers."""
    from tests.apptest import markdown_table  # noqa: F401
    claim = next(c for c in CLAIMS if c.key == f"delayed-expansion/traversal-gains-deeper{end}")
    verdict = verdict_of(claim)
    at = open_page("pages/toy_lab.py", query=verdict.instance.query())
    table = next(m.value for m in at.markdown if m.value.startswith("| method | d |"))
    header = [c.strip().replace("\\", "") for c in table.splitlines()[0].strip("|").split("|")]
    rows = [[c.strip().replace("\\", "") for c in line.strip().strip("|").split("|")] for line in table.splitlines()[2:]]
    a = {(r[0], int(r[1])): float(r[header.index("a_d")]) for r in rows}
    gains = verdict.numbers["worst"]["gain_by_depth"]
    for d, gain in enumerate(gains, 1):
        assert a[(figures.short("traversal"), d)] - a[(figures.short("specinfer"), d)] == pytest.approx(gain, abs=2e-4)


#: One claim per source, its first: each link opened in a real browser as well.
FIRST = [next(c for c in LINKED if c.source.id == s) for s in SOURCES]

#: In-page: every number the page shows where a browser can read it: the charts' data (each rule's
#: E[τ] exactly, its hover's TV), the page's text (metrics, captions, Markdown) and its tables' cells
#: as the grid's accessible table holds them (the Draft trees page's verifiers), one cell at a time
#: (``grid_rows`` first brings each table into view: the grid lists the rows in view only).
PAGE_NUMBERS_JS = """() => {
    const exact = [], texts = [document.querySelector("[data-testid='stMain']").innerText];
    for (const grid of document.querySelectorAll("[data-testid='stMain'] [data-testid='stDataFrame'] table[role='grid']"))
        texts.push(Array.from(grid.querySelectorAll('td, th'), c => c.textContent.trim()).join(' '));
    for (const gd of document.querySelectorAll('.js-plotly-plot'))
        for (const t of gd.data || []) {
            for (const y of t.y || []) if (typeof y === 'number') exact.push(y);
            texts.push(String(t.hovertemplate || ''), String(t.name || ''));
        }
    return [exact, texts]; }"""


def grid_rows(page) -> None:
    """Bring every table the page shows into view and wait until its grid lists its rows (one in a
    closed tab or expander lists none)."""
    from playwright.sync_api import expect
    for grid in page.get_by_test_id("stMain").get_by_test_id("stDataFrame").all():
        if not grid.is_visible():
            continue
        grid.scroll_into_view_if_needed()
        expect(grid.locator("table[role='grid'] tbody tr").first).to_be_attached(timeout=60_000)


@pytest.mark.parametrize("claim", FIRST, ids=[c.source.id for c in FIRST])
def test_one_claim_per_source_opens_with_its_numbers_in_a_browser(server, browser_page, claim):  # noqa: F811
    """The first claim of each source, its link pasted into a browser: every number of its verdict the
    page shows is on the page as drawn (the E[τ] chart's values, its hover, the metrics and captions)."""
    from tests.browser import no_exception, settle
    verdict = verdict_of(claim)
    path = "draft_trees" if verdict.instance.page == "trees" else "toy_lab"
    from urllib.parse import urlencode
    browser_page.goto(f"{server}/{path}?{urlencode(verdict.instance.query())}")
    settle(browser_page, 1, timeout=300)
    no_exception(browser_page)
    grid_rows(browser_page)
    exact, texts = browser_page.evaluate(PAGE_NUMBERS_JS)
    rounded = text_numbers(texts)
    lost = [f"{name} = {value}" for name, value in numbers_of(verdict).items()
            if (claim.key, name.split("[")[0]) not in set(OTHER_SETTING) | set(DERIVED)
            and not any(abs(value - v) <= 1e-9 for v in exact) and not any(abs(value - v) <= t for v, t in rounded)]
    assert not lost, f"{claim.key}: {lost}"
