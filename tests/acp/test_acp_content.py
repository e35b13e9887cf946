"""The pure parts of `melgui acp`: prompts to text, plans to entries, tool kinds."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acp import (
    embedded_text_resource,
    image_block,
    resource_block,
    resource_link_block,
    start_tool_call,
    text_block,
    update_agent_message_text,
)

from melgui.acp.outbox import Outbox
from melgui.acp.plan_entries import plan_entries
from melgui.acp.prompt_text import UnsupportedContent, prompt_text
from melgui.acp.updates import merge_text, tool_kind
from melgui.core.protocol.catalog import ALL_TOOLS


def test_prompt_text_keeps_links_and_embedded_files() -> None:
    blocks = [
        text_block("look at "),
        resource_link_block("a.py", "file:///p/a.py"),
        text_block(" and"),
        resource_block(embedded_text_resource("file:///p/b.py", "x = 1")),
    ]
    assert prompt_text(blocks) == "look at @file:///p/a.py and\nfile:///p/b.py:\n```\nx = 1\n```"


def test_prompt_text_refuses_images() -> None:
    with pytest.raises(UnsupportedContent, match="image"):
        prompt_text([text_block("what is this"), image_block("AAAA", "image/png")])


def test_plan_without_items_is_its_title() -> None:
    entries = plan_entries("Refactor", "Just do it carefully.")
    assert [(e.content, e.status) for e in entries] == [("Refactor", "pending")]


def test_tool_kinds_come_from_the_definitions() -> None:
    kinds = {
        name: tool_kind(ALL_TOOLS[name])
        for name in ("read_file", "grep", "write_file", "edit_file", "run_command")
    }
    assert kinds == {
        "read_file": "read", "grep": "search", "write_file": "edit", "edit_file": "edit",
        "run_command": "execute",
    }  # fmt: skip
    assert tool_kind(None) == "other"


async def test_outbox_keeps_order_and_merges_text_that_piles_up() -> None:
    sent: list[str] = []
    gate = asyncio.Event()

    async def send(update: Any) -> None:
        await gate.wait()
        sent.append(getattr(update, "title", None) or update.content.text)

    async def action() -> None:
        sent.append("asked")

    outbox = Outbox(send, merge_text)
    outbox.put(update_agent_message_text("a"))
    await asyncio.sleep(0)  # "a" is being sent; the rest piles up behind it
    for piece in ("b", "c"):
        outbox.put(update_agent_message_text(piece))
    outbox.put(start_tool_call("t1", "write_file: x"))
    outbox.start(action)
    outbox.put(update_agent_message_text("d"))
    outbox.put(update_agent_message_text("e"))
    gate.set()
    await asyncio.wait_for(outbox.flush(), 10)
    await asyncio.sleep(0)
    # The action starts once what came before it is sent; it does not hold up "de".
    assert sent[:3] == ["a", "bc", "write_file: x"]
    assert sorted(sent[3:]) == ["asked", "de"]
    await outbox.aclose()
