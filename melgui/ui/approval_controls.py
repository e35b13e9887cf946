"""Approve / Deny (with a reason) / Always allow, for one pending ApprovalRequest.

Used by the inspector's call view and by the window's approval bar. Keyboard:
APPROVE_KEYS approves and DENY_KEYS denies (with the reason typed, if any); the window
installs those shortcuts once, so the labels here only show them.
"""

from __future__ import annotations

from typing import Literal

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLineEdit,
    QMenu,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from melgui.core.agent.policy import is_simple_command, suggested_prefix
from melgui.core.protocol.approval import ApprovalRequest

APPROVE_KEYS = QKeySequence("Ctrl+Return")
DENY_KEYS = QKeySequence("Ctrl+Shift+Backspace")


def _keys(sequence: QKeySequence) -> str:
    return sequence.toString(QKeySequence.SequenceFormat.NativeText)


class ApprovalControls(QWidget):
    decided = Signal()

    def __init__(self, parent: QWidget | None = None, *, stacked: bool = False) -> None:
        super().__init__(parent)
        self.request: ApprovalRequest | None = None
        self.reason = QLineEdit(self)
        self.reason.setPlaceholderText("Reason for denying (optional, sent to the model)")
        self.reason.returnPressed.connect(self.deny)
        self.approve_button = QPushButton(f"Approve ({_keys(APPROVE_KEYS)})", self)
        self.approve_button.clicked.connect(lambda: self.approve("once"))
        self.deny_button = QPushButton(f"Deny ({_keys(DENY_KEYS)})", self)
        self.deny_button.clicked.connect(self.deny)
        self.always_button = QToolButton(self)
        self.always_button.setText("Always allow ▾")
        self.always_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self._menu = QMenu(self.always_button)
        self._session_action = QAction(self._menu)
        self._session_action.triggered.connect(lambda: self.approve("session"))
        self._saved_action = QAction(self._menu)
        self._saved_action.triggered.connect(lambda: self.approve("saved"))
        self._menu.addAction(self._session_action)
        self._menu.addAction(self._saved_action)
        self.always_button.setMenu(self._menu)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.approve_button)
        buttons.addWidget(self.deny_button)
        if stacked:  # narrow places (the inspector): the reason gets its own line
            buttons.addStretch(1)
            buttons.addWidget(self.always_button)
            layout = QVBoxLayout(self)
            layout.setContentsMargins(0, 0, 0, 0)
            layout.addLayout(buttons)
            layout.addWidget(self.reason)
        else:
            buttons.addWidget(self.reason, 1)
            buttons.addWidget(self.always_button)
            self.setLayout(buttons)
        self.set_request(None)

    def set_request(self, request: ApprovalRequest | None) -> None:
        if request is not self.request:
            self.reason.clear()
        self.request = request
        live = request is not None and request.pending
        for widget in (self.approve_button, self.deny_button, self.reason, self.always_button):
            widget.setEnabled(live)
        if request is None:
            return
        name = request.call.name
        what = f"{name} calls"
        if name == "run_command":
            command = request.arguments.get("command")
            simple = isinstance(command, str) and is_simple_command(command)
            self.always_button.setEnabled(live and simple)
            self.always_button.setToolTip(
                ""
                if simple
                else "A command joined with &&, ;, |, $(…), backticks or redirection is "
                "always asked again."
            )
            if simple and isinstance(command, str):
                what = f"commands starting with “{suggested_prefix(command)}”"
        self._session_action.setText(f"Allow {what} for this conversation")
        self._saved_action.setText(f"Always allow {what} (saved)")

    def approve(self, remember: Literal["once", "session", "saved"] = "once") -> None:
        if self.request is not None and self.request.pending:
            self.request.approve(remember)
            self.set_request(self.request)
            self.decided.emit()

    def deny(self) -> None:
        if self.request is not None and self.request.pending:
            self.request.deny(self.reason.text())
            self.set_request(self.request)
            self.decided.emit()
