"""Reopening a stored conversation: valid for any server, and saying what was repaired.

A conversation cut by a crash may end with a partial answer, or with tool calls that
never got a result. `resume` keeps the partial text as the answer, gives every open
call an 'interrupted' result (Conversation.repair_pairing), writes the repaired
history back and leaves a note, so the chat and the inspector can show it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from melgui.core.protocol.call_life import is_open
from melgui.core.protocol.messages import INTERRUPTED_RESULT, Conversation, Repair
from melgui.core.store.failures import place_notes
from melgui.core.store.records import (
    ConversationSummary,
    NoteRecord,
    PlanRecord,
    StoredMessage,
    ToolCallRecord,
)
from melgui.core.store.store import Store

CUT_TEXT_NOTE = "The answer being written when the app stopped is kept as far as it arrived."


class ConversationNotFoundError(KeyError):
    """No stored conversation has this id."""


@dataclass(frozen=True)
class Resumed:
    """Everything needed to show a stored conversation again and go on with it."""

    summary: ConversationSummary
    conversation: Conversation
    repair: Repair = field(default_factory=Repair)
    cut_text: bool = False
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    plans: list[PlanRecord] = field(default_factory=list)
    notes: list[NoteRecord] = field(default_factory=list)
    # Errors, retries and stops, each after the number of messages stored before it.
    failures: list[tuple[int, NoteRecord]] = field(default_factory=list)

    @property
    def conversation_id(self) -> str:
        return self.summary.id

    @property
    def repaired(self) -> bool:
        """True when this reopening changed the stored history."""
        return bool(self.repair) or self.cut_text

    def describe(self) -> str | None:
        """One line about what this reopening repaired, or None."""
        parts = []
        if self.repair:
            parts.append(self.repair.describe())
        if self.cut_text:
            parts.append(CUT_TEXT_NOTE)
        return " ".join(parts) or None


def resume(
    store: Store, conversation_id: str, stored: list[StoredMessage] | None = None
) -> Resumed:
    """Load a conversation, repairing and recording what a crash left open. `stored`:
    its messages when already read (in a worker thread: `messages_from_file`).

    Raises ConversationNotFoundError for an unknown id and sqlite3.Error on storage trouble.
    """
    summary = store.summary(conversation_id)
    if summary is None:
        raise ConversationNotFoundError(conversation_id)
    if stored is None:
        stored = store.messages(conversation_id)
    conversation = Conversation([s.message for s in stored])
    cut_text = any(s.partial for s in stored)
    repair = conversation.repair_pairing()
    records = {r.call_id: r for r in store.tool_calls(conversation_id)}
    with store.transaction():
        if repair or cut_text:
            store.replace_messages(conversation_id, conversation.messages)
        for message in conversation.messages:
            record = records.get(message.tool_call_id or "")
            if message.role != "tool" or record is None or not is_open(record.state):
                continue
            # Killed between the result message and its record: the message is the truth.
            content = message.content if message.status != "interrupted" else INTERRUPTED_RESULT
            store.call_finished(
                conversation_id, record.call_id, message.status or "ok", content, None
            )
        resumed = Resumed(summary, conversation, repair, cut_text)
        text = resumed.describe()
        if text is not None:
            store.add_note(conversation_id, "repair", text)
    return Resumed(
        summary=store.summary(conversation_id) or summary,
        conversation=conversation,
        repair=repair,
        cut_text=cut_text,
        tool_calls=store.tool_calls(conversation_id),
        plans=store.plans(conversation_id),
        notes=(notes := store.notes(conversation_id)),
        failures=place_notes(store.messages(conversation_id), notes),
    )


def latest_conversation(store: Store, folder: str) -> str | None:
    """The id of the most recently updated conversation of `folder` (for --continue)."""
    rows = store.conversations(folder, limit=1)
    return rows[0].id if rows else None
