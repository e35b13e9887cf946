"""How a chat draws one message of its history into a transcript: the person's block,
the answer's reasoning and text, its calls' cards (drawn once, as they ended), a
compaction's dimmed originals, and a reopened conversation's errors, retries and stops
where they happened."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from melgui.core.protocol.call_life import CallPhase
from melgui.core.protocol.calls import exit_code_of, shorten
from melgui.core.protocol.messages import Message
from melgui.core.protocol.views.compacted import is_summary, is_summary_ack, persons_words
from melgui.ui.chat.call_cards import CallCards
from melgui.ui.chat.failure_text import explain_failure
from melgui.ui.chat.transcript.compacted import draw_compacted
from melgui.ui.chat.transcript.document import ChatTranscript
from melgui.ui.runtime.theme import Colors

RESULTS_LOOKAHEAD = 64  # a stored call's result is among the next this many messages


class StoredMessages:
    """`messages()`: the conversation's messages now (a stored call's result is looked
    for after its message)."""

    def __init__(
        self, cards: CallCards, colors: Colors, messages: Callable[[], Sequence[Message]]
    ) -> None:
        self.cards = cards
        self.colors = colors
        self._messages = messages
        # What a compaction summary stands for, drawn dimmed in its place (the person's view).
        self.compacted: list[Message] = []
        # (position, kind, text) of a reopened conversation's errors, retries and stops.
        self.failures: list[tuple[int, str, str]] = []

    def failure_positions(self) -> set[int]:
        return {at for at, _, _ in self.failures}

    def draw(self, message: Message, index: int, into: ChatTranscript) -> None:
        """Message `index` at the end of `into`."""
        if is_summary(message):
            draw_compacted(into, self.compacted, self.colors)
        elif is_summary_ack(message):
            pass  # written by compaction for the model, not an answer
        elif message.role == "user":
            into.add_user(persons_words(message.content), index, message.parts)
        elif message.role == "assistant":
            into.add_thinking(message.reasoning)
            into.add_assistant(message.content)
            for call in message.tool_calls:
                self.cards.add(call, self._result_after(index, call.id), into)
        elif message.role == "tool" and message.tool_call_id is not None:
            status: CallPhase = message.status or "ok"
            exit_code = exit_code_of(message.content)
            self.cards.results[message.tool_call_id] = message.content
            self.cards.set(message.tool_call_id, status, exit_code=exit_code, into=into)
        elif message.role == "system":
            into.add_notice(shorten(message.content, 200), self.colors.muted)

    def draw_failures(self, position: int, into: ChatTranscript) -> None:
        """The errors, retries and stops that happened before message `position`."""
        colors = {"error": self.colors.error, "stopped": self.colors.warn}
        for at, kind, text in self.failures:
            if at != position:
                continue
            if kind == "error":
                explained = explain_failure(text, None)
                into.add_notice(explained.text, colors[kind], action=explained.action)
            elif kind == "stopped":
                into.add_notice("Stopped.", colors[kind], action=shorten(text, 120))
            else:
                into.add_notice(f"Retried: {shorten(text, 160)}", self.colors.muted)

    def _result_after(self, index: int, call_id: str) -> CallPhase:
        """A stored call drawn at once as it ended (its result follows its message), so
        its card is drawn once, not as requested and then again; "requested" if not."""
        messages = self._messages()
        for message in messages[index + 1 : index + 1 + RESULTS_LOOKAHEAD]:
            if message.role != "tool":
                break
            if message.tool_call_id == call_id:
                self.cards.ended(call_id, message.content, exit_code_of(message.content))
                return message.status or "ok"
        return "requested"
