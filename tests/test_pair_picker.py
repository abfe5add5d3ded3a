"""The live pages' helpers: background model loads that a rerun cannot break (``pages.ui.pair_picker``),
a seeded generation (``pages.ui.generation``), incremental token texts, and text shown as written,
never as Markdown (``pages.ui.token_text``)."""
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

from core.decoding.plans import StaticPlan  # noqa: E402
from pages.ui import generation, pair_picker, text, token_text  # noqa: E402

CODE = "class T:\n    def _test_test_with_path(self):\n\n\n        return __init__ * 2\n"


@pytest.fixture(scope="module")
def toy():
    from core.decoding import bundled_pair
    try:
        return bundled_pair()
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
    gen = generation.generate(pair, "bv", StaticPlan.chains(2, 2), 0.0, "def main():\n", 8, 0)
    assert gen.metrics.tokens_generated >= 1
    pair_picker.loaded_pair.clear()


# -- token texts --------------------------------------------------------------------------------

def test_incremental_token_texts_join_to_the_decoded_text(toy):
    """Texts decoded token by token (in pieces, as the live page receives them) join to the decode
    of all tokens, also across multi-byte characters."""
    tokens = toy.encode("import os\n\n\ndef main():\n    print('héllo → wörld 🙂', __init__)\n") * 3
    texts = token_text.TokenTexts(toy)
    for i in range(0, len(tokens), 3):
        texts.extend(tokens[i:i + 3])
    assert len(texts.texts) == len(tokens)
    assert "".join(texts.texts) == toy.decode(tokens)
    assert token_text.token_texts(toy, tokens) == texts.texts


# -- text shown as written ----------------------------------------------------------------------

def _rendered_text(markdown_source: str) -> tuple[str, str]:
    """What Markdown (CommonMark with raw HTML, as st.markdown) makes of the source: (html, text)."""
    out = MarkdownIt("commonmark", {"html": True}).render(markdown_source)
    text = html.unescape(out.replace("<p>", "").replace("</p>", ""))
    return out, text


def test_colored_text_is_not_markdown():
    """Generated code keeps its underscores, asterisks and blank lines in the coloured HTML."""
    source = token_text.colored_text_html("", [([CODE[:20], CODE[20:60]], CODE[60:], False)])
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
    assert token_text.visible("") == "⟨empty⟩"
    assert token_text.visible(" x\n") == "␣x↵"
    assert token_text.visible("abcdefghijk") == "abcdefg…"


# -- models only from the folders the app owns (a hosted app is a server) -----------------------

@pytest.fixture(scope="module")
def server(tmp_path_factory, tiny_pair):
    """A server's folders: a models root holding the tiny pair as pair/{target,draft}, a link out of
    it, a model whose tokenizer file links out, a folder that is no model and a model that asks to
    run its own code; beside the root, a private folder with a secret and a model of its own."""
    import json
    import shutil
    from pathlib import Path

    base = tmp_path_factory.mktemp("server")
    root, outside = base / "models", base / "private"
    for folder in (root, outside):
        for role, path in zip(("target", "draft"), tiny_pair):
            shutil.copytree(path, folder / "pair" / role)
    (outside / "secret.txt").write_text("not for students")
    (root / "link").symlink_to(outside / "pair")
    leaky = root / "leaky"
    shutil.copytree(tiny_pair[0], leaky)
    (leaky / "tokenizer.json").unlink()
    (leaky / "tokenizer.json").symlink_to(outside / "pair" / "target" / "tokenizer.json")
    (root / "empty").mkdir()
    custom = root / "custom"
    shutil.copytree(tiny_pair[0], custom)
    config = json.loads((custom / "config.json").read_text())
    config.update(model_type="explorer_custom", auto_map={"AutoConfig": "custom.CustomConfig",
                                                          "AutoModelForCausalLM": "custom.CustomModel"})
    (custom / "config.json").write_text(json.dumps(config))
    (custom / "custom.py").write_text(f"open({str(base / 'ran')!r}, 'w').close()\n"
                                      "from transformers import LlamaConfig, LlamaForCausalLM\n"
                                      "class CustomConfig(LlamaConfig):\n    model_type = 'explorer_custom'\n"
                                      "class CustomModel(LlamaForCausalLM):\n    config_class = CustomConfig\n")
    return Path(root).resolve(), Path(outside).resolve(), base.resolve()


