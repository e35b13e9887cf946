"""Every approval request waiting for the person, from any session, oldest first.

`add(request)` accepts a request from any AgentSession (`request.source` names who
asks); `take(event)` adds the request of a session's ApprovalNeeded (a bridge's
loopEvent connects to it). A request leaves the queue when it is decided, wherever that
happens.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.loop_events import ApprovalNeeded, LoopEvent


class ApprovalQueue(QObject):
    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._requests: list[ApprovalRequest] = []

    def add(self, request: ApprovalRequest) -> None:
        if not request.pending or request in self._requests:
            return
        self._requests.append(request)
        request.future.add_done_callback(lambda _future: self._drop(request))
        self.changed.emit()

    def take(self, event: LoopEvent) -> None:
        if isinstance(event, ApprovalNeeded):
            self.add(event.request)

    def pending(self) -> list[ApprovalRequest]:
        return [r for r in self._requests if r.pending]

    def first(self) -> ApprovalRequest | None:
        waiting = self.pending()
        return waiting[0] if waiting else None

    def __len__(self) -> int:
        return len(self.pending())

    def _drop(self, request: ApprovalRequest) -> None:
        if request in self._requests:
            self._requests.remove(request)
            self.changed.emit()
