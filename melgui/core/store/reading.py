"""Reading a stored conversation to reopen it, on any thread, with its repairs worked out.

Reading and decoding 10,000 messages, and finding what a crash left open in them, is pure
work on data: the history sidebar does it in a worker thread (`stored_from_file`), so
that `resume` on the GUI thread only writes the repairs back.
"""

from __future__ import annotations

import gc
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from melgui.core.protocol.call_life import is_open
from melgui.core.protocol.messages import INTERRUPTED_RESULT, Conversation, Repair
from melgui.core.store.database import OpenedDatabase
from melgui.core.store.records import (
    ConversationSummary,
    NoteRecord,
    PlanRecord,
    StoredMessage,
    ToolCallRecord,
)
from melgui.core.store.store import Store


class ConversationNotFoundError(KeyError):
    """No stored conversation has this id."""


@dataclass(frozen=True)
class Repairs:
    """What reopening must write back: the history made valid for any server (partial
    text kept as the answer, open calls answered 'interrupted'), and the results of
    calls whose record was left open though their result message was stored."""

    conversation: Conversation
    repair: Repair
    cut_text: bool
    finished: list[tuple[str, str, str]]  # (call id, status, result)


@dataclass(frozen=True)
class StoredConversation:
    """What reopening reads of a conversation, as stored, and its repairs."""

    summary: ConversationSummary
    messages: list[StoredMessage]
    tool_calls: list[ToolCallRecord]
    plans: list[PlanRecord]
    notes: list[NoteRecord]
    repairs: Repairs
    # False: `tool_calls` holds only what the first paint needs of them (CallLog.to_reopen:
    # the open ones, those with hook runs or notes); every record is read after.
    calls_whole: bool = True


def read_stored(
    store: Store, conversation_id: str, *, all_calls: bool = True
) -> StoredConversation:
    """Everything `resume` needs of `conversation_id`; ConversationNotFoundError if none.
    `all_calls=False`: of its calls' records, only what showing it needs first."""
    summary = store.summary(conversation_id)
    if summary is None:
        raise ConversationNotFoundError(conversation_id)
    messages = store.messages(conversation_id)
    calls = store.calls.of(conversation_id) if all_calls else store.calls.to_reopen(conversation_id)
    return StoredConversation(
        summary,
        messages,
        calls,
        store.plans(conversation_id),
        store.notes(conversation_id),
        _repairs(messages, calls),
        calls_whole=all_calls,
    )


def stored_from_file(
    path: Path, conversation_id: str, *, all_calls: bool = True
) -> StoredConversation:
    """`read_stored` through a read-only connection of its own, the calls' arguments
    decoded: safe in a worker thread while the Store's connection goes on writing (WAL
    lets readers and a writer meet)."""
    conn = _read_only(path)
    with collector_paused():
        try:
            stored = read_stored(
                Store(OpenedDatabase(conn, path)), conversation_id, all_calls=all_calls
            )
        finally:
            conn.close()
        for item in stored.messages:  # decoded here, once: the chat and the inspector ask
            for call in item.message.tool_calls:
                call.decode()
    return stored


def calls_from_file(path: Path, conversation_id: str) -> list[ToolCallRecord]:
    """Every call record of `conversation_id` (CallLog.of), as `stored_from_file` reads."""
    conn = _read_only(path)
    with collector_paused():
        try:
            return Store(OpenedDatabase(conn, path)).calls.of(conversation_id)
        finally:
            conn.close()


def _read_only(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)


@contextmanager
def collector_paused() -> Iterator[None]:
    """No automatic collection inside. A read makes some ten objects a message and no
    reference cycles, and those allocations set off the collector's passes, a full one
    over the window's whole heap among them (10-40 ms of a 10,000-message reopening, in
    most); the objects are collected once, after it. As the host's wire pauses it for a
    large message (melgui.host.wire.collector_paused)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _repairs(messages: list[StoredMessage], calls: list[ToolCallRecord]) -> Repairs:
    conversation = Conversation([s.message for s in messages])
    cut_text = any(s.partial for s in messages)
    repair = conversation.repair_pairing()
    records = {r.call_id: r for r in calls if is_open(r.state)}
    finished: list[tuple[str, str, str]] = []
    for message in conversation.messages if records else ():
        record = records.get(message.tool_call_id or "")
        if message.role != "tool" or record is None:
            continue
        # Killed between the result message and its record: the message is the truth.
        content = message.content if message.status != "interrupted" else INTERRUPTED_RESULT
        finished.append((record.call_id, message.status or "ok", content))
    return Repairs(conversation, repair, cut_text, finished)