@pytest.fixture
def hosted(server, monkeypatch):
    """The server's models root set, the hub not allowed (the default)."""
    root, outside, base = server
    monkeypatch.setenv("EXPLORER_MODELS_ROOT", str(root))
    monkeypatch.delenv("EXPLORER_ALLOW_HUB", raising=False)
    return server


def refusal(name: str, role: str = "target") -> str:
    from pages.ui import models_root
    with pytest.raises(models_root.OutsideRoot) as caught:
        models_root.locate(name, role)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_model_folders_are_read_under_the_models_root_or_toy_models_only(hosted):
    from pages.ui import models_root
    root, outside, _ = hosted
    target = str(root / "pair" / "target")
    assert models_root.locate("pair/target", "target") == ("pair/target", target, False)
    assert models_root.locate(" ./pair/target ", "target").where == target
    assert models_root.locate(target, "target").where == target                    # absolute, inside
    shipped = models_root.SHIPPED.path() / "pystdlib" / "target"
    assert models_root.locate("toy_models/pystdlib/target", "target").where == str(shipped)
    assert models_root.locate(str(shipped), "target").where == str(shipped)
    assert models_root.shown_name(shipped) == "toy_models/pystdlib/target"
    assert models_root.shown_name(target) == "pair/target"
    for name, words in (("../private/pair/target", 'names a folder above the models root; give a name under it, without ".."'),
                        ("toy_models/../../private", 'without ".."'),
                        (str(outside / "pair" / "target"), "is outside the models root"),
                        ("/etc/passwd", "is outside the models root"),
                        ("link/target", "is outside the models root"),                 # a link out of the root
                        ("leaky", "holds a link to a file outside the models root"),     # a file inside links out
                        ("toy_models/nothing", 'There is no model folder "toy_models/nothing" under the models root'),
                        ("~/.cache", 'There is no model folder "~/.cache"')):
        assert words in refusal(name), name
    # Whether a path outside exists is not said: an outside model folder, the secret beside it and a
    # path that is nowhere get the same sentence but for their names.
    same = {refusal(str(outside / name)).replace(str(outside / name), "NAME")
            for name in ("pair/target", "secret.txt", "no/such/folder")}
    assert len(same) == 1 and "private" not in same.pop()


def test_an_absolute_path_elsewhere_is_refused_as_written(hosted, tmp_path):
    """A path outside the root is refused before the file system is asked: a loop of links out
    there gets the sentence every outside path gets (resolving it raised, and said it existed)."""
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    assert refusal(str(loop / "model")) == refusal(str(tmp_path / "nothing")).replace("nothing", "loop/model")
    root, _, _ = hosted
    (root / "loop").symlink_to(root / "loop")
    try:
        assert "is outside the models root" in refusal("loop")                # a loop inside leads nowhere
    finally:
        (root / "loop").unlink()


