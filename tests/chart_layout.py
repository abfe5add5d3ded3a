"""Does every chart fit its own box?  A check of Plotly charts drawn in a real browser, for the
browser tests (``tests/test_chart_layout.py``, and any test that walks pages).

``check_chart_layout(page)`` measures, for every Plotly chart on a Playwright page, the DOM bounding
boxes of Plotly's own SVG elements (``.main-svg``: the chart's box; ``.gtitle``, ``.xtitle``,
``.ytitle`` (``.x2title``, … on panels), ``.annotation-text``: its titles; ``.legend``: its legend;
every other ``text``: tick labels, value labels, legend entries) and fails, naming the chart and the
element, when

* a text element leaves the chart's box (a title cut at the right edge, a tick label cut at the left);
* a text element drawn inside a plot area clipped to it (a bar's value label, ``cliponaxis``) leaves
  that plot area;
* two titles overlap, or a title and the legend do (subplot titles, axis titles of panels side by side),
  or a title and a tick label do, or the chart's title runs into a plot area;
* a legend entry lies outside the legend's own box (a legend that scrolls: its last entries are cut
  in an export), or the legend is taller than the plot area;
* a bar does not start at 0: a bar's value axis (y, or x for horizontal bars) must reach 0 where
  its bars start (its range holds 0, and no bar has a ``base`` of its own), since a bar's length is
  its value; close values are dots on an axis that spans them, never bars on a cut axis;
* the chart's toolbar (Plotly's modebar, which shows while the pointer rests on the chart) covers a
  title or the legend;
* a metric's label (``st.metric``) or a button's is cut short with an ellipsis;
* a table (``st.dataframe``) scrolls inside itself: rows hidden below it or columns cut at its right.

``check_export_layout(page, export_page)`` does the same for the charts' slide-sized exports: each
chart's figure (its data and layout, as the page received them) is laid out as ``figures.image``
lays an export out (``figures.for_width``) and drawn at ``figures.SLIDE``'s width and that height
by the plotly.js that Kaleido renders exports with (the Python package's ``plotly.min.js``, which
``kaleido``'s page loads), in a page of its own, and checked the same way.  ``check_chart_layout(page,
export=True)`` does both.  The PNG and the SVG are drawings of that layout (PNG_SCALE changes pixels, not layout), so
this is the export's geometry, measured as the page's is, with no image parsing.
"""
from __future__ import annotations

from pathlib import Path

import plotly

#: The plotly.js Kaleido exports with (``kaleido._page_generator``: the plotly package's own copy).
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"

#: Pixels of slack for anti-aliasing and sub-pixel rounding of text boxes.
SLACK = 1.5

