"""Named toy configurations, each a (draft, target) pair plus a suggested K and L.

A description names the models, never K or L: those are the preset's starting values, which a
reader then moves, and a page shows the description beside the values in use."""
from __future__ import annotations

from dataclasses import dataclass

from .models import IIDModel, ToyModel
from .generate import random_pair


@dataclass(frozen=True)
class Preset:
    name: str
    description: str
    draft: ToyModel
    target: ToyModel
    K: int
    L: int


def binary_toy() -> Preset:
    """The binary toy of the block-verification paper (Sun et al., ICLR 2025), docs/maths.md:
    V = 2, context independent, p = (2/3, 1/3), q = (1/3, 2/3), L = 2.
    SD gives E[τ] = 10/9, BV 11/9, the acausal coupling bound 12/9."""
    return Preset("binary-toy", "Binary toy of the block-verification paper: p=(2/3,1/3), "
                  "q=(1/3,2/3)", IIDModel([2 / 3, 1 / 3]), IIDModel([1 / 3, 2 / 3]), K=1, L=2)


def several_drafts() -> Preset:
    """A peaked Markov target with a noisy draft: extra drafts visibly raise E[τ] (the LP optimum
    goes from 1.23 at K = 1 to 2.67 at K = 4, SpecTr from 1.22 to 2.45).  Sized so that every rule's
    exact law and the optimal LP (size 4,290 at K = 4) take well under a second for K = 1..4."""
    draft, target = random_pair("markov", V=2, alpha=0.5, mix=0.6, seed=2)
    return Preset("several-drafts", "Why several drafts help: V=2 Markov, noisy draft",
                  draft, target, K=3, L=3)


def gbv_fidelity() -> Preset:
    """The binary toy at K = 2: SpecTr-GBV's output law can be measured against q."""
    base = binary_toy()
    return Preset("gbv-lossless", "Is SpecTr-GBV lossless? The binary toy with two drafts",
                  base.draft, base.target, K=2, L=2)


def three_token_toy() -> Preset:
    """The V = 3 toy of the token-tree test vectors (docs/maths.md, "Token trees"): context
    independent, p = (1/2, 1/3, 1/6), q = (1/6, 1/3, 1/2); rank by p is the token order, while q
    prefers the tokens p drafts least, so the draft law matters."""
    return Preset("three-token-toy", "Three-token toy of the token-tree vectors: p=(1/2,1/3,1/6), "
                  "q=(1/6,1/3,1/2)", IIDModel([1 / 2, 1 / 3, 1 / 6]),
                  IIDModel([1 / 6, 1 / 3, 1 / 2]), K=2, L=2)


PRESETS = {p.name: p for p in (binary_toy(), several_drafts(), gbv_fidelity(), three_token_toy())}
