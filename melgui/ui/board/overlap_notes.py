"""Where a worker's changes meet another's, said where each worker is: a note under the
header of both panes, and lines in the orchestrator's `list_panes` and `read_agent`.

All of it follows the agents board (which follows the overlap watch): a board change
updates the notes once, after the burst of events that caused it.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QBoxLayout, QLabel

from melgui.core.protocol.views.board_rows import AgentRow, BoardFeed
from melgui.ui.panes.manager import PaneManager
from melgui.ui.panes.orchestration import Orchestration
from melgui.ui.panes.pane_frame import PaneFrame
from melgui.ui.runtime.look.tokens import SPACE_XS
from melgui.ui.runtime.theme import Colors

NOTE_NAME = "overlapNote"


def pane_key(pane_id: int) -> str:
    return f"pane-{pane_id}"  # the board's key of a pane's agent


class OverlapNotes(QObject):
    """Keeps each worker pane's overlap note in step with the board."""

    def __init__(self, board: BoardFeed, manager: PaneManager, colors: Colors) -> None:
        super().__init__(manager)
        self.board = board
        self.manager = manager
        self.colors = colors
        self._pending = False
        # The board is followed while a pane is open: with none (the main conversation's
        # own calls, often) there is no note to keep.
        self._following: list[Callable[[], None]] = []  # how to stop: one while followed
        self.destroyed.connect(lambda _obj=None, offs=self._following: [off() for off in offs])
        manager.panesChanged.connect(self._follow)
        self._follow()

    def _follow(self) -> None:
        if self.manager.area.tabs.count():
            if not self._following:
                self._following.append(self.board.on_change(self._changed))
                self._changed()  # what changed while no pane was open
        else:
            while self._following:
                self._following.pop()()

    def _changed(self) -> None:
        if not self._pending and self.manager.area.tabs.count():
            self._pending = True
            QTimer.singleShot(0, self.refresh)

    def set_colors(self, colors: Colors) -> None:
        self.colors = colors
        self.refresh()

    def refresh(self) -> None:
        self._pending = False
        for info, _pane in self.manager.panes():
            frame = self.manager.area.frame(info.id)
            if frame is not None:
                self.show(frame, self.board.row(pane_key(info.id)))

    def show(self, frame: PaneFrame, row: AgentRow | None) -> None:
        note = frame.findChild(QLabel, NOTE_NAME)
        if row is None or not row.overlaps:
            if note is not None:
                note.hide()
            return
        if note is None:
            note = QLabel(frame)
            note.setObjectName(NOTE_NAME)
            note.setWordWrap(True)
            note.setTextFormat(Qt.TextFormat.RichText)
            note.setMargin(SPACE_XS)
            layout = frame.layout()
            if isinstance(layout, QBoxLayout):
                layout.insertWidget(1, note)  # under the header, over the conversation
        colour = self.colors.error if row.conflicts else self.colors.warn
        head = "Conflicts to be" if row.conflicts else "Overlapping work"
        lines = "<br>".join(escape(line) for line in row.overlaps[:4])
        more = f"<br>… and {len(row.overlaps) - 4} more" if len(row.overlaps) > 4 else ""
        note.setText(f"<span style='color:{colour}'><b>⚠ {head}:</b></span> {lines}{more}")
        note.setToolTip("\n".join(row.overlaps))
        note.setAccessibleName(f"{head}: " + " ".join(row.overlaps))
        note.show()


def overlap_words(board: BoardFeed, pane_id: int | None) -> list[str]:
    """For the orchestrator: one pane's overlap lines, or (None) every pane's."""
    if pane_id is not None:
        row = board.row(pane_key(pane_id))
        return list(row.overlaps) if row is not None else []
    lines = []
    for row in board.rows():
        lines += [f"{row.name}: {line}" for line in row.overlaps]
    return lines


def notes_on_panes(
    board: BoardFeed, manager: PaneManager, colors: Colors, panes: object
) -> OverlapNotes:
    """Notes on the panes, and the orchestrator's pane tools (`panes`, the window's
    Orchestration) told where work overlaps."""
    notes = OverlapNotes(board, manager, colors)
    if isinstance(panes, Orchestration):
        panes.overlaps = lambda pane_id: overlap_words(board, pane_id)
    return notes
