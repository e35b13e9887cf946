"""An MCP tools/call result as melgui's ToolOutcome: text for the model, parts for people.

Text blocks are the model's text; other blocks are described in a line each (an image's
type and size, a resource link's name and URI, an embedded resource's text). Structured
content joins as JSON when the text does not already carry it. The text is capped like
other tools' output (head and tail kept); parts keep everything for the inspector.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import mcp_types as types

from melgui.core.protocol.content import FilePart
from melgui.core.protocol.tooling import ResultPart, ToolOutcome

MAX_RESULT_CHARS = 60_000
MAX_ATTACHED_CHARS = 64 * 1024  # a resource attached with `@`, like a file
ContentBlock = (
    types.TextContent
    | types.ImageContent
    | types.AudioContent
    | types.ResourceLink
    | types.EmbeddedResource
)


def cap(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n[… {cut:,} characters cut …]\n{text[-half:]}"


def _size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data)


def _block(block: Any) -> tuple[str, ResultPart]:
    match block:
        case types.TextContent(text=text):
            return text, ResultPart("text", text=text)
        case types.ImageContent(data=data, mime_type=mime):
            line = f"[image {mime}, {_size(data):,} bytes: shown to the person]"
            return line, ResultPart("image", data=data, mime_type=mime)
        case types.AudioContent(data=data, mime_type=mime):
            line = f"[audio {mime}, {_size(data):,} bytes]"
            return line, ResultPart("audio", data=data, mime_type=mime)
        case types.ResourceLink(name=name, uri=uri, description=description, mime_type=mime):
            about = f"{name}" + (f": {description}" if description else "")
            return (
                f"[resource link {about} <{uri}>]",
                ResultPart("resource_link", text=about, uri=str(uri), mime_type=mime or ""),
            )
        case types.EmbeddedResource(resource=types.TextResourceContents() as res):
            mime = res.mime_type or ""
            return (
                f"[resource <{res.uri}>]\n{res.text}",
                ResultPart("resource", text=res.text, uri=str(res.uri), mime_type=mime),
            )
        case types.EmbeddedResource(resource=types.BlobResourceContents() as res):
            mime = res.mime_type or "application/octet-stream"
            return (
                f"[resource <{res.uri}> {mime}, {_size(res.blob):,} bytes]",
                ResultPart("resource", data=res.blob, uri=str(res.uri), mime_type=mime),
            )
        case _:
            kind = getattr(block, "type", type(block).__name__)
            return f"[{kind} content]", ResultPart("text", text=f"[{kind} content]")


def outcome_of(result: types.CallToolResult) -> ToolOutcome:
    """The ToolOutcome of one result; `isError` results are errors."""
    lines: list[str] = []
    parts: list[ResultPart] = []
    for block in result.content:
        line, part = _block(block)
        lines.append(line)
        parts.append(part)
    structured = result.structured_content
    if structured is not None:
        encoded = json.dumps(structured, ensure_ascii=False, indent=2)
        parts.append(ResultPart("structured", text=encoded))
        if not lines:  # servers should mirror it as text; when one does not, send it
            lines.append(json.dumps(structured, ensure_ascii=False))
    text = cap("\n".join(lines)) or "(the tool returned no content)"
    return ToolOutcome(text, "error" if result.is_error else "ok", tuple(parts))


def resource_part(server: str, uri: str, result: types.ReadResourceResult) -> FilePart:
    """A read resource as an `@` attachment named `server:uri`: its text parts joined
    (capped like a file), a note for binary parts the model is not sent."""
    texts = [c.text for c in result.contents if isinstance(c, types.TextResourceContents)]
    blobs = len(result.contents) - len(texts)
    text = "\n\n".join(texts)
    notes = []
    if len(text) > MAX_ATTACHED_CHARS:
        notes.append(f"cut: the first {MAX_ATTACHED_CHARS:,} of {len(text):,} characters")
        text = text[:MAX_ATTACHED_CHARS]
    if blobs:
        notes.append(f"{blobs} binary part{'s' if blobs != 1 else ''} not attached")
    return FilePart(f"{server}:{uri}", text or "(no text)", "; ".join(notes))


def prompt_text(result: types.GetPromptResult) -> str:
    """A prompt's messages as the text of one message: each message's text (an embedded
    resource's text too), headed by its role when the prompt has more than the user's."""
    roles = {message.role for message in result.messages}
    pieces = []
    for message in result.messages:
        content = message.content
        if isinstance(content, types.TextContent):
            body = content.text
        elif isinstance(content, types.EmbeddedResource) and isinstance(
            content.resource, types.TextResourceContents
        ):
            body = content.resource.text
        else:
            body = f"[{content.type} content from the prompt, not sent]"
        pieces.append(f"{message.role}: {body}" if roles != {"user"} else body)
    return "\n\n".join(pieces)
