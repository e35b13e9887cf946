"""Worktrees an earlier run left behind (a crash, or a quit with work in them), offered
for review: Open for review (a worker pane on it), Discard (asks, naming what is lost),
or Keep (offered again next time). Nothing is removed without the person's word.

git runs in threads: listing the worktrees and what each holds before the dialog opens,
reading it again before the discard question, removing it after. A host's left
worktrees (ui/panes/remote/worktrees_left) are shown by the same dialog, with its
`Where`: read, opened and removed there by that host.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from melgui.core.worktrees.cleanup import remove_worktree
from melgui.core.worktrees.create import WorktreeError
from melgui.core.worktrees.git import GitError
from melgui.core.worktrees.recovery import Found
from melgui.core.worktrees.risk import WorkAtRisk, work_at_risk
from melgui.ui.runtime.look.tokens import SPACE_XS

if TYPE_CHECKING:
    from melgui.core.terminal.panes import PaneInfo
    from melgui.ui.panes.manager import PaneManager

Left = tuple[Found, str]  # a worktree and what it holds, in words


@dataclass(frozen=True, slots=True)
class Where:
    """Where left worktrees are: this machine, or a host (`name`) that reads what one
    holds, opens a worker on one and removes one there."""

    name: str  # "" for this machine
    holds: Callable[[Found], Awaitable[str]]
    remove: Callable[[Found, str], Awaitable[None]]  # WorktreeError: not removed, why
    review: Callable[[Found], PaneInfo]  # PaneError: not opened, why


log = logging.getLogger(__name__)


def _holds(found: Found) -> WorkAtRisk | None:
    try:
        return work_at_risk(found.worktree)
    except GitError:
        return None


def _said(found: Found) -> str:
    risk = _holds(found)
    return risk.describe() if risk is not None else "work git cannot read"


def here(manager: PaneManager) -> Where:
    """This machine's left worktrees: git here, in threads."""

    async def holds(found: Found) -> str:
        return await asyncio.to_thread(_said, found)

    async def remove(found: Found, shown: str) -> None:
        await asyncio.to_thread(_discard_as_shown, found, shown)

    return Where("", holds, remove, manager.review_worktree)


