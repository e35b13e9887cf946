"""One server's stderr (an HTTP server's log) and protocol log (keys already redacted by
the server's logs)."""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QDialog, QPlainTextEdit, QPushButton, QTabWidget, QVBoxLayout, QWidget

from melgui.tools.mcp.server import McpServer
from melgui.ui.runtime.look.tokens import DIALOG_LOG


class ServerLogDialog(QDialog):
    def __init__(self, server: McpServer, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.server = server
        self.setWindowTitle(f"MCP server {server.name}")
        self.resize(*DIALOG_LOG)
        self.tabs = QTabWidget(self)
        self.stderr = self._page(server.log_name)
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
        self.stderr.setPlainText(
            self.server.stderr.text() or f"(nothing in its {self.server.log_name} yet)"
        )
        self.protocol.setPlainText(self.server.log.text() or "(no messages yet)")
        for view in (self.stderr, self.protocol):
            view.verticalScrollBar().setValue(view.verticalScrollBar().maximum())
