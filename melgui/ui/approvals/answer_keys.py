"""The window's Allow and Deny keys (APPROVE_KEYS, DENY_KEYS): they answer the waiting
call whose card has the keyboard, else the oldest question waiting in any pane, on its
card (the same answer as its buttons: the thread's, with the reason typed for it)."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from melgui.ui.approvals.approval_queue import ApprovalQueue
from melgui.ui.chat.chat_view import ChatView


def answer_waiting(window: QWidget, queue: ApprovalQueue, *, allow: bool) -> bool:
    """Allow (or deny) the call the keys mean; False when none waits."""
    chats = window.findChildren(ChatView)
    target: tuple[ChatView, str] | None = None
    for chat in chats:
        focused = chat.answers.focused()
        if focused is not None:
            target = chat, focused
            break
    if target is None:
        request = queue.first()
        if request is None:
            return False
        shows = [c for c in chats if c.bridge.session.source == request.source]
        found = [c for c in shows if c.answers.waiting(request.call.id) is not None]
        if not found:  # no chat shows it (a pane closing): answered as it was asked
            if allow:
                request.approve("once")
            else:
                request.deny(request.draft)
            return True
        target = found[0], request.call.id
    chat, call_id = target
    if allow:
        chat.answers.approve(call_id)
    else:
        chat.answers.deny(call_id)
    return True
