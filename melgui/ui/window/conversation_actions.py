"""Retry and Edit-and-resend on the last user message, through the session's branch.

Both cut the conversation back to just before the last user message with
`AgentSession.branch` (the old list stays in history as a branch, marked "retry" or
"edit"); Retry sends the same text again, Edit puts it in the prompt to change and send.
"""

from __future__ import annotations

import sqlite3
from typing import Literal

from PySide6.QtGui import QTextCursor

from melgui.core.protocol.messages import Conversation
from melgui.core.store.resume import stored_originals
from melgui.core.store.store import Store
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.runtime.sessions import MainSession


def last_user_index(session: MainSession) -> int:
    """Index of the last user message, or -1."""
    messages = session.conversation.messages
    return next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), -1)


def cut_before_last(session: MainSession, reason: Literal["retry", "edit"]) -> str:
    """Branch the history to before the last user message and return its text; raises
    ValueError or RuntimeError, saying why, when that cannot be done now."""
    if session.busy:
        raise RuntimeError("The agent is still working: stop it first (Esc in the chat).")
    index = last_user_index(session)
    if index < 0:
        raise ValueError("There is no message to send again yet.")
    message = session.conversation.messages[index]
    text = message.content or ""
    note = f"{reason} of: {' '.join(text.split())[:80]}"
    session.branch(session.conversation.messages[:index], reason, note)
    return text


def retry_last(session: MainSession, chat: ChatView) -> str:
    """Send the last user message again on a fresh branch; returns a status line."""
    try:
        text = cut_before_last(session, "retry")
    except (ValueError, RuntimeError) as exc:
        return str(exc)
    chat.bridge.submit(text)
    return "Sent again; the earlier attempt is kept in the history."


def edit_last(session: MainSession, chat: ChatView) -> str:
    """Put the last user message back into the prompt for editing; returns a status line."""
    try:
        text = cut_before_last(session, "edit")
    except (ValueError, RuntimeError) as exc:
        return str(exc)
    chat.input.setPlainText(text)
    chat.input.moveCursor(QTextCursor.MoveOperation.End)
    chat.input.setFocus()
    return "Edit the message and send it; the earlier version is kept in the history."


def show_compacted(
    chat: ChatView, store: Store, conversation_id: str, conversation: Conversation
) -> str | None:
    """A reopened conversation's compaction summary stands for its originals again: the
    chat draws them dimmed above "Compacted here", as it did live. Returns a line for
    the status bar when the store cannot be read."""
    try:
        originals = stored_originals(store, conversation_id, conversation.messages)
    except sqlite3.Error as exc:
        return f"Cannot read the compacted messages: {exc}"
    if originals:
        chat.compacted = originals
        chat.load_conversation(conversation)
    return None
