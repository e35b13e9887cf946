"""Reopening a stored conversation: valid for any server, and saying what was repaired.

A conversation cut by a crash may end with a partial answer, or with tool calls that
never got a result. `resume` keeps the partial text as the answer, gives every open
call an 'interrupted' result (Conversation.repair_pairing), writes the repaired
history back and leaves a note, so the chat and the inspector can show it.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from melgui.core.protocol.call_life import is_open
from melgui.core.protocol.messages import INTERRUPTED_RESULT, Conversation, Repair
from melgui.core.store.database import OpenedDatabase
from melgui.core.store.failures import place_notes_at
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
class StoredConversation:
    """What reopening reads of a conversation, before any repair; read in a worker
    thread (`stored_from_file`) so the GUI thread decodes none of it."""

    summary: ConversationSummary
    messages: list[StoredMessage]
    tool_calls: list[ToolCallRecord]
    plans: list[PlanRecord]
    notes: list[NoteRecord]


def read_stored(store: Store, conversation_id: str) -> StoredConversation:
    """Everything `resume` needs of `conversation_id`; ConversationNotFoundError if none."""
    summary = store.summary(conversation_id)
    if summary is None:
        raise ConversationNotFoundError(conversation_id)
    return StoredConversation(
        summary,
        store.messages(conversation_id),
        store.tool_calls(conversation_id),
        store.plans(conversation_id),
        store.notes(conversation_id),
    )


def stored_from_file(path: Path, conversation_id: str) -> StoredConversation:
    """`read_stored` through a read-only connection of its own, the calls' arguments
    decoded: safe in a worker thread while the Store's connection goes on writing (WAL
    lets readers and a writer meet)."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
    try:
        stored = read_stored(Store(OpenedDatabase(conn, path)), conversation_id)
    finally:
        conn.close()
    for item in stored.messages:  # decoded here, once: the chat and the inspector ask later
        for call in item.message.tool_calls:
            call.decode()
    return stored


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


def resume(store: Store, conversation_id: str, stored: StoredConversation | None = None) -> Resumed:
    """Load a conversation, repairing and recording what a crash left open; afterwards
    the store holds exactly `Resumed.conversation`. `stored`: what was already read of it
    (in a worker thread: `stored_from_file`); then only a repair reads the store again.

    Raises ConversationNotFoundError for an unknown id and sqlite3.Error on storage trouble.
    """
    if stored is None:
        stored = read_stored(store, conversation_id)
    elif not store.exists(conversation_id):  # purged since it was read
        raise ConversationNotFoundError(conversation_id)
    conversation = Conversation([s.message for s in stored.messages])
    cut_text = any(s.partial for s in stored.messages)
    repair = conversation.repair_pairing()
    records = {r.call_id: r for r in stored.tool_calls}
    finished = False
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
            finished = True
        resumed = Resumed(stored.summary, conversation, repair, cut_text)
        text = resumed.describe()
        if text is not None:
            store.add_note(conversation_id, "repair", text)
    changed = resumed.repaired or finished
    notes = store.notes(conversation_id) if text is not None else stored.notes
    # Rewritten messages have new times; reading the times alone decodes nothing.
    times = (
        store.message_times(conversation_id)
        if resumed.repaired
        else [s.created_at for s in stored.messages]
    )
    return Resumed(
        summary=(store.summary(conversation_id) if changed else None) or stored.summary,
        conversation=conversation,
        repair=repair,
        cut_text=cut_text,
        tool_calls=store.tool_calls(conversation_id) if finished else stored.tool_calls,
        plans=stored.plans,
        notes=notes,
        failures=place_notes_at(times, notes),
    )


def latest_conversation(store: Store, folder: str) -> str | None:
    """The id of the most recently updated conversation of `folder` (for --continue)."""
    rows = store.conversations(folder, limit=1)
    return rows[0].id if rows else None
