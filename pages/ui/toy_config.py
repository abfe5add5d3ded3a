"""The toy configuration in the sidebar, shared by the toy pages: where p and q come from (a preset,
a seeded random pair, an edited table, or JSON), K, L, T and the methods.

Widget values live in ``st.session_state`` under ``toy_*`` keys (kept across pages by
``routing.keep_state``); ``toy_config()`` renders the sidebar and returns a ``ToyConfig``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
import streamlit as st

from core.analysis.budget import VERIFIERS as BUDGET_VERIFIERS
from core.data.laws import IID_LAW, LAWS
from core.data.shapes import Shape
from core.errors import InvalidInput
from core.rules.params import declared as declared_params
from core.rules.registry import BEST_RULES, resolve
from pages.ui import lazy, routing, rule_params
from pages.ui.cached import SMALL_OUTCOMES, model_spec, models
from pages.ui.error_boundary import explain
from pages.ui.text import all_methods, escape_markdown, method_name
from toy_models import PRESETS, IIDModel, ToyModelError, from_json, random_pair

#: The rules a preset always shows, whatever was chosen before: the tree verifiers that accept the
#: most (``core.rules.registry.BEST_RULES``), so a lecture's link never opens without them.
BEST_METHODS = list(BEST_RULES)


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
    """Select preset ``name`` with its K and L, at T = 1, showing ``BEST_METHODS`` beside the rules
    already chosen."""
    preset = PRESETS[name]
    ss = st.session_state
    ss.toy_source = "Preset"
    ss.toy_preset = name
    ss.toy_K = int(preset.K)
    ss.toy_L = int(preset.L)
    ss.toy_T = 1.0
    shown = [m for m in ss.get("toy_methods", all_methods()) if m in all_methods()]
    ss.toy_methods = shown + [m for m in BEST_METHODS if m in all_methods() and m not in shown]


def preset_label(name: str) -> str:
    """A preset as the picker lists it: its name, its description and the K and L it opens at (the
    description itself names neither, so the configuration line never contradicts the sliders)."""
    preset = PRESETS[name]
    return f"{name}: {preset.description} (opens at K = {preset.K}, L = {preset.L})"


def apply_random(kind: str, V: int, alpha: float, mix: float, seed: int, K: int, L: int, depth: int = 3,
                 T: float = 1.0) -> None:
    """Select the seeded random pair with these parameters at temperature T (how a found
    counterexample opens)."""
    ss = st.session_state
    ss.toy_source = "Seeded random"
    ss.toy_kind, ss.toy_V, ss.toy_alpha, ss.toy_mix, ss.toy_seed = kind, int(V), float(alpha), float(mix), int(seed)
    ss.toy_depth, ss.toy_K, ss.toy_L, ss.toy_T = int(depth), int(K), int(L), float(T)


def _on_preset_change() -> None:
    name = st.session_state.get("toy_preset")
    if name in PRESETS:
        st.session_state.toy_K = int(PRESETS[name].K)
        st.session_state.toy_L = int(PRESETS[name].L)


_choice, _number = routing.choice, routing.number


def _iterations(text: str) -> int:
    value = int(text)
    if value not in MC_ITERATIONS:
        raise ValueError(text)
    return value


def _named_choice(options: dict[str, str]) -> Callable[[str], str]:
    """A link parser reading a URL name of ``options`` (name → label) as its label."""
    def parse(text: str) -> str:
        if text not in options:
            raise ValueError(text)
        return options[text]
    return parse


#: Monte Carlo iterations per method offered by the laboratory.
MC_ITERATIONS = [100, 300, 1000, 3000, 10000]
KINDS = {"iid": "context-independent (i.i.d.)", "markov": "first-order Markov", "table": "context-dependent table"}

#: What the URL holds: parameter → (session-state key, parser of its text, raising ValueError when
#: the text is no value the widget offers).  ``preset`` is applied first, with its K and L.
URL_PARAMS: dict[str, tuple[str, Callable[[str], object]]] = {
    "source": ("toy_source", _choice(SOURCES)),
    "kind": ("toy_kind", _choice(KINDS)),
    "V": ("toy_V", _number(int, 2, 12)),
    "alpha": ("toy_alpha", _number(float, 0.1, 5.0)),
    "mix": ("toy_mix", _number(float, 0.0, 1.0)),
    "seed": ("toy_seed", _number(int, 0, 10**9)),
    "depth": ("toy_depth", _number(int, 1, 4)),
    "p": ("toy_json_p", str),
    "q": ("toy_json_q", str),
    "K": ("toy_K", _number(int, 1, 8)),
    "L": ("toy_L", _number(int, 1, 4)),
    "T": ("toy_T", _number(float, 0.0, 2.0)),
    "methods": ("toy_methods", routing.choices(all_methods)),
    "mc_n": ("lab_mc_n", _iterations),
    "mc_seed": ("lab_mc_seed", _number(int, 0, 10**9)),
    # the rules' own parameters that differ from their defaults (``pages.ui.rule_params``)
    rule_params.LINK: (rule_params.SETTINGS, rule_params.parse_link),
}
#: The toy laboratory's sections, one tab each (URL name → tab label).  Only the open tab is
#: computed and drawn: with all four on one page, a slider change redrew four Plotly charts (which
#: Streamlit mounts afresh whenever a figure changes) and took about 2 s in a browser on two cores.
LAB_SECTIONS = {
    "methods": "1. Every method",
    "drafts": "2. Do more drafts help?",
    "temperature": "3. Temperature",
    "length": "4. Draft length",
    "coupling": "5. Optimal coupling",
    "monte-carlo": "6. Monte Carlo",
    "depth": "7. Gain by depth",
    "loss": "8. What loss buys",
}


def _section(text: str) -> str:
    return _named_choice(LAB_SECTIONS)(text)


def _flag(text: str) -> bool:
    if text not in ("0", "1"):
        raise ValueError(text)
    return text == "1"


#: The K the drafts tab offers: each K to 8, then doublings and their midpoints to 64 (the LP optimum
#: is drawn at all of them; a rule where its exact law answers quickly).
K_GRID = (1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 48, 64)


def _kmax(text: str) -> int:
    value = int(text)
    if value not in K_GRID:
        raise ValueError(text)
    return value


#: The toy laboratory's own parameters, read with the configuration and written by the page
#: (``write_page_url``): the open section, whether its curves draw every chosen method and bound
#: (``every=1``) or the few that tell the story (``core.rules.registry.STORY_RULES``), and the
#: largest K the drafts tab draws (``kmax``).
LAB_PARAMS: dict[str, tuple[str, Callable[[str], object]]] = {"section": ("lab_section", _section),
                                                              "every": ("lab_every", _flag),
                                                              "kmax": ("lab_kmax", _kmax)}
URL_PARAMS.update(LAB_PARAMS)


def lab_section_name(label: str) -> str:
    """The URL name of a section's tab label (``LAB_SECTIONS``); the first for an unknown label."""
    return next((name for name, lab in LAB_SECTIONS.items() if lab == label), next(iter(LAB_SECTIONS)))


