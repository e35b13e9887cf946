"""The window's approval settings (per-tool modes, the rules of every project and of this
one) sent to each session it runs in a melgui host, this machine's or a remote folder's
host there, when the session opens and again whenever they change: the host's loop asks
exactly when the window's would (plan mode goes as the session's `plan`, LoopFacts).

    approvals = HostApprovals(desk)
    approvals.track(session)           # sent now (queued until the host has opened it)
"""

from __future__ import annotations

import weakref
from typing import Any

from melgui.core.rules.policy import approval_of
from melgui.desk.desk import Desk
from melgui.host.remote_session import RemoteSession


class HostApprovals:
    def __init__(self, desk: Desk) -> None:
        self.desk = desk
        self._sent: weakref.WeakKeyDictionary[RemoteSession, dict[str, Any]] = (
            weakref.WeakKeyDictionary()
        )
        desk.rules_changed.append(self.changed)

    def track(self, session: RemoteSession) -> None:
        """Send the window's approval settings to `session` now, and on each change."""
        self._send(session, approval_of(self.desk.policy))

    def changed(self) -> None:
        """The desk's modes or lasting rules changed: each session still reachable that
        has other ones is sent them."""
        approval = approval_of(self.desk.policy)
        for session in list(self._sent.keys()):
            if not session.problem and self._sent.get(session) != approval:
                self._send(session, approval)

    def _send(self, session: RemoteSession, approval: dict[str, Any]) -> None:
        self._sent[session] = approval
        session.loop.send({"approval": approval})

    def close(self) -> None:
        if self.changed in self.desk.rules_changed:
            self.desk.rules_changed.remove(self.changed)
