"""The offline training corpus every machine has: the Python standard library's own .py files.

Files are sorted and split (train, held-out) by crc32(relative path) % 50 == 0, so the split is the
same on every machine with the same Python version; the corpus itself is never committed.
"""
from __future__ import annotations

import sysconfig
import zlib
from pathlib import Path


def corpus_files(root: str | None = None) -> tuple[list[Path], list[Path]]:
    """(train, held-out) .py files under the standard library (site/dist-packages excluded)."""
    root = Path(root or sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts
                   and "dist-packages" not in p.parts)
    if not files:
        raise FileNotFoundError(f"no .py files under {root}: cannot build the corpus")
    train, held = [], []
    for p in files:
        (held if zlib.crc32(str(p.relative_to(root)).encode()) % 50 == 0 else train).append(p)
    return train, held


def read_texts(files: list[Path]) -> list[str]:
    """File contents (UTF-8), skipping files that cannot be read or decoded."""
    out = []
    for p in files:
        try:
            out.append(p.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, OSError):
            continue
    return out