#: The claims page's tabs (URL name → tab label): every registered claim, SpecTr-GBV's claims live on
#: the sidebar's configuration, the counterexample search; only the open one is computed.
CLAIMS_TABS = {"all": "1. Every claim", "live": "2. SpecTr-GBV, live", "search": "3. Search for counterexamples"}
#: What the list of claims shows (URL name → label): every claim, or only those that fail here.
CLAIMS_SHOW = {"all": "every claim", "fails": "only the claims that fail here"}
#: The configuration a fresh visit of the claims page opens on: the binary toy with two drafts.
CLAIMS_PRESET = "gbv-lossless"


def claims_tab_name(label: str) -> str:
    """The URL name of a claims tab's label (``CLAIMS_TABS``); the first for an unknown label."""
    return next((name for name, lab in CLAIMS_TABS.items() if lab == label), next(iter(CLAIMS_TABS)))


#: The claims page's own parameters: the open tab and what the list shows.
CLAIMS_PARAMS: dict[str, tuple[str, Callable[[str], object]]] = {
    "tab": ("claims_tab", _named_choice(CLAIMS_TABS)),
    "show": ("claims_show", _named_choice(CLAIMS_SHOW)),
}
URL_PARAMS.update(CLAIMS_PARAMS)


#: The One-step page's own parameters (its drafts, coins, method and reveal position), read with the
#: configuration and written by the page with ``write_page_url`` once its widgets have values.
STEP_PARAMS: dict[str, tuple[str, Callable[[str], object]]] = {
    "method": ("step_method", _choice(all_methods)),
    "draft_seed": ("step_seed", _number(int, 0, 10**9)),
    "coin_seed": ("step_coin", _number(int, 0, 10**9)),
    "shown": ("step_shown", _number(int, 0, 10**6)),
}
URL_PARAMS.update(STEP_PARAMS)


