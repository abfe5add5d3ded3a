"""How a figure goes on a page: ``chart``, for every chart of the app.

A chart is the Plotly figure ``pages/ui/figures/`` builds, drawn by ``st.plotly_chart`` as it is
built (``theme=None``: the figure's own slide style, ``figures.style.TEMPLATE``, not Streamlit's theme), so
a reader can zoom, pan, read exact values on hover and click a legend entry to hide its series.
Under it, "SVG" and "PNG" downloads of the same figure at slide size, rendered by Kaleido, Plotly's own
exporter (``figures.export.image``), only when clicked; the modebar's camera also saves a PNG of the chart
as shown, at three times its size (``figures.style.CHART_CONFIG``)."""
from __future__ import annotations

import streamlit as st

from pages.ui.figures.export import PNG_SCALE, export_browser, image
from pages.ui.figures.style import CHART_CONFIG, SLIDE

__all__ = ["NO_BROWSER", "chart", "draw"]

NO_BROWSER = "needs Chrome or Chromium: install one, or set BROWSER_PATH to its executable."


def draw(where, fig, key: str) -> None:
    """``fig`` as a Plotly chart in ``where`` (``st``, a column, or a placeholder redrawn while text
    streams, which holds one element and so gets no buttons): the one ``st.plotly_chart`` call of the
    app, so that every chart has the same configuration."""
    where.plotly_chart(fig, key=key, config=CHART_CONFIG, theme=None)


def chart(fig, key: str) -> None:
    """``fig`` (from ``figures``) as a Plotly chart (``draw``), then an "SVG" and a "PNG" download of it
    at slide size (``SLIDE``), each rendered only when clicked (a click does not rerun the page).
    Without a browser for Kaleido to render with, the buttons are disabled and say why."""
    draw(st, fig, key)
    missing = export_browser() is None
    row = st.container(horizontal=True, gap="small")
    for fmt, mime, what in (("svg", "image/svg+xml", "as SVG (vector, sharp on a slide)"),
                            ("png", "image/png", f"as PNG, {SLIDE[0] * PNG_SCALE} px wide")):
        row.download_button(
            fmt.upper(), data=lambda fmt=fmt: image(fig, fmt), file_name=f"{key}.{fmt}", mime=mime,
            key=f"{key}_{fmt}", on_click="ignore", type="tertiary", icon=":material/download:", disabled=missing,
            help=f"{fmt.upper()} export {NO_BROWSER}" if missing else
            f"Download this chart {what}, laid out for a {SLIDE[0]}×{SLIDE[1]} slide.")