#: In-page: the problems of one chart (a ``.js-plotly-plot`` element), as sentences.
PROBLEMS_JS = """(gd, slack) => {
    const out = [];
    const box = (el) => el.getBoundingClientRect();
    const inside = (a, b) => a.left >= b.left - slack && a.right <= b.right + slack &&
                             a.top >= b.top - slack && a.bottom <= b.bottom + slack;
    const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > slack &&
                              Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > slack;
    const shown = (el) => { const r = box(el); return r.width > 0 && r.height > 0 &&
        (el.textContent || '').trim() !== '' && getComputedStyle(el).display !== 'none' &&
        getComputedStyle(el).visibility !== 'hidden' && !el.closest('.hoverlayer'); };
    const name = (el) => (el.textContent || '').trim().slice(0, 60);
    const title = ((gd.layout && gd.layout.title && gd.layout.title.text) || '(untitled)').slice(0, 70);
    const svg = gd.querySelector('.main-svg');
    if (!svg) return [`${title}: not drawn`];
    const chart = box(svg);
    // a bar's length is its value: its value axis holds 0 and no bar starts elsewhere
    for (const trace of (gd._fullData || [])) {
        if (trace.type !== 'bar' || trace.visible !== true) continue;
        const horizontal = trace.orientation === 'h';
        const axis = gd._fullLayout[(horizontal ? trace.xaxis : trace.yaxis).replace(/^([xy])/, '$1axis')];
        const range = axis && axis.range;
        const values = (horizontal ? trace.x : trace.y) || [];
        if (trace.base !== undefined && trace.base !== null && [].concat(trace.base).some(b => b !== 0))
            out.push(`${title}: the bars "${trace.name}" start at ${trace.base}, not at 0`);
        if (axis && axis.type !== 'log' && range && values.length &&
                !(Math.min(range[0], range[1]) <= 1e-9 && Math.max(range[0], range[1]) >= -1e-9))
            out.push(`${title}: the bars "${trace.name}" are drawn on an axis from ${range[0].toFixed(3)} ` +
                     `to ${range[1].toFixed(3)}, not from 0`);
    }
    const texts = Array.from(gd.querySelectorAll('svg text')).filter(shown);
    for (const t of texts) {
        const r = box(t);
        if (!inside(r, chart))
            out.push(`${title}: "${name(t)}" leaves the chart's box ` +
                     `(${Math.round(r.left - chart.left)}..${Math.round(r.right - chart.left)} × ` +
                     `${Math.round(r.top - chart.top)}..${Math.round(r.bottom - chart.top)} in ` +
                     `${Math.round(chart.width)} × ${Math.round(chart.height)})`);
    }
    // the plot areas, one per subplot, from its axes' offsets and lengths (a static plot, as an
    // export is drawn, has no drag rectangles to measure)
    const areas = {};
    for (const [id, sp] of Object.entries((gd._fullLayout && gd._fullLayout._plots) || {})) {
        const xa = sp.xaxis, ya = sp.yaxis;
        if (!xa || !ya) continue;
        areas[id] = {left: chart.left + xa._offset, right: chart.left + xa._offset + xa._length,
                     top: chart.top + ya._offset, bottom: chart.top + ya._offset + ya._length};
    }
    for (const t of gd.querySelectorAll('.cartesianlayer .plot text')) {
        if (!shown(t)) continue;
        const sub = t.closest('.subplot');
        const id = sub && Array.from(sub.classList).find(c => /^x\\d*y\\d*$/.test(c));
        const clipped = t.closest('[clip-path]');
        if (id && areas[id] && clipped && sub.contains(clipped) && !inside(box(t), areas[id]))
            out.push(`${title}: "${name(t)}" is cut by its plot area`);
    }
    const isTitle = (t) => Array.from(t.classList).some(c => c === 'gtitle' || c === 'annotation-text' ||
                                                             /^[xy]\\d*title$/.test(c));
    const titles = Array.from(gd.querySelectorAll('text')).filter(t => isTitle(t) && shown(t));
    const legend = gd.querySelector('.legend .bg');
    const labelled = titles.map(t => [name(t), box(t)]);
    if (legend && box(legend).height > 0) labelled.push(['the legend', box(legend)]);
    for (let i = 0; i < labelled.length; i++)
        for (let j = i + 1; j < labelled.length; j++)
            if (overlap(labelled[i][1], labelled[j][1]))
                out.push(`${title}: "${labelled[i][0]}" overlaps "${labelled[j][0]}"`);
    // the toolbar (Plotly's modebar, shown while the pointer rests on the chart) covers no title
    const modebar = gd.querySelector('.modebar');
    if (modebar && box(modebar).width > 0)
        for (const [label, r] of labelled)
            if (overlap(r, box(modebar))) out.push(`${title}: the chart's toolbar covers "${label}"`);
    const ticks = Array.from(gd.querySelectorAll('.xtick text, .ytick text, [class*="tick"] text')).filter(shown);
    for (const [label, r] of labelled)
        for (const t of ticks)
            if (overlap(r, box(t))) out.push(`${title}: "${label}" overlaps the tick label "${name(t)}"`);
    for (const t of titles.filter(t => t.classList.contains('gtitle')))
        for (const a of Object.values(areas))
            if (overlap(box(t), a)) out.push(`${title}: the title runs into the plot`);
    if (legend && box(legend).height > 0) {
        const lb = box(legend);
        for (const t of gd.querySelectorAll('.legend .legendtext'))
            if (shown(t) && !inside(box(t), lb)) out.push(`${title}: legend entry "${name(t)}" is cut off`);
        const plot = Object.values(areas);
        if (plot.length) {
            const top = Math.min(...plot.map(a => a.top)), bottom = Math.max(...plot.map(a => a.bottom));
            if (lb.height > bottom - top + slack)
                out.push(`${title}: the legend (${Math.round(lb.height)} px) is taller than its plot ` +
                         `(${Math.round(bottom - top)} px)`);
        }
        const bar = gd.querySelector('.legend .scrollbar');
        if (bar && box(bar).height > 0) out.push(`${title}: the legend scrolls: some entries are hidden`);
    }
    return out;
}"""

#: In-page: the problems of every Plotly chart of the page.
PAGE_PROBLEMS_JS = f"""(slack) => Array.from(document.querySelectorAll('.js-plotly-plot'))
    .flatMap(gd => ({PROBLEMS_JS})(gd, slack))"""

