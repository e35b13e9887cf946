"""Reopening a stored conversation: valid for any server, and saying what was repaired.

A conversation cut by a crash may end with a partial answer, or with tool calls that
never got a result. `resume` keeps the partial text as the answer, gives every open
call an 'interrupted' result (Conversation.repair_pairing), writes the repaired
history back and leaves a note, so the chat and the inspector can show it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from melgui.core.protocol.messages import Conversation, Message, Repair
from melgui.core.protocol.views.compacted import summarised
from melgui.core.store.failures import place_notes_at
from melgui.core.store.reading import (
    ConversationNotFoundError,
    StoredConversation,
    calls_from_file,
    read_stored,
    stored_from_file,
)
from melgui.core.store.records import (
    ConversationSummary,
    NoteRecord,
    PlanRecord,
    ToolCallRecord,
)
from melgui.core.store.store import Store

__all__ = [
    "ConversationNotFoundError",
    "Resumed",
    "StoredConversation",
    "calls_from_file",
    "latest_conversation",
    "resume",
    "stored_from_file",
]

CUT_TEXT_NOTE = "The answer being written when the app stopped is kept as far as it arrived."


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
    # True: `tool_calls` holds only what showing it needs first (the calls left open and
    # those with hook runs or notes); the caller reads every record after (the inspector's).
    calls_later: bool = False

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
    plan = stored.repairs
    resumed = Resumed(stored.summary, plan.conversation, plan.repair, plan.cut_text)
    text = resumed.describe()
    with store.transaction():
        if resumed.repaired:
            store.replace_messages(conversation_id, plan.conversation.messages)
        for call_id, status, content in plan.finished:
            store.calls.finished(conversation_id, call_id, status, content, None)
        if text is not None:
            store.add_note(conversation_id, "repair", text)
    notes = store.notes(conversation_id) if text is not None else stored.notes
    # Rewritten messages have new times; reading the times alone decodes nothing.
    times = (
        store.message_times(conversation_id)
        if resumed.repaired
        else [s.created_at for s in stored.messages]
    )
    changed = resumed.repaired or bool(plan.finished)
    return Resumed(
        summary=(store.summary(conversation_id) if changed else None) or stored.summary,
        conversation=plan.conversation,
        repair=plan.repair,
        cut_text=plan.cut_text,
        tool_calls=store.calls.of(conversation_id) if plan.finished else stored.tool_calls,
        plans=stored.plans,
        notes=notes,
        failures=place_notes_at(times, notes),
        calls_later=not stored.calls_whole and not plan.finished,
    )


def latest_conversation(store: Store, folder: str) -> str | None:
    """The id of the most recently updated conversation of `folder` (for --continue)."""
    rows = store.conversations(folder, limit=1)
    return rows[0].id if rows else None


def stored_originals(
    store: Store, conversation_id: str, current: Sequence[Message]
) -> list[Message]:
    """`summarised` for a stored conversation: its branches (each the list before a
    replacement) followed, one after another, up to `current`."""
    branches = store.branches(conversation_id)
    lists = [[s.message for s in store.branch_messages(b.id)] for b in branches]
    lists.append(list(current))
    earlier: list[Message] = []
    for before, after in itertools.pairwise(lists):
        earlier = summarised(before, after, earlier)
    return earlier
