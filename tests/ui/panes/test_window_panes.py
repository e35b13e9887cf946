"""Panes in the real main window: approvals from every pane reach the window's queue,
and closing the window leaves no process behind."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.terminal.pty_session import process_alive
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.panes.manager import PaneManager
from melgui.ui.panes.terminal.pane import TerminalPane
from melgui.ui.window.main_window import MainWindow
from tests.fakes import RecordedRequest, ScriptedRelay, done, hold, text, tool_call, tool_calls
from tests.fakes.window import answer, relay_settings, wait_until


def panes_of(window: MainWindow) -> PaneManager:
    return window.pane_manager


def _worker(request: RecordedRequest) -> list[Any]:
    if (request.last_message or {}).get("role") == "tool":
        return [text("Notes written."), done()]
    return [
        text("On it."),
        tool_calls(tool_call("write_file", {"path": "notes.txt", "content": "ok"})),
    ]


def test_window_panes_approvals_and_quit(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    gate = threading.Event()
    scripted_relay.on(lambda r: r.tool_role == "worker", _worker)
    scripted_relay.script(
        [tool_calls(tool_call("open_pane", {"layout": "right", "command": "sleep 300"}, id="o1"))],
        [tool_calls(tool_call("spawn_agent", {"layout": "down", "task": "write notes"}, id="o2"))],
        [hold(gate), tool_calls(tool_call("read_agent", {"pane": 2}, id="o3"))],
        [text("Done."), done()],
    )
    window = make_window(relay_settings(scripted_relay, role="orchestrator"))
    manager = panes_of(window)
    seen: list[ApprovalRequest] = []

    async def approve_next(name: str) -> None:
        await wait_until(
            lambda: (first := window.approvals.first()) is not None and first.call.name == name
        )
        request = window.approvals.first()
        assert request is not None
        seen.append(request)
        request.approve()

    async def scenario() -> None:
        window.bridge.submit("Open a terminal and a worker.")
        await approve_next("open_pane")
        await approve_next("spawn_agent")
        await approve_next("write_file")  # asked by the worker, shown in the window's queue
        await wait_until(
            lambda: isinstance(p := manager.pane(2), AgentPane) and p.state.name == "idle"
        )
        gate.set()
        await wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 4)

    run(scenario())
    assert [r.source for r in seen] == ["main", "main", "worker 2: write notes"]
    assert (project / "notes.txt").read_text() == "ok"
    read = scripted_relay.legs_received[-1].messages[-1]["content"]
    assert "Notes written." in read and "idle" in read
    assert not manager.area.isHidden()
    worker_legs = [r for r in scripted_relay.legs_received if r.tool_role == "worker"]
    assert worker_legs and all("open_pane" not in r.tool_names for r in worker_legs)

    terminal = manager.pane(1)
    assert isinstance(terminal, TerminalPane) and terminal.pty is not None
    pids = terminal.pty.session_pids()
    assert pids and all(process_alive(pid) for pid in pids), (
        terminal.pty.poll(),
        terminal.emulator.text(),
        terminal.pty.eof,
    )
    window.close()  # asks first: the terminal still runs sleep 300
    assert window.isVisible()
    shown = answer(window.guard.dialog, proceed=True)
    assert "sleep 300 is still running" in shown
    assert not window.isVisible()  # the window's close ends every pane
    assert not [pid for pid in pids if process_alive(pid)]
    assert manager.pane(2) is not None and isinstance(manager.pane(2), AgentPane)