#: The draft's shape on the token-tree pages (Draft trees, one iteration): chains K×L with the
#: sidebar's K and L, or a static tree b typed as the command line's ``--tree`` takes it.
SHAPE_KINDS = {"chains": "chains K×L (K and L in the sidebar)", "tree": "static tree b = (b₁, …, b_L)"}
#: The most drafted tokens a page draws as a tree (and the longest b): beyond, no tree is readable.
MAX_TREE_BUDGET, MAX_TREE_DEPTH = 64, 4


def _branching(text: str) -> str:
    """A branching vector as the URL holds it: 1 to ``MAX_TREE_DEPTH`` whole numbers ≥ 1, with commas."""
    parts = text.split(",")
    if not 1 <= len(parts) <= MAX_TREE_DEPTH or not all(x.isdigit() and int(x) >= 1 for x in parts):
        raise ValueError(text)
    return ",".join(str(int(x)) for x in parts)


#: The token-tree pages' parameters: the shape's kind, the branching vector and the draft law.
TREE_PARAMS: dict[str, tuple[str, Callable[[str], object]]] = {
    "shape": ("tree_kind", _choice(SHAPE_KINDS)),
    "b": ("tree_b", _branching),
    "law": ("tree_law", _choice(LAWS)),
}
URL_PARAMS.update(TREE_PARAMS)


#: The Draft trees page's own parameters: the tree's seed, the budget chart's verifier and largest budget.
TREES_PARAMS: dict[str, tuple[str, Callable[[str], object]]] = {
    "tree_seed": ("trees_seed", _number(int, 0, 10**9)),
    "chart": ("trees_chart_rule", _choice(tuple(BUDGET_VERIFIERS))),
    "chart_max": ("trees_chart_max", _number(int, 4, 16)),
}
URL_PARAMS.update(TREES_PARAMS)


def trees_link() -> dict[str, str]:
    """The query of a link that opens the Draft trees page on this page's models, K and L: the
    configuration this session wrote to the URL, without the page's own parameters, as chains K×L
    drafted by the law last chosen there (``iid`` at first)."""
    own = {"source", "preset", "kind", "V", "alpha", "mix", "seed", "depth", "p", "q", "K", "L", "T"}
    params = {k: v for k, v in st.session_state.get(routing.OWN_URL, {}).items() if k in own}
    return {**params, "shape": "chains", "law": st.session_state.get("tree_law", IID_LAW.name)}


def law_label(name: str) -> str:
    """A draft law as the pickers list it: its name and what it draws."""
    return f"{name}: {LAWS[name].label}"


