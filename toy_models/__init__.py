"""Toy draft/target models on small vocabularies, and (in sub-folders) bundled Hugging Face pairs."""
from .models import (IIDModel, MarkovModel, TableModel, ToyModel, ToyModelError, as_distribution,
                     from_json, load, temper, to_json)
from .generate import mixed_draft, random_iid, random_markov, random_pair, random_table, tempered_draft
from .presets import PRESETS, Preset, binary_toy

__all__ = [
    "IIDModel", "MarkovModel", "TableModel", "ToyModel", "ToyModelError", "as_distribution",
    "from_json", "load", "temper", "to_json", "mixed_draft", "random_iid", "random_markov",
    "random_pair", "random_table", "tempered_draft", "PRESETS", "Preset", "binary_toy",
]
