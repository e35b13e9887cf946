"""The pure parts of `melgui acp`: prompts to text, plans to entries, tool kinds."""

from __future__ import annotations

import pytest
from acp import embedded_text_resource, image_block, resource_block, resource_link_block, text_block

from melgui.acp.plan_entries import plan_entries
from melgui.acp.prompt_text import UnsupportedContent, prompt_text
from melgui.acp.updates import tool_kind
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
