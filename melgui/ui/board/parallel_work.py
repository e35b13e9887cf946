"""Parallel work: overlap notes on the worker panes and in the orchestrator's pane tools,
and the merge queue (its view goes in a dock beside the agents board, View → Merge
queue; the window places it). Made once the agents board exists:
`parallel_work(board, panes, desk, settings, colors)`.

The queue's hooks are the window's: the project's test command and what a failure does
(Settings → Workers), where a worker's tests run (the project's place in its worktree),
whether a worker is busy, giving a worker its failed tests as a new task, and the worker
pane's worktree moved to the commit its branch was rebased on. A worker sent back joins
the queue again when it finishes its turn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from PySide6.QtWidgets import QDockWidget

from melgui.core.config.settings import Settings
from melgui.core.protocol.views.board_rows import Moment
from melgui.core.worktrees.merge_queue.queue import (
    MergeQueue,
    QueueHooks,
    QueueItem,
    QueueSettings,
)
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.workers import folder_in
from melgui.desk.board.agents_board import AgentsBoard
from melgui.desk.desk import Desk
from melgui.ui.board.merge_queue_view import Candidate, MergeQueueView
from melgui.ui.board.overlap_notes import OverlapNotes, notes_on_panes
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.panes.manager import PaneManager
from melgui.ui.runtime.theme import Colors


@dataclass(slots=True, weakref_slot=True)  # a slot of themeChanged
class ParallelWork:
    notes: OverlapNotes
    queue: MergeQueue
    view: MergeQueueView
    dock: QDockWidget = field(init=False)  # where the window places the view

    def set_colors(self, colors: Colors) -> None:
        self.notes.set_colors(colors)
        self.view.set_colors(colors)


def _pane_id(key: str) -> int | None:
    number = key.removeprefix("pane-")
    return int(number) if number.isdigit() else None


class WindowHooks(QueueHooks):
    def __init__(
        self,
        board: AgentsBoard,
        panes: PaneManager,
        desk: Desk,
        settings: Callable[[], Settings],
    ) -> None:
        self.board = board
        self.panes = panes
        self.desk = desk
        self._settings = settings

    def project(self) -> str:
        return self.desk.worktrees.folder  # the key of the project's settings

    def settings(self) -> QueueSettings:
        settings = self._settings()
        command = settings.merge_test_command.get(self.project(), "").strip()
        return QueueSettings(command, settings.merge_test_timeout, settings.merge_test_failure)

    def folder(self, worktree: Worktree) -> Path:
        try:
            return folder_in(worktree, self.project())
        except ValueError:  # the project is not inside that repository any more
            return worktree.path

    def pane(self, key: str) -> AgentPane | None:
        pane_id = _pane_id(key)
        pane = self.panes.pane(pane_id) if pane_id is not None else None
        return pane if isinstance(pane, AgentPane) else None

    def busy(self, key: str) -> bool:
        session = self.board.session(key)
        return session is not None and session.busy

    def send_back(self, item: QueueItem) -> None:
        pane = self.pane(item.key)
        if pane is not None:
            pane.send(item.task)

    def rebased(self, key: str, worktree: Worktree) -> None:
        pane = self.pane(key)
        if pane is not None and pane.worktree is not None:
            pane.worktree = replace(pane.worktree, base=worktree.base)
            watch = self.board.overlaps
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


def parallel_work(
    board: AgentsBoard,
    panes: PaneManager,
    desk: Desk,
    settings: Callable[[], Settings],
    colors: Colors,
) -> ParallelWork:
    """Overlap notes on `panes` and the merge queue of the workers on `board`."""
    notes = notes_on_panes(board, panes, colors, desk.panes)
    hooks = WindowHooks(board, panes, desk, settings)
    queue = MergeQueue(hooks)
    view = MergeQueueView(queue, lambda: candidates(board, hooks), hooks.describe_tests, colors)

    def on_moment(moment: Moment) -> None:
        item = queue.item(moment.key)
        pane = hooks.pane(moment.key)
        worktree = pane.worktree if pane is not None else None
        sent_back = item is not None and item.state == "sent back"
        if moment.kind == "finished" and sent_back and worktree is not None:
            again = "Its tests failed and went back to the worker, which has finished again."
            queue.add(moment.key, moment.name, worktree, again)

    board.on_moment(on_moment)
    return ParallelWork(notes, queue, view)
