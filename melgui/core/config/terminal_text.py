"""Text from a model or a server made safe to print on a person's terminal.

A terminal obeys what it is sent: OSC 52 writes the clipboard, OSC 8 hides a link behind
other text, `CSI 2J` clears the screen, and the 8-bit forms (U+009B for CSI, U+009D for
OSC) do the same on terminals that take them. `plain` drops every escape sequence whole
(its payload too, so a link's target never shows) and then every C0, DEL and C1
character left, keeping newline and tab. `json_line` escapes DEL and the C1 range that
`json.dumps` leaves as they are, so a JSON line holds no control character either.
Both hide melgui's own keys (`redaction.known_secrets`), raw, JSON-escaped or
URL-encoded: a call's arguments or a file a tool read may hold one, and exec's output
ends up in terminals and CI logs.
"""

from __future__ import annotations

import json
import re
from typing import Any, TextIO

from melgui.core.config.redaction import hide_secrets, known_secrets

# A string sequence (OSC, DCS, SOS, PM, APC) runs to its terminator (BEL or ST) or to the
# end of the text; CSI runs to its final byte; any other ESC takes the one character after.
_SEQUENCE = re.compile(
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_WIDE = re.compile(r"[\x7f-\x9f]")


def has_controls(text: str) -> bool:
    return _CONTROL.search(text) is not None


def plain(text: str) -> str:
    """`text` without escape sequences and control characters, newline and tab kept."""
    text = hide_secrets(text, known_secrets())
    if not has_controls(text):
        return text
    return _CONTROL.sub("", _SEQUENCE.sub("", text))


def json_line(fields: dict[str, Any]) -> str:
    """One JSON object on one line with every control character escaped."""
    line = hide_secrets(json.dumps(fields, ensure_ascii=False), known_secrets())
    return _WIDE.sub(lambda m: f"\\u{ord(m.group()):04x}", line)


class PlainWriter:
    """A text stream that passes everything written through `plain` (stderr of exec);
    `after`, a stream flushed before each write, keeps what was written there first."""

    def __init__(self, stream: TextIO, after: TextIO | None = None) -> None:
        self._stream = stream
        self._after = after

    def write(self, text: str) -> int:
        if self._after is not None:
            self._after.flush()
        self._stream.write(plain(text))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
