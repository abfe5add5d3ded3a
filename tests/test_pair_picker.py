"""The live pages' helpers in ``pages.ui.pair_picker``: background model loads that a rerun cannot
break, incremental token texts, and text shown as written (never as Markdown)."""
from __future__ import annotations

import html
import re
import threading
import time

import pytest

pytest.importorskip("streamlit")
pytest.importorskip("transformers")
from markdown_it import MarkdownIt  # noqa: E402
from streamlit.runtime.scriptrunner_utils.exceptions import StopException  # noqa: E402

from pages.ui import pair_picker, text  # noqa: E402

CODE = "class T:\n    def _test_test_with_path(self):\n\n\n        return __init__ * 2\n"


@pytest.fixture(scope="module")
def toy():
    from core.decoding import toy_pair
    try:
        return toy_pair()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"bundled pair unavailable: {exc}")


# -- loads --------------------------------------------------------------------------------------

def test_an_interrupted_wait_leaves_the_load_running_and_the_next_wait_gets_it():
    """Streamlit stops a script by raising in its thread: the load goes on and is picked up, once."""
    loads, gate, calls = pair_picker.BackgroundLoads(), threading.Event(), []

    def load():
        calls.append(1)
        gate.wait(5)
        return "pair"

    def rerun(_elapsed):
        raise StopException()

    with pytest.raises(StopException):
        loads.wait("k", load, on_wait=rerun, poll_s=0.01)
    gate.set()
    assert loads.wait("k", load) == "pair"
    assert len(calls) == 1


def test_a_load_interrupted_inside_is_not_kept_and_the_next_load_works():
    """A loader that raises a Streamlit-like exception mid-load, then a plain failure: neither is kept."""
    loads = pair_picker.BackgroundLoads()
    outcomes = iter([StopException(), RuntimeError("Cannot copy out of meta tensor; no data!"), "pair"])

    def load():
        out = next(outcomes)
        if isinstance(out, BaseException):
            raise out
        return out

    with pytest.raises(StopException):
        loads.wait("k", load)
    with pytest.raises(RuntimeError):
        loads.wait("k", load)
    assert loads.wait("k", load) == "pair"


def test_concurrent_loads_run_one_at_a_time():
    loads, running, peak = pair_picker.BackgroundLoads(), [0], [0]
    lock = threading.Lock()

    def load():
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        return "pair"

    results = []
    threads = [threading.Thread(target=lambda k=k: results.append(loads.wait(k, load))) for k in "abc"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["pair"] * 3 and peak[0] == 1


def test_a_failed_pair_load_is_not_cached_and_the_real_pair_then_loads(monkeypatch, toy):
    """``loaded_pair`` (st.cache_resource) after a load interrupted inside: the next call loads a
    complete pair (no weight left on the meta device) that generates."""
    real = pair_picker._load
    failing = iter([True])

    def load(*args):
        if next(failing, False):
            raise StopException()
        return real(*args)

    monkeypatch.setattr(pair_picker, "_load", load)
    pair_picker.loaded_pair.clear()
    with pytest.raises(StopException):
        pair_picker.loaded_pair(pair_picker.PAIR_SOURCES[0])
    pair = pair_picker.loaded_pair(pair_picker.PAIR_SOURCES[0])
    assert all(p.device.type != "meta" for m in (pair.target, pair.draft) for p in m.parameters())
    gen = pair_picker.generate(pair, "bv", 2, 2, 0.0, "def main():\n", 8, 0)
    assert gen.metrics.tokens_generated >= 1
    pair_picker.loaded_pair.clear()


# -- token texts --------------------------------------------------------------------------------

def test_incremental_token_texts_join_to_the_decoded_text(toy):
    """Texts decoded token by token (in pieces, as the live page receives them) join to the decode
    of all tokens, also across multi-byte characters."""
    tokens = toy.encode("import os\n\n\ndef main():\n    print('héllo → wörld 🙂', __init__)\n") * 3
    texts = pair_picker.TokenTexts(toy)
    for i in range(0, len(tokens), 3):
        texts.extend(tokens[i:i + 3])
    assert len(texts.texts) == len(tokens)
    assert "".join(texts.texts) == toy.decode(tokens)
    assert pair_picker.token_texts(toy, tokens) == texts.texts


# -- text shown as written ----------------------------------------------------------------------

def _rendered_text(markdown_source: str) -> tuple[str, str]:
    """What Markdown (CommonMark with raw HTML, as st.markdown) makes of the source: (html, text)."""
    out = MarkdownIt("commonmark", {"html": True}).render(markdown_source)
    text = html.unescape(out.replace("<p>", "").replace("</p>", ""))
    return out, text


def test_colored_text_is_not_markdown():
    """Generated code keeps its underscores, asterisks and blank lines in the coloured HTML."""
    source = pair_picker.colored_text_html("", [([CODE[:20], CODE[20:60]], CODE[60:], False)])
    out, _ = _rendered_text(source)
    assert "<em>" not in out and "<strong>" not in out
    assert "white-space:pre-wrap" in out
    spans = re.findall(r"<span[^>]*>(.*?)</span>", out, re.S)
    assert html.unescape("".join(spans)) == CODE


def test_error_messages_are_not_markdown():
    message = "Computing the generation failed unexpectedly (KeyError: _test_test_with_path and __init__ * 2 $x$)."
    out, shown = _rendered_text(text.escape_markdown(message))
    assert "<em>" not in out and "<strong>" not in out
    assert shown.strip() == message


def test_fastest_threads_is_one_of_the_candidates(toy):
    import torch
    before = torch.get_num_threads()
    assert pair_picker.fastest_threads(toy, (1, 2), repeats=2) in (1, 2)
    assert torch.get_num_threads() == before


def test_an_empty_token_text_is_not_the_root_symbol():
    """∅ names the root of a draft tree; a token with no text of its own (part of a multi-byte
    character) must not be drawn with the same symbol."""
    assert pair_picker.visible("") == "⟨empty⟩"
    assert pair_picker.visible(" x\n") == "␣x↵"
    assert pair_picker.visible("abcdefghijk") == "abcdefg…"
