"""Split `<think>…</think>` out of streamed answer text.

Servers without a reasoning parser (llama.cpp, Ollama and vLLM when not told, many
proxies) send a reasoning model's thinking inside the content, wrapped in tags that
may be split anywhere across chunks. Only a `<think>` before any answer text opens a
block, so an answer that talks about the tag stays an answer.
"""

from __future__ import annotations

from typing import Literal

Piece = tuple[Literal["text", "reasoning"], str]

OPEN = "<think>"
CLOSE = "</think>"


class ThinkTagSplitter:
    """Feed content text in chunks; get (kind, text) pieces back in order."""

    def __init__(self) -> None:
        self.inside = False
        self._pending = ""  # a tail that may be the start of a tag
        self._answered = False  # non-blank answer text has gone out
        self._after_close = False  # drop the blank lines right after `</think>`

    @property
    def settled(self) -> bool:
        """No tag can open any more and nothing is held back: text is text as it comes."""
        return self._answered and not self.inside and not self._pending and not self._after_close

    def feed(self, text: str) -> list[Piece]:
        if self._answered and not self.inside and not self._pending and not self._after_close:
            return [("text", text)] if text else []  # no tag can open now: the common case
        pieces: list[Piece] = []
        rest = self._pending + text
        self._pending = ""
        while rest:
            tag = CLOSE if self.inside else OPEN if not self._answered else None
            if tag is None:
                self._emit(pieces, rest)
                break
            index = rest.find(tag)
            keep = _partial_tag(rest, tag) if index < 0 else 0
            if tag == OPEN and rest[: index if index >= 0 else len(rest) - keep].strip():
                self._emit(pieces, rest)  # answer text came first: no block opens now
                break
            if index >= 0:
                self._emit(pieces, rest[:index])
                self.inside = not self.inside
                self._after_close = not self.inside
                rest = rest[index + len(tag) :]
                continue
            self._emit(pieces, rest[: len(rest) - keep])
            self._pending = rest[len(rest) - keep :]
            break
        return pieces

    def flush(self) -> list[Piece]:
        """The end of the content: a held-back tail is what it is."""
        pieces: list[Piece] = []
        pending, self._pending = self._pending, ""
        self._emit(pieces, pending)
        return pieces

    def _emit(self, pieces: list[Piece], text: str) -> None:
        if not text:
            return
        if self.inside:
            kind: Literal["text", "reasoning"] = "reasoning"
        else:
            kind = "text"
            if self._after_close:
                text = text.lstrip()
                if not text:
                    return
                self._after_close = False
            if text.strip():
                self._answered = True
        if pieces and pieces[-1][0] == kind:
            pieces[-1] = (kind, pieces[-1][1] + text)
        else:
            pieces.append((kind, text))


def _partial_tag(text: str, tag: str) -> int:
    """Length of the longest end of `text` that is a proper start of `tag`."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0
