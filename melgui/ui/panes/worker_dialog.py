"""Panes → New worker…: the task, and for this worker whether it gets its own git
worktree (the setting's choice preselected; a folder without git always shares) and
whether the main folder's uncommitted changes go with it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QStatusBar,
    QVBoxLayout,
    QWidget,
)

from melgui.core.worktrees.workers import WorkerWorktrees
from melgui.ui.panes.manager import PaneManager
from melgui.ui.runtime.aio import TaskKeeper

Start = Callable[[str, bool, bool], object]  # (task, own worktree, carry changes)


class WorkerDialog(QDialog):
    def __init__(
        self,
        worktrees: WorkerWorktrees | None,
        start: Start,
        parent: QWidget | None = None,
        hosts: list[str] | None = None,
    ) -> None:
        """`hosts`: other machines it can run on (Settings → hosts): a choice of where."""
        super().__init__(parent)
        self.setObjectName("workerDialog")
        self.setWindowTitle("New worker")
        self._start = start
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Task for the worker agent:", self))
        self.task = QPlainTextEdit(self)
        self.task.setObjectName("task")
        layout.addWidget(self.task)
        available = worktrees is not None and worktrees.available()
        self.own = QCheckBox("Work in its own git worktree and branch", self)
        self.own.setObjectName("ownWorktree")
        self.own.setEnabled(available)
        self.own.setChecked(
            available and worktrees is not None and worktrees.settings.worker_worktrees
        )
        if not available:
            self.own.setToolTip(
                "This folder is not a git repository with a commit: workers share it."
            )
        self.carry = QCheckBox("Take this folder's uncommitted changes along", self)
        self.carry.setObjectName("carryChanges")
        self.carry.setChecked(worktrees is not None and worktrees.settings.worker_carry_changes)
        self.carry.setEnabled(self.own.isChecked())
        self.own.toggled.connect(self.carry.setEnabled)
        layout.addWidget(self.own)
        layout.addWidget(self.carry)
        self.where = QComboBox(self)
        self.where.setObjectName("workerHost")
        self.where.addItem("On this machine", "")
        for host in hosts or []:
            self.where.addItem(f"On {host}", host)
        self.where.currentIndexChanged.connect(self._where_changed)
        if hosts:  # the choice shows only where there is one
            layout.addWidget(self.where)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def accept(self) -> None:
        task = self.task.toPlainText().strip()
        if not task:
            self.task.setFocus()
            return
        host = str(self.where.currentData() or "")
        if host:  # the manager reads the host from the task, as spawn_agent's
            self._start(f"@{host} {task}", False, False)
        else:
            own = self.own.isEnabled() and self.own.isChecked()
            self._start(task, own, own and self.carry.isChecked())
        super().accept()

    def _where_changed(self) -> None:
        here = not self.where.currentData()  # a worktree is made only on this machine
        self.own.setVisible(here)
        self.carry.setVisible(here)


class WorkerHost(Protocol):
    """What starting a worker uses of the window (MainWindow is one)."""

    pane_manager: PaneManager

    @property
    def status(self) -> QStatusBar: ...

    @property
    def tasks(self) -> TaskKeeper: ...


def start_worker_soon(window: WorkerHost, task: str, own: bool, carry: bool) -> asyncio.Task[None]:
    """Start the worker in the background (making a worktree can take a while); a failure
    goes to the status bar."""
    manager = window.pane_manager
    status = window.status

    async def start() -> None:
        status.showMessage("Starting a worker…" + (" (making its worktree)" if own else ""), 5000)
        try:
            info, _prepared = await manager.start_worker(
                task, None, "tab", own_worktree=own, carry=carry
            )
        except Exception as exc:
            status.showMessage(f"Cannot start a worker: {exc}", 15000)
            return
        manager.area.focus_pane(info.id)

    return window.tasks.spawn(start(), what="starting a worker")
