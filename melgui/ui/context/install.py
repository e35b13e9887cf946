"""The context parts in the window: the meter's popup (the breakdown, a click to the
message, the pinned facts), the preview before every compaction of the main conversation,
and /pin.

    meter = window.status.context_meter
    clicked = Meter(meter, meter.detailsRequested, meter.edit_summary)
    wiring = install_context(window, window.sessionChanged, clicked)

The meter is any widget that says when it is clicked: the popup opens above it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from PySide6.QtCore import QObject, Signal, SignalInstance
from PySide6.QtWidgets import QMainWindow, QWidget

from melgui.core.agent.compaction import Proposed, is_summary
from melgui.core.agent.compaction_view import persons_words
from melgui.core.agent.session import AgentSession, ChatSession
from melgui.core.config.settings import Settings
from melgui.core.context.breakdown import Slice
from melgui.core.context.preview import question_for
from melgui.desk.desk import Desk
from melgui.desk.prompt.slash_commands import SlashCommand
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.context.context_popup import ContextPopup
from melgui.ui.context.preview_dialog import CompactionPreview
from melgui.ui.runtime.theme import Colors

NOT_DRAWN = "That message is not drawn in the chat now: show earlier messages to reach it."
MARKUP = str.maketrans("", "", "*_`#>[]")


class ContextHost(Protocol):
    """What the context parts use of the main window (MainWindow is one)."""

    desk: Desk
    chat: ChatView
    colors: Colors

    @property
    def session(self) -> ChatSession: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def main_window(self) -> QMainWindow: ...


@dataclass(frozen=True)
class Meter:
    """The context meter as the popup needs it: where to open, its click, and the
    summary editor a click on the summary's slice opens."""

    widget: QWidget
    clicked: SignalInstance
    edit_summary: Callable[[], None]


def snippet(text: str, words: int = 6) -> str:
    """The first words of a message's first line, as the chat draws them (no markup)."""
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    return " ".join(line.translate(MARKUP).split()[:words])


class ContextWiring(QObject):
    previewOpened = Signal(object)  # a CompactionPreview is shown (tests answer it)

    def __init__(self, window: ContextHost, session_changed: SignalInstance, meter: Meter) -> None:
        super().__init__(window.main_window)
        self.window = window
        self.meter = meter
        self.popup = ContextPopup(window.colors, window.main_window)
        self.popup.sliceActivated.connect(self.reveal)
        self.popup.compactRequested.connect(lambda: window.chat.bridge.compact())
        self.preview: CompactionPreview | None = None
        meter.clicked.connect(self.open_popup)
        session_changed.connect(self.follow)
        what = "Pin a fact every compaction keeps word for word"
        window.desk.prompt.commands.add(SlashCommand("pin", what, self._pin, usage="<fact>"))
        self.follow(window.session)

    def follow(self, session: ChatSession) -> None:
        """A new main conversation: its compactions are previewed here."""
        if isinstance(session, AgentSession):
            session.compactor.review = self.review
        if self.popup.isVisible():
            self.popup.hide()

    # -- the popup ---------------------------------------------------------------------

    def open_popup(self) -> None:
        session = self.window.session
        if not isinstance(session, AgentSession):
            self.say("This conversation's agent keeps its own context.")
            return
        self.popup.set_colors(self.window.colors)
        self.popup.show_session(session)
        self.popup.open_at(self.meter.widget)

    def reveal(self, piece: Slice) -> None:
        """Show the message a slice stands for in the chat (a call's card for a result)."""
        session = self.window.session
        messages = session.conversation.messages
        if piece.message is None or piece.message >= len(messages):
            return
        message = messages[piece.message]
        transcript = self.window.chat.transcript
        if is_summary(message):
            self.meter.edit_summary()
            return
        if piece.call_id:
            found = transcript.reveal_card(piece.call_id)
        elif message.role == "assistant" and not message.content.strip() and message.tool_calls:
            found = transcript.reveal_card(message.tool_calls[0].id)
        else:
            text = persons_words(message.content) if message.role == "user" else message.content
            found = transcript.reveal_text(snippet(text)) or transcript.reveal_text(
                snippet(text, 2)
            )
        if not found:
            self.say(NOT_DRAWN)

    def say(self, text: str) -> None:
        self.window.main_window.statusBar().showMessage(text, 8000)

    # -- the preview before a compaction ---------------------------------------------------

    async def review(self, proposed: Proposed) -> frozenset[int] | None:
        if not self.window.settings.compaction_preview:
            return frozenset()
        session = self.window.session
        tools = {}
        if isinstance(session, AgentSession):
            tools = {t.name: t for t in session.loop.catalog.for_role(session.loop.role)}
        question = question_for(proposed, tools)
        dialog = CompactionPreview(question, self.window.colors, self.window.main_window)
        self.preview = dialog
        dialog.show()
        self.previewOpened.emit(dialog)
        try:
            return await question.future
        finally:
            self.preview = None
            dialog.deleteLater()

    def _pin(self, arguments: str) -> None:
        session = self.window.session
        if not isinstance(session, AgentSession):
            self.window.chat.show_note("This conversation's agent keeps its own context.")
        elif not arguments.strip():
            self.window.chat.show_note("/pin takes the fact to keep, e.g. /pin the API is v2.")
        elif session.pin(arguments):
            note = f"Pinned, kept word for word at every compaction: {arguments.strip()}"
            self.window.chat.transcript.add_notice(note, self.window.colors.muted)
        else:
            self.window.chat.show_note("That fact is pinned already.")


def install_context(
    window: ContextHost, session_changed: SignalInstance, meter: Meter
) -> ContextWiring:
    return ContextWiring(window, session_changed, meter)