#: In-page: each chart's figure as the page received it, ranges that autorange filled in removed.
FIGURES_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(gd => {
    const layout = JSON.parse(JSON.stringify(gd.layout || {}));
    for (const [k, v] of Object.entries(layout))
        if (/^[xy]axis\\d*$/.test(k) && v && v.autorange !== false && v.autorange !== undefined) delete v.range;
    return {data: JSON.parse(JSON.stringify(gd.data || [])), layout}; })"""


#: In-page: the tables (``st.dataframe``) that scroll inside themselves: rows below the table's own
#: bottom (a 15-row table drawn 10 rows high) or columns past its right edge ("TV from q (measur…").
SCROLLING_TABLES_JS = """() => Array.from(document.querySelectorAll("[data-testid='stMain'] [data-testid='stDataFrame']"))
    .flatMap(t => { const s = t.querySelector('.dvn-scroller'); if (!s) return [];
        const out = [], name = (t.innerText || '').trim().split('\\n')[0].slice(0, 40);
        if (s.scrollHeight > s.clientHeight + 2) out.push(`the table "${name}" scrolls: rows are hidden`);
        if (s.scrollWidth > s.clientWidth + 2) out.push(`the table "${name}" scrolls: columns are cut`);
        return out; })"""


def chart_problems(page) -> list[str]:
    """Every layout problem of every Plotly chart drawn on ``page`` (a Playwright page)."""
    return page.evaluate(PAGE_PROBLEMS_JS, SLACK)


#: In-page: the labels of the page's metrics (``st.metric``) and buttons that are cut ("LP optimum (best
#: lossless …", "Next r…"): an element of the label whose text is wider than the element shows.
CUT_LABELS_JS = """() => Array.from(document.querySelectorAll(
        "[data-testid='stMetricLabel'], [data-testid='stMain'] button[data-testid^='stBaseButton']"))
    .filter(l => Array.from(l.querySelectorAll('*')).concat([l]).some(e => e.scrollWidth > e.clientWidth + 1))
    .map(l => l.innerText.trim())"""


def check_chart_layout(page, where: str = "", export: bool = False) -> int:
    """Fail (AssertionError listing them) if any chart on ``page`` has a layout problem, or a metric's
    label is cut, and with ``export`` if any chart's slide-sized export has one (``check_export_layout``,
    in a page of ``page``'s browser opened and closed for it); return the number of charts checked.
    ``where`` names the page in the message."""
    n = page.locator(".js-plotly-plot").count()
    problems = chart_problems(page) + [f'the label "{t}" is cut' for t in page.evaluate(CUT_LABELS_JS)] \
        + page.evaluate(SCROLLING_TABLES_JS)
    assert not problems, f"{where}: " + "; ".join(problems)
    if export:
        exports = open_export_page(page.context)
        try:
            check_export_layout(page, exports, where)
        finally:
            exports.close()
    return n


def open_export_page(context):
    """A blank page of ``context`` with the plotly.js that exports are drawn by: where
    ``export_problems`` lays charts out at slide size."""
    page = context.new_page()
    page.set_content("<!doctype html><html><body style='margin:0'><div id='out'></div></body></html>")
    page.add_script_tag(path=str(PLOTLY_JS))
    return page


def figure_problems(export_page, figure: dict, width: int, height: int | None = None) -> list[str]:
    """The layout problems of ``figure`` (``{"data": …, "layout": …}``, Plotly's JSON) laid out
    ``width`` px wide and ``height`` px tall (else its own height, else a slide's) as Kaleido lays an
    export out."""
    from pages.ui import figures
    return export_page.evaluate(f"""async ([fig, width, height, slack]) => {{
        const out = document.getElementById('out');
        Plotly.purge(out);
        out.innerHTML = '';
        const gd = document.createElement('div');
        out.appendChild(gd);
        const layout = Object.assign({{}}, fig.layout, {{width, height: height || fig.layout.height || {figures.SLIDE[1]}}});
        await Plotly.newPlot(gd, fig.data, layout, {{staticPlot: true}});
        return ({PROBLEMS_JS})(gd, slack); }}""", [figure, width, height, SLACK])


def check_export_layout(page, export_page, where: str = "") -> int:
    """Fail if the slide-sized export (``figures.image``'s layout) of any chart on ``page`` has a
    layout problem; return the number of charts checked."""
    import json

    import plotly.graph_objects as go

    from pages.ui import figures
    figs = [json.loads(figures.for_width(go.Figure(f, skip_invalid=True), figures.SLIDE[0]).to_json())
            for f in page.evaluate(FIGURES_JS)]
    problems = [p for f in figs for p in figure_problems(export_page, f, figures.SLIDE[0])]
    assert not problems, f"{where} (export at {figures.SLIDE[0]} px): " + "; ".join(problems)
    return len(figs)
