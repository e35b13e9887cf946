"""An MCP call that reports progress shows it while it runs (a bar and the server's words)
on its card, in the main chat or in the worker pane that made it, and in the inspector
showing the call; the line goes when the call ends."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.window.main_window import MainWindow
from tests.fakes import RecordedRequest, ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.mcp import fake_entry
from tests.fakes.window import idle, relay_settings, type_prompt, wait_until


def test_progress_on_the_calls_card(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, tmp_path: Path
) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"fake": fake_entry(timeout=30)}}))
    scripted_relay.script(
        [
            text("Working."),
            tool_calls(tool_call("mcp__fake__steps", {"count": 4, "pause": 1.0}, id="s1")),
        ],
        [text("All four steps ran."), done()],
    )
    window: MainWindow = make_window(relay_settings(scripted_relay))
    shown = window.chat.transcript.toPlainText

    async def scenario() -> None:
        await window.desk.start_mcp(extra=config)
        type_prompt(qtbot, window, "run the steps")
        await wait_until(lambda: window.inspector.book.pending(), 20)
        assert window.approve_key()
        await wait_until(lambda: "2 of 4 · step 2 of 4" in shown(), 30)

    run(scenario())
    assert "██████████░░░░░░░░░░ 50%" in shown()
    window.inspector.show_call("s1")
    detail = window.inspector.detail.extra
    run(wait_until(lambda: "of 4 · step" in detail.text() and detail.isVisible(), 30))
    window.resize(1100, 700)
    shots = Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
    assert window.grab().save(str(shots / "mcp-progress.png"))
    run(wait_until(lambda: idle(window, 2), 30))
    assert "of 4 · step" not in shown()  # the line went with the call
    assert "of 4 · step" not in window.inspector.detail.extra.text()
    assert window.inspector.book.records["s1"].result == "4 steps done"
    run(window.desk.aclose())


def _worker(request: RecordedRequest) -> list[Any]:
    if (request.last_message or {}).get("role") == "tool":
        return [text("Stepped."), done()]
    return [tool_calls(tool_call("mcp__fake__steps", {"count": 4, "pause": 1.0}, id="w1"))]


def test_progress_on_a_worker_panes_card(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, tmp_path: Path
) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"fake": fake_entry(timeout=30)}}))
    scripted_relay.on(lambda r: r.tool_role == "worker", _worker)
    scripted_relay.script(
        [tool_calls(tool_call("spawn_agent", {"layout": "right", "task": "step"}, id="o1"))],
        [text("Started."), done()],
    )
    window: MainWindow = make_window(relay_settings(scripted_relay, role="orchestrator"))

    async def approve_next(name: str) -> None:
        await wait_until(
            lambda: (first := window.approvals.first()) is not None and first.call.name == name,
            30,
        )
        request = window.approvals.first()
        assert request is not None
        request.approve()

    def pane() -> AgentPane:
        found = window.pane_manager.pane(1)
        assert isinstance(found, AgentPane)
        return found

    async def scenario() -> None:
        await window.desk.start_mcp(extra=config)
        window.bridge.submit("Start a worker.")
        await approve_next("spawn_agent")
        await approve_next("mcp__fake__steps")
        await wait_until(lambda: "2 of 4 · step 2 of 4" in pane().chat.transcript.toPlainText(), 30)
        pane().show_call("w1")
        detail = pane().inspector.detail.extra
        await wait_until(lambda: "of 4 · step" in detail.text(), 30)

    run(scenario())
    window.resize(1280, 760)
    shots = Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
    assert window.grab().save(str(shots / "mcp-progress-worker.png"))
    assert "of 4 · step" not in window.chat.transcript.toPlainText()  # not the main chat's
    run(wait_until(lambda: "of 4 · step" not in pane().chat.transcript.toPlainText(), 30))
    run(window.desk.aclose())
