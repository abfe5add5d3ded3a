"""The rules' own parameters on the toy pages: one control per parameter a shown rule declares
(``core.rules.params.Param``), kept in the session and in the link.

The values that differ from a rule's defaults live in ``st.session_state[SETTINGS]`` as settings
{rule: {name: value}}; the link holds them as one query entry, ``params`` (``LINK``), written by
``core.rules.params.encode`` (``eagle.release:eagle2,typical.epsilon:0.05``), so a claim's link can
open a rule with the parameters the claim used.  The toy configuration puts them into its ``spec``
(``pages.ui.cached.model_spec``), so every cached result is keyed by them and every rule is built
with its own (``cached``).
"""
from __future__ import annotations

import streamlit as st

from core.rules.params import ParamError, declared, decode, encode
from core.rules.registry import REGISTRY, resolve
from pages.ui.text import escape_markdown, short

#: Where the session keeps the settings that differ from the defaults.
SETTINGS = "rule_params"
#: The link's query entry.
LINK = "params"
#: Where a refused value's sentence waits for the next run to show it.
ERROR = "rule_params_error"


def parse_link(text: str) -> dict:
    """A link's ``params`` entry as settings (``ParamError``, a ``ValueError``, for one the page cannot
    apply: ``routing.read_link`` then names it)."""
    return decode(text, REGISTRY)


def settings() -> dict[str, dict]:
    """The settings of this session (values that differ from the rules' defaults)."""
    return st.session_state.get(SETTINGS, {})


def link_value() -> str:
    """The settings as the link writes them ("" for none)."""
    known = {rule: values for rule, values in settings().items() if rule in REGISTRY and values}
    return encode(known, REGISTRY)


def _settable(method: str):
    return [p for p in declared(resolve(method)) if p.settable] if method in REGISTRY else []


def _store(method: str, name: str, key: str) -> None:
    """A control's on_change: keep its value if the parameter takes it, else say why."""
    param = next(p for p in _settable(method) if p.name == name)
    current = {rule: dict(values) for rule, values in settings().items()}
    try:
        value = param.check(st.session_state[key])
    except ParamError as exc:
        st.session_state[ERROR] = f"{short(method)}: {exc}"
        return
    values = current.setdefault(method, {})
    if value == param.default:
        values.pop(name, None)
    else:
        values[name] = value
    st.session_state[SETTINGS] = {rule: v for rule, v in current.items() if v}


def controls(methods, container) -> None:
    """The parameters of the rules among ``methods`` that declare any, one control each, in an
    expander of ``container`` (the sidebar)."""
    rules = [m for m in methods if _settable(m)]
    if not rules:
        return
    ss = st.session_state
    box = container.expander("Rule parameters", expanded=bool(settings()))
    if ERROR in ss:
        box.error(escape_markdown(ss.pop(ERROR)))
    for method in rules:
        for param in _settable(method):
            key = f"param_{method}_{param.name}"
            ss[key] = settings().get(method, {}).get(param.name, param.default)
            label = f"{short(method)}: {param.name}"
            common = dict(key=key, help=param.help or None, on_change=_store, args=(method, param.name, key))
            if param.choices:
                box.selectbox(label, list(param.choices), **common)
            elif param.type is bool:
                box.checkbox(label, **common)
            elif param.type in (int, float):
                bounds = param.interval
                limits = {}
                if bounds and bounds[1] and bounds[0] > float("-inf"):
                    limits["min_value"] = param.type(bounds[0])
                if bounds and bounds[3] and bounds[2] < float("inf"):
                    limits["max_value"] = param.type(bounds[2])
                box.number_input(label, step=1 if param.type is int else 0.01, **limits,
                                 **({"format": "%.4g"} if param.type is float else {}), **common)
            else:
                box.text_input(label, **common)
