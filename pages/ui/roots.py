"""The folders a hosted app owns, and the names a visitor gives for what is inside them.

A hosted app is a server: a text box that opens any path would let a student read the server's files
(or load them as a model).  Each input that names something on disk reads it under one *root*: a
folder named by an environment variable (``EXPLORER_RESULTS_ROOT``, ``EXPLORER_MODELS_ROOT``), by
default a folder under the app's working folder.  A name is read relative to its root; it is refused
with one sentence when it is empty, holds a ``..`` component, is an absolute path outside the root,
or resolves (through symbolic links, at the path itself or at any entry inside the folder it names)
outside the root.  An absolute path is compared with the root as written before the file system is
asked anything, so a path elsewhere is refused without being looked at, and no sentence says whether
anything outside the root exists.

Nothing here imports Streamlit: the checks are plain functions, tested as such.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from core.errors import ExplorerError


class OutsideRoot(ExplorerError, ValueError):
    """A name the app will not open: outside its root (or, for a root's reader, not what it reads)."""


def _inside(path: Path, base: Path) -> bool:
    return path == base or base in path.parents


@dataclass(frozen=True)
class Root:
    """A folder the app reads visitors' names under.

    ``env`` names the variable that sets it (None: a fixed folder); ``default`` is the folder when
    the variable is unset, relative to the working folder or absolute; ``label`` is how a page names
    it then; ``noun`` and ``thing`` name the root and what
    lives in it in the sentences ("results root", "results folder"); ``instead`` ends the sentence
    that refuses a path outside (what the reader can do instead)."""

    env: str | None
    default: str | Path
    label: str
    noun: str
    thing: str
    instead: str = ""

    def shown(self) -> str:
        """The root as the page names it: ``$VARIABLE/`` where the variable is set, else ``label``.
        The server's path is never shown (a shell on the server reads the variable's name)."""
        return f"${self.env}/" if self.env and os.environ.get(self.env) else self.label

    def path(self) -> Path:
        """The root, resolved (symbolic links followed), whether or not it exists yet."""
        return self._given().resolve()

    def _given(self) -> Path:
        return Path(os.path.abspath((os.environ.get(self.env) if self.env else None) or self.default))

    def _folders(self, base: Path | None = None) -> tuple[Path, Path]:
        """The root (or ``base``) as written, absolute, and resolved."""
        written = self._given() if base is None else Path(os.path.abspath(base))
        return written, written.resolve()

    def holds(self, path: str | Path, base: Path | None = None) -> bool:
        """Whether the absolute ``path``, as written, lies under the root (or ``base``), as written or
        resolved: decided without asking the file system anything about ``path``."""
        path = Path(os.path.normpath(path))
        return any(_inside(path, folder) for folder in self._folders(base))

    def resolve(self, name: str, base: Path | None = None) -> Path:
        """The path ``name`` names under the root (or under ``base``, another folder, for tests),
        resolved; or ``OutsideRoot`` with one sentence (see the module's docstring).

        >>> import tempfile
        >>> results = Root(None, tempfile.mkdtemp(), "results/", "results root", "results folder")
        >>> results.resolve("sweep.parquet") == results.path() / "sweep.parquet"
        True
        >>> for name in ("../etc/passwd", "/etc/passwd"):
        ...     try:
        ...         results.resolve(name)
        ...     except OutsideRoot as exc:
        ...         print(exc)
        "../etc/passwd" names a folder above the results root; give a name under it, without "..".
        "/etc/passwd" is outside the results root results/: the app opens results folders only there.
        """
        written, base = self._folders(base)
        text = name.strip()
        if not text:
            raise OutsideRoot(f"Name a {self.thing} under the {self.noun} {self.shown()}.")
        given = Path(text)
        if ".." in given.parts:
            raise OutsideRoot(f'"{text}" names a folder above the {self.noun}; give a name under it, without "..".')
        outside = OutsideRoot(f'"{text}" is outside the {self.noun} {self.shown()}: the app opens '
                              f"{self.thing}s only there{self.instead}.")
        if given.is_absolute() and not self.holds(given, written):
            raise outside                                # refused as written: nothing outside is looked at
        try:                                             # a loop of links is a link that leads out
            path = (given if given.is_absolute() else base / given).resolve()
            if not _inside(path, base):
                raise outside
            if path.is_dir():
                for folder, dirs, files in os.walk(path):    # never follows a link: each is checked
                    for entry in (*dirs, *files):
                        target = Path(folder, entry)
                        if target.is_symlink() and not _inside(target.resolve(), base):
                            raise OutsideRoot(f'"{text}" holds a link to a file outside the {self.noun} '
                                              f"{self.shown()}; the app does not follow it.")
        except (OSError, RuntimeError):
            raise outside from None
        return path

    def hide(self, message: str) -> str:
        """``message`` with the root's server path (as written and resolved) replaced by ``shown()``."""
        for folder in sorted({str(f) for f in self._folders()}, key=len, reverse=True):
            message = message.replace(folder, self.shown().rstrip("/"))
        return message
