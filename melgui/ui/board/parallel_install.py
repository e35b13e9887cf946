"""Puts parallel work into the main window: overlap notes on the worker panes and in the
orchestrator's pane tools, and the merge queue (a dock beside the agents board, View →
Merge queue). One call, after the agents board exists: `install_parallel_work(window)`.

The queue's hooks are the window's: the project's test command and what a failure does
(Settings → Workers), where a worker's tests run (the project's place in its worktree),
whether a worker is busy, giving a worker its failed tests as a new task, and the worker
pane's worktree moved to the commit its branch was rebased on. A worker sent back joins
the queue again when it finishes its turn.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import Qt, SignalInstance
from PySide6.QtWidgets import QDockWidget, QMainWindow

from melgui.core.config.settings import Settings
from melgui.core.worktrees.merge_queue.queue import (
    MergeQueue,
    QueueHooks,
    QueueItem,
    QueueSettings,
)
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.workers import folder_in
from melgui.desk.board.agents_board import AgentsBoard, Moment
from melgui.desk.desk import Desk
from melgui.ui.board.board_view import BoardView
from melgui.ui.board.merge_queue_view import Candidate, MergeQueueView
from melgui.ui.board.overlap_notes import OverlapNotes, install_overlap_notes
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.panes.manager import PaneManager
from melgui.ui.runtime.theme import Colors


class BoardParts(Protocol):
    """The agents board install_signals made (melgui.ui.notifications.install.Signals)."""

    board: AgentsBoard
    view: BoardView
    dock: QDockWidget


class ParallelHost(Protocol):
    """What parallel work needs of the window (MainWindow is one)."""

    @property
    def signals(self) -> BoardParts: ...

    pane_manager: PaneManager
    colors: Colors
    themeChanged: SignalInstance

    @property
    def desk(self) -> Desk: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def main_window(self) -> QMainWindow: ...

    def project_folder(self) -> str: ...


@dataclass(slots=True)
class ParallelWork:
    notes: OverlapNotes
    queue: MergeQueue
    view: MergeQueueView
    dock: QDockWidget


def _pane_id(key: str) -> int | None:
    number = key.removeprefix("pane-")
    return int(number) if number.isdigit() else None


class WindowHooks(QueueHooks):
    def __init__(self, host: ParallelHost) -> None:
        self.host = host

    def project(self) -> str:
        return self.host.desk.worktrees.folder  # the key of the project's settings

    def settings(self) -> QueueSettings:
        settings = self.host.settings
        command = settings.merge_test_command.get(self.project(), "").strip()
        return QueueSettings(command, settings.merge_test_timeout, settings.merge_test_failure)

    def folder(self, worktree: Worktree) -> Path:
        try:
            return folder_in(worktree, self.project())
        except ValueError:  # the project is not inside that repository any more
            return worktree.path

    def pane(self, key: str) -> AgentPane | None:
        pane_id = _pane_id(key)
        pane = self.host.pane_manager.pane(pane_id) if pane_id is not None else None
        return pane if isinstance(pane, AgentPane) else None

    def busy(self, key: str) -> bool:
        session = self.host.signals.board.session(key)
        return session is not None and session.busy

    def send_back(self, item: QueueItem) -> None:
        pane = self.pane(item.key)
        if pane is not None:
            pane.send(item.task)

    def rebased(self, key: str, worktree: Worktree) -> None:
        pane = self.pane(key)
        if pane is not None and pane.worktree is not None:
            pane.worktree = replace(pane.worktree, base=worktree.base)
            watch = self.host.signals.board.overlaps
            if watch is not None:  # its changes now count from the new base
                watch.edited(key, pane.worktree)

    def describe_tests(self) -> str:
        queue = self.settings()
        if not queue.test_command:
            return "No test command is set for this project (Settings → Workers)."
        then = (
            "the worker gets the output as a new task"
            if queue.on_failure == "send_back"
            else "the queue stops for you"
        )
        return f"Each must pass `{queue.test_command}`; when it fails, {then}."


def candidates(board: AgentsBoard, hooks: WindowHooks) -> list[Candidate]:
    found = []
    for row in board.rows():
        pane = hooks.pane(row.key)
        if pane is None or pane.worktree is None or row.state not in ("finished", "idle"):
            continue
        if row.files_changed:
            found.append(Candidate(row.key, row.name, pane.worktree))
    return found


def install_parallel_work(host: ParallelHost) -> ParallelWork:
    board = host.signals.board
    notes = install_overlap_notes(board, host.pane_manager, host.colors, host.desk.panes)
    hooks = WindowHooks(host)
    queue = MergeQueue(hooks)
    view = MergeQueueView(
        queue, lambda: candidates(board, hooks), hooks.describe_tests, host.colors
    )
    window = host.main_window
    dock = QDockWidget("Merge queue", window)
    dock.setObjectName("mergeQueueDock")
    dock.setWidget(view)
    window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
    window.tabifyDockWidget(host.signals.dock, dock)
    dock.hide()  # View → Merge queue

    def on_moment(moment: Moment) -> None:
        item = queue.item(moment.key)
        pane = hooks.pane(moment.key)
        worktree = pane.worktree if pane is not None else None
        sent_back = item is not None and item.state == "sent back"
        if moment.kind == "finished" and sent_back and worktree is not None:
            again = "Its tests failed and went back to the worker, which has finished again."
            queue.add(moment.key, moment.name, worktree, again)

    board.on_moment(on_moment)
    host.signals.view.set_colors(host.colors)
    host.themeChanged.connect(notes.set_colors)
    host.themeChanged.connect(view.set_colors)
    host.themeChanged.connect(host.signals.view.set_colors)
    return ParallelWork(notes, queue, view, dock)
