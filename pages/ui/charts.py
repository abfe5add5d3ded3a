"""How a figure goes on a page, each with its exports at slide resolution.

- ``chart``: every chart of the app.  By default it is drawn as SVG in the page (``inline_svg``), so a
  page loads no Plotly script: a browser's first visit to a page with a chart is about 2 s faster on
  a 2-core machine (docs/app.md, "Page speed").  A figure ``inline_svg`` cannot draw (a heatmap, box
  plots, subplots, …), and every figure once the reader turns on "Interactive charts" (``mode_toggle``;
  ``?charts=interactive`` in a link), is a Plotly chart: zoom, pan, hover and legend clicks.
- ``picture``: always SVG (the start page's draft tree: the first page a reader sees).

An SVG drawing has "SVG" (that very drawing) and "PNG" (Kaleido) downloads; a Plotly chart a PNG from
its modebar's camera and an "SVG" button (``figures.image``)."""
from __future__ import annotations

import streamlit as st

from pages.ui import figures, inline_svg

__all__ = ["INTERACTIVE", "URL_PARAM", "chart", "interactive", "mode_toggle", "picture"]

NO_BROWSER = "needs Chrome or Chromium: install one, or set BROWSER_PATH to its executable."
#: Session key of the "Interactive charts" toggle, and the link parameter that turns it on.
INTERACTIVE = "interactive_charts"
URL_PARAM = "charts"
#: The width of a chart drawn as SVG, in its own px: the legend rows ``figures`` reserves fit in it,
#: and in the wide layout it is about a page column; it scales down on a narrower one, never up.
CHART_WIDTH = 760


def interactive() -> bool:
    """Whether this session draws its charts with Plotly (the reader's "Interactive charts" toggle)."""
    return bool(st.session_state.get(INTERACTIVE, False))


def mode_toggle() -> None:
    """The sidebar's "Interactive charts" toggle, on every page (``app.py``).  A session starts with it
    as its link says (``?charts=interactive``), else off."""
    if INTERACTIVE not in st.session_state:
        st.session_state[INTERACTIVE] = st.query_params.get(URL_PARAM) == "interactive"
    st.sidebar.toggle(
        "Interactive charts", key=INTERACTIVE,
        help="Draw the charts with Plotly: zoom, pan, exact values on hover, click a legend entry to hide "
             "its series. Off, they are drawn in the page as SVG (hover a mark for its values), which "
             "shows a page about 2 s sooner in a browser that has not loaded Plotly's 4.7 MB script yet.")


def chart(fig, key: str) -> None:
    """``fig`` (from ``figures``) as SVG in the page (``picture``) unless the session is ``interactive``
    or ``inline_svg`` cannot draw it; else ``st.plotly_chart(fig, key=key)`` with
    ``figures.CHART_CONFIG`` and an "SVG" download of the same figure, rendered only when clicked (a
    click does not rerun the page).  Without a browser to render with, the button is disabled and
    says why."""
    if not interactive():
        try:
            drawing = inline_svg.render(fig, width=CHART_WIDTH)
        except ValueError:      # a kind of figure the SVG drawing does not know: Plotly draws it
            pass
        else:
            _drawn(fig, key, drawing, CHART_WIDTH)
            return
    st.plotly_chart(fig, key=key, config=figures.CHART_CONFIG)
    missing = figures.export_browser() is None
    st.download_button(
        "SVG", data=lambda: figures.image(fig), file_name=f"{key}.svg", mime="image/svg+xml", key=f"{key}_svg",
        on_click="ignore", type="tertiary", icon=":material/download:", disabled=missing,
        help=("SVG export " + NO_BROWSER if missing else "Download this chart as SVG (vector, sharp on a "
              "slide). The camera icon on the chart's toolbar saves a PNG at three times the on-screen size."))


def picture(fig, key: str) -> None:
    """``fig`` (a figure ``inline_svg`` can draw) as inline SVG whatever the session's mode: no Plotly
    script to load, hover text as tooltips."""
    _drawn(fig, key, inline_svg.render(fig), inline_svg.WIDTH)


def _drawn(fig, key: str, drawing: str, width: int) -> None:
    """``drawing`` (``inline_svg.render(fig, width=width)``) in the page, then an "SVG" download of that
    drawing and a "PNG" one at three times its size, rendered by Kaleido from the figure; each file
    is made only when clicked."""
    # Markdown, not st.html: st.html's sanitiser keeps HTML only and drops an <svg> whole
    st.markdown(drawing, unsafe_allow_html=True)
    missing = figures.export_browser() is None
    row = st.container(horizontal=True, gap="small")
    row.download_button(
        "SVG", data=lambda: inline_svg.render(fig, standalone=True, width=width), file_name=f"{key}.svg",
        mime="image/svg+xml", key=f"{key}_svg", on_click="ignore", type="tertiary", icon=":material/download:",
        help="Download this chart as SVG (vector, sharp on a slide).")
    row.download_button(
        "PNG", data=lambda: figures.image(fig, "png", width=width), file_name=f"{key}.png",
        mime="image/png", key=f"{key}_png", on_click="ignore", type="tertiary", icon=":material/download:",
        disabled=missing, help="PNG export " + NO_BROWSER if missing else
        "Download this chart as PNG at three times the on-screen size.")
