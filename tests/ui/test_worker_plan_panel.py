"""A worker spawned in plan mode shows its plan in the window's Plans panel as its own;
Revise sends the person's comment to that worker (still planning), and Approve and start
turns the worker's plan mode off and has it carry the plan out."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from melgui.core.lsp.diagnostics import DIAGNOSTICS_TOOL
from melgui.core.protocol.catalog import READ_ONLY_TOOLS
from melgui.core.protocol.tools.pins import PIN_FACT
from melgui.ui.panes.agent_pane import AgentPane
from tests.fakes import RecordedRequest, ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import idle, relay_settings, type_prompt, wait_until

FIRST = {"title": "Tidy the build", "markdown": "1. Remove build/\n2. Remove dist/"}
READING = READ_ONLY_TOOLS | {DIAGNOSTICS_TOOL.name, PIN_FACT.name}  # plan mode offers them too
SECOND = {"title": "Tidy the build", "markdown": "1. Remove build/\n2. Keep the cache"}


def worker_leg(request: RecordedRequest) -> list[Any]:
    last = request.last_message or {}
    asked = request.last_user_text
    if last.get("role") == "tool":
        done_writing = "Wrote" in str(last.get("content"))
        return [text("Done." if done_writing else "Planned; waiting for approval."), done()]
    if "is approved" in asked:
        return [tool_calls(tool_call("write_file", {"path": "tidy.txt", "content": "tidied\n"}))]
    if "Revise the plan" in asked:
        return [tool_calls(tool_call("write_plan", SECOND))]
    return [tool_calls(tool_call("write_plan", FIRST))]


def test_a_workers_plan_is_revised_then_approved_from_the_plans_panel(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    scripted_relay.on(lambda r: r.tool_role == "worker", worker_leg)
    spawn = tool_call("spawn_agent", {"layout": "tab", "task": "/plan tidy the build"}, id="s1")
    scripted_relay.script([tool_calls(spawn)], [text("A worker is planning it."), done()])
    settings = relay_settings(scripted_relay)
    settings.role = "orchestrator"
    settings.approval_modes = {
        **settings.approval_modes,
        "spawn_agent": "auto",
        "write_file": "auto",
    }
    window = make_window(settings)
    window.resize(1200, 760)
    panel = window.plans_panel

    def worker() -> AgentPane:
        (pane,) = [p for _, p in window.pane_manager.panes() if isinstance(p, AgentPane)]
        return pane

    async def planning() -> None:
        type_prompt(qtbot, window, "Tidy the build, with a plan first")
        await wait_until(lambda: idle(window, 2) and len(panel.plans) == 1, timeout=30)
        await wait_until(lambda: not worker().session.busy, timeout=30)

    run(planning())
    source = worker().session.source
    assert panel.sources == [source] and panel.awaiting()
    assert f"Awaiting your approval</b> ({source})" in panel.state.text()
    assert f"Written by {source}" in panel.view.toPlainText()
    window.side_panel.reveal("plans")
    window.grab().save(str(_shots(project.parent) / "worker-plan-awaiting-approval.png"))

    async def revising() -> None:
        qtbot.keyClicks(panel.comment, "keep the cache")
        qtbot.mouseClick(panel.revise_button, Qt.MouseButton.LeftButton)
        await wait_until(lambda: len(panel.plans) == 2 and not worker().session.busy, timeout=30)

    run(revising())
    legs = [r for r in scripted_relay.legs_received if r.tool_role == "worker"]
    assert "keep the cache" in legs[2].last_user_text
    assert all(set(leg.tool_names) <= READING for leg in legs)
    assert panel.plans[-1][1] == SECOND["markdown"] and panel.awaiting()
    assert worker().session.loop.plan.on

    async def approving() -> None:
        qtbot.mouseClick(panel.approve_button, Qt.MouseButton.LeftButton)
        await wait_until(lambda: (project / "tidy.txt").exists(), timeout=30)
        await wait_until(lambda: not worker().session.busy, timeout=30)

    run(approving())
    assert not worker().session.loop.plan.on and not window.session.loop.plan.on
    acting = [r for r in scripted_relay.legs_received if r.tool_role == "worker"][4]
    assert "write_file" in acting.tool_names and "Keep the cache" in acting.last_user_text
    assert "approved" in panel.state.text()
    assert f"You approved {source}'s plan" in window.chat.transcript.toPlainText()
    assert len(scripted_relay.legs_received) == 2 + 6  # the main conversation was not sent it


def _shots(tmp_path: Path) -> Path:
    """MELGUI_SHOTS_DIR=docs renders the screenshot kept in docs/."""
    return Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