def tree_controls(cfg: ToyConfig, key: str = "tree") -> tuple[Shape, str] | None:
    """The shape and law pickers of a token-tree page, in one row; returns (Shape, law name), or None
    after showing why the shape is refused (one sentence: a b_d < 1, a b that is not numbers, a tree
    too large to draw).  Chains take K and L from the sidebar; the values live under ``tree_kind``,
    ``tree_b`` and ``tree_law`` (kept across pages and in the URL: ``TREE_PARAMS``)."""
    ss = st.session_state
    ss.setdefault("tree_kind", "chains")
    # b = (2, 1): on two tokens (2, 2) drafts every continuation, and every lossless rule then accepts it all
    ss.setdefault("tree_b", "2,1")
    ss.setdefault("tree_law", IID_LAW.name)
    c1, c2, c3 = st.columns([2, 1, 2], vertical_alignment="bottom")
    kind = c1.radio("Shape", list(SHAPE_KINDS), key="tree_kind", format_func=SHAPE_KINDS.get, horizontal=True,
                    help="Chains: the law draws the K first tokens and each chain goes on i.i.d. Static tree: a "
                         "node of depth d receives b_(d+1) draws per copy, by the law, at every depth.")
    b_text = c2.text_input("b (comma-separated)", key="tree_b", disabled=kind == "chains",
                           help="b₁,…,b_L with every b_d ≥ 1, e.g. 2,2 (the command line's --tree).")
    law = c3.selectbox("Draft law", list(LAWS), key="tree_law", format_func=law_label,
                       help="How the tokens at a node are drawn from p: with replacement (iid), without "
                            "(wor), the k most probable (topk), or the k − 1 most probable and one sampled (greedy).")
    try:
        shape = Shape.chains_of(cfg.K, cfg.L) if kind == "chains" else Shape.parse(b_text)
        if shape.L > MAX_TREE_DEPTH or shape.budget > MAX_TREE_BUDGET:
            raise InvalidInput(f"{shape.label} drafts {shape.budget} tokens at depth {shape.L}; these pages "
                               f"draw trees of at most {MAX_TREE_BUDGET} tokens and depth {MAX_TREE_DEPTH}")
    except InvalidInput as exc:   # one sentence, never a traceback
        write_page_url({"shape": kind, "law": law})
        st.error(escape_markdown(f"This shape cannot be drafted: {str(exc).strip().rstrip('.')}."))
        return None
    write_page_url({"shape": kind, "law": law, **({} if shape.chains else {"b": _branching(b_text.replace(" ", ""))})})
    return shape, law


def tree_flags(shape: Shape, law: str) -> str:
    """The command line's flags for drafts of ``shape`` drafted by ``law``: ``--K K --L L`` for
    chains, ``--tree b1,b2,…`` for a static tree, then ``--law LAW``."""
    where = f"--K {shape.K} --L {shape.L}" if shape.chains else "--tree " + ",".join(map(str, shape.branching))
    return f"{where} --law {law}"


def _read_url() -> str | None:
    """Apply the URL's configuration when it is new (a fresh page, a refresh, a copied link, a link
    with ?preset=NAME: ``routing.read_link``), the preset first with its K and L.  Returns one
    sentence naming what it could not apply, or None."""
    if not routing.is_new_link():
        return None
    ignored = []
    name = st.query_params.get("preset")
    if name is not None:
        if name in PRESETS:
            apply_preset(name)
        else:
            ignored.append(f"there is no preset named “{name}” (the presets are {', '.join(PRESETS)})")
    if rule_params.LINK not in st.query_params:
        st.session_state[rule_params.SETTINGS] = {}      # a link without it opens every rule at its defaults
    ignored += routing.read_link(URL_PARAMS)
    return routing.link_warning(ignored, "the page shows the configuration in the sidebar instead")


def _write_url(origin: dict, methods: bool, monte_carlo: bool, page_params: tuple[str, ...]) -> None:
    """Write the configuration to the URL (``st.query_params``), so that a refresh restores it and a
    copied link opens the same view; ``_read_url`` reads it back.  An edited table is written as
    the JSON of its two models; the page's own ``page_params`` keep the values the URL has (the page
    writes them, ``write_page_url``)."""
    ss = st.session_state
    params = {"source": ss.toy_source}
    if ss.toy_source == "Preset":
        params["preset"] = ss.toy_preset
    elif ss.toy_source == "Seeded random":
        params.update(kind=ss.toy_kind, V=str(ss.toy_V), alpha=f"{ss.toy_alpha:g}", mix=f"{ss.toy_mix:g}",
                      seed=str(ss.toy_seed), **({"depth": str(ss.toy_depth)} if ss.toy_kind == "table" else {}))
    elif ss.toy_source == "JSON":
        params.update(p=ss.toy_json_p, q=ss.toy_json_q)
    elif "p" in origin:
        params.update(source="JSON", p=json.dumps(IIDModel(origin["p"]).to_json()),
                      q=json.dumps(IIDModel(origin["q"]).to_json()))
    params.update(K=str(ss.toy_K), L=str(ss.toy_L), T=f"{ss.toy_T:g}")
    if methods:
        params["methods"] = ",".join(ss.toy_methods)
    if monte_carlo:
        params.update(mc_n=str(ss.lab_mc_n), mc_seed=str(ss.lab_mc_seed))
    if rule_params.link_value():
        params[rule_params.LINK] = rule_params.link_value()
    params.update({k: v for k, v in st.query_params.to_dict().items() if k in page_params})
    routing.write_link(params)