def test_hub_names_load_only_where_the_operator_allows_them(hosted, monkeypatch, tmp_path):
    from pages.ui import models_root
    assert "this server loads no hub models (EXPLORER_ALLOW_HUB is off)" in refusal("gpt2")
    assert "EXPLORER_ALLOW_HUB is off" in refusal("HuggingFaceTB/SmolLM2-135M", "draft")
    with pytest.raises(models_root.OutsideRoot, match="starting the app with EXPLORER_ALLOW_HUB=1"):
        models_root.check_hub()
    monkeypatch.setenv("EXPLORER_ALLOW_HUB", "1")
    models_root.check_hub()
    assert models_root.locate("gpt2", "target") == ("gpt2", "gpt2", True)
    assert models_root.locate("HuggingFaceTB/SmolLM2-135M", "draft").hub
    assert not models_root.locate("pair/target", "target").hub                   # a folder under the root first
    assert "it is no Hugging Face hub name" in refusal("not a name!")
    assert 'There is no model folder "/etc"' not in refusal("/etc")                # a path is never a hub name
    monkeypatch.chdir(tmp_path)                                                   # transformers would read this
    (tmp_path / "pages").mkdir()                                                  # folder of the working folder
    assert "it is no Hugging Face hub name" in refusal("pages")


def test_a_load_names_models_as_typed_and_no_server_path(hosted):
    from core.errors import PairError
    from pages.ui import models_root
    root, _, base = hosted
    pair = models_root.load(models_root.locate("pair/target", "target"), models_root.locate("pair/draft", "draft"))
    assert (pair.target_name, pair.draft_name) == ("pair/target", "pair/draft")
    with pytest.raises(PairError) as caught:
        models_root.load(models_root.locate("empty", "target"), models_root.locate("pair/draft", "draft"))
    assert str(caught.value) == "the target directory empty holds no config.json: it is not a Hugging Face model directory"
    assert str(base) not in str(caught.value)


def test_a_model_that_asks_to_run_its_own_code_is_refused_and_its_code_never_runs(hosted):
    """The app loads as the live pages do (``loaded_pair``: a background thread); nothing passes
    ``trust_remote_code``, and transformers refuses a model whose classes are its own code."""
    import pathlib

    from core.errors import PairError
    from pages.ui import models_root
    root, _, base = hosted
    source = (models_root.locate("custom", "target"), models_root.locate("pair/draft", "draft"))
    with pytest.raises(PairError, match="contains custom code which must be executed") as caught:
        pair_picker.loaded_pair(pair_picker.PAIR_SOURCES[3], *source)
    assert str(base) not in str(caught.value) and "\n" not in str(caught.value)
    assert not (base / "ran").exists()
    project = pathlib.Path(__file__).resolve().parents[1]
    assert not [str(f) for top in ("core", "pages") for f in (project / top).rglob("*.py")
                if "trust_remote_code=True" in f.read_text()]


def test_the_live_pages_refuse_folders_outside_the_root_in_one_sentence(hosted):
    """AppTest of the live decoder and the sweeps page (one picker): the pair under the root loads by
    its name; "..", a model folder outside, a link out and a hub name are one sentence each, which
    names no server path and shows nothing of the private folder."""
    from tests.apptest import no_errors, open_page
    root, outside, base = hosted
    for page in ("pages/live_decoder.py", "pages/sweeps.py"):
        at = open_page(page, state={"dec_source": "Local folders or hub names", "dec_target": "pair/target",
                                    "dec_draft": "pair/draft"})
        no_errors(at)
        assert "Loaded: target `pair/target`, draft `pair/draft`" in at.sidebar.caption[-1].value
        for name, words in (("../private/pair/target", "names a folder above the models root"),
                            (str(outside / "pair" / "target"), "is outside the models root"),
                            ("link/target", "is outside the models root"),
                            ("gpt2", "EXPLORER_ALLOW_HUB is off")):
            at.sidebar.text_input(key="dec_target").set_value(name).run()
            assert not at.exception
            [error] = [e.value.replace("\\", "") for e in at.error]          # shown as plain text: unescaped
            assert words in error and "\n" not in error and str(base) not in error.replace(name, "")
            assert "not for students" not in str([e.value for e in at.main.markdown])
        at.sidebar.text_input(key="dec_target").set_value("pair/target").run()
        no_errors(at)


