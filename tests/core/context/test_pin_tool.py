"""pin_fact: its definition is docs/tools.md's, and what the model gets wrong is a plain
error result."""

from __future__ import annotations

import json
from pathlib import Path

from melgui.core.protocol.tooling import ToolRegistry
from melgui.core.protocol.tools.pins import PIN_FACT, PIN_LIMIT
from melgui.tools.pins import add_pin_tool

DOC = Path(__file__).resolve().parents[3] / "docs" / "tools.md"


def test_the_definition_is_the_documented_one() -> None:
    text = DOC.read_text(encoding="utf-8")
    own = text[text.index("## melgui's own tools") :]
    start = own.index('{"name":"pin_fact"')
    end = own.index("}}}}", start) + 4
    assert json.loads(own[start:end])["parameters"] == PIN_FACT.parameters
    assert PIN_FACT.state_only and PIN_FACT.approval == "auto" and not PIN_FACT.takes_checkpoint


async def test_a_blank_or_long_fact_is_an_error_the_model_reads() -> None:
    registry = ToolRegistry()
    add_pin_tool(registry)
    pinned = await registry.run("pin_fact", {"fact": "  The API is v2.  "})
    assert pinned.status == "ok" and "“The API is v2.”" in pinned.content
    blank = await registry.run("pin_fact", {"fact": "   "})
    assert blank.status == "error" and "empty" in blank.content
    long = await registry.run("pin_fact", {"fact": "x" * (PIN_LIMIT + 1)})
    assert long.status == "error" and f"at most {PIN_LIMIT} characters" in long.content
    missing = await registry.run("pin_fact", {})
    assert missing.status == "error" and "'fact'" in missing.content
