"""Settings → Workers: whether workers get their own git worktree, and for this project
whether the folder is trusted (applied at once, through the window's trust bar), the
files copied into each new worktree, the setup command run there, and the merge queue's
test command and what a failure does."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QWidget,
)

from melgui.core.config.settings import Settings
from melgui.core.config.trust import FolderTrust
from melgui.ui.runtime.look.tokens import COPY_BOX_MAX_H


class WorkerSettingsTab(QWidget):
    def __init__(self, settings: Settings, project: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("workerSettings")
        self.project = project
        form = QFormLayout(self)
        self.own = QCheckBox("Workers get their own git worktree and branch", self)
        self.own.setChecked(settings.worker_worktrees)
        form.addRow(self.own)
        self.carry = QCheckBox("…with this folder's uncommitted changes", self)
        self.carry.setChecked(settings.worker_carry_changes)
        form.addRow(self.carry)
        note = QLabel(
            "Worktrees live in melgui's data folder, outside the project. A folder without "
            "git always shares. Panes → New worker… chooses per worker.",
            self,
        )
        note.setWordWrap(True)
        form.addRow(note)
        form.addRow(QLabel(f"<b>This project</b> ({project or 'no folder'})", self))
        self.trust = QCheckBox("Trust this folder: its MCP servers, git hooks and filters and "
                               "the setup command may run", self)  # fmt: skip
        self.trust.setObjectName("trustFolder")
        self.trust.setChecked(bool(project) and FolderTrust().is_trusted(project))
        self.trust.setEnabled(bool(project))
        form.addRow(self.trust)
        self.copy = QPlainTextEdit("\n".join(settings.worktree_copy.get(project, [])), self)
        self.copy.setObjectName("worktreeCopy")
        self.copy.setPlaceholderText(".env\n.venv\nconfig/*.local")
        self.copy.setMaximumHeight(COPY_BOX_MAX_H)
        form.addRow("Copy into new worktrees", self.copy)
        self.setup = QLineEdit(settings.worktree_setup.get(project, ""), self)
        self.setup.setObjectName("worktreeSetup")
        self.setup.setPlaceholderText("npm ci")
        form.addRow("Setup command", self.setup)
        self.timeout = QDoubleSpinBox(self)
        self.timeout.setRange(1, 24 * 3600)
        self.timeout.setDecimals(0)
        self.timeout.setSuffix(" s")
        self.timeout.setValue(settings.worktree_setup_timeout)
        form.addRow("Setup timeout", self.timeout)
        self.test_command = QLineEdit(settings.merge_test_command.get(project, ""), self)
        self.test_command.setObjectName("mergeTestCommand")
        self.test_command.setPlaceholderText("pytest -q (run on each branch before it merges)")
        form.addRow("Merge queue tests", self.test_command)
        self.on_failure = QComboBox(self)
        self.on_failure.setObjectName("mergeTestFailure")
        self.on_failure.addItem("Send the output to the worker as a new task", "send_back")
        self.on_failure.addItem("Stop the queue for me", "stop")
        self.on_failure.setCurrentIndex(
            max(0, self.on_failure.findData(settings.merge_test_failure))
        )
        form.addRow("When tests fail", self.on_failure)

    def values(self, original: Settings) -> dict[str, Any]:
        """The settings fields this tab shows, for Settings.model_validate."""
        copy = dict(original.worktree_copy)
        setup = dict(original.worktree_setup)
        lines = [line.strip() for line in self.copy.toPlainText().splitlines() if line.strip()]
        command = self.setup.text().strip()
        tests = dict(original.merge_test_command)
        copy.pop(self.project, None)
        setup.pop(self.project, None)
        tests.pop(self.project, None)
        if self.project and self.test_command.text().strip():
            tests[self.project] = self.test_command.text().strip()
        if self.project and lines:
            copy[self.project] = lines
        if self.project and command:
            setup[self.project] = command
        return {
            "worker_worktrees": self.own.isChecked(),
            "worker_carry_changes": self.carry.isChecked(),
            "worktree_copy": copy,
            "worktree_setup": setup,
            "worktree_setup_timeout": self.timeout.value(),
            "merge_test_command": tests,
            "merge_test_failure": self.on_failure.currentData(),
        }
