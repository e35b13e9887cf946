"""The context parts of the window: the meter's popup (the breakdown, a click to the
message, the pinned facts), the preview before every compaction of the main conversation,
and /pin. A main conversation in the melgui host is measured and pinned there.

    meter = window.status.context_meter
    clicked = Meter(meter, meter.detailsRequested, meter.edit_summary)
    context = ContextWiring(clicked, colors, settings=..., say=..., parent=window)
    commands.add(context.command())
    context.follow(session, chat)       # each main conversation the window shows

The meter is any widget that says when it is clicked: the popup opens above it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal, SignalInstance
from PySide6.QtWidgets import QWidget
from shiboken6 import isValid

from melgui.core.agent.session import AgentSession
from melgui.core.config.settings import Settings
from melgui.core.context.breakdown import Slice
from melgui.core.context.measure import breakdown_from_json, measure_from_json
from melgui.core.context.preview import CompactionQuestion, question_for
from melgui.core.protocol.views.compacted import Proposed, is_summary, persons_words
from melgui.core.protocol.views.slash_commands import SlashCommand
from melgui.core.thread.chat_session import ChatSession
from melgui.host.client import HostGone
from melgui.host.remote_session import RemoteSession
from melgui.host.wire import RpcError
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.context.context_popup import ContextPopup
from melgui.ui.context.preview_dialog import CompactionPreview
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.theme import Colors

NOT_DRAWN = "That message is not drawn in the chat now: show earlier messages to reach it."
MARKUP = str.maketrans("", "", "*_`#>[]")


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
    popupOpened = Signal(object)  # the ContextPopup, filled with a host's measure

    def __init__(
        self,
        meter: Meter,
        colors: Colors,
        *,
        settings: Callable[[], Settings],
        say: Callable[[str], None],
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self.meter = meter
        self.colors = colors
        self._settings = settings
        self.say = say
        self.parent_widget = parent
        self.session: ChatSession | None = None
        self.chat: ChatView | None = None
        self._tasks = TaskKeeper()  # a breakdown asked of the melgui host
        self.popup = ContextPopup(colors, parent)
        self.popup.sliceActivated.connect(self.reveal)
        self.popup.compactRequested.connect(self._compact)
        self.preview: CompactionPreview | None = None
        meter.clicked.connect(self.open_popup)

    def command(self) -> SlashCommand:
        """`/pin`, for the desk's slash commands."""
        what = "Pin a fact every compaction keeps word for word"
        return SlashCommand("pin", what, self._pin, usage="<fact>")

    def follow(self, session: ChatSession, chat: ChatView) -> None:
        """A new main conversation: its compactions are previewed here (one in the melgui
        host asks here too: its question waits there until a window answers it)."""
        self.session, self.chat = session, chat
        if isinstance(session, AgentSession):
            session.compactor.review = self.review
        elif isinstance(session, RemoteSession):
            session.compaction.on_question = self._hosted_question
            session.loop.send({"compaction_preview": self._settings().compaction_preview})
            waiting = session.compaction.question
            if waiting is not None and waiting.pending:
                self._hosted_question(waiting)  # asked while no window showed it
        if self.popup.isVisible():
            self.popup.hide()

    def set_colors(self, colors: Colors) -> None:
        self.colors = colors

    def _compact(self) -> None:
        if self.chat is None:
            return
        self.chat.bridge.compact()

    # -- the popup ---------------------------------------------------------------------

    def open_popup(self) -> None:
        session = self.session
        if isinstance(session, RemoteSession):  # measured where it runs
            self._tasks.spawn(self._open_hosted(session), what="the context's breakdown")
            return
        if not isinstance(session, AgentSession):
            self.say("This conversation's agent keeps its own context.")
            return
        self.popup.set_colors(self.colors)
        self.popup.show_session(session)
        self.popup.open_at(self.meter.widget)

    async def _open_hosted(self, session: RemoteSession) -> None:
        """The breakdown the melgui host measured, and the pins its thread holds."""
        try:
            answer = await session.ask("context/measure", breakdown=True)
        except (HostGone, OSError, RpcError) as exc:
            self.say(f"The melgui host did not measure the context: {exc}")
            return
        if session is not self.session:
            return  # another conversation is shown now
        measured = measure_from_json(answer)
        self.popup.set_colors(self.colors)
        self.popup.show_breakdown(session, breakdown_from_json(answer["breakdown"]),
                                  measured.window.tokens, session.busy)  # fmt: skip
        self.popup.open_at(self.meter.widget)
        self.popupOpened.emit(self.popup)

    def reveal(self, piece: Slice) -> None:
        """Show the message a slice stands for in the chat (a call's card for a result)."""
        session, chat = self.session, self.chat
        if session is None or chat is None:
            return
        messages = session.conversation.messages
        index = piece.message
        if index is not None and isinstance(session, RemoteSession):
            index -= session.host_index(0)  # the host's number; this list may start later
        if index is None or not 0 <= index < len(messages):
            return
        message = messages[index]
        transcript = chat.transcript
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

    # -- the preview before a compaction ---------------------------------------------------

    async def review(self, proposed: Proposed) -> frozenset[int] | None:
        if not self._settings().compaction_preview:
            return frozenset()
        session = self.session
        tools = {}
        if isinstance(session, AgentSession):
            tools = {t.name: t for t in session.loop.catalog.for_role(session.loop.role)}
        return await self._ask(question_for(proposed, tools))

    def _hosted_question(self, question: CompactionQuestion) -> None:
        """The melgui host waits for a person before compacting the conversation shown:
        the same preview; its answer goes to the host (RemoteSession), and it closes when
        another window answers first."""
        if self.preview is not None and self.preview.question is question:
            return
        session = self.session
        if not self._settings().compaction_preview:  # turned off since it was sent there
            if isinstance(session, RemoteSession):
                session.loop.send({"compaction_preview": False})
            question.keep()
            return
        self._tasks.spawn(self._ask(question), what="the preview before a compaction")

    async def _ask(self, question: CompactionQuestion) -> frozenset[int] | None:
        dialog = CompactionPreview(question, self.colors, self.parent_widget)
        self.preview = dialog
        dialog.show()
        self.previewOpened.emit(dialog)
        try:
            return await question.future
        finally:
            self.preview = None
            if isValid(dialog):  # not gone with its window
                dialog.deleteLater()

    def _pin(self, arguments: str) -> None:
        session, chat = self.session, self.chat
        if chat is None:
            return
        if not isinstance(session, AgentSession | RemoteSession):
            chat.show_note("This conversation's agent keeps its own context.")
        elif not arguments.strip():
            chat.show_note("/pin takes the fact to keep, e.g. /pin the API is v2.")
        elif session.pin(arguments):
            note = f"Pinned, kept word for word at every compaction: {arguments.strip()}"
            chat.transcript.add_notice(note, self.colors.muted)
        else:
            chat.show_note("That fact is pinned already.")
