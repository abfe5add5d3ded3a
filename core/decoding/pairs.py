"""Loading a draft/target pair of Hugging Face causal language models, and checking that they pair.

A pair is usable for speculative decoding when both models read and write the same token ids: the
tokenizers must have the same vocabulary (token -> id) and the same special tokens.  Models whose
embedding matrix is padded beyond the tokenizer (common on hub models) are fine: logits are sliced to
the tokenizer's size, ``ModelPair.vocab_size``.

``load_pair(target, draft)`` takes local directories or hub names; ``bundled_pair("toy")`` loads the toy
pair trained by ``toy_models/train_pair.py``.  Every failure raises ``PairError`` with one sentence.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from core.errors import PairError
from core.decoding.packed_linear import pack_linears
from core.decoding.sources import check_source

#: The dtypes ``load_pair`` and the command line take, by name.
DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
          "bfloat16": torch.bfloat16}


def default_device() -> torch.device:
    """CUDA when available, else Apple MPS, else CPU."""
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def resolve_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype:
    """``None`` means float32 on CPU and MPS, float16 on CUDA."""
    if dtype is None:
        return torch.float16 if device.type == "cuda" else torch.float32
    if isinstance(dtype, torch.dtype):
        return dtype
    try:
        return DTYPES[str(dtype)]
    except KeyError:
        raise PairError(f"unknown dtype {dtype!r}; choose one of {', '.join(DTYPES)}") from None


@dataclass
class ModelPair:
    """A target q and a draft p that share a tokenizer; ``vocab_size`` is the tokenizer's size
    (logits of either model are sliced to it)."""

    target: Any
    draft: Any
    tokenizer: Any
    vocab_size: int
    device: torch.device
    dtype: torch.dtype
    target_name: str = "target"
    draft_name: str = "draft"

    @property
    def eos_ids(self) -> frozenset[int]:
        """Token ids that end a generation (the tokenizer's and the target's generation config's)."""
        ids = set()
        if self.tokenizer.eos_token_id is not None:
            ids.add(int(self.tokenizer.eos_token_id))
        gen = getattr(self.target, "generation_config", None)
        eos = getattr(gen, "eos_token_id", None)
        if isinstance(eos, int):
            ids.add(eos)
        elif isinstance(eos, (list, tuple)):
            ids.update(int(e) for e in eos)
        return frozenset(ids)

    @property
    def max_positions(self) -> int | None:
        """The smaller of the two models' ``max_position_embeddings`` (None if neither says)."""
        vals = [getattr(m.config, "max_position_embeddings", None) for m in (self.target, self.draft)]
        vals = [v for v in vals if isinstance(v, int) and v > 0]
        return min(vals) if vals else None

    def encode(self, text: str) -> list[int]:
        """Prompt text -> token ids (the tokenizer's own special tokens, e.g. BOS, included).
        An empty prompt becomes the BOS token (or EOS when there is no BOS)."""
        ids = list(self.tokenizer(text)["input_ids"]) if text else []
        if not ids:
            start = self.tokenizer.bos_token_id
            if start is None:
                start = self.tokenizer.eos_token_id
            if start is None:
                raise PairError("the prompt is empty and the tokenizer has no BOS or EOS token to start from")
            ids = [int(start)]
        return [int(t) for t in ids]

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=True)


def tokenizer_mismatch(target_tok, draft_tok) -> str | None:
    """Why two tokenizers cannot be used as one (a sentence), or None when they are the same."""
    tv, dv = target_tok.get_vocab(), draft_tok.get_vocab()
    if len(tv) != len(dv):
        return (f"the tokenizers differ: the target's vocabulary has {len(tv)} tokens and the "
                f"draft's {len(dv)}")
    if tv != dv:
        for token, idx in sorted(tv.items(), key=lambda kv: kv[1]):
            if dv.get(token) != idx:
                other = dv.get(token)
                where = f"id {other}" if other is not None else "no id"
                return (f"the tokenizers differ: token {token!r} has id {idx} in the target and "
                        f"{where} in the draft")
    for name in ("bos_token_id", "eos_token_id", "pad_token_id"):
        a, b = getattr(target_tok, name, None), getattr(draft_tok, name, None)
        if a != b:
            return f"the tokenizers differ: {name} is {a} in the target and {b} in the draft"
    return None


