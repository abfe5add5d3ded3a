"""A generation's text as a page shows it: the text each token adds, a token's text for a node label,
and the generated text coloured by iteration (accepted draft tokens, correction and bonus tokens)."""
from __future__ import annotations

import html

__all__ = ["TokenTexts", "token_texts", "visible", "ColoredText", "colored_text_html", "LEGEND_HTML"]


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
