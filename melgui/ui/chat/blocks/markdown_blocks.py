"""Splits streamed Markdown into frozen segments and one open tail (no Qt here).

Streaming cost stays flat because only the open tail is re-rendered: a blank line, a
heading, or a closed code fence freezes what came before. Long open blocks are cut too
(code every CODE_CHUNK_LINES lines, lists before an item once MAX_OPEN_LINES is passed),
so the tail, and with it the cost of one token, stays bounded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

CODE_CHUNK_LINES = 30
MAX_OPEN_LINES = 40
HARD_MAX_OPEN_LINES = 200

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)")
_HEADING = re.compile(r"^ {0,3}#{1,6}(\s|$)")
_LIST_ITEM = re.compile(r"^ {0,3}([-*+]|\d{1,9}[.)])\s")


@dataclass(frozen=True, slots=True)
class Segment:
    """A piece of one assistant message, rendered on its own.

    For code, `first` chunks draw the header (language and Copy) and `code_id` names the
    fenced block whose whole text `MarkdownSplitter.code_text` returns.
    """

    kind: Literal["markdown", "code"]
    text: str
    lang: str = ""
    code_id: int = 0
    first: bool = True
    last: bool = True


class MarkdownSplitter:
    """Feed text deltas; get frozen segments back; ask for the open tail when repainting."""

    def __init__(self, first_code_id: int = 1) -> None:
        self._partial: list[str] = []  # the current line, not yet ended by a newline
        self._lines: list[str] = []  # complete lines of the open block
        self._fence: tuple[str, int] | None = None  # (char, length) inside a fenced block
        self._lang = ""
        self._code_id = first_code_id - 1
        self._code_first = True
        self._code_texts: dict[int, list[str]] = {}

    def feed(self, text: str) -> list[Segment]:
        """Add streamed text; returns the segments that became final."""
        if "\n" not in text:
            if text:
                self._partial.append(text)
            return []
        head, *middle, rest = text.split("\n")
        frozen: list[Segment] = []
        self._partial.append(head)
        for line in ["".join(self._partial), *middle]:
            frozen.extend(self._take_line(line))
        self._partial = [rest] if rest else []
        return frozen

    def tail(self) -> Segment | None:
        """The open part, to render again on every repaint; None when there is none."""
        partial = "".join(self._partial)
        if self._fence is not None:
            lines = self._lines + ([partial] if partial else [])
            return self._code_segment("\n".join(lines), last=False)
        text = "\n".join([*self._lines, partial]) if self._lines else partial
        if not text.strip():
            return None
        return Segment("markdown", text)

    def finish(self) -> list[Segment]:
        """The message ended: everything still open becomes final."""
        frozen: list[Segment] = []
        if self._partial:
            line = "".join(self._partial)
            self._partial = []
            frozen.extend(self._take_line(line))
        if self._fence is not None:
            frozen.append(self._code_segment("\n".join(self._lines), last=True))
            self._lines = []
            self._fence = None
        frozen.extend(self._flush_markdown())
        return frozen

    def code_text(self, code_id: int) -> str:
        """The whole text of fenced block `code_id` so far (for the Copy button)."""
        return "\n".join(self._code_texts.get(code_id, []))

    def code_texts(self) -> dict[int, str]:
        """Every fenced block of this message by id."""
        return {code_id: "\n".join(lines) for code_id, lines in self._code_texts.items()}

    @property
    def next_code_id(self) -> int:
        """The first id a following message's splitter should use."""
        return self._code_id + 1

    def _take_line(self, line: str) -> list[Segment]:
        if self._fence is not None:
            return self._code_line(line)
        opening = _FENCE.match(line)
        if opening:
            frozen = self._flush_markdown()
            marker = opening.group(1)
            self._fence = (marker[0], len(marker))
            self._lang = opening.group(2)
            self._code_id += 1
            self._code_first = True
            self._code_texts[self._code_id] = []
            return frozen
        if not line.strip():
            return self._flush_markdown()
        if _HEADING.match(line):
            frozen = self._flush_markdown()
            return [*frozen, Segment("markdown", line)]
        frozen = []
        if len(self._lines) >= HARD_MAX_OPEN_LINES or (
            len(self._lines) >= MAX_OPEN_LINES and _LIST_ITEM.match(line)
        ):
            frozen = self._flush_markdown()
        self._lines.append(line)
        return frozen

    def _code_line(self, line: str) -> list[Segment]:
        assert self._fence is not None
        char, length = self._fence
        stripped = line.strip()
        if stripped.startswith(char * length) and not stripped.strip(char):
            segment = self._code_segment("\n".join(self._lines), last=True)
            self._lines = []
            self._fence = None
            return [segment]
        self._lines.append(line)
        self._code_texts[self._code_id].append(line)
        if len(self._lines) >= CODE_CHUNK_LINES:
            segment = self._code_segment("\n".join(self._lines), last=False)
            self._lines = []
            self._code_first = False
            return [segment]
        return []

    def _code_segment(self, text: str, *, last: bool) -> Segment:
        return Segment("code", text, self._lang, self._code_id, self._code_first, last)

    def _flush_markdown(self) -> list[Segment]:
        if not self._lines:
            return []
        text = "\n".join(self._lines)
        self._lines = []
        return [Segment("markdown", text)]
