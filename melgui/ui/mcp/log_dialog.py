"""One server's stderr (an HTTP server's log) and protocol log (keys already redacted by
the server's logs), read from wherever it runs (McpView.log) when opened and on Refresh."""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QDialog, QPlainTextEdit, QPushButton, QTabWidget, QVBoxLayout, QWidget

from melgui.core.protocol.tools.mcp.view import McpProblem, McpView, ServerLog
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.look.tokens import DIALOG_LOG


class ServerLogDialog(QDialog):
    def __init__(
        self, view: McpView, name: str, tasks: TaskKeeper, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.view = view
        self.name = name
        self.tasks = tasks
        self.setWindowTitle(f"MCP server {name}")
        self.resize(*DIALOG_LOG)
        self.tabs = QTabWidget(self)
        self.stderr = self._page("stderr")
        self.protocol = self._page("Protocol")
        refresh = QPushButton("Refresh", self)
        refresh.clicked.connect(self.refresh)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(refresh)
        self.refresh()

    def _page(self, title: str) -> QPlainTextEdit:
        view = QPlainTextEdit(self)
        view.setReadOnly(True)
        view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.tabs.addTab(view, title)
        return view

    def refresh(self) -> None:
        self.tasks.spawn(self._read(), what=f"reading the log of MCP server {self.name}")

    async def _read(self) -> None:
        try:
            log = await self.view.log(self.name)
        except McpProblem as exc:
            log = ServerLog("stderr", str(exc), "")
        self.show_log(log)

    def show_log(self, log: ServerLog) -> None:
        self.tabs.setTabText(0, log.log_name)
        self.stderr.setPlainText(log.stderr or f"(nothing in its {log.log_name} yet)")
        self.protocol.setPlainText(log.protocol or "(no messages yet)")
        for view in (self.stderr, self.protocol):
            view.verticalScrollBar().setValue(view.verticalScrollBar().maximum())
