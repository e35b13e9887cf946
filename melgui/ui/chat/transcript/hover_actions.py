"""The actions on a message that show while the pointer is over it: copy, edit and rewind
on the person's message; copy and retry on an answer (retry on the last one only).

The transcript marks the first block of each message with a key (a block format
property, so a mark moves with its block and is copied with it when earlier messages
are drawn in above); the message under the pointer is the nearest marked block at or
before it. The actions are real buttons (an accessible name and a tooltip each) on a
small bar at the message's top right, made the first time the pointer moves over.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, Qt, Signal
from PySide6.QtGui import (
    QGuiApplication,
    QMouseEvent,
    QTextBlock,
    QTextBlockFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import QFrame, QHBoxLayout, QMenu, QTextEdit, QToolButton

from melgui.ui.runtime.look.icons import icon_button
from melgui.ui.runtime.look.tokens import SPACE_2XS, SPACE_XS
from melgui.ui.runtime.theme import Colors

MARK = QTextFormat.Property.UserProperty + 7  # a block's message key (int)

Kind = Literal["you", "answer", ""]  # "": a notice or a link, which has no actions
Verb = Literal["copy", "edit", "rewind", "retry"]
ACTIONS: tuple[tuple[Verb, str, str], ...] = (
    ("copy", "copy", "Copy the message"),
    ("edit", "pencil", "Edit a copy in the prompt box"),
    ("rewind", "undo-2", "Rewind to here"),
    ("retry", "rotate-ccw", "Ask for this answer again"),
)


@dataclass(slots=True)
class MessageMark:
    kind: Kind
    index: int = -1  # the person's message in the conversation (-1: not known)
    text: str = ""  # what copying it copies (an answer's is known once it is complete)


def mark_block(block: QTextBlock, key: int) -> None:
    cursor = QTextCursor(block)
    marked = QTextBlockFormat()
    marked.setProperty(MARK, key)
    cursor.mergeBlockFormat(marked)


def block_key(block: QTextBlock) -> int:
    value = block.blockFormat().property(MARK)
    return value if isinstance(value, int) else 0


def key_at(document: QTextDocument, position: int) -> tuple[int, QTextBlock]:
    """The key of the message holding `position`, and its first block (0: none)."""
    block = document.findBlock(position)
    while block.isValid():
        key = block_key(block)
        if key:
            return key, block
        block = block.previous()
    return 0, block


@dataclass(slots=True)
class Marks:
    """One transcript's messages by key; keys stay unique across the pages drawn in
    (a scratch transcript's numbering follows its target's, like copy ids)."""

    by_key: dict[int, MessageMark] = field(default_factory=dict)
    next_key: int = 1
    answer: int = 0  # made with an answer's room above it, for the answer that follows

    def clear(self) -> None:
        self.by_key.clear()
        self.next_key = 1
        self.answer = 0

    def mark(self, block: QTextBlock, kind: Kind, index: int = -1, text: str = "") -> int:
        """Mark `block` as where a message of `kind` starts; returns its key."""
        key = self.next_key
        self.next_key += 1
        self.by_key[key] = MessageMark(kind, index, text)
        mark_block(block, key)
        return key

    def take(self, scratch: Marks) -> None:
        """The marks of a scratch transcript copied in front of this one."""
        self.by_key.update(scratch.by_key)
        self.next_key = scratch.next_key

    def later_answer(self, block: QTextBlock) -> bool:
        """Whether an answer is drawn after the message starting at `block`."""
        block = block.next()
        while block.isValid():
            mark = self.by_key.get(block_key(block))
            if mark is not None and mark.kind == "answer":
                return True
            block = block.next()
        return False


class HoverBar(QFrame):
    """The bar over the viewport of `editor`; `triggered(verb, key)` when one is clicked."""

    triggered = Signal(str, int)

    def __init__(self, editor: QTextEdit, colors: Colors) -> None:
        super().__init__(editor.viewport())
        self.setObjectName("hoverActions")
        self.setProperty("role", "card")
        self.editor = editor
        self.key = 0
        self.buttons: dict[Verb, QToolButton] = {}
        row = QHBoxLayout(self)
        row.setContentsMargins(SPACE_2XS, SPACE_2XS, SPACE_2XS, SPACE_2XS)
        row.setSpacing(SPACE_2XS)
        for verb, name, words in ACTIONS:
            button = icon_button(name, words, colors.muted, self)
            button.setObjectName(f"hover_{verb}")
            button.clicked.connect(lambda _=False, v=verb: self.triggered.emit(v, self.key))
            row.addWidget(button)
            self.buttons[verb] = button
        self.hide()

    def show_for(self, key: int, block: QTextBlock, verbs: set[Verb], words: str) -> None:
        """Over the message `key` that starts at `block`, with `verbs` (none: hidden)."""
        if not verbs:
            self.hide()
            return
        self.key = key
        for verb, button in self.buttons.items():
            button.setVisible(verb in verbs)
        self.buttons["copy"].setToolTip(words)
        self.buttons["copy"].setAccessibleName(words)
        self.adjustSize()
        layout = self.editor.document().documentLayout()
        margin = int(self.editor.document().documentMargin())
        right = self.editor.viewport().width() - margin
        table = QTextCursor(block).currentTable()  # the person's block: its box
        if table is not None:
            top = layout.frameBoundingRect(table).top()
            cell = layout.blockBoundingRect(block).right() + table.format().cellPadding()
            right = int(cell) - SPACE_2XS  # inside the box's tint
        elif block.text():
            top = layout.blockBoundingRect(block).top()
        else:  # the room above an answer: the bar sits on the answer's top edge
            top = layout.blockBoundingRect(block).bottom()
        scrolled = self.editor.verticalScrollBar().value()
        y = max(0, int(top) - scrolled - self.height() // 2 + SPACE_XS)
        x = right - self.editor.horizontalScrollBar().value() - self.width()
        self.move(QPoint(max(0, x), y))
        self.show()
        self.raise_()


class MessageHover(QObject):
    """Follows the pointer over `editor`'s viewport and shows the bar of the message under
    it. `act(verb, argument)`: the actions it does not do itself (edit, rewind, retry).
    `rewind`: a person's message can be rewound to (checkpoints); `retry()`: the last
    answer can be asked for again now."""

    def __init__(self, editor: QTextEdit, colors: Colors, act: Callable[[str, str], None]) -> None:
        super().__init__(editor)
        self.editor = editor
        self.colors = colors
        self.marks = Marks()
        self.rewind = False
        self.retry: Callable[[], bool] | None = None
        self._act = act
        self._bar: HoverBar | None = None
        editor.viewport().installEventFilter(self)

    def set_colors(self, colors: Colors) -> None:
        self.colors = colors
        if self._bar is not None:  # its icons are tinted: made again when next wanted
            self._bar.deleteLater()
            self._bar = None

    def hide(self) -> None:
        if self._bar is not None:
            self._bar.hide()

    def clear(self) -> None:
        self.marks.clear()
        self.hide()

    def bar(self) -> HoverBar:
        if self._bar is None:
            self._bar = HoverBar(self.editor, self.colors)
            self._bar.triggered.connect(self._on_triggered)
        return self._bar

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.MouseMove and isinstance(event, QMouseEvent):
            self.hover_at(event.position().toPoint())
        elif event.type() == QEvent.Type.Leave:
            self.hide()
        return False

    def message_at(self, point: QPoint) -> tuple[int, QTextBlock]:
        """The key of the message under `point` (viewport coordinates) and its first block."""
        editor = self.editor
        offset = QPointF(editor.horizontalScrollBar().value(), editor.verticalScrollBar().value())
        layout = editor.document().documentLayout()
        position = layout.hitTest(QPointF(point) + offset, Qt.HitTestAccuracy.FuzzyHit)
        return key_at(editor.document(), max(0, position))

    def add_to_menu(self, menu: QMenu, point: QPoint) -> None:
        """The actions of the message under `point` on a context menu, so the keyboard
        (the menu key) reaches them too."""
        key, block = self.message_at(point)
        mark = self.marks.by_key.get(key)
        if mark is None:
            return
        verbs = self.verbs(mark, block)
        if verbs:
            menu.addSeparator()
        for verb, _, words in ACTIONS:
            if verb in verbs:
                label = "Copy the answer" if verb == "copy" and mark.kind == "answer" else words
                action = menu.addAction(label)
                action.triggered.connect(lambda _=False, v=verb: self._on_triggered(v, key))

    def hover_at(self, point: QPoint) -> None:
        """Show the actions of the message under `point` (viewport coordinates)."""
        if not self.marks.by_key:
            return
        key, block = self.message_at(point)
        mark = self.marks.by_key.get(key)
        bar = self.bar()
        if mark is None:
            bar.hide()
        elif key != bar.key or not bar.isVisible():
            words = "Copy the message" if mark.kind == "you" else "Copy the answer"
            bar.show_for(key, block, self.verbs(mark, block), words)

    def verbs(self, mark: MessageMark, block: QTextBlock) -> set[Verb]:
        """What can be done to the message `mark` (starting at `block`) now."""
        if mark.kind == "you":
            known = mark.index >= 0
            verbs: set[Verb] = {"copy", "edit"} if known else {"copy"}
            if self.rewind and known:
                verbs.add("rewind")
            return verbs if mark.text or known else set()
        if mark.kind == "answer":
            verbs = {"copy"} if mark.text.strip() else set()
            if self.retry is not None and self.retry() and not self.marks.later_answer(block):
                verbs.add("retry")
            return verbs
        return set()

    def _on_triggered(self, verb: str, key: int) -> None:
        mark = self.marks.by_key.get(key)
        if mark is None:
            return
        if verb == "copy":
            QGuiApplication.clipboard().setText(mark.text)
        elif verb in ("edit", "rewind"):
            self._act(verb, str(mark.index))
        elif verb == "retry":
            self._act("retry", "")
