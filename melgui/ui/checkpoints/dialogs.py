"""The dialogs of checkpoints: a diff, the three versions of conflicting files with a
choice per file, and how far a rewind goes. Opened window-modal, awaited without
blocking the loop (`await dialog.answer()`)."""

from __future__ import annotations

import asyncio
import html
from collections.abc import Awaitable, Callable

from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from melgui.core.store.checkpoints.restore import CHOICES, Choice, PathPlan
from melgui.ui.runtime.look.tokens import DIALOG_L, DIALOG_M

# (path, which version, its blob id or None when absent) -> the text to show
ReadVersion = Callable[[str, Choice, str | None], Awaitable[str]]
CHOICE_LABEL: dict[Choice, str] = {
    "before": "before the call",
    "agent": "the agent's",
    "now": "now (keep)",
}


def _mono() -> QFont:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


class AwaitableDialog(QDialog):
    """A dialog whose result is awaited: `await dialog.answer()` -> accepted or not."""

    def answer(self) -> Awaitable[bool]:
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

        def done(code: int) -> None:
            if not future.done():
                future.set_result(code == QDialog.DialogCode.Accepted.value)

        self.finished.connect(done)
        self.open()
        return future


class DiffDialog(AwaitableDialog):
    def __init__(self, title: str, diff: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setFont(_mono())
        self.text.setPlainText(diff or "(no difference)")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
        self.resize(*DIALOG_M)


class ConflictDialog(AwaitableDialog):
    """Files changed again after the agent's change: the three versions, one choice each.

    Whatever is chosen, nothing is lost: the restore is a checkpoint, so the version it
    replaces can be brought back with "redo"."""

    def __init__(self, conflicts: tuple[PathPlan, ...], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Files changed since the agent's change")
        self.conflicts = conflicts
        self.groups: dict[str, QButtonGroup] = {}
        intro = QLabel(
            "These files were changed again after the agent's change (your editor, another "
            "agent). Choose per file which version to keep. Nothing is lost: this restore can "
            "itself be undone.",
            self,
        )
        intro.setWordWrap(True)
        grid = QGridLayout()
        self.views: dict[str, QTabWidget] = {}
        for row, plan in enumerate(conflicts):
            grid.addWidget(QLabel(f"<b>{html.escape(plan.path)}</b>", self), row, 0)
            group = QButtonGroup(self)
            for column, choice in enumerate(CHOICES, 1):
                button = QRadioButton(CHOICE_LABEL[choice], self)
                button.setObjectName(f"{plan.path}:{choice}")
                button.setChecked(choice == "now")
                group.addButton(button, column)
                grid.addWidget(button, row, column)
            self.groups[plan.path] = group
        self.tabs = QTabWidget(self)
        buttons = QDialogButtonBox(self)
        self.restore_button = QPushButton("Restore", self)
        buttons.addButton(self.restore_button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(grid)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(buttons)
        self.resize(*DIALOG_L)

    async def load_versions(self, read: ReadVersion) -> None:
        """One tab per file, the three versions side by side."""
        for plan in self.conflicts:
            page = QWidget(self.tabs)
            row = QHBoxLayout(page)
            for choice in CHOICES:
                state = plan.target(choice)
                column = QVBoxLayout()
                column.addWidget(QLabel(CHOICE_LABEL[choice], page))
                view = QPlainTextEdit(page)
                view.setReadOnly(True)
                view.setFont(_mono())
                view.setPlainText(await read(plan.path, choice, state.blob if state else None))
                column.addWidget(view)
                row.addLayout(column)
            self.tabs.addTab(page, plan.path)

    def choose(self, path: str, choice: Choice) -> None:
        self.groups[path].button(CHOICES.index(choice) + 1).setChecked(True)

    def choices(self) -> dict[str, Choice]:
        return {path: CHOICES[group.checkedId() - 1] for path, group in self.groups.items()}


class RewindDialog(AwaitableDialog):
    """Rewind to before a message: files only, or files and the conversation."""

    def __init__(self, text: str, files: int, busy: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Rewind to here")
        self.continue_from_there = False
        label = QLabel(
            f"Put back the {files} file{'s' if files != 1 else ''} the agent changed from this "
            f"message on, as they were before it:<br><i>{html.escape(text)}</i><br><br>"
            "You can also continue the conversation from before this message; the later "
            "replies stay in the history. A rewind can itself be undone.",
            self,
        )
        label.setWordWrap(True)
        self.files_button = QPushButton("Restore files", self)
        self.continue_button = QPushButton("Restore files and continue from here", self)
        self.continue_button.setEnabled(not busy)
        if busy:
            self.continue_button.setToolTip("Stop the running turn first")
        cancel = QPushButton("Cancel", self)
        self.files_button.clicked.connect(self.accept)
        self.continue_button.clicked.connect(self._continue)
        cancel.clicked.connect(self.reject)
        row = QHBoxLayout()
        row.addStretch(1)
        for button in (self.files_button, self.continue_button, cancel):
            row.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addWidget(label)
        layout.addLayout(row)

    def _continue(self) -> None:
        self.continue_from_there = True
        self.accept()
