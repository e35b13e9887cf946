"""A hosted agent's terminal keeps at most melgui's cap of output, whatever byte limit the
agent asks for: an agent that asks for a terabyte and runs a flood cannot grow melgui."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from melgui.desk.hosted_agents import terminals
from melgui.desk.hosted_agents.terminals import AgentTerminals
from melgui.tools.workspace import Workspace


async def test_an_agents_byte_limit_is_capped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(terminals, "MAX_OUTPUT_LIMIT", 256 * 1024)
    agent_terminals = AgentTerminals(Workspace(tmp_path))
    flood = "head -c 1000000 /dev/zero | tr '\\0' a; echo; echo end"
    terminal = agent_terminals.create("sh", ["-c", flood], None, None, 2**40)
    try:
        await asyncio.wait_for(terminal.exited.wait(), 60)
        assert len(terminal.output) <= 256 * 1024 and terminal.truncated
        assert terminal.text().endswith("end\n")  # the newest output is what stays
    finally:
        await agent_terminals.close()
