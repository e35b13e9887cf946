"""Keeping conversations: the SQLite history, the journal that writes it live, resume
and export. No Qt here.

    store = open_store()                      # never raises; store.notice says what went wrong
    cid = store.create_conversation(folder)
    journal = Journal(store, cid)
    journal.attach(session)                  # and wire=journal.record_wire
"""

from melgui.core.store.records import (
    ConversationSummary,
    NoteRecord,
    PlanRecord,
    StoredMessage,
    ToolCallRecord,
    WireRecord,
)
from melgui.core.store.store import Store, open_store, title_from

__all__ = [
    "ConversationSummary",
    "NoteRecord",
    "PlanRecord",
    "Store",
    "StoredMessage",
    "ToolCallRecord",
    "WireRecord",
    "open_store",
    "title_from",
]
