"""Puts MCP servers into the main window: a dock with the servers panel, the servers
started with the window (and again for another folder), and each MCP tool's server and
annotations in the inspector's title. One call: `install_mcp(window)`."""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtCore import Qt, QTimer, SignalInstance
from PySide6.QtWidgets import QDockWidget, QMainWindow

from melgui.desk.desk import Desk
from melgui.tools.mcp.manager import McpManager
from melgui.ui.approvals.approval_bar import ApprovalBar
from melgui.ui.mcp.servers_panel import ServersPanel
from melgui.ui.mcp.trust_note import TrustNote
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.theme import Colors

HINTS = (
    ("readOnlyHint", True, "read-only"),
    ("destructiveHint", True, "destructive"),
    ("idempotentHint", True, "idempotent"),
    ("openWorldHint", True, "open world"),
    ("openWorldHint", False, "closed world"),
)


class McpHost(Protocol):
    desk: Desk
    tasks: TaskKeeper
    colors: Colors
    inspector: Any
    inspector_dock: QDockWidget
    approval_bar: ApprovalBar
    sessionChanged: SignalInstance
    themeChanged: SignalInstance


def tool_notes(manager: McpManager, name: str) -> str:
    """ "MCP server files · read-only · closed world" for an MCP tool; "" for others."""
    server = manager.server_of(name)
    if server is None:
        return ""
    notes = manager.annotations_of(name)
    said = [text for key, value, text in HINTS if notes.get(key) is value]
    return " · ".join([f"MCP server {server}", *said])


def install_mcp(window: McpHost) -> ServersPanel:
    assert isinstance(window, QMainWindow)
    desk = window.desk
    panel = ServersPanel(desk.mcp, window.tasks, window.colors)
    dock = QDockWidget("MCP servers", window)
    dock.setObjectName("mcpDock")
    dock.setWidget(panel)
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    window.tabifyDockWidget(window.inspector_dock, dock)
    window.inspector_dock.raise_()
    panel.dock = dock  # type: ignore[attr-defined]

    note = TrustNote(window, panel)

    def notes(name: str) -> str:
        return tool_notes(desk.mcp, name)

    def follow(_session: object = None) -> None:
        window.inspector.detail.tool_notes = notes
        if desk.mcp.folder != desk.folder:  # another project: its servers, not these
            window.tasks.spawn(start(), what="starting MCP servers")
        else:  # a new chat hears it too, after its conversation is drawn
            QTimer.singleShot(0, note.mention)

    async def start() -> None:
        await desk.start_mcp()
        panel.refresh()
        note.mention()

    def recolor(colors: Colors) -> None:
        panel.colors = colors
        panel.refresh()

    def restart_all() -> None:
        window.tasks.spawn(start(), what="starting MCP servers")

    panel.on_imported = restart_all
    window.sessionChanged.connect(follow)
    window.themeChanged.connect(recolor)
    window.inspector.detail.tool_notes = notes
    window.approval_bar.tool_notes = notes
    window.tasks.spawn(start(), what="starting MCP servers")
    return panel
