"""Rich pieces of a tool result, for people: what the inspector shows besides the text.

The model gets a ToolOutcome's `content` (text); tools whose results carry more (an MCP
server's images, resource links, embedded resources, structured content) add parts so
the inspector can render them. Parts are never sent to the model and never stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PartKind = Literal["text", "image", "audio", "resource_link", "resource", "structured"]


@dataclass(frozen=True, slots=True)
class ResultPart:
    """One piece of a result.

    - text: `text`.
    - image / audio: `data` (base64) and `mime_type`.
    - resource_link: `uri`, `text` (its name and description), `mime_type`.
    - resource: an embedded resource: `uri`, `mime_type`, and `text` or `data` (base64).
    - structured: `text` is the JSON of the structured content.
    """

    kind: PartKind
    text: str = ""
    data: str = ""
    mime_type: str = ""
    uri: str = ""
