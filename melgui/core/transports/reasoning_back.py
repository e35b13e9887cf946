"""Whether a leg sends earlier reasoning back to the server (per connection, off by default).

Most servers ignore reasoning in the history or reject the unknown field; some models
(DeepSeek's tool-calling reasoners, gpt-oss) do better with it. Message.to_wire puts it
under `reasoning_content`; a transport keeps it only when told to.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from melgui.core.protocol.messages import REASONING_WIRE_KEY


def wire_messages(messages: Sequence[dict[str, Any]], send_reasoning: bool) -> list[dict[str, Any]]:
    """The messages as this connection sends them."""
    if send_reasoning:
        return list(messages)
    return [
        {key: value for key, value in message.items() if key != REASONING_WIRE_KEY}
        if REASONING_WIRE_KEY in message
        else message
        for message in messages
    ]
