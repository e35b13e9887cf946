"""Command output as the model gets it: head and tail kept, escapes and bad bytes cleaned."""

from __future__ import annotations

import re

# CSI (colours, cursor moves), OSC (titles, hyperlinks), and the short two-byte escapes.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[ -/]*[0-~]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean_terminal_text(data: bytes) -> str:
    """Decode as UTF-8 (bad bytes become U+FFFD) and drop what only a terminal would use.

    A carriage return that is not part of CRLF redraws its line, as progress bars do;
    only what the last redraw left is kept. Backspaces erase the character before them.
    """
    text = data.decode("utf-8", errors="replace")
    text = _ESCAPES.sub("", text)
    text = text.replace("\r\n", "\n")
    if "\r" in text:
        text = "\n".join(_last_redraw(line) for line in text.split("\n"))
    if "\b" in text:
        text = _apply_backspaces(text)
    return _CONTROLS.sub("", text)


def _last_redraw(line: str) -> str:
    pieces = line.split("\r")
    for piece in reversed(pieces):
        if piece:
            return piece
    return ""


def _apply_backspaces(text: str) -> str:
    out: list[str] = []
    for char in text:
        if char == "\b":
            if out and out[-1] != "\n":
                out.pop()
        else:
            out.append(char)
    return "".join(out)


class HeadTailBuffer:
    """Keeps the first and last `cap // 2` bytes of a stream, in memory bounded by `cap`."""

    def __init__(self, cap: int) -> None:
        self.head_cap = max(cap // 2, 1)
        self.tail_cap = max(cap - self.head_cap, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.total_bytes = 0
        self.total_lines = 0

    def feed(self, chunk: bytes) -> None:
        self.total_bytes += len(chunk)
        self.total_lines += chunk.count(b"\n")
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.tail_cap:
                del self.tail[: len(self.tail) - self.tail_cap]

    @property
    def omitted_bytes(self) -> int:
        return self.total_bytes - len(self.head) - len(self.tail)

    def text(self) -> str:
        """The kept output, with a note in the middle saying how much was left out."""
        if self.omitted_bytes == 0:
            return clean_terminal_text(bytes(self.head + self.tail))
        head = clean_terminal_text(bytes(self.head))
        tail = clean_terminal_text(bytes(self.tail))
        omitted_lines = self.total_lines - self.head.count(b"\n") - self.tail.count(b"\n")
        note = (
            f"\n[… {self.omitted_bytes:,} bytes ({omitted_lines:,} lines) omitted of "
            f"{self.total_bytes:,} bytes ({self.total_lines:,} lines) in total; the start "
            "and the end are shown …]\n"
        )
        return head + note + tail
