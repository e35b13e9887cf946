"""What an empty chat says about starting: how, and, on the built-in model, that it is
small and where better ones are. A word-wrapped label on the welcome screen."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

HOW_TO_START = (
    "Ask about this project. The agent reads and searches the folder on its own; "
    "writes, edits and commands wait for your approval in their card."
)
LOCAL_MODEL_NOTE = (
    "The built-in local model is small: it runs offline on this computer, but its "
    "answers are basic. For better answers, download one in Settings → “Better models”, "
    "or connect a larger one in Settings → Connection; the “On this computer” tab there "
    "lists the model servers and files you already have."
)
EMPTY_CHAT_TEXT = f"{HOW_TO_START}\n\n{LOCAL_MODEL_NOTE}"


class EmptyNote(QLabel):
    def __init__(self, parent: QWidget, text: str = HOW_TO_START) -> None:
        super().__init__(text, parent)
        self.setWordWrap(True)
        self.setProperty("role", "muted")

    def set_local(self, local: bool) -> None:
        """On the built-in local model, the note adds that it is small (and what else)."""
        self.setText(EMPTY_CHAT_TEXT if local else HOW_TO_START)
