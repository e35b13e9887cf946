"""How a model's turns are written, read from its GGUF file's chat template.

The shipped SmolLM2 speaks ChatML; a model file found on disk may be a Gemma or a
Llama 3, which read ChatML markers as plain text and answer badly. `chat_format` reads
`tokenizer.chat_template` from the file's header and picks the matching turn markers
(ChatML when the template is missing or unknown).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import BinaryIO

TEMPLATE_KEY = "tokenizer.chat_template"
ARCHITECTURE_KEY = "general.architecture"


@dataclass(frozen=True, slots=True)
class ChatFormat:
    """Turn markers: `start.format(role=…)` opens a turn, `end` closes it."""

    name: str
    start: str
    end: str
    assistant_role: str = "assistant"
    system_role: str | None = "system"  # None: the system text opens the first user turn

    def turn(self, role: str, text: str) -> str:
        return f"{self.start.format(role=role)}{text}{self.end}"

    def open_assistant(self) -> str:
        return self.start.format(role=self.assistant_role)

    @property
    def stops(self) -> list[str]:
        """Strings that end an answer: the turn end, and the next turn's opening."""
        opening = self.start.split("{role}")[0]
        return [marker for marker in (self.end.strip(), opening) if marker]


CHATML = ChatFormat("chatml", "<|im_start|>{role}\n", "<|im_end|>\n")
GEMMA = ChatFormat(
    "gemma", "<start_of_turn>{role}\n", "<end_of_turn>\n", assistant_role="model", system_role=None
)
LLAMA3 = ChatFormat("llama3", "<|start_header_id|>{role}<|end_header_id|>\n\n", "<|eot_id|>")

_MARKERS = (("<start_of_turn>", GEMMA), ("<|start_header_id|>", LLAMA3), ("<|im_start|>", CHATML))


def format_for_template(template: str | None, architecture: str | None = None) -> ChatFormat:
    """The format the template writes; without a template, Gemma's for a Gemma model
    (its base models ship none), else ChatML."""
    for marker, chat in _MARKERS:
        if template and marker in template:
            return chat
    if not template and architecture and architecture.startswith("gemma"):
        return GEMMA
    return CHATML


def chat_format(path: str) -> ChatFormat:
    """The format for the model file at `path` (ChatML when its header says nothing)."""
    try:
        with open(path, "rb") as handle:
            metadata = read_metadata(handle, (TEMPLATE_KEY, ARCHITECTURE_KEY))
    except (OSError, ValueError, struct.error, UnicodeDecodeError):
        return CHATML
    return format_for_template(metadata.get(TEMPLATE_KEY), metadata.get(ARCHITECTURE_KEY))


# --- GGUF header --------------------------------------------------------------------------

_SCALARS = {
    0: "B",
    1: "b",
    2: "H",
    3: "h",
    4: "I",
    5: "i",
    6: "f",
    7: "?",
    10: "Q",
    11: "q",
    12: "d",
}
_STRING, _ARRAY = 8, 9


def _read(handle: BinaryIO, fmt: str) -> tuple[int | float | bool, ...]:
    size = struct.calcsize("<" + fmt)
    data = handle.read(size)
    if len(data) != size:
        raise ValueError("GGUF header ends early")
    return struct.unpack("<" + fmt, data)


def _string(handle: BinaryIO) -> str:
    (length,) = _read(handle, "Q")
    return handle.read(int(length)).decode("utf-8")


def _skip(handle: BinaryIO, kind: int) -> None:
    if kind in _SCALARS:
        handle.seek(struct.calcsize("<" + _SCALARS[kind]), 1)
    elif kind == _STRING:
        (length,) = _read(handle, "Q")
        handle.seek(int(length), 1)
    elif kind == _ARRAY:
        item_kind, count = _read(handle, "IQ")
        if item_kind in _SCALARS:
            handle.seek(struct.calcsize("<" + _SCALARS[int(item_kind)]) * int(count), 1)
        else:
            for _ in range(int(count)):
                _skip(handle, int(item_kind))
    else:
        raise ValueError(f"unknown GGUF value type {kind}")


def read_metadata(handle: BinaryIO, keys: tuple[str, ...]) -> dict[str, str]:
    """The string values of `keys` among the GGUF file's metadata (versions 2 and 3)."""
    if handle.read(4) != b"GGUF":
        raise ValueError("not a GGUF file")
    (version,) = _read(handle, "I")
    if version < 2:
        raise ValueError(f"GGUF version {version} is not supported")
    _tensors, entries = _read(handle, "QQ")
    found: dict[str, str] = {}
    for _ in range(int(entries)):
        key = _string(handle)
        (kind,) = _read(handle, "I")
        if key in keys and kind == _STRING:
            found[key] = _string(handle)
            if len(found) == len(keys):
                break
        else:
            _skip(handle, int(kind))
    return found
