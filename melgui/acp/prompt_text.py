"""An ACP prompt (content blocks) as the one user message melgui's loop takes."""

from __future__ import annotations

from collections.abc import Sequence

from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

Block = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)


class UnsupportedContent(ValueError):
    pass


def prompt_text(blocks: Sequence[Block]) -> str:
    """Text as it is, links as `@uri`, embedded text files fenced under their uri.

    Images, audio and binary resources are refused (the capabilities say so)."""
    parts: list[str] = []
    for block in blocks:
        match block:
            case TextContentBlock(text=text):
                parts.append(text)
            case ResourceContentBlock(uri=uri):
                parts.append(f"@{uri}")
            case EmbeddedResourceContentBlock(resource=TextResourceContents() as resource):
                parts.append(f"\n{resource.uri}:\n```\n{resource.text}\n```\n")
            case _:
                raise UnsupportedContent(
                    f"melgui acp takes text, resource links and embedded text files; "
                    f"not {getattr(block, 'type', type(block).__name__)}"
                )
    return "".join(parts).strip()
