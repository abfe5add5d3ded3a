"""One way to put a figure on a page: the chart, with the export config on its modebar (a PNG at
slide resolution), and under it a button that downloads it as SVG (``figures.svg``)."""
from __future__ import annotations

import streamlit as st

from pages.ui import figures

__all__ = ["chart"]


def chart(fig, key: str) -> None:
    """``st.plotly_chart(fig, key=key)`` (``fig`` from ``figures``) with ``figures.CHART_CONFIG``,
    then an "SVG" download of the same figure, rendered only when clicked (a click does not rerun
    the page).  Without a browser to render with, the button is disabled and says why."""
    st.plotly_chart(fig, key=key, config=figures.CHART_CONFIG)
    missing = figures.export_browser() is None
    st.download_button(
        "SVG", data=lambda: figures.svg(fig), file_name=f"{key}.svg", mime="image/svg+xml", key=f"{key}_svg",
        on_click="ignore", type="tertiary", icon=":material/download:", disabled=missing,
        help=("SVG export needs Chrome or Chromium: install one, or set BROWSER_PATH to its executable."
              if missing else "Download this chart as SVG (vector, sharp on a slide). The camera icon "
              "on the chart's toolbar saves a PNG at three times the on-screen size."))
