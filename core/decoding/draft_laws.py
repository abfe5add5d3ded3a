"""The draft laws on the models' device: the draws at a node, in the law's visit order.

``core.data.laws`` writes each law once for the exact laboratory (draws through coins, visit order,
exact S_i), and each law names its drawer here (``DraftLaw.device_drawer``): the same law drawn
from the decoder's float64 node vectors where they are, rows of nodes at a time, with the run's
seeded ``torch.Generator``, so that nothing crosses to the host while a tree is drafted.  At a node
with P = p(·|u) and k draws:

- ``iid``: k independent draws from P (``sampling.sample``, inverse CDF), in draw order;
- ``wor``: Gumbel-top-k (Kool et al., arXiv 1903.06059): the k largest of log P(x) + G_x, G i.i.d.
  standard Gumbel, in decreasing order, are k draws without replacement from P, renormalised after
  each, in draw order; a token with P = 0 has key −∞;
- ``topk``: the k first tokens in *rank* order (decreasing P, ties to the smaller token id), as
  ``core.data.laws.top_ranked``, so the host's verifier and the device agree on every tie;
- ``greedy``: X ~ P′ = P on Ω∖Top, renormalised, then Top = the k − 1 first in rank order.
"""
from __future__ import annotations

from typing import Callable

import torch

from core.data.laws import DraftLaw
from core.decoding.sampling import sample


def ranked_top(probs: torch.Tensor, k: int) -> torch.Tensor:
    """The k first token ids of each row of ``probs`` (n, V) in rank order (decreasing
    probability, ties to the smaller id): (n, k).  ``torch.topk`` finds the k-th largest value v;
    the ids above v stay, the ids equal to v are taken smallest first (``topk`` picks among ties
    in no stated order), and the k are put in rank order with a stable sort of k entries.  O(V)
    per row: the vocabulary is never sorted."""
    n, V = probs.shape
    k = min(int(k), V)
    if k == 0:
        return torch.empty((n, 0), dtype=torch.long, device=probs.device)
    top = torch.topk(probs, k, dim=-1)
    v = top.values[:, -1:]
    above = (top.values > v).sum(-1, keepdim=True)                    # all of them are in the top k
    ids = torch.arange(V, device=probs.device).expand(n, V)
    tied = torch.where(probs == v, ids, V).topk(k, dim=-1, largest=False).values   # tied ids, ascending
    j = torch.arange(k, device=probs.device).expand(n, k)
    chosen = torch.where(j < above, top.indices, tied.gather(-1, (j - above).clamp(min=0)))
    chosen = chosen.sort(-1).values                                     # by id, then stably by −P
    order = torch.sort(-probs.gather(-1, chosen), dim=-1, stable=True).indices
    return chosen.gather(-1, order)


def gumbel_top(probs: torch.Tensor, k: int, generator: torch.Generator) -> torch.Tensor:
    """k draws without replacement from each row of ``probs`` (n, V), in draw order: the k largest
    keys log P(x) + G_x, G_x = −log(−log U_x), U uniform on [0, 1), in decreasing order."""
    u = torch.rand(probs.shape, dtype=probs.dtype, device=probs.device, generator=generator)
    keys = probs.log() - (-u.log()).log()
    return torch.topk(keys, int(k), dim=-1).indices


def inverse_cdf(probs: torch.Tensor, k: int, generator: torch.Generator) -> torch.Tensor:
    """k independent draws from each row of ``probs`` (n, V), in draw order: (n, k)."""
    return sample(probs.repeat_interleave(int(k), dim=0), generator).reshape(-1, int(k))


def sampled_then_top(probs: torch.Tensor, k: int, generator: torch.Generator) -> torch.Tensor:
    """One draw X from each row without its k − 1 first tokens in rank order (Top), renormalised,
    then Top: (n, k)."""
    top = ranked_top(probs, k - 1)
    rest = probs.scatter(-1, top, 0.0)
    return torch.cat([sample(rest, generator)[:, None], top], dim=-1)


#: Each law's drawer, by the name the law gives (``DraftLaw.device_drawer``): (probs, k, generator)
#: -> (n, k) token ids.
DEVICE_DRAWERS: dict[str, Callable[[torch.Tensor, int, torch.Generator], torch.Tensor]] = {
    "inverse_cdf": inverse_cdf,
    "gumbel_top": gumbel_top,
    "ranked_top": lambda probs, k, generator: ranked_top(probs, k),
    "sampled_then_top": sampled_then_top,
}


def draw_on_device(law: DraftLaw, probs: torch.Tensor, k: int, generator: torch.Generator) -> torch.Tensor:
    """The k draws of ``law`` at each row's node, (n, k), in the law's visit order (module
    docstring), by the drawer the law names."""
    return DEVICE_DRAWERS[law.device_drawer](probs, k, generator)
