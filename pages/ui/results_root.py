"""The one folder the app reads sweep results from, and results a reader uploads.

The Leaderboard opens results folders only under the *results root* (``pages.ui.roots``): the folder
named by the environment variable ``EXPLORER_RESULTS_ROOT``, by default ``results/`` under the app's
working folder.  ``..``, an absolute path elsewhere, and a symbolic link (the folder itself or any
entry inside it) that resolves outside the root are refused with one sentence, before anything
outside is touched.  A reader's own results come as an upload instead: the Parquet files are written
under names this module makes, in a temporary folder the app owns, read with the sweep store's reader
and checked for the columns the page reads, and the folder is removed.

The example sweep (``EXAMPLE``: the sweep the Leaderboard proposes, shipped in
``toy_models/sweeps/``) is the app's own file, read by ``read_example`` with no name from a reader,
so a fresh checkout has a leaderboard to open with nothing prepared.

Nothing here imports Streamlit: the checks are plain functions, tested as such.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Iterable

import pandas as pd

import toy_models
from core.errors import ExplorerError
from core.sweep.store import read_results
from pages.ui.roots import OutsideRoot, Root

#: The results root: ``$EXPLORER_RESULTS_ROOT``, else ``results/`` under the working folder.
ROOT = Root("EXPLORER_RESULTS_ROOT", "results", "results/", "results root", "results folder",
            instead="; upload your own file instead")
ENV = ROOT.env
#: The columns the Leaderboard reads beyond those ``read_results`` requires (its instance table and
#: its "Open in the laboratory" button).
PAGE_COLUMNS = ("mismatch", "temperature", "draft", "target")
#: A results path the app will not open (outside the results root), or not a results table.
OutsideResults = OutsideRoot
#: The root as the page names it, the root itself, and a name resolved under it (``Root``).
shown_root, root, resolve = ROOT.shown, ROOT.path, ROOT.resolve


#: The example sweep shipped with the app (toy_models/sweeps/README.md says how it was made).
EXAMPLE = Path(toy_models.__file__).resolve().parent / "sweeps" / "example.parquet"


def read_example() -> pd.DataFrame:
    """The rows of the example sweep (``EXAMPLE``)."""
    return check_columns(read_results(EXAMPLE), "the example sweep")


def check_columns(frame: pd.DataFrame, where: str) -> pd.DataFrame:
    """``frame``, or ``OutsideResults`` naming the first column the page needs that it lacks."""
    missing = [c for c in PAGE_COLUMNS if c not in frame.columns]
    if missing:
        raise OutsideResults(f"{where} is not a sweep results table (no column {missing[0]!r}); "
                             f"write one with python -m core sweep --out.")
    return frame


def read(name: str, base: Path | None = None) -> pd.DataFrame:
    """The results folder (or Parquet file) ``name`` under the results root (``resolve``)."""
    path = resolve(name, base)
    shown = f'"{name.strip()}"'
    try:
        frame = read_results(path)
    except ExplorerError as exc:      # named as the reader wrote it: the server's paths stay unsaid
        raise OutsideResults(ROOT.hide(str(exc).replace(str(path), shown))) from None
    return check_columns(frame, shown)


def read_uploads(files: Iterable[tuple[str, bytes]]) -> pd.DataFrame:
    """The rows of uploaded Parquet files ((name, bytes) pairs; e.g. the part files of a results
    folder), read with the sweep store's reader from a temporary folder the app owns and removes.
    The files are stored as part-0.parquet, part-1.parquet, …: a reader's file name is never a path."""
    files = list(files)
    if not files:
        raise OutsideResults("Choose at least one Parquet file to upload.")
    with tempfile.TemporaryDirectory(prefix="explorer-upload-") as folder:
        for i, (_, data) in enumerate(files):
            Path(folder, f"part-{i}.parquet").write_bytes(data)
        names = ", ".join(name for name, _ in files)
        try:
            frame = read_results(folder)
        except ExplorerError as exc:
            # The store names its temporary folder; the reader knows the files by their names.
            raise OutsideResults(str(exc).replace(folder, names)) from None
        return check_columns(frame, names)
