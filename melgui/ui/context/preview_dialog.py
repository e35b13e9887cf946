"""Before a compaction runs, manual or automatic: what it would cut and what it keeps,
item by item, with a box to keep an item word for word. Compact answers the question
with the items kept; Don't compact leaves the conversation as it is."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QCloseEvent, QColor
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from melgui.core.context.preview import CompactionQuestion, Item
from melgui.ui.runtime.look.tokens import DIALOG_PREVIEW
from melgui.ui.runtime.theme import LIGHT, Colors

FATE = {
    "summarised": "summarised by the model",
    "elided": "cut to its head and tail",
    "kept": "kept as it is",
}
INDEX = Qt.ItemDataRole.UserRole


def intro_text(question: CompactionQuestion) -> str:
    proposed = question.proposed
    why = (
        "You asked to compact."
        if proposed.mode == "manual"
        else "The next request would not fit the model's window, so melgui compacts first."
    )
    what = (
        f"The model would summarise {sum(i.keepable for i in question.items)} older messages"
        if proposed.summarise
        else f"{len(proposed.elided)} large tool results would be cut to their head and tail"
    )
    pins = len(proposed.pins)
    kept = "the instructions, the tool definitions, the last two requests and what followed"
    if pins:
        kept += f", and {pins} pinned fact{'s' if pins != 1 else ''}, word for word"
    return (
        f"{why} Now about {proposed.before:,} tokens. {what} (about "
        f"{question.cut_tokens:,} tokens); kept whole: {kept} (about "
        f"{question.kept_tokens:,} tokens). Tick an item to keep it as it is. The "
        "originals stay in melgui's history either way."
    )


class CompactionPreview(QDialog):
    def __init__(
        self, question: CompactionQuestion, colors: Colors = LIGHT, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.question = question
        self.setWindowTitle("Before compacting")
        self.resize(*DIALOG_PREVIEW)
        intro = QLabel(intro_text(question), self)
        intro.setWordWrap(True)
        self.tree = QTreeWidget(self)
        self.tree.setHeaderLabels(["Keep · item", "Tokens", "Unless kept"])
        self.tree.setRootIsDecorated(False)
        self.tree.setColumnWidth(0, 430)
        for item in question.items:
            self.tree.addTopLevelItem(self._row(item, colors))
        pins = QLabel(
            "Pinned, kept word for word: " + "; ".join(f"“{p}”" for p in question.proposed.pins)
            if question.proposed.pins
            else "No pinned facts (pin what must survive from the context meter, or /pin).",
            self,
        )
        pins.setWordWrap(True)
        buttons = QDialogButtonBox(self)
        self.compact_button = buttons.addButton("Compact", QDialogButtonBox.ButtonRole.AcceptRole)
        self.cancel_button = buttons.addButton(
            "Don't compact", QDialogButtonBox.ButtonRole.RejectRole
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.tree, 1)
        layout.addWidget(pins)
        layout.addWidget(buttons)
        # Answered elsewhere (another window, the host's turn stopped): it closes, unless
        # it went with its window already.
        question.future.add_done_callback(lambda _future: isValid(self) and self.close())

    def _row(self, item: Item, colors: Colors) -> QTreeWidgetItem:
        row = QTreeWidgetItem([item.label, f"{item.tokens:,}", FATE[item.fate]])
        row.setData(0, INDEX, item.index)
        row.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if item.keepable:
            row.setFlags(row.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            row.setCheckState(0, Qt.CheckState.Unchecked)
        else:
            row.setForeground(2, QBrush(QColor(colors.muted)))
        return row

    def kept(self) -> list[int]:
        found: list[int] = []
        for index in range(self.tree.topLevelItemCount()):
            row = self.tree.topLevelItem(index)
            if row is not None and row.checkState(0) == Qt.CheckState.Checked:
                found.append(int(row.data(0, INDEX)))
        return found

    def accept(self) -> None:
        self.question.keep(self.kept())
        super().accept()

    def reject(self) -> None:
        self.question.cancel()
        super().reject()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.question.cancel()  # closed without an answer: nothing is cut
        super().closeEvent(event)
