"""A server's resources are listed in the MCP servers panel under it, and one attaches to
the prompt from there (double-click or Attach) as `@server:uri` would: its text goes with
the next message."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QTreeWidgetItem
from pytestqt.qtbot import QtBot

from melgui.ui.mcp.servers_panel import RESOURCE_ROLE
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, text
from tests.fakes.mcp import fake_entry
from tests.fakes.window import idle, relay_settings, type_prompt, wait_until


def resource_rows(window: MainWindow) -> dict[str, QTreeWidgetItem]:
    rows: dict[str, QTreeWidgetItem] = {}
    for server in window.mcp_panel.server_items():
        for index in range(server.childCount()):
            group = server.child(index)
            for row in (group.child(n) for n in range(group.childCount())):
                if row.data(0, RESOURCE_ROLE):
                    rows[str(row.data(0, RESOURCE_ROLE))] = row
    return rows


def test_resources_are_browsed_per_server_and_attached_from_the_panel(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, tmp_path: Path
) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"fake": fake_entry()}}))
    scripted_relay.script([text("Friday."), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay))
    panel = window.mcp_panel
    window.side_panel.reveal("mcp")
    window.resize(1280, 760)

    async def started() -> None:
        await window.desk.start_mcp(extra=config)
        await wait_until(lambda: len(resource_rows(window)) == 2, 20)

    run(started())
    rows = resource_rows(window)
    assert sorted(rows) == ["memo://notes", "memo://plan"]
    plan = rows["memo://plan"]
    assert (plan.text(0), plan.text(1)) == ("Release plan", "What ships when")
    assert plan.parent().text(0) == "Resources (2)"
    assert plan.toolTip(0) == "fake:memo://plan"
    panel.tree.setCurrentItem(plan)
    assert panel.attach_button.isVisible() and panel.attach_button.isEnabled()
    panel.tree.setCurrentItem(panel.tree.topLevelItem(0))
    assert not panel.attach_button.isEnabled()  # the server's row: nothing to attach
    panel.tree.setCurrentItem(plan)
    box = window.chat.input
    panel.attach_button.click()
    run(wait_until(lambda: len(box.attachments.chips) == 1, 10))
    shots = Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
    assert window.grab().save(str(shots / "mcp-panel-resources.png"))
    panel.tree.itemDoubleClicked.emit(rows["memo://notes"], 0)
    run(wait_until(lambda: len(box.attachments.chips) == 2, 10))

    async def ask() -> None:
        type_prompt(qtbot, window, "When does it ship?")
        await wait_until(lambda: idle(window, 1), 20)

    run(ask())
    content = scripted_relay.legs_received[0].messages[-1]["content"]
    sent = " ".join(part.get("text", "") for part in content)
    assert '<file path="fake:memo://plan">' in sent
    assert "1.0 ships on Friday; 1.1 a month later." in sent
    assert "The launch is on Friday." in sent
    run(window.desk.aclose())
