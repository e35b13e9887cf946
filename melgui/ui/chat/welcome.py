"""What an empty conversation shows: what melgui is in one line, which model answers and
where to change it, three things to ask about this folder, and the keys that matter.

It lies over the transcript's viewport, in the chat's column, while the transcript has
no text; a suggestion clicked goes into the prompt box, for the person to send or edit.
"""

from __future__ import annotations

import os
from html import escape

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtWidgets import QLabel, QPushButton, QTextEdit, QVBoxLayout, QWidget

from melgui.core.protocol.transport import Answerer
from melgui.ui.chat.empty_note import EmptyNote
from melgui.ui.runtime.look.icons import icon
from melgui.ui.runtime.look.tokens import ICON, SPACE_2XL, SPACE_3XL, SPACE_L, SPACE_S, Colors

TOP_ROOM = SPACE_3XL + SPACE_2XL  # above the title, where the viewport has room
WHAT_MELGUI_IS = "An agent that works in this folder with you"
KEYS = (
    "<b>Enter</b> sends · <b>Shift+Enter</b> new line · <b>@</b> a file · "
    "<b>/</b> a command · <b>Esc</b> stops · <b>Ctrl+Shift+P</b> every command"
)


def suggestions(folder: str) -> list[str]:
    """Three things worth asking about `folder`, from what it holds."""
    names = set(os.listdir(folder)) if os.path.isdir(folder) else set()
    found = []
    readme = next((n for n in sorted(names) if n.lower().startswith("readme")), None)
    if readme:
        found.append(f"Read {readme} and explain what this project does")
    else:
        found.append("Explain what is in this folder and how it fits together")
    if names & {"tests", "test", "pytest.ini", "pyproject.toml", "package.json", "Cargo.toml"}:
        found.append("Run the tests and tell me what fails")
    else:
        found.append("Find the entry point and walk me through what it does")
    if ".git" in names:
        found.append("Review my uncommitted changes")
    else:
        found.append("Look for TODOs and suggest which to fix first")
    return found


class Welcome(QWidget):
    promptChosen = Signal(str)  # a suggestion was clicked
    settingsRequested = Signal()

    def __init__(self, editor: QTextEdit, colors: Colors, folder: str, *, suggest: bool) -> None:
        super().__init__(editor.viewport())
        self.editor = editor
        self.setObjectName("welcome")
        self.title = QLabel(WHAT_MELGUI_IS, self)
        self.title.setProperty("role", "display")
        self.title.setWordWrap(True)
        self.model = QLabel(self)
        self.model.setWordWrap(True)
        self.model.setTextFormat(Qt.TextFormat.RichText)
        self.model.linkActivated.connect(lambda _link: self.settingsRequested.emit())
        self.note = EmptyNote(self)
        self.column = layout = QVBoxLayout(self)
        layout.setContentsMargins(0, TOP_ROOM, 0, 0)
        layout.setSpacing(SPACE_S)
        layout.addWidget(self.title)
        layout.addWidget(self.model)
        layout.addWidget(self.note)
        layout.addSpacing(SPACE_L)
        self.buttons: list[QPushButton] = []
        for text in suggestions(folder) if suggest else []:
            button = QPushButton(text, self)
            button.setToolTip(text)  # the whole text, where the button's is elided
            button.setProperty("role", "suggestion")
            button.setIcon(icon("message-square", colors.muted))
            button.setIconSize(QSize(ICON, ICON))
            button.clicked.connect(lambda _=False, t=text: self.promptChosen.emit(t))
            layout.addWidget(button)
            self.buttons.append(button)
        layout.addSpacing(SPACE_L)
        self.keys = QLabel(KEYS, self)
        self.keys.setProperty("role", "meta")
        self.keys.setWordWrap(True)
        layout.addWidget(self.keys)
        layout.addStretch(1)
        editor.viewport().installEventFilter(self)
        editor.document().contentsChanged.connect(self.update_visibility)
        self._held = False
        # False: never shown (a worker pane opened on its task: its first message comes
        # soon, and a welcome placed on each resize meanwhile cost every pane opened).
        self.wanted = True
        self.set_colors(colors)  # shown or hidden by the first drawing (contentsChanged)

    def set_colors(self, colors: Colors) -> None:
        self.colors = colors

    def show_answerer(self, answerer: Answerer) -> None:
        self.model.setText(
            f"Answers come from <b>{escape(answerer.name)}</b>, {escape(answerer.where)}. "
            '<a href="settings">Change it in Settings</a> (Ctrl+,)'
        )
        if not self.isHidden():
            self._place()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and not self.isHidden():
            self._place()  # placed when shown, not on every resize of a full transcript
        return False

    def _place(self) -> None:
        # Lined up with the transcript's text (the document's margin on either side), as
        # tall as the viewport, so its wrapped lines get the height they need.
        margin = int(self.editor.document().documentMargin())
        viewport = self.editor.viewport()
        width = max(viewport.width() - 2 * margin, SPACE_2XL)
        # The room above the title gives way first in a short viewport (a window of 600
        # px under the trust bar cut the suggestions off at the bottom).
        # Then the keys line and the suggestions from the last: the title, the model and
        # the note (on the built-in model: that it is small, and where better ones are)
        # stay whatever the height.
        layout = self.column
        for button in self.buttons:
            button.setText(
                button.fontMetrics().elidedText(
                    button.toolTip(),
                    Qt.TextElideMode.ElideRight,
                    width - button.iconSize().width() - 3 * SPACE_L,
                )
            )
        parts: list[QWidget] = [self.keys, *reversed(self.buttons)]
        for part in parts:
            part.show()
        content = self._content(width)
        for part in parts:
            if content + SPACE_L <= viewport.height():
                break
            part.hide()
            content = self._content(width)
        room = min(TOP_ROOM, max(SPACE_L, viewport.height() - content))
        if room != layout.contentsMargins().top():
            layout.setContentsMargins(0, room, 0, 0)
        self.setGeometry(margin, 0, width, max(viewport.height(), content + room))

    def _content(self, width: int) -> int:
        """The height of what the welcome shows at `width`, without the room above."""
        layout = self.column
        layout.invalidate()
        return layout.totalHeightForWidth(width) - layout.contentsMargins().top()

    def hold(self, held: bool) -> None:
        """While held (a conversation being drawn), the welcome stays as it is; on release
        it shows if nothing was drawn: it is not placed for a page cleared to be redrawn."""
        self._held = held
        if not held:
            self.update_visibility()

    def update_visibility(self) -> None:
        if self._held:
            return
        empty = self.editor.document().isEmpty() and self.wanted
        if empty and self.isHidden():
            self._place()
        self.setVisible(empty)