def test_a_link_loads_no_model_outside_the_models_root(hosted, monkeypatch):
    """A link to the live decoder fills the pair picker only: folders outside the root, "..", a hub
    name and a hub preset are refused by the picker's own sentence and nothing is loaded; a link to
    the pair under the root loads it by its name."""
    from tests.apptest import open_page
    root, outside, base = hosted
    loads = []
    real = pair_picker.loaded_pair
    monkeypatch.setattr(pair_picker, "loaded_pair", lambda *args: loads.append(args) or real(*args))
    for query, words in (({"pair": "local", "target": str(outside / "pair" / "target"), "draft": "pair/draft"},
                          "is outside the models root"),
                         ({"pair": "local", "target": "pair/target", "draft": "../private/pair/draft"},
                          "names a folder above the models root"),
                         ({"pair": "local", "target": "gpt2", "draft": "pair/draft"}, "EXPLORER_ALLOW_HUB is off"),
                         ({"pair": "hub"}, "This server loads no models from the Hugging Face hub")):
        at = open_page("pages/live_decoder.py", query=query)
        [error] = [e.value.replace("\\", "") for e in at.error]
        assert words in error and "\n" not in error and str(base) not in error.replace(query.get("target", ""), ""), error
        assert not loads and not at.warning
    at = open_page("pages/live_decoder.py", query={"pair": "local", "target": "pair/target", "draft": "pair/draft"})
    assert not at.error and not at.warning
    assert "Loaded: target `pair/target`, draft `pair/draft`" in at.sidebar.caption[-1].value
    assert [args[0] for args in loads] == [pair_picker.PAIR_SOURCES[3]]


def test_a_hub_preset_is_refused_unless_the_operator_allows_the_hub(hosted, monkeypatch):
    from tests.apptest import open_page
    at = open_page("pages/live_decoder.py", state={"dec_source": "Hub preset"})
    [error] = [e.value.replace("\\", "") for e in at.error]
    assert error.startswith("This server loads no models from the Hugging Face hub, so not a hub preset")
    monkeypatch.setenv("EXPLORER_ALLOW_HUB", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")                  # no network here: the load is tried, and fails
    at.run()
    [error] = [e.value.replace("\\", "") for e in at.error]
    assert "EXPLORER_ALLOW_HUB" not in error and "Hugging Face hub" in error


def test_the_command_line_loads_any_folder(hosted, capsys):
    """The command line runs on the user's own machine: the app's models root is not its business."""
    import json

    from core.cli import main
    _, outside, _ = hosted
    code = main(["decode", "--target", str(outside / "pair" / "target"), "--draft", str(outside / "pair" / "draft"),
                 "--method", "bv", "--K", "1", "--L", "2", "--max-new-tokens", "4", "--threads", "1", "--json"])
    assert code == 0
    assert 1 <= len(json.loads(capsys.readouterr().out)["tokens"]) <= 4


def test_the_bundled_pair_is_named_as_a_reader_types_it(toy, monkeypatch):
    """The sidebar and the sweeps' JSON name the bundled pair by its folders under toy_models/, and
    its missing-pair sentence says no server path."""
    from core.decoding import presets
    from core.errors import PairError
    from pages.ui import models_root
    pair = pair_picker._load(pair_picker.PAIR_SOURCES[0], "", "")
    assert (pair.target_name, pair.draft_name) == ("toy_models/pystdlib/target", "toy_models/pystdlib/draft")
    monkeypatch.setitem(presets.BUNDLED_PAIRS, "toy", models_root.SHIPPED.path() / "missing")
    with pytest.raises(PairError) as caught:
        pair_picker._load(pair_picker.PAIR_SOURCES[0], "", "")
    assert str(caught.value).startswith("the bundled pair is missing under toy_models/missing; train it")


def test_the_roots_examples_hold():
    """``pages.ui.roots``'s docstring examples (pytest collects doctests under core/ only)."""
    import doctest

    from pages.ui import roots
    assert doctest.testmod(roots).failed == 0
