"""Where a model comes from, decided without loading anything: a local model directory or a hub
name.  Importable without torch, so that the command line and the app refuse a bad path in
milliseconds instead of after importing torch and transformers."""
from __future__ import annotations

from pathlib import Path

from core.errors import PairError


def check_source(source: str | Path, role: str) -> tuple[bool, str]:
    """(is_local, where) for a model given as a local directory or a Hugging Face hub name.

    Something that looks like a path (starting with '.', '/' or '~') or exists on disk must be a
    directory holding a ``config.json``; anything else is taken as a hub name, which only loading
    can check.  Raises ``PairError`` naming the ``role`` ('target' or 'draft')."""
    source = str(source).strip()
    if not source:
        raise PairError(f"give the {role} model: a local directory or a hub name")
    local = Path(source).expanduser()
    if local.is_dir():
        if not (local / "config.json").is_file():
            raise PairError(f"the {role} directory {source} holds no config.json: it is not a "
                            "Hugging Face model directory")
        return True, str(local)
    if source.startswith((".", "/", "~")) or local.exists():
        raise PairError(f"the {role} path {source} is not a model directory")
    return False, source
