"""The "Review changes (+N −M)" bar over the composer: the files the last turn changed,
each with how many lines it adds and removes, Accept (off the list) and Undo (that file
back as it was before the turn, through its checkpoints: an undo that can be undone)."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from melgui.core.store.checkpoints.checkpointer import Checkpointer
from melgui.core.store.checkpoints.log import CheckpointRecord
from melgui.core.store.checkpoints.restore import Choice
from melgui.ui.runtime.look.icons import icon
from melgui.ui.runtime.look.tokens import SPACE_S, SPACE_XS, Colors


@dataclass(frozen=True, slots=True)
class FileLines:
    path: str
    added: int
    removed: int


async def turn_changes(
    checkpoints: Checkpointer, records: list[CheckpointRecord]
) -> list[FileLines]:
    """Each file the records changed, with its lines added and removed over all of them."""
    return summed([await checkpoints.line_counts(record) for record in records])


def summed(counts: list[dict[str, tuple[int, int]]]) -> list[FileLines]:
    """Each file's lines added and removed over several checkpoints' counts."""
    totals: dict[str, list[int]] = {}
    for each in counts:
        for path, (added, removed) in each.items():
            total = totals.setdefault(path, [0, 0])
            total[0] += added
            total[1] += removed
    return [FileLines(path, a, r) for path, (a, r) in totals.items()]


async def undo_file(
    checkpoints: Checkpointer, records: list[CheckpointRecord], path: str
) -> CheckpointRecord:
    """`path` back as it was before `records`; every other file stays as it is now."""
    others = {c.path for r in records for c in r.files if c.path != path}
    keep: dict[str, Choice] = dict.fromkeys(others, "now")
    return await checkpoints.restore([r.id for r in records], keep)


class ReviewBar(QFrame):
    undoRequested = Signal(str)  # a file's Undo
    fileAccepted = Signal(str)  # a file's Accept (here or on its call's card)
    reviewRequested = Signal()  # the diff of the whole turn

    def __init__(self, colors: Colors, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setProperty("role", "card")
        self.setObjectName("reviewBar")
        self.colors = colors
        self.files: list[FileLines] = []
        self.accepted: set[str] = set()
        self.toggle = QPushButton(self)
        self.toggle.setProperty("role", "link")
        self.toggle.setIcon(icon("file-diff", colors.muted))
        self.toggle.setCheckable(True)
        self.toggle.toggled.connect(self._show_rows)
        self.toggle.setToolTip("The files this turn changed: accept or undo each")
        diff = QPushButton("Diff", self)
        diff.setProperty("role", "link")
        diff.setToolTip("Every change of the turn, as one diff")
        diff.clicked.connect(self.reviewRequested)
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        head.addWidget(self.toggle)
        head.addStretch(1)
        head.addWidget(diff)
        self.rows = QVBoxLayout()
        self.rows.setContentsMargins(0, 0, 0, 0)
        self.rows.setSpacing(SPACE_XS)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACE_S, SPACE_XS, SPACE_S, SPACE_XS)
        layout.setSpacing(SPACE_XS)
        layout.addLayout(head)
        layout.addLayout(self.rows)
        self.hide()

    def show_files(self, files: list[FileLines]) -> None:
        self.files = files
        self.accepted &= {f.path for f in files}
        self._draw()

    def accept(self, path: str) -> None:
        if path in self.accepted:
            return
        self.accepted.add(path)
        self._draw()
        self.fileAccepted.emit(path)

    def shown(self) -> list[FileLines]:
        return [f for f in self.files if f.path not in self.accepted]

    def _draw(self) -> None:
        shown = self.shown()
        self.setVisible(bool(shown))
        added = sum(f.added for f in shown)
        removed = sum(f.removed for f in shown)
        count = f"{len(shown)} file{'s' if len(shown) != 1 else ''}"
        self.toggle.setText(f"Review changes (+{added} −{removed}) · {count}")
        while self.rows.count():
            item = self.rows.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        for file in shown:
            self.rows.addWidget(self._row(file))
        self._show_rows(self.toggle.isChecked())

    def _row(self, file: FileLines) -> QWidget:
        row = QWidget(self)
        line = QHBoxLayout(row)
        line.setContentsMargins(SPACE_S, 0, 0, 0)
        name = QLabel(
            f"{file.path}  <span style='color:{self.colors.muted}'>"
            f"+{file.added} −{file.removed}</span>",
            row,
        )
        name.setTextFormat(Qt.TextFormat.RichText)
        accept = QPushButton("Accept", row)
        accept.setProperty("role", "link")
        accept.setAccessibleName(f"Accept {file.path}")
        accept.clicked.connect(lambda _=False, p=file.path: self.accept(p))
        undo = QPushButton("Undo", row)
        undo.setProperty("role", "link")
        undo.setAccessibleName(f"Undo {file.path}")
        undo.setToolTip("Put this file back as it was before the turn (can be undone)")
        undo.clicked.connect(lambda _=False, p=file.path: self.undoRequested.emit(p))
        line.addWidget(name, 1)
        line.addWidget(accept)
        line.addWidget(undo)
        return row

    def _show_rows(self, on: bool) -> None:
        for index in range(self.rows.count()):
            item = self.rows.itemAt(index)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.setVisible(on)
