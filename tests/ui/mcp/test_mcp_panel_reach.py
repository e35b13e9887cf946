"""The MCP servers panel is within reach in the real window: in the View menu and the
palette, on screen while panes are open, and Restart runs the command mcp.json says now."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QMenu
from pytestqt.qtbot import QtBot

from melgui.ui.window.commands import palette
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay
from tests.fakes.mcp import fake_entry
from tests.fakes.window import relay_settings, wait_until


def test_the_panel_is_in_the_view_menu_the_palette_and_beside_panes(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, tmp_path: Path
) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"fake": fake_entry()}}))
    window: MainWindow = make_window(relay_settings(scripted_relay))
    panel, side = window.mcp_panel, window.side_panel

    action = window.actions_by_name["mcp"]
    assert action.text().replace("&", "") == "MCP servers"
    view = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    assert isinstance(view, QMenu)
    assert action in view.actions()
    finder = palette(window)
    finder.query.setText("mcp")
    assert "MCP servers" in finder.shown()
    finder.close()

    window.layout_keeper.panes_changed(True)  # a pane opened: empty side docks fold
    action.trigger()  # View → MCP servers brings it back beside the panes
    assert side.on_screen("mcp") and panel.isVisible()  # the panel, on its MCP tab
    action.trigger()  # a second time it stays: the menu shows, it does not toggle away
    assert side.on_screen("mcp")

    async def scenario() -> None:
        await window.desk.start_mcp(extra=config)
        panel.refresh()
        server = window.desk.mcp.servers["fake"]
        first = server.process.pid if server.process is not None else 0
        # The person edits the file: Restart runs what it says now.
        entry = fake_entry(env={"MCP_FAKE_MARK": "edited"})
        config.write_text(json.dumps({"mcpServers": {"fake": entry}}))
        panel.select("fake")
        panel.restart_selected()
        await wait_until(lambda: server.process is not None and server.process.pid != first, 20)
        await wait_until(lambda: server.state.status == "ready", 20)
        assert server.config.env.get("MCP_FAKE_MARK") == "edited"

    run(scenario())
    window.resize(1300, 800)
    view.popup(window.mapToGlobal(window.menuBar().geometry().bottomLeft()))
    run(wait_until(lambda: view.isVisible()))
    shot = window.grab()  # the menu is a window of its own: drawn onto the shot where it is
    painter = QPainter(shot)
    painter.drawPixmap(window.mapFromGlobal(view.pos()), view.grab())
    painter.end()
    shot.save(str(_shots(tmp_path) / "mcp-panel-view-menu.png"))
    view.close()


def _shots(tmp_path: Path) -> Path:
    """MELGUI_SHOTS_DIR=docs renders the screenshot kept in docs/."""
    return Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