def _load_one(source: str | Path, role: str, device: torch.device, dtype: torch.dtype):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    is_local, where = check_source(source, role)
    try:
        if is_local:
            tokenizer = AutoTokenizer.from_pretrained(where)
            model = AutoModelForCausalLM.from_pretrained(where, dtype=dtype)
        else:
            tokenizer, model = _load_hub(where, role, dtype)
    except PairError:
        raise
    except OSError as exc:
        if is_local:
            raise PairError(f"cannot load the {role} model from {where}: {str(exc).splitlines()[0]}") from None
        raise PairError(f"cannot load the {role} model {where!r}: it is not a local directory and "
                        "the Hugging Face hub could not be reached (or has no such model)") from None
    except (ValueError, KeyError) as exc:
        raise PairError(f"cannot load the {role} model from {where}: {str(exc).splitlines()[0]}") from None
    model.to(device)
    model.eval()
    return model, tokenizer


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the Hugging Face hub answers a TCP connection (False when offline mode is set)."""
    import os
    import socket
    from urllib.parse import urlparse

    if os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes"):
        return False
    host = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co")).hostname or "huggingface.co"
    try:
        socket.create_connection((host, 443), timeout=timeout).close()
        return True
    except OSError:
        return False


def _load_hub(name: str, role: str, dtype: torch.dtype):
    """A hub model: from the local HF cache if it is there, else from the hub if it answers."""
    from huggingface_hub.utils import logging as hub_logging
    from transformers import AutoModelForCausalLM, AutoTokenizer

    hub_logging.set_verbosity_error()
    try:
        return (AutoTokenizer.from_pretrained(name, local_files_only=True),
                AutoModelForCausalLM.from_pretrained(name, dtype=dtype, local_files_only=True))
    except OSError:
        pass
    if not hub_reachable():
        raise PairError(f"cannot load the {role} model {name!r}: it is neither a local directory nor "
                        "in the local cache, and the Hugging Face hub cannot be reached")
    return (AutoTokenizer.from_pretrained(name),
            AutoModelForCausalLM.from_pretrained(name, dtype=dtype))


def check_pair(target, draft, target_tok, draft_tok) -> int:
    """Raise ``PairError`` unless the models can be paired; return the shared vocabulary size."""
    why = tokenizer_mismatch(target_tok, draft_tok)
    if why:
        raise PairError(why)
    V = len(target_tok)
    for role, model in (("target", target), ("draft", draft)):
        n_logits = model.get_output_embeddings().weight.shape[0] if model.get_output_embeddings() is not None \
            else getattr(model.config, "vocab_size", V)
        if n_logits < V:
            raise PairError(f"the {role} model has {n_logits} output logits, fewer than the "
                            f"tokenizer's {V} tokens")
    return V


def pair_from_models(target, draft, tokenizer, *, draft_tokenizer=None, device=None, dtype=None,
                     target_name: str = "target", draft_name: str = "draft") -> ModelPair:
    """Wrap two already-loaded models (e.g. built in a test) after the same checks as ``load_pair``."""
    V = check_pair(target, draft, tokenizer, draft_tokenizer if draft_tokenizer is not None else tokenizer)
    device = torch.device(device) if device is not None else next(target.parameters()).device
    dtype = dtype or next(target.parameters()).dtype
    target.eval()
    draft.eval()
    return ModelPair(target, draft, tokenizer, V, device, dtype, target_name, draft_name)


def load_pair(target: str | Path, draft: str | Path, *, device: str | torch.device | None = None,
              dtype: str | torch.dtype | None = None, pack: bool = True) -> ModelPair:
    """Load a target and a draft with ``AutoModelForCausalLM`` and ``AutoTokenizer``, and check
    that they pair.

    Parameters
    ----------
    target, draft : str or pathlib.Path
        Local model directories, or Hugging Face hub names (read from the local cache first, the
        hub only when it answers).
    device : str or torch.device, optional
        Default: CUDA when available, else Apple MPS, else CPU.
    dtype : str or torch.dtype, optional
        "float32", "float64", "float16" or "bfloat16"; default float16 on CUDA, float32 elsewhere.
    pack : bool
        On a CPU, run the linear layers through oneDNN with packed weights
        (``core.decoding.packed_linear``); the numbers are those of ``nn.Linear``.

    Returns
    -------
    ModelPair
        Both models in eval mode on ``device``, the target's tokenizer, and ``vocab_size``, the
        tokenizer's size (both models' logits are sliced to it).

    Raises
    ------
    PairError
        When a path is not a model directory, a model cannot be loaded (or the hub is out of
        reach), the dtype is unknown, the tokenizers differ (vocabulary or special tokens), or a
        model has fewer output logits than the tokenizer has tokens.

    Examples
    --------
    The bundled pair (``toy_models/pystdlib``), on the CPU:

    >>> from core.decoding.pairs import load_pair
    >>> from core.decoding.presets import BUNDLED_PAIRS
    >>> root = BUNDLED_PAIRS["toy"]
    >>> pair = load_pair(root / "target", root / "draft", device="cpu")
    >>> pair.vocab_size, pair.dtype
    (4096, torch.float32)
    >>> load_pair(root / "missing", root / "draft")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    core.errors.PairError: the target path .../toy_models/pystdlib/missing is not a model directory
    """
    device = torch.device(device) if device is not None else default_device()
    dtype = resolve_dtype(dtype, device)
    t_model, t_tok = _load_one(target, "target", device, dtype)
    d_model, d_tok = _load_one(draft, "draft", device, dtype)
    V = check_pair(t_model, d_model, t_tok, d_tok)
    if pack:
        pack_linears(t_model)
        pack_linears(d_model)
    return ModelPair(t_model, d_model, t_tok, V, device, dtype, str(target), str(draft))
