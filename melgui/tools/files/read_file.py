"""read_file: a window of lines, in bounded memory however large the file or its lines."""

from __future__ import annotations

import asyncio
import io
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from melgui.core.protocol.tooling import ToolError, ToolOutcome
from melgui.core.protocol.tools.definition import Tool, at_least
from melgui.core.protocol.tools.files import READ_FILE
from melgui.tools.context import ToolContext
from melgui.tools.settings import ToolSettings

SNIFF_BYTES = 8192
_CHUNK = 64 * 1024

# Leading bytes of common binary formats, for a one-line summary instead of a dump.
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF8", "GIF image"),
    (b"%PDF-", "PDF document"),
    (b"PK\x03\x04", "ZIP archive (or a format built on it: docx, xlsx, jar, wheel)"),
    (b"\x1f\x8b", "gzip archive"),
    (b"\x7fELF", "ELF executable or library"),
    (b"SQLite format 3\x00", "SQLite database"),
    (b"\xfe\xff", "UTF-16 text (big-endian)"),
    (b"\xff\xfe", "UTF-16 text (little-endian)"),
    (b"BZh", "bzip2 archive"),
    (b"\xfd7zXZ\x00", "xz archive"),
    (b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
    (b"RIFF", "RIFF media (WAV, AVI or WebP)"),
    (b"\x00asm", "WebAssembly module"),
)


def describe_binary(head: bytes, size: int) -> str:
    kind = next((name for magic, name in _MAGIC if head.startswith(magic)), "binary data")
    return f"{kind}, {size:,} bytes"


def open_regular_file(path: Path, shown: str) -> io.BufferedReader:
    """Open for reading; a FIFO or device swapped in since the check is refused, not awaited."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise ToolError(f"Cannot open {shown!r}: {exc.strerror or exc}.") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ToolError(f"Refused: {shown!r} is not a regular file.")
    return io.BufferedReader(io.FileIO(fd, "rb", closefd=True), buffer_size=_CHUNK)


def _read_line(handle: io.BufferedReader, keep: int) -> tuple[bytes, int, bool]:
    """One line: at most `keep` bytes of it, its full length, and whether there was one."""
    head = handle.readline(keep)
    if not head:
        return b"", 0, False
    length = len(head)
    if head.endswith(b"\n") or len(head) < keep:
        return head, length, True
    while True:  # skip the rest of a huge line without holding it
        rest = handle.readline(_CHUNK)
        length += len(rest)
        if not rest or rest.endswith(b"\n"):
            return head, length, True


def read_window(path: Path, shown: str, offset: int, limit: int, settings: ToolSettings) -> str:
    """Lines offset..offset+limit-1 (1-based) of a text file, or a summary of a binary one."""
    size = os.stat(path).st_size
    with open_regular_file(path, shown) as handle:
        head = handle.peek(SNIFF_BYTES)[:SNIFF_BYTES]
        if b"\x00" in head or head.startswith((b"\xfe\xff", b"\xff\xfe")):
            return (
                f"{shown}: binary file ({describe_binary(head, size)}); not shown as text. "
                "Use run_command with a suitable tool to inspect it."
            )
        if size == 0 and not head:
            return f"{shown}: empty file (0 bytes)."
        keep = settings.read_max_line_chars * 4 + 1
        number = 0
        while number < offset - 1:
            _, _, more = _read_line(handle, _CHUNK)
            if not more:
                raise ToolError(
                    f"offset {offset} is past the end of {shown!r}, which has {number} lines."
                )
            number += 1
        shown_lines: list[str] = []
        budget = settings.read_max_bytes
        truncated_by_bytes = False
        at_end = False
        while len(shown_lines) < limit:
            raw, length, more = _read_line(handle, keep)
            if not more:
                at_end = True
                break
            text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            if len(text) > settings.read_max_line_chars or length > len(raw):
                text = text[: settings.read_max_line_chars]
                text += f" … [line cut: {length:,} bytes in full]"
            entry = f"{number + 1:>6}\t{text}"
            if shown_lines and budget - len(entry) - 1 < 0:
                truncated_by_bytes = True
                break
            budget -= len(entry) + 1
            shown_lines.append(entry)
            number += 1
        if not at_end and not truncated_by_bytes:
            at_end = not handle.peek(1)
    if not shown_lines:
        raise ToolError(f"offset {offset} is past the end of {shown!r}, which has {number} lines.")
    first = offset
    last = number
    if at_end:
        header = f"{shown}: lines {first}-{last} of {last} (line numbers start at 1)"
        return header + "\n" + "\n".join(shown_lines)
    reason = "size limit of one read reached" if truncated_by_bytes else "line limit reached"
    header = f"{shown}: lines {first}-{last}, more follow (line numbers start at 1)"
    footer = f"[Truncated ({reason}). To continue, call read_file with offset={last + 1}.]"
    return header + "\n" + "\n".join(shown_lines) + "\n" + footer


@dataclass(frozen=True, slots=True)
class ReadFileInput:
    path: str
    offset: int | None = None  # the first line; 0 reads from the start, as 1 does
    limit: int | None = None  # lines; the settings' default when absent

    def __post_init__(self) -> None:
        at_least("offset", self.offset, 0)
        at_least("limit", self.limit, 1)


async def read_file(context: ToolContext, given: ReadFileInput) -> ToolOutcome:
    workspace, settings = context.workspace, context.settings
    offset = given.offset or 1
    limit = given.limit if given.limit is not None else settings.read_default_lines

    def work() -> str:
        path = workspace.existing_file(given.path)
        return read_window(path, workspace.display(path), offset, limit, settings)

    return ToolOutcome(await asyncio.to_thread(work))


READ_FILE_TOOL = Tool(READ_FILE, ReadFileInput, read_file)
