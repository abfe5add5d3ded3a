"""The one way tensors leave the models' device: ``to_host``.

Every device-to-host conversion of the decoder goes through ``to_host`` (a test counts its calls:
at most two per iteration, one for the draft's node vectors and one for the target's).  Several
tensors given together travel as ONE float64 tensor: they are flattened and concatenated on the
device, copied once, and split again on the host.  Integer tensors ride in float64 exactly (token
ids, node indices: far below 2^53) and come back as int64.  On a GPU each copy is also a
synchronisation, so one copy instead of one per vector is what keeps the device busy (an
iteration would otherwise make 13 copies).
"""
from __future__ import annotations

import numpy as np
import torch

#: Integers above this lose precision in float64; ``to_host`` refuses them rather than round them.
EXACT_INT = 2 ** 53


def float64_device(device: torch.device) -> torch.device:
    """Where the decoder keeps its float64 node vectors and samples: the models' device, except
    Apple MPS, which has no float64 (there the logits come to the CPU first, as before this
    module existed, and each model call costs a copy)."""
    return torch.device("cpu") if device.type == "mps" else device


def to_host(*tensors: torch.Tensor) -> list[np.ndarray]:
    """The tensors as NumPy arrays on the host (float64, or int64 for integer tensors), their
    shapes kept, moved in one copy.

    Examples
    --------
    >>> probs, ids = to_host(torch.tensor([[0.25, 0.75]]), torch.tensor([3, 1]))
    >>> probs.dtype, probs.shape, ids.dtype, ids.tolist()
    (dtype('float64'), (1, 2), dtype('int64'), [3, 1])
    """
    flat = [t.detach().reshape(-1).to(torch.float64) for t in tensors]   # (MPS: see ``float64_device``)
    host = (flat[0] if len(flat) == 1 else torch.cat(flat)).cpu().numpy()
    out, start = [], 0
    for t in tensors:
        part = host[start:start + t.numel()].reshape(tuple(t.shape))
        start += t.numel()
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            if part.size and np.abs(part).max() >= EXACT_INT:
                raise ValueError("an integer tensor beyond 2^53 cannot travel in float64 exactly")
            part = part.astype(np.int64)
        out.append(part)
    return out
