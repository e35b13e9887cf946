"""The Changes view of one worker's worktree: its commits, its files with +/- counts, the
chosen file's hunks with Apply and Discard buttons each, and the actions on the file
(apply, discard) and on the whole (apply all, merge the branch, discard all). It reads
the worktree again after every action. A worker's worktree on another machine is read and
acted on there, by its host (`there`), with the same buttons.

`open_changes(parent, worktree)` opens it (or brings an open one for that worktree up).
With `in_place` it shows the project folder's own uncommitted changes (`uncommitted_in`):
its files and hunks and a review's findings on them, with nothing to apply or discard.
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QCloseEvent, QPalette
from PySide6.QtWidgets import (
    QDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.loop_events import TurnFailed
from melgui.core.protocol.views.review_findings import Comment, Finding
from melgui.core.worktrees.changes.diff import patch_of
from melgui.core.worktrees.changes.git import ChangesError
from melgui.core.worktrees.changes.landed import hunks_in_main
from melgui.core.worktrees.changes.reading import WorktreeChanges, read_changes
from melgui.core.worktrees.merge import MergeState, merge_state
from melgui.core.worktrees.model import Worktree
from melgui.desk.review import Reviewer, review_diff
from melgui.ui.changes.actions import ChangesActions
from melgui.ui.changes.diff_view import FileDiffView
from melgui.ui.changes.lists import PATH_ROLE, commit_item, file_item, make_tree
from melgui.ui.changes.questions import Question
from melgui.ui.changes.texts import conflicts_html, summary_html, there_html, uncommitted_html
from melgui.ui.changes.there import BranchThere
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.look.tokens import DIALOG_XL
from melgui.ui.runtime.theme import DARK, LIGHT, Colors


class ChangesView(QDialog):
    def __init__(
        self,
        worktree: Worktree,
        colors: Colors,
        parent: QWidget | None = None,
        *,
        in_place: bool = False,
        host: str = "",
    ):
        """`host`: the worktree is on that machine (its worker's there): read there by
        `reader` and shown; its files and hunks applied or discarded, its branch merged
        or discarded, there by `there`; nothing is applied here."""
        super().__init__(parent)
        self.worktree = worktree
        self.in_place = in_place
        self.host = host
        self.colors = colors
        self.changes: WorktreeChanges | None = None
        # Read by a host elsewhere (a remote folder's own changes, a worker's there).
        self.reader: Callable[[], Awaitable[WorktreeChanges]] | None = None
        self.there: BranchThere | None = None  # a worker's branch there: merged there
        self.merge: MergeState | None = None
        self.question: Question | None = None  # the one open question, if any
        self.busy = ""  # what is running now ("" when nothing)
        self._reads: set[asyncio.Task[object]] = set()
        self.tasks = TaskKeeper(on_error=lambda text: self.say(text, error=True))
        self.commands = ChangesActions(self)
        where = f"uncommitted in {worktree.path.name}" if in_place else worktree.branch
        where += f" @{host}" if host else ""
        self.setWindowTitle(f"Changes · {where}")
        self.setObjectName("changesView")
        self.summary = QLabel(self)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setWordWrap(True)
        self.conflict_box = QFrame(self)
        self.conflict_box.setFrameShape(QFrame.Shape.StyledPanel)
        self.conflict_label = QLabel(self.conflict_box)
        self.conflict_label.setWordWrap(True)
        self.conflict_label.setTextFormat(Qt.TextFormat.RichText)
        self.abort_button = QPushButton("Abort merge…", self.conflict_box)
        self.abort_button.clicked.connect(self.commands.abort)
        row = QHBoxLayout(self.conflict_box)
        row.addWidget(self.conflict_label, 1)
        row.addWidget(self.abort_button)
        self.conflict_box.hide()
        self.commits = make_tree(
            [
                ("Commit", "00000000"),
                ("Subject", ""),
                ("Author", "worker 12"),
                ("Date", "2026-12-31"),
            ],
            self,
        )
        self.files = make_tree([("", "M"), ("File", ""), ("+", "+999"), ("−", "−999")], self)
        self.files.currentItemChanged.connect(lambda *_: self._show_current_file())
        self.diff = FileDiffView(colors, self)
        self.diff.applyHunk.connect(self.commands.apply_hunk)
        self.diff.discardHunk.connect(self.commands.discard_hunk)
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.RichText)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.apply_file_button = self._button("Apply file", self.commands.apply_file)
        self.apply_all_button = self._button("Apply all", self.commands.apply_all)
        self.merge_button = self._button("Merge branch…", self.commands.merge)
        self.discard_file_button = self._button("Discard file…", self.commands.discard_file)
        self.discard_button = self._button("Discard all…", self.commands.discard)
        self.refresh_button = self._button("Refresh", self.refresh)
        # A review by a read-only session made as the worker's are, reading where its
        # files are (None: Review stays disabled).
        self.reviewer: Callable[[], AgentSession] | None = None
        self.review_button = self._button("Review", self.review)
        # The project's review prompt read where the files are (a folder or worktree on
        # another machine: by its host there); None: `.melgui/review.md` here.
        self.instructions: Callable[[], Awaitable[str]] | None = None
        # Gives the worker a task (its pane's send); None: no worker to send findings to.
        self.send_to_worker: Callable[[str], object] | None = None
        self.findings: list[Comment] = []
        self.send_button = self._button("Send findings to the worker", self.send_findings)
        close = self._button("Close", self.close)
        self._layout(close)
        self.resize(*DIALOG_XL)
        if in_place:
            self._in_place()
        self._enable()

    def _no_actions(self) -> None:
        """Nothing here to apply the changes to or to discard them from."""
        self.diff.hunk_actions = False
        for widget in (
            self.apply_file_button,
            self.apply_all_button,
            self.merge_button,
            self.discard_file_button,
            self.discard_button,
        ):
            widget.hide()

    def _in_place(self) -> None:
        """The project folder's own changes: no commits to list, nowhere to apply them."""
        self._no_actions()
        self.commits_title.hide()
        self.commits.hide()
        self.send_button.setText("Send findings to a new worker")

    def _button(self, text: str, slot: object) -> QPushButton:
        button = QPushButton(text, self)
        button.clicked.connect(lambda: slot())  # type: ignore[operator]
        return button

    def _layout(self, close: QPushButton) -> None:
        left = QWidget(self)
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        self.commits_title = QLabel("<b>Commits</b>", left)
        self.files_title = QLabel("<b>Files</b>", left)
        column.addWidget(self.commits_title)
        column.addWidget(self.commits, 1)
        column.addWidget(self.files_title)
        column.addWidget(self.files, 3)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(left)
        split.addWidget(self.diff)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        split.setSizes([400, 640])
        buttons = QHBoxLayout()
        for button in (self.apply_file_button, self.apply_all_button, self.merge_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.review_button)
        buttons.addWidget(self.send_button)
        for button in (self.discard_file_button, self.discard_button, self.refresh_button, close):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.conflict_box)
        layout.addWidget(split, 1)
        layout.addWidget(self.status)
        layout.addLayout(buttons)

    # -- reading ---------------------------------------------------------------------

    def refresh(self) -> None:
        self._read(self.reload(), "reading the worker's changes")

    def _read(self, coro: Coroutine[Any, Any, object], what: str) -> None:
        """Start a read; closing the view cancels it (reads write nothing)."""
        task = self.tasks.spawn(coro, what=what)
        self._reads.add(task)
        task.add_done_callback(self._reads.discard)

    @property
    def reviewed(self) -> str:
        """What a review here reviews, in words."""
        if self.in_place:
            return "the uncommitted changes"
        return f"the worker's branch {self.worktree.branch}"

    def review(self) -> None:
        if self.reviewer is not None and self.changes is not None and self.idle:
            self._read(self.run_review(self.reviewer(), close=True), f"reviewing {self.reviewed}")

    async def run_review(self, session: Reviewer, *, close: bool = False) -> list[Comment]:
        """`session` reviews the shown changes read-only and its findings land on their
        hunks; `close`: the session was made for this review."""
        assert self.changes is not None
        files = [c for c in self.changes.files if not c.binary]
        diff = "".join(patch_of(c) for c in files)
        self.set_busy("reviewing")
        failed: list[str] = []  # a reviewer that could not answer (no model, a host gone)
        heard = session.subscribe(
            lambda event: failed.append(event.message) if isinstance(event, TurnFailed) else None
        )
        try:
            instructions = await self.instructions() if self.instructions is not None else None
            comments = await review_diff(
                session, str(self.worktree.path), diff, self.reviewed, instructions
            )
        finally:
            heard()
            self.set_busy("")
            if close:
                await session.aclose()
        if failed and not comments:
            self.say(f"The review did not finish: {failed[-1]}", error=True)
            return []
        found: dict[str, dict[int, list[Finding]]] = {}
        for comment in comments:
            path = files[comment.file].path
            found.setdefault(path, {}).setdefault(comment.hunk, []).append(comment.finding)
        self.diff.set_findings(found)
        self.findings = comments
        self._enable()
        hunks = sum(len(by_hunk) for by_hunk in found.values())
        self.say(f"Review: {len(comments)} findings on {hunks} hunks.")
        return comments

    def send_findings(self) -> None:
        """The review's findings, by hunk, as a task for the worker."""
        if self.send_to_worker is None or not self.findings:
            return
        lines = [
            f"- {c.finding.path} {c.header} line {c.finding.line}: "
            f"{c.finding.severity}: {c.finding.text}"
            for c in self.findings
        ]
        whose = (
            f"of the uncommitted changes in {self.worktree.path}"
            if self.in_place
            else ("of your changes")
        )
        task = f"A review {whose} found these; fix them:\n" + "\n".join(lines)
        self.send_to_worker(task)
        to = "a new worker" if self.in_place else "the worker"
        self.say(f"Sent {len(lines)} findings to {to}.")

    async def reload(self) -> None:
        """Read the worktree and the main folder's merge state again and show them."""
        try:
            if self.reader is not None:
                changes = await self.reader()
                state = MergeState(changes.worktree.branch, False, ())
            else:
                changes = await read_changes(self.worktree)
                state = await merge_state(self.worktree.main)
        except ChangesError as exc:
            self.say(str(exc), error=True)
            return
        self.show_changes(changes, state)
        await self.check_in_main()

    def show_changes(self, changes: WorktreeChanges, state: MergeState) -> None:
        shown = self.current_path()
        self.changes, self.merge = changes, state
        self._show_summary(changes, state)
        self._show_conflicts(state)
        self.commits.clear()
        for commit in changes.commits:
            self.commits.addTopLevelItem(commit_item(commit))
        self.commits_title.setText(f"<b>Commits</b> ({len(changes.commits)})")
        self.files.blockSignals(True)
        self.files.clear()
        chosen: QTreeWidgetItem | None = None
        for change in changes.files:
            item = file_item(change, self.colors)
            self.files.addTopLevelItem(item)
            if chosen is None or change.path == shown:
                chosen = item
        self.files_title.setText(f"<b>Files</b> ({len(changes.files)})")
        if chosen is not None:
            self.files.setCurrentItem(chosen)
        self.files.blockSignals(False)
        self._show_current_file(check=False)
        self._enable()

    def _show_summary(self, changes: WorktreeChanges, state: MergeState) -> None:
        if self.in_place:
            self.summary.setText(uncommitted_html(self.worktree, changes, self.colors))
            return
        if self.host:
            self.summary.setText(there_html(self.worktree, changes, self.host, self.colors))
            return
        self.summary.setText(summary_html(self.worktree, changes, state, self.colors))

    def _show_conflicts(self, state: MergeState) -> None:
        shown = state.merging or bool(state.conflicts)
        self.conflict_box.setVisible(shown)
        self.abort_button.setVisible(state.merging)
        if shown:
            self.conflict_label.setText(conflicts_html(state, self.colors))

    def current_path(self) -> str:
        item = self.files.currentItem()
        return str(item.data(1, PATH_ROLE)) if item is not None else ""

    def _show_current_file(self, check: bool = True) -> None:
        change = None
        if self.changes is not None and self.current_path():
            change = self.changes.file(self.current_path())
        if change is None or change != self.diff.change:  # unchanged: keep its widgets
            self.diff.show_file(change)
        self._enable()
        if check and change is not None:
            self._read(self.check_in_main(), "checking the main folder")

    async def check_in_main(self) -> None:
        """Mark the shown file's hunks that the main folder has already."""
        change = self.diff.change
        if change is None or self.in_place:
            return  # a folder's own changes: no main folder
        if self.reader is not None and self.there is None:
            return  # read elsewhere, with no host to ask
        try:
            if self.there is not None:
                found = await self.there.landed(change)  # the folder there, read there
            else:
                found = await hunks_in_main(self.worktree, change)
        except ChangesError:
            return  # only a marker; the actions say what is wrong
        if self.diff.change is change:
            self.diff.mark_in_main(found)

    # -- state -----------------------------------------------------------------------

    @property
    def idle(self) -> bool:
        """No action and no read is running."""
        return not self.busy and not self._reads

    def set_busy(self, what: str) -> None:
        self.busy = what
        if what:
            self.say(f"{what}…")
        self._enable()

    def _enable(self) -> None:
        idle = not self.busy
        changes = self.changes
        merging = self.merge is not None and (self.merge.merging or bool(self.merge.conflicts))
        has_files = changes is not None and bool(changes.files)
        self.apply_file_button.setEnabled(idle and self.diff.change is not None)
        self.discard_file_button.setEnabled(idle and self.diff.change is not None)
        self.apply_all_button.setEnabled(idle and has_files)
        self.merge_button.setEnabled(
            idle and not merging and changes is not None and not changes.empty
        )
        self.discard_button.setEnabled(idle and changes is not None and not changes.empty)
        self.refresh_button.setEnabled(idle)
        self.review_button.setEnabled(idle and has_files and self.reviewer is not None)
        self.send_button.setEnabled(
            idle and bool(self.findings) and self.send_to_worker is not None
        )
        self.abort_button.setEnabled(idle)
        for view in self.diff.hunks:
            view.setEnabled(idle)

    def say(self, text: str, *, error: bool = False, warn: bool = False) -> None:
        colour = self.colors.error if error else self.colors.warn if warn else self.colors.text
        self.status.setText(f"<span style='color:{colour}'>{html.escape(text)}</span>")

    def as_parent(self) -> QWidget:
        """The widget questions open over (the view itself)."""
        return self

    def event(self, event: QEvent) -> bool:
        # Coming back to the view: the main folder may have changed outside melgui (a
        # revert in an editor), so what is marked "In the main folder" is read again.
        if event.type() == QEvent.Type.WindowActivate and self.idle and self.changes is not None:
            self.refresh()
        return super().event(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.busy:
            self.say(f"Wait until this finishes: {self.busy}.", warn=True)
            event.ignore()
            return
        for task in list(self._reads):
            task.cancel()
        super().closeEvent(event)


def open_changes(
    parent: QWidget | None,
    worktree: Worktree,
    colors: Colors | None = None,
    reviewer: Callable[[], AgentSession] | None = None,
    send_to_worker: Callable[[str], object] | None = None,
    *,
    in_place: bool = False,
    read: bool = True,
    there: BranchThere | None = None,
) -> ChangesView:
    """Show the Changes view of `worktree` (the open one, if there is one) and read it
    (unless not `read`: the caller awaits `reload`). `there`: the worker's branch on the
    machine the worktree is on (read, applied, merged and discarded there); its
    `reviewer` reads the files there."""
    if parent is not None:
        for view in parent.findChildren(ChangesView):
            if view.worktree == worktree and view.isVisible():
                view.raise_()
                view.activateWindow()
                return view
    host = there.host if there is not None else ""
    view = ChangesView(worktree, colors or _colors_of(parent), parent, in_place=in_place, host=host)
    if there is not None:
        view.reader, view.there = there.changes, there
        view.instructions = there.review_instructions
    view.reviewer = reviewer
    view.send_to_worker = send_to_worker
    view.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    view.show()
    if read:
        view.refresh()
    return view


def _colors_of(widget: QWidget | None) -> Colors:
    palette = widget.palette() if widget is not None else QPalette()
    return DARK if palette.color(QPalette.ColorRole.Window).lightness() < 128 else LIGHT
