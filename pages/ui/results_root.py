"""The one folder the app reads sweep results from, and results a reader uploads.

A hosted app is a server: a text box that opens any path would let a student read the server's files.
The Leaderboard opens results folders only under the *results root*: the folder named by the
environment variable ``EXPLORER_RESULTS_ROOT``, by default ``results/`` under the app's working
folder.  A name is read relative to the root; ``..``, an absolute path elsewhere, and a symbolic link
(the folder itself or any entry inside it) that resolves outside the root are refused with one
sentence, before anything outside is touched.  A reader's own results come as an upload instead: the
Parquet files are written under names this module makes, in a temporary folder the app owns, read with
the sweep store's reader and checked for the columns the page reads, and the folder is removed.

Nothing here imports Streamlit: the checks are plain functions, tested as such.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Iterable

import pandas as pd

from core.errors import ExplorerError
from core.sweep.store import read_results

#: The environment variable naming the results root.
ENV = "EXPLORER_RESULTS_ROOT"
#: The results root when ``ENV`` is not set, relative to the working folder.
DEFAULT = "results"
#: The columns the Leaderboard reads beyond those ``read_results`` requires (its instance table and
#: its "Open in the laboratory" button).
PAGE_COLUMNS = ("mismatch", "temperature", "draft", "target")


class OutsideResults(ExplorerError, ValueError):
    """A results path the app will not open: outside the results root, or not a results table."""


def shown_root() -> str:
    """The results root as the page names it: the variable's value, or ``results/``.  The server's
    absolute path is not shown."""
    return os.environ.get(ENV) or f"{DEFAULT}/"


def root() -> Path:
    """The results root, resolved (symbolic links followed), whether or not it exists yet."""
    return Path(os.environ.get(ENV) or Path.cwd() / DEFAULT).resolve()


def _inside(path: Path, base: Path) -> bool:
    return path == base or base in path.parents


def resolve(name: str, base: Path | None = None) -> Path:
    """The results path ``name`` names under the root ``base`` (default ``root()``), resolved; or
    ``OutsideResults`` with one sentence when it is empty, holds a ``..`` component, or resolves
    (through symbolic links, at the path itself or at any entry inside the folder) outside the root.

    >>> import tempfile
    >>> base = Path(tempfile.mkdtemp()).resolve()
    >>> resolve("sweep.parquet", base) == base / "sweep.parquet"
    True
    >>> try:
    ...     resolve("../etc/passwd", base)
    ... except OutsideResults as exc:
    ...     print(exc)
    "../etc/passwd" names a folder above the results root; give a name under it, without "..".
    """
    base = (base or root()).resolve()
    text = name.strip()
    if not text:
        raise OutsideResults(f"Name a results folder under the results root {shown_root()}.")
    given = Path(text)
    if ".." in given.parts:
        raise OutsideResults(f'"{text}" names a folder above the results root; give a name under it, '
                             f'without "..".')
    path = (given if given.is_absolute() else base / given).resolve()
    if not _inside(path, base):
        raise OutsideResults(f'"{text}" is outside the results root {shown_root()}: the app opens results '
                             f"only there (the server's {ENV} names it); upload your own file instead.")
    if path.is_dir():
        for folder, dirs, files in os.walk(path):        # never follows a link: each is checked
            for entry in (*dirs, *files):
                target = Path(folder, entry)
                if target.is_symlink() and not _inside(target.resolve(), base):
                    raise OutsideResults(f'"{text}" holds a link to a file outside the results root '
                                         f"{shown_root()}; the app does not follow it.")
    return path


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
        raise OutsideResults(str(exc).replace(str(path), shown)) from None
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
