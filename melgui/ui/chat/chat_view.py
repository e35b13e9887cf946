"""ChatView: the transcript of one session in a centred column, the welcome over an empty
one, and the composer card under it (prompt, chips, one send button that stops).

Constructible on its own from a SessionBridge (the worker panes embed one). Reopening a
long conversation draws only its last messages; "Show earlier messages" draws more.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import assert_never

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QKeySequence, QPalette, QShortcut, QShowEvent
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from melgui.core.config.project_instructions import instruction_file_names
from melgui.core.protocol.call_life import OPEN_PHASES, CallPhase
from melgui.core.protocol.calls import exit_code_of, shorten
from melgui.core.protocol.content import ImagePart, Part
from melgui.core.protocol.messages import Conversation, Message, without_images
from melgui.core.protocol.transport import Answerer
from melgui.core.protocol.views.compacted import persons_words, summarised
from melgui.core.protocol.views.prompt_source import PromptSource
from melgui.core.protocol.views.slash_commands import looks_like_command
from melgui.core.thread.changes import (
    Change,
    EntriesReplaced,
    EntryAdded,
    EntryChanged,
    StateChanged,
    TextAppended,
)
from melgui.core.thread.entries import (
    AssistantEntry,
    BranchEntry,
    CallEntry,
    NoteEntry,
    ReasoningEntry,
    UserEntry,
)
from melgui.ui.chat.call_cards import CallCards, Steps
from melgui.ui.chat.card_answers import CardAnswers
from melgui.ui.chat.column import centred_column
from melgui.ui.chat.composer.composer_card import ComposerCard
from melgui.ui.chat.composer.input_box import PromptInput
from melgui.ui.chat.composer.tab_cycle import tab_within
from melgui.ui.chat.failure_text import cut_short, explain_failure, rejects_images
from melgui.ui.chat.model_line import ModelLine
from melgui.ui.chat.paging import HistoryPaging
from melgui.ui.chat.stored_messages import StoredMessages
from melgui.ui.chat.thinking_row import ThinkingRow
from melgui.ui.chat.transcript.document import ChatTranscript
from melgui.ui.chat.welcome import Welcome
from melgui.ui.runtime.bridge import SessionBridge
from melgui.ui.runtime.look.tokens import SPACE_L, SPACE_XS
from melgui.ui.runtime.theme import LIGHT, Colors


class ChatView(QWidget):
    callActivated = Signal(str)  # a tool card was clicked: open this call in the inspector
    actionRequested = Signal(str, str)  # (verb, argument): a card's or message's action link

    def __init__(
        self,
        bridge: SessionBridge,
        colors: Colors = LIGHT,
        parent: QWidget | None = None,
        *,
        prompt: PromptSource | None = None,
        draw: bool = True,
        when_shown: bool = False,
    ) -> None:
        """`prompt`: the folder's slash commands, prompt history and `@` file index (the
        main chat has them; a worker pane's chat does without). Not `draw`: the owner
        hooks `card_extra`, the messages' actions and `failures` first, then draws once
        with `load_conversation` (a long conversation's first screen is not drawn twice).
        `when_shown`: the history is drawn when the view is first shown (or a change
        comes first), so a pane opened in a background tab costs little."""
        super().__init__(parent)
        self.setObjectName("chatView")
        self.setBackgroundRole(QPalette.ColorRole.Base)  # the page behind the column
        self.setAutoFillBackground(True)
        self.bridge = bridge
        self.colors = colors
        self.prompt = prompt
        self.transcript = ChatTranscript(colors, self)
        self.transcript.callActivated.connect(self.callActivated)
        self.transcript.actionRequested.connect(self.actionRequested)
        self.actionRequested.connect(self._own_action)
        self.cards = CallCards(self.transcript, colors, lambda: bridge.busy, self._steps, self)
        self.transcript.cardToggled.connect(self.cards.toggle)
        # A waiting call is answered on its card: its question drawn from its entry.
        self.cards.entry_of = lambda call_id: bridge.session.thread.call(call_id)
        self.answers = CardAnswers(
            self.transcript, lambda: bridge.session.thread, lambda: bridge.session.source
        )
        self.stored = StoredMessages(
            self.cards, colors, lambda: bridge.session.conversation.messages
        )
        self.paging = HistoryPaging(self.transcript, bridge, self.stored, self.cards, self)
        self.transcript.moreRequested.connect(self.paging.show_more)
        self.transcript.laterRequested.connect(self.paging.show_later)
        # In place of the empty conversation: what melgui is, who answers, what to ask.
        self.welcome = Welcome(
            self.transcript, colors, bridge.session.loop.cwd, suggest=prompt is not None
        )
        self.welcome.promptChosen.connect(self._use_suggestion)
        self.welcome.settingsRequested.connect(lambda: self.actionRequested.emit("settings", ""))
        # Shown by the owner's drawing (or the one when shown) if it draws nothing: not
        # placed meanwhile on each resize of a pane opening on a conversation.
        self.welcome.setHidden(not draw or when_shown)
        self.empty_note = self.welcome.note
        self.instructions_label = QLabel(self)  # the project instruction files in force
        self.instructions_label.setWordWrap(True)
        self.instructions_label.hide()
        self.thinking = ThinkingRow(colors, self)  # until the model's first words
        self.thinking.stopRequested.connect(self.stop)
        self.queued_label = QLabel(self)
        self.queued_label.setWordWrap(True)
        self.queued_label.hide()
        self.input = PromptInput(self, prompt)
        self.input.submitted.connect(self.submit)
        self.model_line = ModelLine(self)  # who answers, set by the window
        self.model_line.linkRequested.connect(lambda verb: self.actionRequested.emit(verb, ""))
        self.note_label = QLabel(self)  # why an attachment or a command did not work
        self.note_label.setWordWrap(True)
        self.note_label.hide()
        self.input.problem.connect(self.show_note)
        self.input.textChanged.connect(self.note_label.hide)
        self.composer = ComposerCard(self.input, colors, self)
        self.composer.sendRequested.connect(self.input.send)
        self.composer.stopRequested.connect(self.stop)
        self.send_button = self.composer.send_button
        self.stop_button = self.composer.stop_button
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, SPACE_L)
        layout.setSpacing(SPACE_XS)
        layout.addWidget(self.transcript, 1)
        self.column = centred_column(  # the composer lines up with the transcript's text
            layout,
            self.instructions_label,
            self.thinking,
            self.queued_label,
            self.note_label,
            self.input.attachments,
            self.model_line,
            self.composer,
        )
        escape = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)
        escape.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        escape.activated.connect(self.stop)
        self._phases: dict[str, CallPhase] = {}  # a card's phase as last drawn live
        self._turns = bridge.session.thread.state.turns
        bridge.threadChange.connect(self.on_change)
        bridge.loopEvent.connect(self.thinking.on_event)
        bridge.busyChanged.connect(self.thinking.on_busy)
        bridge.busyChanged.connect(self.composer.set_busy)
        self._images_refused = ""  # why the last turn failed, when on an image
        bridge.busyChanged.connect(self._after_turn)
        bridge.busyChanged.connect(self.paging.on_busy)
        bridge.queuedChanged.connect(self._on_queued)
        self._undrawn = draw and when_shown
        if draw and not when_shown:
            self.load_conversation(bridge.session.conversation)
        self.show_instruction_files()

    def minimumSizeHint(self) -> QSize:
        """With the thinking row's room while it is hidden: shown at each turn's start and
        hidden at the first words, it moved the splits of panes at their least height
        (every pane of the tab resized and drawn again, 7-9 ms, twice a turn)."""
        hint = super().minimumSizeHint()
        if self.thinking.isHidden():
            hint.setHeight(hint.height() + self.thinking.minimumSizeHint().height() + SPACE_XS)
        return hint

    def showEvent(self, event: QShowEvent) -> None:
        self._draw_undrawn()
        super().showEvent(event)

    def redraw_history(self) -> None:
        """The session's conversation changed as a whole (a reopened one came in full)."""
        if not self._undrawn:
            self.load_conversation(self.bridge.session.conversation)

    def _draw_undrawn(self) -> None:
        if self._undrawn:
            self._undrawn = False
            self.load_conversation(self.bridge.session.conversation)

    def load_conversation(
        self,
        conversation: Conversation,
        start: int | None = None,
        *,
        end: int | None = None,
        progressive: bool = False,
        lazy: bool = True,
    ) -> None:
        """Draw `conversation` again, by default its last page (see HistoryPaging.load)."""
        self.welcome.hold(True)  # the page cleared to be drawn again needs no welcome
        try:
            self.paging.load(conversation, start, end=end, progressive=progressive, lazy=lazy)
        finally:
            self.welcome.hold(False)

    # What the window adds under a finished card (changed files, undo), given the call's
    # id and tool: html with act: links; none by default.
    @property
    def card_extra(self) -> Callable[[str, str, CallPhase], str] | None:
        return self.cards.extra

    @card_extra.setter
    def card_extra(self, extra: Callable[[str, str, CallPhase], str] | None) -> None:
        self.cards.extra = extra

    @property
    def failures(self) -> list[tuple[int, str, str]]:
        """(position, kind, text) of a reopened conversation's errors, retries and stops."""
        return self.stored.failures

    @failures.setter
    def failures(self, failures: list[tuple[int, str, str]]) -> None:
        self.stored.failures = failures

    @property
    def compacted(self) -> list[Message]:
        """What a compaction summary stands for, drawn dimmed in its place."""
        return self.stored.compacted

    @compacted.setter
    def compacted(self, messages: list[Message]) -> None:
        self.stored.compacted = messages

    # --- actions ---------------------------------------------------------------------

    def submit(self, text: str, parts: tuple[Part, ...] = ()) -> None:
        """Send a message, or run the slash command it names."""
        if self.prompt is not None and text.startswith("/"):
            found = self.prompt.commands.parse(text)
            if found is None and self.prompt.reload_commands():  # a file added since
                found = self.prompt.commands.parse(text)
            if found is not None:
                command, arguments = found
                expanded = command.run(arguments)
                if expanded is None:  # the command did its work
                    for part in parts:  # attachments wait for the next message
                        self.input.attach(part)
                    return
                text = expanded
            elif looks_like_command(text):
                self.input.setPlainText(text)
                for part in parts:
                    self.input.attach(part)
                name = text.split()[0]
                self.show_note(f"Unknown command {name}: /help lists the commands.")
                return
        model = self.bridge.session.loop.model
        images = any(isinstance(part, ImagePart) for part in parts)
        if images and self.prompt is not None and self.prompt.refuses_images(model):
            self.input.setPlainText(text)
            for part in parts:
                self.input.attach(part)
            self.show_note(
                f"{model} does not take images (the server's model list says so): remove "
                "the image or choose another model."
            )
            return
        self.bridge.submit(text, parts)

    def _own_action(self, verb: str, argument: str) -> None:
        """The actions the view does itself: a message's edit (a copy in the prompt box), a
        waiting call's answers on its card (CardAnswers)."""
        if verb == "edit":
            messages = self.bridge.session.conversation.messages
            index = int(argument) if argument.isdigit() else -1
            if 0 <= index < len(messages):
                self.input.setPlainText(persons_words(messages[index].content))
                self.input.setFocus()
            return
        self.answers.on_action(verb, argument)

    def _after_turn(self, busy: bool) -> None:
        """A server refused an image: take images out of the history (kept in a branch),
        so the next message is not refused for the same image again."""
        if busy or not self._images_refused:
            return
        why, self._images_refused = self._images_refused, ""
        session = self.bridge.session
        messages = session.conversation.messages
        if any(isinstance(p, ImagePart) for m in messages for p in m.parts):
            note = f"{why} — the images are taken out of the conversation (kept in its history)."
            session.branch(without_images(messages), "edit", note)

    def add_above_composer(self, widget: QWidget) -> None:
        """A bar of the window's between the transcript and the composer (review changes)."""
        column = self.column.layout()
        if column is not None and isinstance(column, QVBoxLayout):
            column.insertWidget(column.indexOf(self.composer), widget)

    def _use_suggestion(self, text: str) -> None:
        self.input.setPlainText(text)
        self.input.setFocus()

    def focusNextPrevChild(self, next: bool) -> bool:
        controls = (self.input, self.send_button, self.stop_button)
        return tab_within(controls, next) or super().focusNextPrevChild(next)

    def show_model(self, answerer: Answerer) -> None:
        """Name the model that answers, over the prompt box and in it."""
        self.model_line.show_answerer(answerer)
        self.composer.name_answerer(answerer.name)
        self.input.name_model(answerer.name)

    def show_note(self, text: str) -> None:
        self.note_label.setText(text)
        self.note_label.setStyleSheet(f"color: {self.colors.error}")
        self.note_label.show()

    def stop(self) -> None:
        """Stop the turn; messages still queued go back into the input box, not lost."""
        attached = [p for m in self.bridge.session.queued_messages for p in m.parts]
        dropped = self.bridge.stop()
        for part in attached:
            self.input.attach(part)
        if dropped:
            current = self.input.toPlainText()
            self.input.setPlainText("\n\n".join([*dropped, current] if current else dropped))

    def set_colors(self, colors: Colors) -> None:
        self.colors = colors
        self.transcript.set_colors(colors)
        self.thinking.set_colors(colors)
        self.composer.set_colors(colors)
        self.cards.colors = self.stored.colors = colors
        self.load_conversation(self.bridge.session.conversation)

    def refresh_cards(self) -> None:
        """Draw every card again (what a checkpoint says about it may have changed)."""
        self.cards.refresh()

    def set_card_note(self, call_id: str, note_html: str) -> None:
        """A live line on a running call's card (an MCP tool's progress)."""
        self.cards.set_note(call_id, note_html)

    def _steps(self, call_id: str) -> Steps:
        """A reopened call's hook runs and notes, as its thread entry has them back."""
        entry = self.bridge.session.thread.call(call_id)
        return (entry.hooks, entry.notes) if entry is not None else ((), ())

    def _index_of(self, message: Message) -> int:
        """`message`'s place in the list (the last equal one: a copy of a session that
        runs elsewhere holds its own objects), -1 when it is not there."""
        messages = self.bridge.session.conversation.messages
        for index in range(len(messages) - 1, -1, -1):
            if messages[index] is message:
                return index
        for index in range(len(messages) - 1, -1, -1):
            if messages[index] == message:
                return index
        return -1

    def _answer_kept(self) -> int:
        """Characters of a failed leg's answer kept in the conversation (its last message)."""
        messages = self.bridge.session.conversation.messages
        last = messages[-1] if messages else None
        return len(last.content or "") if last is not None and last.role == "assistant" else 0

    # --- live events ------------------------------------------------------------------

    def on_change(self, change: Change) -> None:
        """Draw one change of the session's thread."""
        if isinstance(change, EntriesReplaced) and change.reason == "load":
            return  # a copy starting again from a snapshot: what is drawn stays
        self._draw_undrawn()  # the history first, then what follows it
        self.paging.finish()
        t = self.transcript
        match change:
            case EntryAdded(entry=AssistantEntry(streaming=True, text=text)):
                t.stream_text(text)
            case EntryAdded(entry=ReasoningEntry(streaming=True, text=text)):
                t.stream_reasoning(text)
            case TextAppended(text=text, reasoning=reasoning):
                (t.stream_reasoning if reasoning else t.stream_text)(text)
            case (
                EntryAdded(entry=AssistantEntry(text=text))
                | EntryChanged(entry=AssistantEntry(streaming=False, text=text))
            ):
                t.finish_assistant(text, background=True)
            case EntryChanged(entry=ReasoningEntry(streaming=False)):
                t.finish_assistant(None, background=True)  # a leg that only reasoned
            case EntryAdded(entry=UserEntry(message=message)):
                index = self._index_of(message)
                t.add_user(persons_words(message.content), index, message.parts)
            case EntryAdded(entry=CallEntry(call=call)):
                self._phases[call.id] = "requested"
                self.cards.add(call, "requested")
            case EntryChanged(entry=CallEntry() as entry):
                self._call_changed(entry)
            case EntryAdded(entry=NoteEntry() as note):
                self._notice(note)
            case EntriesReplaced(entries=entries, reason=reason) if reason != "load":
                self.failures = []  # placed on the old list of messages
                marker = entries[-1] if entries else None
                messages = list(self.bridge.session.conversation.messages)
                if isinstance(marker, BranchEntry):
                    self.compacted = summarised(marker.replaced, messages, self.compacted)
                self.load_conversation(Conversation(messages))
                if isinstance(marker, BranchEntry) and marker.note:
                    self.transcript.add_notice(marker.note, self.colors.muted)
            case StateChanged(state=state):
                ended, self._turns = state.turns != self._turns, state.turns
                if ended and state.outcome == "done":
                    self.show_instruction_files()
                    self.paging.bound_drawn()
            case _:
                pass

    def follow_calls(self, calls: Iterable[CallEntry]) -> None:
        """Cards take the phases their calls have now (a conversation drawn from a host's
        snapshot: no change says again that a call waits for its answer, and a card drawn
        live as waiting or running takes the end a new host gave its call)."""
        for entry in calls:
            if entry.result is None:
                redraw = entry.phase in ("waiting", "running")
            else:
                redraw = self._phases.get(entry.call_id) in OPEN_PHASES
            if redraw:
                self._call_changed(entry)

    def _call_changed(self, entry: CallEntry) -> None:
        """A card follows its call's phase; a waiting one's question too (a reason typed)."""
        call_id, phase = entry.call_id, entry.phase
        if self._phases.get(call_id) == phase:
            if phase == "waiting":
                self.cards.set(call_id, phase)  # drawn again only if its question changed
            return
        if self._phases.get(call_id) == "waiting":
            self.answers.settled(call_id)
        self._phases[call_id] = phase
        result = entry.result
        if result is None:
            if phase in ("waiting", "running"):
                self.cards.set(call_id, phase)
            if phase == "waiting":
                self.answers.arrived(call_id)
            return
        if not self.transcript.has_card(call_id):
            self.cards.add(entry.call, phase)
        if entry.hooks or entry.notes:
            self.cards.hooks[call_id] = (entry.hooks, entry.notes)
        self.cards.results[call_id] = result.content
        code = exit_code_of(result.content)
        timing = entry.timing
        self.cards.set(call_id, phase, timing.ran, exit_code=code, waited=timing.waited)

    def _notice(self, note: NoteEntry) -> None:
        t = self.transcript
        match note.note:
            case "error":
                text, status = note.text, note.status
                explained = explain_failure(text, status, kept=self._answer_kept())
                self._images_refused = explained.text if rejects_images(text, status) else ""
                retry = ("act:retry/", "Retry") if cut_short(text) else ("", "")
                t.add_notice(explained.text, self.colors.error, action=explained.action, link=retry)
            case "stopped":
                t.add_notice("Stopped.", self.colors.warn, action="the conversation is kept")
            case "retry":
                t.add_notice(
                    f"Retrying in {note.delay:.0f} s (attempt {note.attempt + 1}): "
                    f"{shorten(note.text, 120)}",
                    self.colors.muted,
                )
            case "repair":
                t.add_notice(note.text, self.colors.muted)
            case "context":
                color = self.colors.warn if note.level == "warning" else self.colors.muted
                t.add_notice(note.text, color)
            case _:
                assert_never(note.note)

    # --- long sessions -------------------------------------------------------

    def show_instruction_files(self) -> None:
        """Name the project instruction files the model reads (AGENTS.md, …)."""
        names = instruction_file_names(self.bridge.session.loop.cwd)
        self.instructions_label.setVisible(bool(names))
        self.instructions_label.setText(
            f'<span style="color:{self.colors.muted}">Project instructions in force: '
            f"{', '.join(names)}</span>"
        )
        self.instructions_label.setToolTip("Sent with every request as part of the system message")

    def _on_queued(self, texts: list[str]) -> None:
        if not texts:
            self.queued_label.hide()
            return
        preview = " · ".join(shorten(text, 60) for text in texts[:3])
        more = f" (+{len(texts) - 3})" if len(texts) > 3 else ""
        self.queued_label.setText(f"Queued ({len(texts)}): {preview}{more}")
        self.queued_label.show()
