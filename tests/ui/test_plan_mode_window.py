"""Plan mode in the real window: the toolbar's Plan button (and /plan) per conversation,
a plan awaiting approval in the Plans panel, Approve and start, and Revise."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from melgui.core.config.trust import FolderTrust
from melgui.core.lsp.diagnostics import DIAGNOSTICS_TOOL
from melgui.core.protocol.catalog import READ_ONLY_TOOLS
from melgui.core.protocol.tools.pins import PIN_FACT
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import idle, relay_settings, type_prompt, wait_until

PLAN = """1. Add `greet(name)` to app.py, returning the greeting
2. Call it from `main()` with the first argument, or "world"
3. Add `tests/test_app.py` and run `pytest -q`"""

# the run-time read-only tool too, and pin_fact (it writes only the conversation)
READING = READ_ONLY_TOOLS | {DIAGNOSTICS_TOOL.name, PIN_FACT.name}


def test_a_plan_awaits_approval_then_approve_and_start_acts(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    (project / "app.py").write_text("print('hello')\n")
    FolderTrust().trust(project)  # no trust question over the chat in the screenshot
    written = tool_call("write_plan", {"title": "Greet by name", "markdown": PLAN}, id="p1")
    write = tool_call("write_file", {"path": "app.py", "content": "x = 1\n"}, id="w1")
    scripted_relay.script(
        [tool_calls(tool_call("read_file", {"path": "app.py"}, id="r1"), written)],
        [text("The plan is ready for your approval."), done()],
        [tool_calls(write)],
        [text("Done."), done()],
    )
    settings = relay_settings(scripted_relay)
    settings.approval_modes = {**settings.approval_modes, "write_file": "auto"}
    window = make_window(settings)
    window.resize(1200, 760)
    panel = window.plans_panel

    async def planning() -> None:
        qtbot.mouseClick(window.toolbar.plan_button, Qt.MouseButton.LeftButton)
        assert window.session.loop.plan.on and window.toolbar.plan_button.isChecked()
        type_prompt(qtbot, window, "Greet people by name")
        await wait_until(lambda: idle(window, 2) and panel.plans)

    run(planning())
    assert set(scripted_relay.legs_received[0].tool_names) <= READING
    assert panel.awaiting() and panel.approve_button.isEnabled()
    assert "Awaiting your approval" in panel.state.text()
    window.side_panel.reveal("plans")
    window.grab().save(str(_shots(project.parent) / "plan-awaiting-approval.png"))

    async def approving() -> None:
        qtbot.mouseClick(panel.approve_button, Qt.MouseButton.LeftButton)
        await wait_until(lambda: idle(window, 4))

    run(approving())
    assert not window.session.loop.plan.on and not window.toolbar.plan_button.isChecked()
    acting = scripted_relay.legs_received[2]
    assert "write_file" in acting.tool_names and "Greet by name" in acting.last_user_text
    assert (project / "app.py").read_text() == "x = 1\n"
    assert not panel.awaiting() and "approved" in panel.state.text()


def test_revise_sends_the_comment_back_and_plan_is_per_conversation(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    first = tool_call("write_plan", {"title": "Cleanup", "markdown": "1. rm build"}, id="p1")
    scripted_relay.script(
        [tool_calls(first)], [text("Planned."), done()], [text("Revised."), done()]
    )
    window = make_window(relay_settings(scripted_relay))
    panel = window.plans_panel

    async def scenario() -> None:
        type_prompt(qtbot, window, "/plan clean the build")
        await wait_until(lambda: idle(window, 2) and panel.plans)
        qtbot.keyClicks(panel.comment, "keep the cache folder")
        qtbot.mouseClick(panel.revise_button, Qt.MouseButton.LeftButton)
        await wait_until(lambda: idle(window, 3))

    run(scenario())
    assert scripted_relay.legs_received[0].last_user_text == "clean the build"
    revised = scripted_relay.legs_received[2]
    assert "keep the cache folder" in revised.last_user_text
    assert set(revised.tool_names) <= READING and window.session.loop.plan.on
    window.new_conversation()  # another conversation starts out of plan mode
    assert not window.session.loop.plan.on and not window.toolbar.plan_button.isChecked()


def _shots(tmp_path: Path) -> Path:
    """MELGUI_SHOTS_DIR=docs renders the screenshot kept in docs/."""
    return Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
