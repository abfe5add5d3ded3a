"""Two ways to put a figure on a page, each with its exports at slide resolution:

- ``chart``: the Plotly chart, a PNG from its modebar's camera, and an "SVG" button (``figures.image``);
- ``picture``: the figure drawn as SVG in the page (``inline_svg``), for a page whose first render
  should not wait for Plotly's script, with an "SVG" button (that very drawing) and a "PNG" one."""
from __future__ import annotations

import streamlit as st

from pages.ui import figures, inline_svg

__all__ = ["chart", "picture"]

NO_BROWSER = "needs Chrome or Chromium: install one, or set BROWSER_PATH to its executable."


def chart(fig, key: str) -> None:
    """``st.plotly_chart(fig, key=key)`` (``fig`` from ``figures``) with ``figures.CHART_CONFIG``,
    then an "SVG" download of the same figure, rendered only when clicked (a click does not rerun
    the page).  Without a browser to render with, the button is disabled and says why."""
    st.plotly_chart(fig, key=key, config=figures.CHART_CONFIG)
    missing = figures.export_browser() is None
    st.download_button(
        "SVG", data=lambda: figures.image(fig), file_name=f"{key}.svg", mime="image/svg+xml", key=f"{key}_svg",
        on_click="ignore", type="tertiary", icon=":material/download:", disabled=missing,
        help=("SVG export " + NO_BROWSER if missing else "Download this chart as SVG (vector, sharp on a "
              "slide). The camera icon on the chart's toolbar saves a PNG at three times the on-screen size."))


def picture(fig, key: str) -> None:
    """``fig`` (a scatter figure from ``figures``) drawn as inline SVG: no Plotly script to load,
    hover text as tooltips.  Under it an "SVG" download of that drawing, and a "PNG" one at three
    times the size, rendered by Kaleido from the figure; each file is made only when clicked."""
    # Markdown, not st.html: st.html's sanitiser keeps HTML only and drops an <svg> whole
    st.markdown(inline_svg.render(fig), unsafe_allow_html=True)
    missing = figures.export_browser() is None
    row = st.container(horizontal=True, gap="small")
    row.download_button(
        "SVG", data=lambda: inline_svg.render(fig, standalone=True), file_name=f"{key}.svg", mime="image/svg+xml",
        key=f"{key}_svg", on_click="ignore", type="tertiary", icon=":material/download:",
        help="Download this picture as SVG (vector, sharp on a slide).")
    row.download_button(
        "PNG", data=lambda: figures.image(fig, "png", width=inline_svg.WIDTH), file_name=f"{key}.png",
        mime="image/png", key=f"{key}_png", on_click="ignore", type="tertiary", icon=":material/download:",
        disabled=missing, help="PNG export " + NO_BROWSER if missing else
        "Download this picture as PNG at three times the on-screen size.")
