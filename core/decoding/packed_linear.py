"""Linear layers through oneDNN with weights packed once, for decoding on a CPU.

A decoder step multiplies a few rows (one token, or the L + 1 tokens of a verification pass, or K
drafts) by each weight matrix.  For float32 torch sends ``nn.Linear`` to MKL's sgemm, which on the
AMD EPYC (Zen 4) CPU this project runs on is slow for small row counts: 2 and 3 rows cost about 2
and 3 times one row and 4 to 20 rows about 2.5 times, and the one-row case itself runs well below
the memory bandwidth.  oneDNN's inner product with the weight reordered once into its blocked
layout (``torch.ops.mkldnn._reorder_linear_weight`` / ``_linear_pointwise``, the kernels torch's
own compiler uses for frozen CPU linear layers) has no such steps.  Measured side by side on that
CPU with two threads, SmolLM2-135M in float32 with a 100-token cache: a one-token step 56 -> 39
ms, a four-token step 79 -> 39 ms, 4 rows of 5 tokens 99 -> 63 ms; logits agree to float32
rounding (largest relative difference 3e-6, total variation at T = 0.7 under 1e-5).

oneDNN has a fixed cost per call (measured 20-35 us on that CPU, one thread), so small layers stay
``nn.Linear``: below ``MIN_ELEMENTS`` weights MKL wins (a 256 x 256 layer, one row: 6 against 38
us), above it oneDNN does (4096 x 256: 108 against 76 us; 4 rows 455 against 103 us).  On the
bundled toy pair that packs only the two output heads; on SmolLM2 every layer but the 192 x 576 key
and value projections.

Packing changes where the time goes, not what is computed, so a speculative decoder and its
autoregressive baseline must run the same packed target to compare fairly; both read the models of
one ``ModelPair``.
"""
from __future__ import annotations

import functools

import torch
from torch import nn

#: Weight matrices with fewer elements than this are left to ``nn.Linear`` (see above).
MIN_ELEMENTS = 2 ** 18

#: dtypes oneDNN packs on every CPU with AVX-512 (float16 needs AVX512-FP16 or AVX-NE-CONVERT).
PACKABLE = (torch.float32, torch.bfloat16)


class PackedLinear(nn.Module):
    """``y = x W^T + b`` with W packed for oneDNN; ``weight`` and ``bias`` stay the original
    parameters (shared, not copied), so ``state_dict``, tied embeddings and device moves see an
    ``nn.Linear``'s tensors.  Inputs off the CPU, of another dtype or needing gradients take the
    plain ``F.linear`` path."""

    def __init__(self, linear: nn.Linear):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.weight = linear.weight
        self.bias = linear.bias
        self._pack()

    def _pack(self) -> None:
        # A plain attribute, not a buffer: ``.to()`` and ``state_dict`` must not see the opaque tensor.
        self._packed = torch.ops.mkldnn._reorder_linear_weight(self.weight.detach(), None)
        # In-place writes to the weight (``load_state_dict``, ``copy_``) bump its version counter;
        # the packed copy is rebuilt then, never used stale.
        self._packed_version = self.weight._version

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if (x.device.type != "cpu" or x.dtype != self._packed.dtype or self.weight.device.type != "cpu"
                or (torch.is_grad_enabled() and (x.requires_grad or self.weight.requires_grad))):
            return nn.functional.linear(x, self.weight, self.bias)
        if self.weight._version != self._packed_version:
            self._pack()
        bias = None if self.bias is None else self.bias.detach()
        return torch.ops.mkldnn._linear_pointwise(x, self._packed, bias, "none", [], "")

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, packed=oneDNN"


@functools.lru_cache(maxsize=None)
def can_pack(dtype: torch.dtype) -> bool:
    """Whether this CPU's oneDNN packs ``dtype`` weights (it refuses float16 without AVX512-FP16)."""
    if dtype not in PACKABLE or not torch.backends.mkldnn.is_available():
        return False
    try:
        torch.ops.mkldnn._reorder_linear_weight(torch.zeros(8, 8, dtype=dtype), None)
    except (RuntimeError, AttributeError):
        return False
    return True


def pack_linears(model: nn.Module, min_elements: int = MIN_ELEMENTS) -> int:
    """Replace, in place, every ``nn.Linear`` of a CPU model with at least ``min_elements`` weights
    of a dtype oneDNN packs by a ``PackedLinear``; return how many were replaced (0 on other
    devices and dtypes)."""
    todo = [(parent, name, child) for parent in model.modules()
            for name, child in parent.named_children() if type(child) is nn.Linear]
    todo = [t for t in todo if t[2].weight.device.type == "cpu" and t[2].weight.numel() >= min_elements
            and can_pack(t[2].weight.dtype)]
    for parent, name, child in todo:
        setattr(parent, name, PackedLinear(child))
    return len(todo)
