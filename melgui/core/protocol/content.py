"""What a user message carries beside its text: images and attached files or folders.

On the wire a message with parts has a list of typed content parts (the OpenAI chat
shape both transports send): its text first, then each attachment. Images go as
`image_url` parts holding a data URL; files and folder listings as text parts.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Literal

IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp")


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image, already scaled for sending (see melgui.ui.chat.composer.images)."""

    mime: str
    data: bytes = field(repr=False)
    name: str = ""

    @property
    def sha256(self) -> str:
        import hashlib  # OpenSSL's library (~4 MB resident): not in an idle melgui host

        return hashlib.sha256(self.data).hexdigest()

    @property
    def dimensions(self) -> tuple[int, int] | None:
        """(width, height) read from the PNG, JPEG or WebP header; None when unread."""
        return image_dimensions(self.data)

    def data_url(self) -> str:
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"

    def to_wire(self) -> dict[str, Any]:
        return {"type": "image_url", "image_url": {"url": self.data_url()}}

    def to_json(self, with_data: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "type": "image",
            "mime": self.mime,
            "sha256": self.sha256,
            "name": self.name,
        }
        if with_data:
            data["data"] = base64.b64encode(self.data).decode("ascii")
        return data


def image_dimensions(data: bytes) -> tuple[int, int] | None:
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP" and len(data) >= 30:
        chunk = data[12:16]
        if chunk == b"VP8X":
            return 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(
                data[27:30], "little"
            )
        if chunk == b"VP8L":
            bits = int.from_bytes(data[21:25], "little")
            return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
        if chunk == b"VP8 ":
            return int.from_bytes(data[26:28], "little") & 0x3FFF, int.from_bytes(
                data[28:30], "little"
            ) & 0x3FFF
        return None
    if data[:2] == b"\xff\xd8":
        return _jpeg_dimensions(data)
    return None


def _jpeg_dimensions(data: bytes) -> tuple[int, int] | None:
    """The frame header's size: markers are walked until a start-of-frame."""
    at = 2
    while at + 9 < len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            at += 2
            continue
        length = int.from_bytes(data[at + 2 : at + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height = int.from_bytes(data[at + 5 : at + 7], "big")
            return int.from_bytes(data[at + 7 : at + 9], "big"), height
        at += 2 + length
    return None


@dataclass(frozen=True, slots=True)
class FilePart:
    """A file's text (or a folder's listing) attached with `@`; `note` says when cut."""

    path: str
    text: str
    note: str = ""
    kind: Literal["file", "folder"] = "file"

    def wire_text(self) -> str:
        tag = "folder" if self.kind == "folder" else "file"
        note = f"\n({self.note})" if self.note else ""
        return f'<{tag} path="{self.path}">\n{self.text}\n</{tag}>{note}'

    def to_wire(self) -> dict[str, Any]:
        return {"type": "text", "text": self.wire_text()}

    def to_json(self, with_data: bool = True) -> dict[str, Any]:
        return {
            "type": self.kind,
            "path": self.path,
            "text": self.text,
            "note": self.note,
        }


Part = ImagePart | FilePart


def part_from_json(data: Any) -> Part:
    """Inverse of `to_json`; raises ValueError for a part it cannot read."""
    if not isinstance(data, dict):
        raise ValueError("a message part must be an object")
    kind = data.get("type")
    if kind == "image":
        mime = str(data.get("mime", ""))
        raw = data.get("data")
        if mime not in IMAGE_TYPES or not isinstance(raw, str):
            raise ValueError(f"image part without {mime or 'a type'} data")
        return ImagePart(mime, base64.b64decode(raw), str(data.get("name", "")))
    if kind in ("file", "folder"):
        return FilePart(
            str(data.get("path", "")),
            str(data.get("text", "")),
            str(data.get("note", "")),
            "folder" if kind == "folder" else "file",
        )
    raise ValueError(f"unknown message part {kind!r}")


def wire_content(text: str, parts: tuple[Part, ...]) -> str | list[dict[str, Any]]:
    """A message's `content` on the wire: plain text, or text then its parts."""
    if not parts:
        return text
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    return content + [part.to_wire() for part in parts]


def text_of(content: Any) -> str:
    """The text of a wire `content` (text parts joined), for what reads it as text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, dict) and p.get("type") == "text"
        )
    return ""
