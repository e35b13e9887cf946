"""The streaming Markdown splitter: final segments, a bounded open tail, code blocks."""

from __future__ import annotations

from melgui.ui.chat.blocks.markdown_blocks import (
    CODE_CHUNK_LINES,
    MAX_OPEN_LINES,
    MarkdownSplitter,
    Segment,
)


def feed_all(text: str, piece: int = 3) -> tuple[list[Segment], MarkdownSplitter]:
    splitter = MarkdownSplitter()
    segments: list[Segment] = []
    for start in range(0, len(text), piece):
        segments.extend(splitter.feed(text[start : start + piece]))
    return segments, splitter


def test_blank_lines_and_headings_freeze_what_came_before() -> None:
    segments, splitter = feed_all("# Title\nFirst para\nstill first.\n\nSecond")
    assert [s.text for s in segments] == ["# Title", "First para\nstill first."]
    assert splitter.tail() == Segment("markdown", "Second")
    assert [s.text for s in splitter.finish()] == ["Second"]
    assert splitter.tail() is None


def test_fenced_code_is_one_block_with_its_language_and_copy_text() -> None:
    text = "Intro\n```python\nx = 1\n\ny = 2\n```\nAfter\n"
    segments, splitter = feed_all(text, piece=2)
    segments += splitter.finish()
    kinds = [(s.kind, s.text) for s in segments]
    assert kinds == [("markdown", "Intro"), ("code", "x = 1\n\ny = 2"), ("markdown", "After")]
    code = segments[1]
    assert code.lang == "python" and code.first and code.last
    assert splitter.code_text(code.code_id) == "x = 1\n\ny = 2"


def test_the_open_code_block_is_the_tail_until_it_closes() -> None:
    splitter = MarkdownSplitter()
    assert splitter.feed("```js\nlet a") == []
    tail = splitter.tail()
    assert tail is not None and tail.kind == "code" and tail.text == "let a" and not tail.last
    frozen = splitter.feed(" = 1;\n```\n")
    assert [s.text for s in frozen] == ["let a = 1;"]


def test_long_code_blocks_are_cut_into_chunks_so_the_tail_stays_small() -> None:
    lines = [f"line {n}" for n in range(CODE_CHUNK_LINES * 2 + 5)]
    segments, splitter = feed_all("```\n" + "\n".join(lines) + "\n```\n", piece=7)
    assert [s.kind for s in segments] == ["code", "code", "code"]
    assert segments[0].first and not segments[0].last
    assert not segments[1].first and segments[2].last
    assert splitter.code_text(segments[0].code_id) == "\n".join(lines)


def test_long_lists_are_cut_before_an_item() -> None:
    items = "".join(f"- item {n}\n" for n in range(MAX_OPEN_LINES + 10))
    segments, splitter = feed_all(items)
    assert len(segments) == 1 and segments[0].text.count("\n") == MAX_OPEN_LINES - 1
    tail = splitter.tail()
    assert tail is not None and tail.text.startswith(f"- item {MAX_OPEN_LINES}")


def test_code_ids_continue_across_messages() -> None:
    first = MarkdownSplitter()
    first.feed("```\na\n```\n```\nb\n```\n")
    second = MarkdownSplitter(first.next_code_id)
    (segment,) = second.feed("```\nc\n```\n")
    assert segment.code_id == 3 and second.code_texts() == {3: "c"}


def test_an_unclosed_fence_is_closed_by_finish() -> None:
    splitter = MarkdownSplitter()
    splitter.feed("```py\nprint(1)")
    (segment,) = splitter.finish()
    assert segment.kind == "code" and segment.text == "print(1)" and segment.last
