"""The toy configuration in the sidebar, shared by the toy pages: where p and q come from (a preset,
a seeded random pair, an edited table, or JSON), K, L, T and the methods.

Widget values live in ``st.session_state`` under ``toy_*`` keys (kept across pages by
``routing.keep_state``); ``toy_config()`` renders the sidebar and returns a ``ToyConfig``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from pages.ui import figures
from pages.ui.cached import SMALL_OUTCOMES, model_spec, models
from pages.ui.errors import explain
from pages.ui.text import all_methods
from toy_models import PRESETS, IIDModel, ToyModelError, from_json, random_pair

DEFAULT_METHODS = ["sd", "bv", "spectr", "specinfer", "spectr_gbv", "rbv", "best_of_k_bv"]


@dataclass(frozen=True)
class ToyConfig:
    """One toy configuration: the models (as ``spec``), V, K, L, T and the chosen methods."""
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
        """(draft p, target q) at temperature T."""
        return models(self.spec)

    @property
    def outcomes(self) -> int:
        """Number of possible draft outcomes, V^(K·L)."""
        return self.V ** (self.K * self.L)

    @property
    def small(self) -> bool:
        """Whether exact answers come within a second (at most ``SMALL_OUTCOMES`` draft outcomes)."""
        return self.outcomes <= SMALL_OUTCOMES


SOURCES = ["Preset", "Seeded random", "Edit p and q (table)", "JSON"]


def apply_preset(name: str) -> None:
    """Select preset ``name`` with its K and L, at T = 1."""
    preset = PRESETS[name]
    st.session_state.toy_source = "Preset"
    st.session_state.toy_preset = name
    st.session_state.toy_K = int(preset.K)
    st.session_state.toy_L = int(preset.L)
    st.session_state.toy_T = 1.0


def apply_random(kind: str, V: int, alpha: float, mix: float, seed: int, K: int, L: int, depth: int = 3) -> None:
    """Select the seeded random pair with these parameters, at T = 1 (how a found counterexample opens)."""
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
    """The one-line Markdown summary of ``cfg`` shown under each toy page's title."""
    return (f"**Configuration:** {cfg.description}; V = {cfg.V}, K = {cfg.K}, L = {cfg.L}, T = {cfg.T:g} "
            f"({cfg.outcomes:,} possible draft outcomes V^(K·L)).")


def root_table(cfg: ToyConfig) -> pd.DataFrame:
    """p(·|∅), q(·|∅) and q/p per token (after temperature)."""
    draft, target = cfg.models
    p, q = draft.cond(()), target.cond(())
    return pd.DataFrame({"token": list(range(cfg.V)), "p(token) draft": p, "q(token) target": q,
                         "q/p": np.where(p > 0, q / np.where(p > 0, p, 1), np.inf)}).set_index("token")
