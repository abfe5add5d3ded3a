"""Where the real-model pages load a reader's "Local folders or hub names" from: the *models root*,
the shipped ``toy_models/`` folder, and the Hugging Face hub only where the operator allows it.

A hosted app is a server: a model name is a path the server would read (and ``from_pretrained``
runs a tokenizer's and a model's files), and a hub name makes the server download a repository of
any size into its cache.  So, on the pages (the command line, on the user's own machine, loads any
path):

- A folder is read under one of two roots (``pages.ui.roots``): ``toy_models/NAME`` under the shipped
  ``toy_models/`` folder (the bundled pairs), anything else under the *models root*,
  ``$EXPLORER_MODELS_ROOT``, by default ``models/`` under the app's working folder.  ``..``, an
  absolute path elsewhere and a symbolic link leading out are refused with one sentence, which says
  nothing about what lies outside.
- A name with no folder under the roots is a hub name only when the operator has set
  ``EXPLORER_ALLOW_HUB=1``; otherwise it is refused in one sentence.  The hub presets follow the same
  switch.  ``trust_remote_code`` is never passed: a folder or repository whose loading would run its
  own code is refused by transformers.
- A load's error names the model as the reader typed it: the server's paths are replaced.

Nothing here imports Streamlit or torch (``load`` imports the loader when called).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

import toy_models
from core.errors import PairError
from pages.ui.roots import OutsideRoot, Root

#: The models root: ``$EXPLORER_MODELS_ROOT``, else ``models/`` under the working folder.
MODELS = Root("EXPLORER_MODELS_ROOT", "models", "models/", "models root", "model folder")
#: The shipped models (the bundled pairs), named ``toy_models/…`` on the page.
SHIPPED = Root(None, Path(toy_models.__file__).resolve().parent, "toy_models/", "shipped folder", "model folder")
#: The environment variable that lets the pages load from the Hugging Face hub ("1" allows).
HUB_ENV = "EXPLORER_ALLOW_HUB"


class ModelSource(NamedTuple):
    """A model as the reader named it (``name``, what the page shows) and what the loader gets
    (``where``: a folder under a root, or a hub name when ``hub``)."""

    name: str
    where: str
    hub: bool


def hub_allowed() -> bool:
    """Whether the operator allows hub models: ``EXPLORER_ALLOW_HUB`` is 1 (or true, yes, on)."""
    return os.environ.get(HUB_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def check_hub(what: str = "a hub preset") -> None:
    """``OutsideRoot`` with one sentence unless the operator allows hub models."""
    if not hub_allowed():
        raise OutsideRoot(f"This server loads no models from the Hugging Face hub, so not {what}; its operator "
                          f"allows them by starting the app with {HUB_ENV}=1.")


def _roots_named() -> str:
    return f"the {MODELS.noun} {MODELS.shown()} or in {SHIPPED.shown()}"


def _is_hub_name(text: str) -> bool:
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(text)
    except HFValidationError:
        return False
    return True


def locate(name: str, role: str) -> ModelSource:
    """Where the model ``name`` (the ``role``: "target" or "draft") loads from, or ``OutsideRoot`` with
    one sentence: a folder under its root (``toy_models/…`` under the shipped folder, anything else
    under the models root), else a hub name if the hub is allowed and ``name`` is one."""
    text = name.strip()
    if not text:
        raise OutsideRoot(f"Give the {role} model: a folder under {_roots_named()}"
                          + (", or a hub name." if hub_allowed() else "."))
    given = Path(text)
    shipped = given.parts[0] == "toy_models" if not given.is_absolute() else SHIPPED.holds(given)
    root = SHIPPED if shipped else MODELS
    path = root.resolve(str(Path(*given.parts[1:])) if shipped and not given.is_absolute() else text)
    if path.exists():
        return ModelSource(text, str(path), False)
    missing = f'There is no model folder "{text}" under {_roots_named()}'
    if shipped or given.is_absolute() or text.startswith((".", "~")):
        raise OutsideRoot(missing + ".")
    if not hub_allowed():
        raise OutsideRoot(f"{missing}, and this server loads no hub models ({HUB_ENV} is off).")
    # transformers reads a hub name that is also a folder of the working folder from that folder
    if not _is_hub_name(text) or given.exists():
        raise OutsideRoot(f"{missing}, and it is no Hugging Face hub name.")
    return ModelSource(text, text, True)


def shown_name(path: str | Path) -> str:
    """A folder under a root as a reader names it (``toy_models/…``, or its name under the models
    root); any other path as it is."""
    path = Path(path).resolve()
    for root, prefix in ((SHIPPED, "toy_models"), (MODELS, "")):
        if root.holds(path):
            return str(Path(prefix, path.relative_to(root.path())))
    return str(path)


def hide(message: str, sources: tuple[ModelSource, ...] = ()) -> str:
    """``message`` with the server's paths replaced: each local source's folder by its name, the
    roots by their names, the home folder by ~."""
    for source in sources:
        if not source.hub:
            message = message.replace(source.where, source.name)
    message = MODELS.hide(SHIPPED.hide(message))
    home = str(Path.home())
    return message.replace(home, "~") if len(home) > 1 else message


def load(target: ModelSource, draft: ModelSource):
    """``core.decoding.load_pair`` of two located models, named as the reader typed them; any failure
    is a ``PairError`` whose sentence names no server path."""
    from core.decoding import load_pair

    try:
        pair = load_pair(target.where, draft.where)
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - a model the reader named could not be loaded
        text = str(exc).strip()
        message = hide(text.splitlines()[0] if text else type(exc).__name__, (target, draft))
        if isinstance(exc, PairError):
            raise PairError(message) from None
        raise PairError(f"cannot load the model pair ({type(exc).__name__}: {message})") from None
    pair.target_name, pair.draft_name = target.name, draft.name
    return pair
