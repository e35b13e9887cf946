"""Approve / Deny (with a reason) / Always allow, for one pending ApprovalRequest.

"Always allow" adds, for this conversation, this project or everywhere, the rules the
asking policy proposes: for a command, one rule per asked part (never one for the whole
line); when a part cannot be covered by a rule the button says why and stays off.

Used by the inspector's call view and by the window's approval bar. Keyboard:
APPROVE_KEYS approves and DENY_KEYS denies (with the reason typed, if any); the window
installs those shortcuts once, so the labels here only show them. The reason typed is
the pending call's (`ApprovalRequest.draft`), so every box showing the call edits the
same one and every key that denies sends it.
"""

from __future__ import annotations

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

from melgui.core.protocol.approval import ApprovalRequest, Remember

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
        self.reason.setAccessibleName("Reason for denying")
        self.reason.textChanged.connect(self._typed)
        self.reason.returnPressed.connect(self.deny)
        self.approve_button = QPushButton(f"Approve ({_keys(APPROVE_KEYS)})", self)
        self.approve_button.clicked.connect(lambda: self.approve("once"))
        self.deny_button = QPushButton(f"Deny ({_keys(DENY_KEYS)})", self)
        self.deny_button.clicked.connect(self.deny)
        self.always_button = QToolButton(self)
        self.always_button.setText("Always allow ▾")
        self.always_button.setAccessibleName("Always allow")
        self.always_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self._menu = QMenu(self.always_button)
        self._actions: dict[Remember, QAction] = {}
        for remember in ("session", "project", "saved"):
            action = QAction(self._menu)
            action.triggered.connect(lambda _=False, r=remember: self.approve(r))
            self._menu.addAction(action)
            self._actions[remember] = action
        self.always_button.setMenu(self._menu)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        # An ACP agent's own options, as it offered them (its labels), instead of ours.
        self.option_buttons: list[QPushButton] = []
        self._options_row = buttons
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
        self.request = request
        draft = request.draft if request is not None else ""
        if self.reason.text() != draft:  # the call's reason, wherever it was typed
            self.reason.setText(draft)
        live = request is not None and request.pending
        for widget in (self.approve_button, self.deny_button, self.reason, self.always_button):
            widget.setEnabled(live)
        self._show_options(request, live)
        if request is None or request.options:
            return
        # the rules the call's judgement proposes (a rule per asked part of a command)
        rules = request.judgement.always.get("conversation", ())
        self.always_button.setEnabled(live and bool(rules))
        if not rules:
            self.always_button.setToolTip(
                "No rule can cover this call: a part is outside the project, computed when "
                "it runs, or not readable. Approve it once, or deny it."
                if request.judgement.learns
                else "The policy that asks keeps no rules."
            )
            return
        self.always_button.setToolTip("")
        if request.call.name == "run_command":
            what = " and ".join(f"“{r.pattern}”" for r in rules)
            what = f"commands {what}"
        else:
            what = f"{request.call.name} calls"
        self._actions["session"].setText(f"Allow {what} for this conversation")
        self._actions["project"].setText(f"Allow {what} in this project (saved)")
        self._actions["saved"].setText(f"Allow {what} everywhere (saved)")

    def _show_options(self, request: ApprovalRequest | None, live: bool) -> None:
        for button in self.option_buttons:
            button.deleteLater()
        self.option_buttons = []
        options = request.options if request is not None else ()
        for widget in (self.approve_button, self.deny_button, self.reason, self.always_button):
            widget.setVisible(not options)
        for index, option in enumerate(options):
            button = QPushButton(option.label, self)
            button.setObjectName(f"agentOption_{option.kind}")
            button.setToolTip(f"The agent's option ({option.kind.replace('_', ' ')})")
            button.setEnabled(live)
            button.clicked.connect(lambda _=False, o=option.option_id: self.choose(o))
            self._options_row.insertWidget(index, button)
            self.option_buttons.append(button)

    def choose(self, option_id: str) -> None:
        """Answer with one of the agent's own options."""
        if self.request is not None and self.request.pending:
            self.request.choose(option_id)
            self.set_request(self.request)
            self.decided.emit()

    def approve(self, remember: Remember = "once") -> None:
        if self.request is not None and self.request.pending:
            self.request.approve(remember)
            self.set_request(self.request)
            self.decided.emit()

    def _typed(self, text: str) -> None:
        if self.request is not None and self.request.pending:
            self.request.draft = text

    def deny(self) -> None:
        if self.request is not None and self.request.pending:
            self.request.deny(self.request.draft)
            self.set_request(self.request)
            self.decided.emit()
