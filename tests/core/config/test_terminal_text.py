"""What exec prints is safe for a terminal: no escape sequence, no C0/C1 control."""

from __future__ import annotations

import io
import json

import pytest

from melgui.core.config.terminal_text import PlainWriter, has_controls, json_line, plain


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("a\x1b]52;c;aGVsbG8=\x07b", "ab"),  # OSC 52 ended by BEL
        ("a\x1b]8;;http://x.example/\x1b\\link\x1b]8;;\x1b\\b", "alinkb"),  # OSC 8, ST
        ("a\x1b[2Jb\x1b[1;31mc", "abc"),  # CSI
        ("a\x9b31mb\x9d0;title\x9cc", "abc"),  # 8-bit CSI and OSC
        ("a\x1b]52;c;unterminated", "a"),  # a sequence cut off at the end
        ("a\x1bcb\x1b(Bc", "abc"),  # two-character escapes
        ("a\x07\x08\x00\x7f\x85b", "ab"),  # bare C0, DEL, C1
        ("keeps\n\ttabs and lines, é ü 日本", "keeps\n\ttabs and lines, é ü 日本"),
    ],
)
def test_plain_drops_sequences_and_controls(raw: str, shown: str) -> None:
    assert plain(raw) == shown
    assert not has_controls(plain(raw).replace("\n", "").replace("\t", ""))


def test_json_line_escapes_c1_and_del_and_round_trips() -> None:
    value = "x\x1b[2J\x9b31m\x9d0;t\x9c\x7fy"
    line = json_line({"text": value})
    assert not any(0x7F <= ord(c) <= 0x9F or ord(c) < 0x20 for c in line)
    assert json.loads(line) == {"text": value}


def test_plain_writer_cleans_what_passes_through() -> None:
    out = io.StringIO()
    writer = PlainWriter(out)
    writer.write("melgui: HTTP 400: bad\x1b]52;c;x\x07\n")
    assert out.getvalue() == "melgui: HTTP 400: bad\n"
