"""The MCP panel's rows for servers on other machines (desk/mcp/servers_there.py), each
labelled with where it runs, and what the panel and the chat say while a remote
folder's own `.melgui/mcp.json` waits for trust."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QTreeWidgetItem

from melgui.core.protocol.views.servers_there import ProjectFileThere, ServersThere, ServerThere
from melgui.ui.runtime.theme import Colors

THERE_ROLE = Qt.ItemDataRole.UserRole + 3  # a remote server's row: "where", its host
THERE_NAME_ROLE = Qt.ItemDataRole.UserRole + 4  # a remote server's row: its name
HERE = "this machine"


def status_color(status: str, colors: Colors) -> str | None:
    return {
        "ready": colors.ok,
        "failed": colors.error,
        "sign-in": colors.error,
        "untrusted": colors.muted,
        "disabled": colors.muted,
    }.get(status)


def there_item(server: ServerThere, colors: Colors) -> QTreeWidgetItem:
    """A server on `server.where`: its state, its tools (no toggles here: the person's
    toggles were applied when its entry was sent)."""
    item = QTreeWidgetItem([f"{server.name} · on {server.where}", server.line])
    item.setData(0, THERE_ROLE, server.where)
    item.setData(0, THERE_NAME_ROLE, server.name)
    item.setToolTip(0, f"runs on {server.where}: {server.describe}".rstrip(": "))
    item.setToolTip(1, server.line)
    color = status_color(server.status, colors)
    if color:
        item.setForeground(1, QColor(color))
    prefix = f"mcp__{server.name}__"  # the model's name for it; the panel shows the server's
    for tool in sorted(server.tools, key=lambda t: t.name):
        shown = tool.name.removeprefix(prefix)
        child = QTreeWidgetItem([shown, (tool.description or "").split("\n")[0]])
        child.setToolTip(0, tool.name)
        child.setData(0, THERE_ROLE, server.where)
        item.addChild(child)
    return item


def waiting_file(there: ServersThere | None) -> ProjectFileThere | None:
    if there is None or not there.untrusted:
        return None
    return next(iter(there.untrusted.values()))


def banner_there(file: ProjectFileThere) -> str:
    names = ", ".join(file.names) or "its servers"
    return (
        f"{file.key} lists servers that have not started on {file.where} ({names}): "
        "trust this file as it is now to start them there (any change asks again)."
    )


def waiting_text_there(there: ServersThere | None) -> str | None:
    """What the chat says while a remote folder's own file waits, or None."""
    file = waiting_file(there)
    if file is None:
        return None
    listed = ", ".join(file.names) or "its servers"
    return (
        f"MCP servers from {file.key} are waiting for trust and have not started on "
        f"{file.where}: {listed}. Trust the file as it is now to start them there "
        "(View → MCP servers shows them)."
    )