class RecoveryDialog(QDialog):
    """One row per left worktree; a row goes once the person has decided about it."""

    def __init__(
        self, manager: PaneManager, left: list[Left], parent: QWidget, where: Where | None = None
    ) -> None:
        super().__init__(parent)
        self.where = where or here(manager)
        on = f" on {self.where.name}" if self.where.name else ""
        self.setObjectName("worktreeRecovery")
        self.setWindowTitle(f"Worktrees from an earlier session{on}")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self._manager = manager
        self.rows: dict[str, QWidget] = {}  # branch -> its row
        self.confirm: QMessageBox | None = None  # the last "discard?" asked
        layout = QVBoxLayout(self)
        intro = QLabel(
            f"Workers of an earlier session left these git worktrees{on}. Their work stays "
            "until you merge or discard it.",
            self,
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        for found, holds in left:
            row = self._row(found, holds)
            self.rows[found.worktree.branch] = row
            layout.addWidget(row)
        self.status = QLabel(self)  # what went wrong with a discard, if anything
        self.status.setWordWrap(True)
        self.status.hide()
        layout.addWidget(self.status)
        buttons = QDialogButtonBox(self)
        keep_all = buttons.addButton("Keep all", QDialogButtonBox.ButtonRole.RejectRole)
        keep_all.clicked.connect(self.reject)
        layout.addWidget(buttons)

    def _row(self, found: Found, holds: str) -> QWidget:
        row = QWidget(self)
        row.setObjectName("worktreeRow")
        line = QHBoxLayout(row)
        line.setContentsMargins(0, SPACE_XS, 0, SPACE_XS)
        label = QLabel(f"<b>{found.describe()}</b><br>{found.worktree.path}<br>{holds}", row)
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        line.addWidget(label, 1)
        review = QPushButton("Open for review", row)
        review.setObjectName("review")
        review.setEnabled(not found.missing)
        review.clicked.connect(lambda: self._review(found))
        discard = QPushButton("Discard…", row)
        discard.setObjectName("discard")
        discard.clicked.connect(lambda: self._start(self._ask_discard(found), "reading"))
        keep = QPushButton("Keep", row)
        keep.setObjectName("keep")
        keep.clicked.connect(lambda: self._done(found))
        for button in (review, discard, keep):
            line.addWidget(button)
        return row

    def _start(self, work: Coroutine[Any, Any, None], what: str) -> None:
        self._manager.tasks.spawn(work, what=f"{what} a left worktree")

    def _done(self, found: Found) -> None:
        row = self.rows.pop(found.worktree.branch, None)
        if row is not None:
            row.hide()
            row.deleteLater()
        if not self.rows:
            self.accept()

    def _review(self, found: Found) -> None:
        from melgui.ui.panes.manager import PaneError

        try:
            info = self.where.review(found)
        except PaneError as exc:
            self._say(str(exc))
            return
        self._manager.area.focus_pane(info.id)
        self._done(found)

    def _say(self, text: str) -> None:
        self.status.setText(text)
        self.status.show()

    def _enable(self, found: Found, enabled: bool) -> None:
        row = self.rows.get(found.worktree.branch)
        if row is not None:
            row.setEnabled(enabled)

    async def _ask_discard(self, found: Found) -> None:
        """Read what it holds now (it may have changed since the dialog opened), then ask."""
        self._enable(found, False)
        try:
            holds = await self.where.holds(found)
        finally:
            self._enable(found, True)
        box = QMessageBox(self)
        box.setObjectName("discardWorktree")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("melgui")
        box.setText(f"Discard {found.worktree.branch} and its worktree?")
        on = f" on {self.where.name}" if self.where.name else ""
        box.setInformativeText(f"This deletes {found.worktree.path}{on} and the branch: {holds}.")
        go = box.addButton("Discard", QMessageBox.ButtonRole.DestructiveRole)
        stay = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(stay)

        def finished(_result: int) -> None:
            if box.clickedButton() is go:
                self._start(self._discard(found, holds), "discarding")
            box.deleteLater()

        box.finished.connect(finished)
        box.open()
        self.confirm = box

    async def _discard(self, found: Found, shown: str) -> None:
        """Remove it, unless it holds something other than what the person was shown."""
        self._enable(found, False)
        try:
            await self.where.remove(found, shown)
        except WorktreeError as exc:
            self._enable(found, True)
            self._say(str(exc))
            return
        self._done(found)


def _discard_as_shown(found: Found, shown: str) -> None:
    now = _said(found)
    if now != shown:
        raise WorktreeError(
            f"Not discarded: {found.worktree.branch} changed since you were asked; it now "
            f"holds {now}. Click Discard again to see it."
        )
    remove_worktree(found.worktree, discard=True)


async def offer_left_worktrees(manager: PaneManager, parent: QWidget) -> RecoveryDialog | None:
    """Show the dialog when this project has worktrees of melgui's that no pane owns
    (listed, and what each holds read, in a thread)."""
    worktrees = manager.worktrees()
    if worktrees is None:
        return None
    owned = manager.owned_worktrees()
    try:
        found = await asyncio.to_thread(worktrees.orphans, owned)
    except (GitError, OSError) as exc:
        log.warning("Cannot list the project's worktrees: %s", exc)
        return None
    if not found:
        return None
    risks = await asyncio.to_thread(lambda: [_said(item) for item in found])
    try:
        dialog = RecoveryDialog(manager, list(zip(found, risks, strict=True)), parent)
    except RuntimeError:  # the window went away before this ran
        return None
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    manager.recovery_dialog = dialog
    dialog.open()
    return dialog


def offer_soon(manager: PaneManager, parent: QWidget) -> None:
    """Start `offer_left_worktrees` on the running loop (from a Qt slot)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no event loop runs: no window to offer them in
        return
    manager.tasks.spawn(offer_left_worktrees(manager, parent), what="finding left worktrees")
