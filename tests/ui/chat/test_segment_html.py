"""Segments as HTML: Markdown styled for QTextDocument, code highlighted, raw HTML inert."""

from __future__ import annotations

from melgui.ui.chat.blocks.markdown_blocks import Segment
from melgui.ui.chat.blocks.segment_html import MONO, PARAGRAPH, SegmentRenderer
from melgui.ui.runtime.theme import DARK, LIGHT

P = PARAGRAPH


def test_body_paragraphs_have_the_type_scales_line_height() -> None:
    assert P == '<p style="margin-top:4px; margin-bottom:8px; line-height:150%">'


def test_markdown_gets_inline_styles_qt_can_draw() -> None:
    html = SegmentRenderer(LIGHT).markdown("Hi **b** `c`")
    code = f'<code style="background-color:{LIGHT.code_bg}; font-family:{MONO}">c</code>'
    assert html == f"{P}Hi <strong>b</strong> {code}</p>"


def test_raw_html_and_images_stay_text() -> None:
    html = SegmentRenderer(LIGHT).markdown("<script>alert(1)</script> ![img](http://x/y.png)")
    assert html == f"{P}&lt;script&gt;alert(1)&lt;/script&gt; ![img](http://x/y.png)</p>"


def test_tables_get_borders_in_the_theme_colour() -> None:
    html = SegmentRenderer(DARK).markdown("| a | b |\n|---|---|\n| 1 | 2 |")
    assert html.startswith(
        '<table border="1" cellspacing="0" cellpadding="4" '
        f'style="border-color:{DARK.border}; border-style:solid">'
    )
    assert "<th>a</th>" in html and "<td>2</td>" in html


def test_the_first_chunk_of_code_has_its_language_and_a_copy_link() -> None:
    html = SegmentRenderer(LIGHT).code(Segment("code", "x = 1", "python", code_id=3))
    header, _, body = html.partition("</p>")
    assert header == (
        f'<p style="background-color:{LIGHT.code_header}; margin-top:8px; margin-bottom:0;">'
        f'<span style="color:{LIGHT.muted}; font-size:small;">&nbsp;python&nbsp;&nbsp;</span>'
        '<a href="copy:3" style="font-size:small;">Copy</a>'
    )
    assert body == (
        f'<pre style="background-color:{LIGHT.code_bg}; margin-top:0; margin-bottom:8px; '
        f'font-family:{MONO}; white-space:pre-wrap;">x <span style="color: #666">=</span> '
        '<span style="color: #666">1</span></pre>'
    )


def test_a_middle_chunk_of_an_unknown_language_is_escaped_and_has_no_header() -> None:
    segment = Segment("code", "a<b", "nosuchlang", code_id=4, first=False, last=False)
    assert SegmentRenderer(LIGHT).code(segment) == (
        f'<pre style="background-color:{LIGHT.code_bg}; margin-top:0; margin-bottom:0; '
        f'font-family:{MONO}; white-space:pre-wrap;">a&lt;b</pre>'
    )


def test_an_empty_code_block_still_shows_its_frame() -> None:
    html = SegmentRenderer(LIGHT).code(Segment("code", "", "", code_id=5))
    assert "&nbsp;code&nbsp;" in html and html.endswith(
        f'font-family:{MONO}; white-space:pre-wrap;">&nbsp;</pre>'
    )


def test_a_whole_document_is_its_segments_in_order() -> None:
    renderer = SegmentRenderer(LIGHT)
    html = renderer.document("Intro\n\n```sh\nls\n```\n")
    intro = renderer.markdown("Intro")
    code = renderer.code(Segment("code", "ls", "sh", code_id=1))
    assert html == intro + code
