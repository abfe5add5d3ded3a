"""A figure as a slide-sized SVG or PNG file, rendered by Kaleido in a headless browser, one export at a time."""
from __future__ import annotations

import os
import shutil
import threading

import plotly.graph_objects as go

from pages.ui.figures.style import SLIDE
from pages.ui.figures.layout import for_width


#: An exported PNG (``image``) is this many times ``SLIDE``'s width: sharp on a high-density screen.
PNG_SCALE = 2


#: Where ``image`` looks for a Chrome or Chromium when ``BROWSER_PATH`` is not set.
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "microsoft-edge")
_EXPORT_LOCK = threading.Lock()
_EXPORT_SERVER: list[bool] = []


def export_browser() -> str | None:
    """The browser ``image`` renders with: ``$BROWSER_PATH`` if it is an executable file, else the
    first of ``BROWSERS`` on the PATH; None when there is none."""
    path = os.environ.get("BROWSER_PATH")
    if path:
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    return next((found for name in BROWSERS if (found := shutil.which(name))), None)


def image(fig: go.Figure, fmt: str = "svg", width: int = SLIDE[0], height: int | None = None) -> bytes:
    """The figure as an SVG file (vector: sharp at any slide size), ``width`` px wide (a slide's) and
    as tall as its layout says (else a slide's height); with ``fmt="png"``, a PNG of ``PNG_SCALE``
    times that size.

    Plotly.js's modebar downloads one format only (``CHART_CONFIG``: a PNG of the chart as shown), so
    the slide-sized exports are rendered here by Kaleido, Plotly's own static-image exporter, which
    drives a headless Chrome or Chromium (``export_browser``), the figure laid out for that width
    first (``for_width``: a legend needs fewer rows on a wider chart).  Kaleido's browser is started on the
    first export and kept for the process (about 0.25 s an export after that, about 3 s for the
    first).  Exports are serialized."""
    import warnings

    import kaleido

    browser = export_browser()
    if browser is None:
        raise FileNotFoundError("Export needs Chrome or Chromium: install one, or set BROWSER_PATH "
                                "to its executable")
    os.environ.setdefault("BROWSER_PATH", browser)   # Kaleido then uses the same browser
    with _EXPORT_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")               # "kopts ignored when a server runs": expected
        if not _EXPORT_SERVER:
            kaleido.start_sync_server(silence_warnings=True)
            _EXPORT_SERVER.append(True)
        fig = for_width(fig, width)
        return fig.to_image(format=fmt, width=width, height=height or fig.layout.height or SLIDE[1],
                            scale=PNG_SCALE if fmt == "png" else None)
