"""Segment → HTML for QTextDocument: Markdown through `markdown`, code through Pygments.

Raw HTML and images in the model's text are shown as text, never interpreted.
"""

from __future__ import annotations

import html
from functools import lru_cache
from typing import Any

import markdown
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from melgui.ui.chat.blocks.markdown_blocks import MarkdownSplitter, Segment
from melgui.ui.runtime.look.tokens import LINE_HEIGHT, SPACE_2XS, SPACE_S, SPACE_XS
from melgui.ui.runtime.theme import Colors

MONO = "'DejaVu Sans Mono', 'Menlo', 'Consolas', monospace"
COPY_SCHEME = "copy"
# Body text: the 1.5 line height of the type scale, a little air between paragraphs.
PARAGRAPH = (
    f'<p style="margin-top:{SPACE_XS}px; margin-bottom:{SPACE_S}px; line-height:{LINE_HEIGHT}%">'
)


def _new_markdown() -> markdown.Markdown:
    md = markdown.Markdown(extensions=["tables", "sane_lists"], output_format="html")
    md.preprocessors.deregister("html_block")
    for pattern in ("html", "image_link", "image_reference", "short_image_ref"):
        md.inlinePatterns.deregister(pattern)
    return md


class SegmentRenderer:
    """Renders segments in one theme; keeps one Markdown instance and cached lexers."""

    def __init__(self, colors: Colors) -> None:
        self.colors = colors
        self._md = _new_markdown()
        self._formatter = HtmlFormatter(
            nowrap=True, noclasses=True, nobackground=True, style=colors.pygments_style
        )

    def render(self, segment: Segment) -> str:
        if segment.kind == "code":
            return self.code(segment)
        return self.markdown(segment.text)

    def markdown(self, text: str) -> str:
        self._md.reset()
        body: str = self._md.convert(text)
        c = self.colors
        # QTextDocument draws <code> and <table> bare; give them a background and borders.
        return (
            body.replace(
                "<code>", f'<code style="background-color:{c.code_bg}; font-family:{MONO}">'
            )
            .replace(
                "<table>",
                f'<table border="1" cellspacing="0" cellpadding="4" '
                f'style="border-color:{c.border}; border-style:solid">',
            )
            .replace("<p>", PARAGRAPH)
            .replace("<ol>", f'<ol style="margin-top:{SPACE_2XS}px; margin-bottom:{SPACE_2XS}px">')
            .replace("<ul>", f'<ul style="margin-top:{SPACE_2XS}px; margin-bottom:{SPACE_2XS}px">')
        )

    def code(self, segment: Segment) -> str:
        c = self.colors
        parts: list[str] = []
        if segment.first:
            label = html.escape(segment.lang or "code")
            parts.append(
                f'<p style="background-color:{c.code_header}; '
                f'margin-top:{SPACE_S}px; margin-bottom:0;">'
                f'<span style="color:{c.muted}; font-size:small;">&nbsp;{label}&nbsp;&nbsp;</span>'
                f'<a href="{COPY_SCHEME}:{segment.code_id}" style="font-size:small;">Copy</a></p>'
            )
        code = segment.text
        if code or segment.first:
            body = self._highlight(code, segment.lang) if code else "&nbsp;"
            bottom = f"{SPACE_S}px" if segment.last else "0"
            parts.append(
                f'<pre style="background-color:{c.code_bg}; margin-top:0; '
                f'margin-bottom:{bottom}; font-family:{MONO}; white-space:pre-wrap;">{body}</pre>'
            )
        return "".join(parts)

    def document(self, text: str) -> str:
        """A whole Markdown text at once (a plan, a reopened message)."""
        splitter = MarkdownSplitter()
        segments = splitter.feed(text) + splitter.finish()
        return "".join(self.render(segment) for segment in segments)

    def _highlight(self, code: str, lang: str) -> str:
        lexer = _lexer(lang.lower())
        if lexer is None:
            return html.escape(code)
        out: str = highlight(code, lexer, self._formatter)
        return out.rstrip("\n")


@lru_cache(maxsize=4)
def shared_renderer(colors: Colors) -> SegmentRenderer:
    """One renderer per theme for every transcript (building one costs milliseconds:
    each pane opened would pay it). Used on the GUI thread only, so one Markdown
    instance serves them all; the render thread has its own."""
    return SegmentRenderer(colors)


@lru_cache(maxsize=4)
def render_thread_renderer(colors: Colors) -> SegmentRenderer:
    """The render thread's own renderer per theme (a Markdown instance is not shared
    across threads; this one is only used there: melgui.ui.runtime.render_thread)."""
    return SegmentRenderer(colors)


@lru_cache(maxsize=64)
def _lexer(lang: str) -> Any:
    if not lang:
        return None
    try:
        return get_lexer_by_name(lang, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


_warm = False


def warm_up() -> None:
    """Load Markdown's and Pygments' modules once, before the first streamed answer."""
    global _warm
    if _warm:
        return
    _warm = True
    from melgui.ui.runtime.theme import LIGHT

    SegmentRenderer(LIGHT).document("# w\n\n- *a* `b`\n\n```python\nx = 1\n```\n")