def write_page_url(values: dict[str, object]) -> None:
    """Add a page's own parameters (e.g. ``STEP_PARAMS``) to the URL after its widgets, so that a
    refresh restores them with the configuration."""
    routing.write_link({**st.session_state.get(routing.OWN_URL, {}), **{k: str(v) for k, v in values.items()}})


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
    ss.setdefault("lab_mc_n", 300)
    ss.setdefault("lab_mc_seed", 0)
    ss.setdefault("lab_section", LAB_SECTIONS["methods"])
    ss.setdefault("lab_every", False)
    # every rule at first, the LP-optimal verifier, the lossy ones and a rule of one's own included
    ss.setdefault("toy_methods", all_methods())
    binary = PRESETS["binary-toy"]
    ss.setdefault("toy_json_p", json.dumps(binary.draft.to_json()))
    ss.setdefault("toy_json_q", json.dumps(binary.target.to_json()))


def _named(build: Callable, data, which: str):
    """``build(data)``, with a model error naming the model it is about: "draft (p): probs sums to
    1.1, not 1", as the command line says "draft: …"."""
    try:
        return build(data)
    except ToyModelError as exc:
        raise ToyModelError(f"{which}: {exc}") from None


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


def toy_config(methods: bool = True, K_max: int = 8, L_max: int = 4,
               monte_carlo: bool = False, page_params: tuple[str, ...] = (),
               preset: str | None = None) -> ToyConfig | None:
    """Render the toy-configuration sidebar and return the configuration (None after an error,
    which is shown as one sentence).  The configuration (with the methods, and the Monte Carlo
    settings ``lab_mc_n``/``lab_mc_seed`` when ``monte_carlo``) is kept in the URL, with the page's
    own ``page_params`` (names in ``URL_PARAMS``) that the page writes itself.  A session that has
    no configuration yet (its first toy page) opens on ``preset`` where the page names one; a link's
    configuration then applies over it."""
    if preset is not None and "toy_source" not in st.session_state:
        apply_preset(preset)
    _defaults()
    unapplied = _read_url()
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
                                format_func=preset_label)
            preset = PRESETS[name]
            draft, target, description = preset.draft, preset.target, preset.description
            origin["preset"] = name
        elif source == "Seeded random":
            kind = sb.selectbox("Kind", list(KINDS), key="toy_kind",
                                format_func=KINDS.get)
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
            draft, target = _named(IIDModel, rows[0], "draft (p)"), _named(IIDModel, rows[1], "target (q)")
            description = f"edited context-independent pair, V={V}"
            origin.update(p=rows[0].tolist(), q=rows[1].tolist())
        else:
            jp = sb.text_area("Draft p (JSON)", key="toy_json_p", height=110,
                              help='{"kind": "iid", "probs": [...]}, {"kind": "markov", ...} or {"kind": "table", ...}')
            jq = sb.text_area("Target q (JSON)", key="toy_json_q", height=110)
            draft, target = _named(from_json, jp, "draft (p)"), _named(from_json, jq, "target (q)")
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
                                format_func=method_name, help="Every method keeps its colour on every page.")
        rule_params.controls(chosen, sb)
    _write_url(origin, methods, monte_carlo, page_params)
    if unapplied:
        st.warning(unapplied)
    if error is not None:
        st.error(error)
        return None
    try:
        draft.with_temperature(float(T))
        spec = model_spec(draft, target, float(T), rule_params.settings())
    except Exception as exc:  # noqa: BLE001
        st.error(explain(exc, "the models"))
        return None
    origin.update(K=int(K), L=int(L), T=float(T))
    return ToyConfig(spec, int(draft.V), int(K), int(L), float(T), tuple(chosen), description, origin)


