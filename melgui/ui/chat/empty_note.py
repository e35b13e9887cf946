"""What an empty chat says: how to start, and, on the built-in model, that it is small.

A word-wrapped label over the transcript's viewport (Qt's own placeholder text is drawn
on one line and cut off at the edge), shown while the transcript has no text.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QLabel, QTextEdit

HOW_TO_START = (
    "Ask about this project. The agent reads and searches the folder on its own; "
    "writes, edits and commands wait for your approval in the inspector."
)
LOCAL_MODEL_NOTE = (
    "The built-in local model is small: it runs offline on this computer, but its "
    "answers are basic. For better answers, download one in Settings → “Better models”, "
    "or connect a larger one in Settings → Connection; the “On this computer” tab there "
    "lists the model servers and files you already have."
)
EMPTY_CHAT_TEXT = f"{HOW_TO_START}\n\n{LOCAL_MODEL_NOTE}"
MARGIN = 12


class EmptyNote(QLabel):
    """The note over `editor`'s viewport, visible while its document is empty."""

    def __init__(self, editor: QTextEdit, text: str = HOW_TO_START) -> None:
        super().__init__(text, editor.viewport())
        self.editor = editor
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        editor.viewport().installEventFilter(self)
        editor.document().contentsChanged.connect(self.update_visibility)
        self._place()
        self.update_visibility()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self._place()
        return False

    def _place(self) -> None:
        width = max(self.editor.viewport().width() - 2 * MARGIN, 50)
        self.setFixedWidth(width)
        self.adjustSize()
        self.move(MARGIN, MARGIN)

    def set_local(self, local: bool) -> None:
        """On the built-in local model, the note adds that it is small (and what else)."""
        self.setText(EMPTY_CHAT_TEXT if local else HOW_TO_START)
        self._place()

    def update_visibility(self) -> None:
        self.setVisible(self.editor.document().isEmpty())
