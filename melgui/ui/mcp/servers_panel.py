"""Every MCP server of the desk with its state in one line, and what can be done about it,
wherever the servers run (`view`: this process's, or the melgui host's: McpView).

A server is a row (name, state); its tools are child rows with a check box each
(unchecked: not offered to the model), and the resources it offers are listed under a
Resources row: double-click one (or Attach) to attach it to the prompt, as `@server:uri`
does. Buttons act on the selected server: Restart, Disable/Enable, Log (its stderr and
protocol log, keys redacted), and for an HTTP server that signs in, Sign in (opens the
browser) or Sign out. A banner offers to trust the project's `.melgui/mcp.json` when it
is waiting for that. Servers on other machines (`there`: a remote folder's, a configured
host's) are listed after this machine's, each labelled with where it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from melgui.core.protocol.tools.mcp.view import ImportDone, McpProblem, McpView, ServerRow
from melgui.core.protocol.views.servers_there import ServersThere
from melgui.ui.mcp.log_dialog import ServerLogDialog
from melgui.ui.mcp.servers_there import (
    HERE,
    THERE_NAME_ROLE,
    THERE_ROLE,
    banner_there,
    status_color,
    there_item,
    waiting_file,
)
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.look.tokens import SPACE_XS
from melgui.ui.runtime.theme import Colors

SERVER_ROLE = Qt.ItemDataRole.UserRole
TOOL_ROLE = Qt.ItemDataRole.UserRole + 1
RESOURCE_ROLE = Qt.ItemDataRole.UserRole + 2  # a resource row's uri


class ServersPanel(QWidget):
    def __init__(
        self,
        view: McpView,
        tasks: TaskKeeper,
        colors: Colors,
        parent: QWidget | None = None,
        *,
        there: ServersThere | None = None,
    ) -> None:
        super().__init__(parent)
        self.view = view
        self._unsubscribe = view.subscribe(self._server_changed)
        self.there = there
        self.tasks = tasks
        self.colors = colors
        self._filling = False
        self.banner = QLabel(self)
        self.banner.setWordWrap(True)
        self.trust_button = QPushButton("Trust and start", self)
        self.trust_button.clicked.connect(self.trust_project)
        banner_row = QHBoxLayout()
        banner_row.addWidget(self.banner, 1)
        banner_row.addWidget(self.trust_button)
        self.tree = QTreeWidget(self)
        self.tree.setHeaderLabels(["Server / tool", "State"])
        self.tree.setColumnWidth(0, 200)
        self.tree.itemChanged.connect(self._tool_toggled)
        self.tree.currentItemChanged.connect(lambda *_: self._update_buttons())
        self.detail = QLabel(self)  # the selected server's state in full, and what it runs
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.restart_button = QPushButton("Restart", self)
        self.restart_button.clicked.connect(self.restart_selected)
        self.enable_button = QPushButton("Disable", self)
        self.enable_button.clicked.connect(self.toggle_selected)
        self.log_button = QPushButton("Log", self)
        self.log_button.clicked.connect(self.show_log)
        self.sign_in_button = QPushButton("Sign in", self)
        self.sign_in_button.clicked.connect(self.sign_in_selected)
        self.attach_button = QPushButton("Attach", self)
        self.attach_button.setToolTip("Attach the selected resource to the prompt")
        self.attach_button.clicked.connect(self.attach_selected)
        self.tree.itemDoubleClicked.connect(lambda item, _column: self._attach(item))
        # Attaches (server, uri) to the prompt (the window: what `@server:uri` does).
        self.on_attach: Callable[[str, str], None] | None = None
        self.import_button = QPushButton("Import…", self)
        self.import_button.setToolTip(
            "Add the servers of Claude Desktop, VS Code or Cursor to your mcp.json "
            "(secrets go to the keyring)"
        )
        self.import_menu = QMenu(self)
        self.import_menu.aboutToShow.connect(self._fill_import_menu)
        self.import_button.setMenu(self.import_menu)
        # Called after an import added servers (the window restarts the servers).
        self.on_imported: Callable[[], None] | None = None
        buttons = QHBoxLayout()
        for button in (
            self.restart_button, self.enable_button, self.log_button, self.sign_in_button,
            self.attach_button,
        ):  # fmt: skip
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.import_button)
        self.empty = QLabel(
            "No MCP servers. Add them to mcp.json in melgui's config folder or to the "
            "project's .melgui/mcp.json (the mcpServers shape of Claude Desktop, Cursor "
            "and VS Code).",
            self,
        )
        self.empty.setWordWrap(True)
        self.where = QLabel(self)  # where the servers run, when not in this window
        self.where.setObjectName("mcpWhere")
        self.where.setWordWrap(True)
        self.notice = QLabel(self)  # what the last import did
        self.notice.setWordWrap(True)
        self.notice.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACE_XS, SPACE_XS, SPACE_XS, SPACE_XS)
        layout.addLayout(banner_row)
        layout.addWidget(self.empty)
        layout.addWidget(self.notice)
        layout.addWidget(self.where)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.detail)
        layout.addLayout(buttons)
        self._toggling = False
        # Servers elsewhere may say something after the window went (a host's last word).
        self.destroyed.connect(lambda: self._unsubscribe())
        self.refresh()

    def set_view(self, view: McpView) -> None:
        """Show and drive `view`'s servers from now on (the melgui host's, once attached)."""
        self._unsubscribe()
        self.view = view
        self._unsubscribe = view.subscribe(self._server_changed)
        self.refresh()

    def _rows(self) -> dict[str, ServerRow]:
        return {row.name: row for row in self.view.servers()}

    # -- showing -------------------------------------------------------------------------

    def _server_changed(self) -> None:
        # A tool's own check box changed the server: clearing the tree now would delete
        # the item whose signal is still being delivered.
        if self._toggling:
            QTimer.singleShot(0, self.refresh)
        else:
            self.refresh()

    def refresh(self) -> None:
        selected = self.selected_server()
        self._filling = True
        try:
            self.tree.clear()
            elsewhere = self.there.every() if self.there is not None else []
            for server in self.view.servers():
                item = self._server_item(server)
                if elsewhere:  # beside servers elsewhere, say where this one runs
                    item.setText(0, f"{server.name} · on {HERE}")
                self.tree.addTopLevelItem(item)
            for there in elsewhere:
                self.tree.addTopLevelItem(there_item(there, self.colors))
        finally:
            self._filling = False
        self.tree.expandAll()
        if selected is not None:
            self.select(selected)
        untrusted, waiting = self.view.untrusted, waiting_file(self.there)
        self.banner.setVisible(untrusted is not None or waiting is not None)
        self.trust_button.setVisible(untrusted is not None or waiting is not None)
        if untrusted is not None:
            self.banner.setText(
                f"{untrusted} lists servers that have not started: trust this file as it "
                "is now to start them (any change asks again)."
            )
        elif waiting is not None:
            self.banner.setText(banner_there(waiting))
        where = self.view.where
        self.where.setVisible(bool(where))
        self.where.setText(
            f"These servers run in {where}, where the conversations call them: "
            "Restart, Disable and Log act there."
        )
        self.where.setStyleSheet(f"color: {self.colors.muted}")
        problems = "\n".join(self.view.problems)
        self.empty.setVisible(not self.tree.topLevelItemCount() or bool(problems))
        if problems:
            self.empty.setText(problems)
        self._update_buttons()

    def _server_item(self, server: ServerRow) -> QTreeWidgetItem:
        item = QTreeWidgetItem([server.name, server.line])
        item.setData(0, SERVER_ROLE, server.name)
        item.setToolTip(0, server.describe)
        item.setToolTip(1, server.line)
        color = status_color(server.status, self.colors)
        if color:
            item.setForeground(1, QColor(color))
        for tool in server.tools:
            child = QTreeWidgetItem([tool.name, tool.description.split("\n")[0]])
            child.setData(0, SERVER_ROLE, server.name)
            child.setData(0, TOOL_ROLE, tool.name)
            child.setFlags(child.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            checked = Qt.CheckState.Checked if tool.enabled else Qt.CheckState.Unchecked
            child.setCheckState(0, checked)
            item.addChild(child)
        if server.resources:
            group = QTreeWidgetItem([f"Resources ({len(server.resources)})", ""])
            group.setData(0, SERVER_ROLE, server.name)
            group.setForeground(0, QColor(self.colors.muted))
            for resource in server.resources:
                child = QTreeWidgetItem([resource.title or resource.uri, resource.about])
                child.setData(0, SERVER_ROLE, server.name)
                child.setData(0, RESOURCE_ROLE, resource.uri)
                child.setToolTip(0, f"{server.name}:{resource.uri}")
                child.setToolTip(1, resource.about)
                group.addChild(child)
            item.addChild(group)
        return item

    def selected_server(self) -> str | None:
        item = self.tree.currentItem()
        return str(item.data(0, SERVER_ROLE)) if item is not None else None

    def _update_buttons(self) -> None:
        name = self.selected_server()
        server = self._rows().get(name) if name else None
        for button in (self.restart_button, self.enable_button, self.log_button):
            button.setEnabled(server is not None)
        current = self.tree.currentItem()
        where = current.data(0, THERE_ROLE) if current is not None else None
        self.detail.setVisible(server is not None or bool(where))
        if where and current is not None:  # a server elsewhere: its state, where it runs
            top = current.parent() or current
            self.detail.setText(f"{top.text(0)}: {top.text(1)}\n{top.toolTip(0)}")
            self.restart_button.setEnabled(self.there is not None)  # its host restarts it
        if server is not None:
            self.detail.setText(f"{server.name}: {server.line}\n{server.describe}")
            disabled = server.status == "disabled"
            self.enable_button.setText("Enable" if disabled else "Disable")
            self.restart_button.setEnabled(server.status not in ("disabled", "untrusted"))
        self.attach_button.setVisible(server is not None and bool(server.resources))
        self.attach_button.setEnabled(
            current is not None
            and bool(current.data(0, RESOURCE_ROLE))
            and self.on_attach is not None
        )
        self.sign_in_button.setVisible(server is not None and server.signs_in)
        if server is not None and server.signs_in:
            signed = server.signed_in and server.status == "ready"
            self.sign_in_button.setText("Sign out" if signed else "Sign in")
            if signed:
                self.detail.setText(self.detail.text() + "\nSigned in (OAuth)")
            self.sign_in_button.setEnabled(server.status not in ("disabled", "untrusted"))

    # -- acting --------------------------------------------------------------------------

    def server_items(self) -> Iterator[QTreeWidgetItem]:
        for index in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(index)
            if item is not None:
                yield item

    def select(self, name: str) -> None:
        for item in self.server_items():
            if item.data(0, SERVER_ROLE) == name:
                self.tree.setCurrentItem(item)

    def restart_selected(self) -> None:
        current = self.tree.currentItem()
        where = current.data(0, THERE_ROLE) if current is not None else None
        if where and current is not None and self.there is not None:
            top = current.parent() or current
            self.there.restart(str(where), str(top.data(0, THERE_NAME_ROLE)))
            return
        name = self.selected_server()
        if name:
            what = f"restarting MCP server {name}"
            self.tasks.spawn(self.view.restart(name), what=what)

    def toggle_selected(self) -> None:
        name = self.selected_server()
        if not name:
            return
        row = self._rows().get(name)
        enable = row is not None and row.status == "disabled"
        self.tasks.spawn(
            self.view.set_enabled(name, enable),
            what=f"{'enabling' if enable else 'disabling'} MCP server {name}",
        )

    def sign_in_selected(self) -> None:
        """Sign in (the browser opens; the state says when it is done) or sign out."""
        name = self.selected_server()
        if not name:
            return
        if self.sign_in_button.text() == "Sign out":
            self.tasks.spawn(self.view.sign_out(name), what=f"signing out of {name}")
        else:
            self.tasks.spawn(self.view.sign_in(name), what=f"signing in to {name}")

    def attach_selected(self) -> None:
        item = self.tree.currentItem()
        if item is not None:
            self._attach(item)

    def _attach(self, item: QTreeWidgetItem) -> None:
        uri = item.data(0, RESOURCE_ROLE)
        if uri and self.on_attach is not None:
            self.on_attach(str(item.data(0, SERVER_ROLE)), str(uri))

    def show_log(self) -> None:
        name = self.selected_server()
        if name:
            ServerLogDialog(self.view, name, self.tasks, self).show()

    def trust_project(self) -> None:
        waiting = waiting_file(self.there)
        if self.view.untrusted is None and waiting is not None and self.there is not None:
            self.there.trust(waiting.where)  # remembered here; they start there
            return
        self.tasks.spawn(self.view.trust_project(), what="starting the project's MCP servers")

    def _fill_import_menu(self) -> None:
        self.import_menu.clear()
        for path in self.view.import_files():
            action = self.import_menu.addAction(path)
            action.triggered.connect(lambda _=False, p=path: self._import(Path(p)))
        other = self.import_menu.addAction("Choose a file…")
        other.triggered.connect(self._choose_import)

    def _choose_import(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Import MCP servers", "", "JSON (*.json)")
        if name:
            self._import(Path(name))

    def _import(self, path: Path) -> None:
        self.tasks.spawn(self.import_from(path), what=f"importing MCP servers from {path}")

    async def import_from(self, path: Path) -> ImportDone | None:
        """Add `path`'s servers to the user's mcp.json; says what happened in the panel."""
        try:
            report = await self.view.import_from(str(path))
        except McpProblem as exc:
            self.notice.setText(f"Import failed: {exc}")
            self.notice.show()
            return None
        lines = [f"Imported from {path}: {', '.join(report.added) or 'nothing new'}."]
        if report.skipped:
            lines.append(f"Already there: {', '.join(report.skipped)}.")
        if report.to_set:
            lines.append(f"No keyring: set {', '.join(report.to_set)} in the environment.")
        self.notice.setText(" ".join(lines))
        self.notice.show()
        if report.added and self.on_imported is not None:
            self.on_imported()
        return report

    def _tool_toggled(self, item: QTreeWidgetItem, column: int) -> None:
        tool = item.data(0, TOOL_ROLE)
        if self._filling or column != 0 or not tool:
            return
        enabled = item.checkState(0) == Qt.CheckState.Checked
        self._toggling = True
        try:
            self.view.set_tool_enabled(str(item.data(0, SERVER_ROLE)), str(tool), enabled)
        finally:
            self._toggling = False