def config_caption(cfg: ToyConfig) -> str:
    """The one-line Markdown summary of ``cfg`` shown under each toy page's title."""
    return (f"**Configuration:** {cfg.description}; V = {cfg.V}, K = {cfg.K}, L = {cfg.L}, T = {cfg.T:g} "
            f"({cfg.outcomes:,} possible draft outcomes V^(K·L)).")


def cli_commands(cfg: ToyConfig, methods: list[str], bound_kinds: list[str],
                 monte_carlo: tuple[int, int] | None = None, drafts: str | None = None) -> tuple[str, str, str]:
    """(p JSON, q JSON, shell commands) reproducing a toy page's numbers with ``python -m core``:
    the exact laws of ``methods`` (``--method all`` when they are every registered rule), the bounds
    ``bound_kinds`` (the command line's names: lp, acausal, cic, relaxation) and, with
    ``monte_carlo`` = (n, seed), the Monte Carlo runs.  ``drafts`` replaces ``--K K --L L`` (a token
    tree's ``--tree b --law LAW``: ``tree_flags``)."""
    models = json.loads(cfg.spec)
    common = f"--draft p.json --target q.json {drafts or f'--K {cfg.K} --L {cfg.L}'} --temperature {cfg.T:g}"
    each = ["all"] if methods == all_methods() else methods
    settings = json.loads(cfg.spec).get("params", {})

    def params(m: str) -> str:
        """``--param RULE.NAME=VALUE`` for each parameter ``m`` (every rule, for all) runs with."""
        return "".join(f" --param {rule}.{name}={text}" for rule, values in sorted(settings.items())
                       if m in ("all", rule) for name, text in sorted(_texts(rule, values).items()))
    lines = [f"python -m core exact {common} --method {m}{params(m)}" for m in each]
    lines += [f"python -m core bound {common} --kind {k}" for k in bound_kinds]
    if monte_carlo is not None:
        n, seed = monte_carlo
        lines += [f"python -m core montecarlo {common} --method {m} --n {n} --seed {seed}{params(m)}"
                  for m in methods]
    return json.dumps(models["draft"]), json.dumps(models["target"]), "\n".join(lines)


def _texts(rule: str, values: dict) -> dict[str, str]:
    """A rule's settings as the command line writes their values (``Param.text``)."""
    declared = {p.name: p for p in declared_params(resolve(rule))}
    return {name: declared[name].text(value) for name, value in values.items() if name in declared}


def copy_configuration(cfg: ToyConfig, methods: list[str], bound_kinds: list[str], key: str,
                       label: str = "Copy this configuration: the command lines that reproduce these numbers",
                       monte_carlo: tuple[int, int] | None = None, caption: str | None = None,
                       drafts: str | None = None) -> None:
    """The "copy this configuration" box of a toy page: the two models as JSON and the command lines
    of ``cli_commands``, then ``caption``.  Drawn only while open (``lazy.expander``): its code
    blocks would load the syntax highlighter into every first render of the page."""
    box = lazy.expander(label, key)
    if box is None:
        return
    with box:
        p_json, q_json, commands = cli_commands(cfg, methods, bound_kinds, monte_carlo, drafts)
        st.markdown("Save the two models below as `p.json` (draft) and `q.json` (target), then run:")
        c_p, c_q = st.columns(2)
        c_p.code(p_json, language="json")
        c_q.code(q_json, language="json")
        st.code(commands, language="bash")
        if caption:
            st.caption(caption)


def root_table(cfg: ToyConfig) -> pd.DataFrame:
    """p(·|∅), q(·|∅) and q/p per token (after temperature)."""
    draft, target = cfg.models
    p, q = draft.cond(()), target.cond(())
    return pd.DataFrame({"token": list(range(cfg.V)), "p(token) draft": p, "q(token) target": q,
                         "q/p": np.where(p > 0, q / np.where(p > 0, p, 1), np.inf)}).set_index("token")
