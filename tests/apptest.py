"""What the app's tests share: opening a page with Streamlit's AppTest, reading its figures, and a
tiny random Llama pair for the real-model pages (built on the fly, no download)."""
from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "app.py")
TIMEOUT = 120


def open_page(page: str, query: dict | None = None, state: dict | None = None) -> AppTest:
    """``page`` after its first run, opened through the router as a reader's click does."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    for k, v in (state or {}).items():
        at.session_state[k] = v
    at.run()
    if page != "pages/start.py":
        at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def figures_json(at: AppTest) -> list[dict]:
    """The figures of the page's Plotly charts, as the browser receives them."""
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def figure(at: AppTest, title_part: str) -> dict:
    for fig in figures_json(at):
        title = fig["layout"].get("title", {}).get("text", "")
        if title_part in title:
            return fig
    raise AssertionError(f"no figure titled like {title_part!r}: "
                         f"{[f['layout'].get('title', {}).get('text') for f in figures_json(at)]}")


def section(at: AppTest, name: str) -> AppTest:
    """Open the toy laboratory's tab ``name`` (a key of ``toy_config.LAB_SECTIONS``), as a click on
    it does, and rerun."""
    from pages.ui.toy_config import LAB_SECTIONS
    at.session_state["lab_section"] = LAB_SECTIONS[name]
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def markdown_table(at: AppTest, header: str) -> dict[str, list[str]]:
    """The Markdown table on the page whose first line starts with ``header`` (``pages.ui.text.
    markdown_table``), as the reader sees it: the first cell of each row (escapes removed) to the others."""
    table = next(m.value for m in at.markdown if m.value.startswith(header))
    rows = ([c.strip().replace("\\", "") for c in line.strip().strip("|").split(" | ")]
            for line in table.splitlines()[2:])
    return {cells[0]: cells[1:] for cells in rows}


def open_box(at: AppTest, key: str) -> AppTest:
    """Open the expander under ``key`` (one drawn only while open: ``pages.ui.lazy``), as a click on
    it does, and rerun."""
    at.session_state[key] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def reveal(at: AppTest, shown: int) -> AppTest:
    """Reveal the first ``shown`` steps of the One-step page's verification (where its buttons would
    take it: ``pages/one_step.py``, ``step_pos``) and rerun."""
    at.session_state["step_pos"] = shown
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def slider(at: AppTest, key: str):
    return next(s for s in at.slider if s.key == key)


def no_errors(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def page_texts(at: AppTest) -> list[str]:
    """Every text the page shows: Markdown, captions, alerts, metrics (label and value), headers, the
    cells of its tables (as strings), and its charts' legend names, value labels and titles."""
    out = [e.value for kind in ("markdown", "caption", "info", "warning", "success", "error", "title", "header",
                                "subheader") for e in at.get(kind)]
    out += [f"{m.label} {m.value}" for m in at.metric]
    for df in at.dataframe:
        out += [str(v) for v in df.value.astype(str).to_numpy().ravel()]
    for fig in figures_json(at):
        out.append(str(fig["layout"].get("title", {}).get("text", "")))
        for t in fig["data"]:
            out.append(str(t.get("name", "")))
            text = t.get("text")
            out += [str(x) for x in text] if isinstance(text, list) else [str(text)] if text else []
    return out


#: A number a reader should never see: round-off shown in scientific notation (1.1e-16, 4e-17)
#: where the value is exactly 0 (or 1, or a fraction) to 1e-12.
ROUND_OFF = r"\d(?:\.\d+)?e-(?:1[3-9]|[2-9]\d|\d{3})"




def make_tiny_pair(root) -> tuple[str, str]:
    """Two random one-layer Llama models sharing a small byte-level BPE tokenizer trained on a few
    lines of Python, saved under root/target and root/draft.  Returns the two paths."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
    import torch

    root = Path(root)
    corpus = ["def main():\n    return 0\n", "import os\nimport sys\n", "class Config:\n    pass\n",
              "for i in range(10):\n    print(i)\n", "if __name__ == '__main__':\n    main()\n"] * 20
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>"],
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>",
                                   eos_token="<|endoftext|>", pad_token="<|endoftext|>")
    paths = []
    for name, seed, layers in (("target", 0, 2), ("draft", 1, 1)):
        torch.manual_seed(seed)
        cfg = LlamaConfig(vocab_size=len(fast), hidden_size=32, intermediate_size=64, num_hidden_layers=layers,
                          num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
                          bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id,
                          pad_token_id=fast.pad_token_id)
        model = LlamaForCausalLM(cfg)
        with torch.no_grad():  # a draft close to the target makes acceptance interesting
            for p in model.parameters():
                p.mul_(3.0)
        out = root / name
        model.save_pretrained(out)
        fast.save_pretrained(out)
        paths.append(str(out))
    return paths[0], paths[1]


def pair_state(tiny_pair) -> dict:
    """Session state that makes the real-model pages load the tiny pair from its two folders."""
    target, draft = tiny_pair
    return {"dec_source": "Local folders or hub names", "dec_target": target, "dec_draft": draft}
