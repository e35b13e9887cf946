"""The orchestration handlers' answers for every kind of bad or edge input."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from melgui.core.protocol.tooling import ToolOutcome, ToolRegistry
from melgui.core.terminal.pty_session import process_alive
from melgui.ui.panes.manager import PaneManager
from melgui.ui.panes.pane_area import PaneArea
from melgui.ui.panes.terminal.pane import TerminalPane
from tests.ui.panes.pane_tools import register_orchestration


@pytest.fixture
def rig(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> Iterator[tuple[PaneManager, ToolRegistry]]:
    area = PaneArea()
    qtbot.addWidget(area)
    area.resize(800, 500)
    area.show()
    env = {"PATH": "/usr/bin:/bin", "PS1": "$ ", "HOME": str(tmp_path)}
    manager = PaneManager(area, tmp_path, terminal_env=env)
    tools = ToolRegistry()
    register_orchestration(tools, manager)
    yield manager, tools
    manager.shutdown()


def _run(
    loop: asyncio.AbstractEventLoop, tools: ToolRegistry, name: str, **args: Any
) -> ToolOutcome:
    return loop.run_until_complete(tools.run(name, args))


def test_unknown_pane_ids_are_clear_errors(
    rig: tuple[PaneManager, ToolRegistry], qloop: asyncio.AbstractEventLoop
) -> None:
    _, tools = rig
    for name in ("send_keys", "read_pane", "send_agent", "read_agent"):
        outcome = _run(qloop, tools, name, pane=7, text="x")
        assert outcome.status == "error"
        assert "There is no pane 7" in outcome.content and "Open panes: none" in outcome.content
    for bad in ("two", True, None, [1]):
        outcome = _run(qloop, tools, "read_pane", pane=bad)
        assert outcome.status == "error" and "integer pane id" in outcome.content


def test_list_panes_when_empty_and_spawn_without_connection(
    rig: tuple[PaneManager, ToolRegistry], qloop: asyncio.AbstractEventLoop
) -> None:
    _, tools = rig
    assert _run(qloop, tools, "list_panes").content == "No panes are open."
    outcome = _run(qloop, tools, "spawn_agent", layout="down", task="do it")
    assert outcome.status == "error" and "not available" in outcome.content
    outcome = _run(qloop, tools, "spawn_agent", layout="down", task="   ")
    assert outcome.status == "error" and "must not be empty" in outcome.content


def test_unknown_layout_opens_a_tab_and_a_dead_program_is_reported(
    rig: tuple[PaneManager, ToolRegistry], qloop: asyncio.AbstractEventLoop
) -> None:
    manager, tools = rig
    outcome = _run(qloop, tools, "open_pane", layout="diagonal", command="echo bye; exit 4")
    assert outcome.status == "ok" and "in a new tab" in outcome.content
    pane = manager.pane(1)
    assert isinstance(pane, TerminalPane)
    read = _run(qloop, tools, "read_pane", pane="1")
    assert "exited 4" in read.content and "bye" in read.content
    assert manager.registry.get(1) is not None
    assert "exited 4" in _run(qloop, tools, "list_panes").content
    keys = _run(qloop, tools, "send_keys", pane=1, text="ls\n")
    assert keys.status == "error" and "has ended (exited 4)" in keys.content
    agent = _run(qloop, tools, "read_agent", pane=1)
    assert agent.status == "error" and "is a terminal" in agent.content


def test_a_program_that_cannot_start(
    rig: tuple[PaneManager, ToolRegistry], qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    manager, tools = rig
    manager.cwd = tmp_path / "gone"
    outcome = _run(qloop, tools, "open_pane", layout="right")
    assert outcome.status == "error" and "could not start" in outcome.content
    assert "failed" in _run(qloop, tools, "list_panes").content


def test_send_keys_newline_is_enter_and_close_ends_the_processes(
    rig: tuple[PaneManager, ToolRegistry], qloop: asyncio.AbstractEventLoop, qtbot: QtBot
) -> None:
    manager, tools = rig
    _run(qloop, tools, "open_pane", layout="right", command="bash --norc --noprofile -i")
    sent = _run(qloop, tools, "send_keys", pane=1, text="python3 -q -i\n")
    assert sent.content == "Sent 14 characters to pane 1."
    pane = manager.pane(1)
    assert isinstance(pane, TerminalPane) and pane.pty is not None
    qtbot.waitUntil(lambda: ">>>" in pane.emulator.text(), timeout=10000)
    _run(qloop, tools, "send_keys", pane=1, text="print(6*7)\n")
    assert "42" in _run(qloop, tools, "read_pane", pane=1).content
    pids = manager.all_pids()
    assert len(pids) >= 2
    assert manager.close_pane(1)
    qtbot.waitUntil(lambda: not [pid for pid in pids if process_alive(pid)], timeout=5000)
    assert "There is no pane 1" in _run(qloop, tools, "read_pane", pane=1).content
