"""The sessions a window makes on its desk: each with a WireRecorder of its own (the wire
log its bridge shows), a main conversation with its own "for this conversation" rules,
and every one on a remote folder's tools once the window is that folder's (`elsewhere`).

A window that is a view of the melgui host (`melgui FOLDER`, by default) has its main
conversation there instead: a RemoteSession (`MainSession` is either). What the host does
not carry for it is said with `not_in_host`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Protocol, cast

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.catalog import Role, ToolCatalog
from melgui.core.protocol.messages import Conversation
from melgui.core.protocol.tooling import ToolRunner
from melgui.core.rules.policy import RulePolicy
from melgui.core.thread.chat_session import ChatSession
from melgui.core.worktrees.model import Worktree
from melgui.desk.desk import Desk
from melgui.host.remote_session import RemoteSession
from melgui.ui.runtime.wire_recorder import WireRecorder

# A remote folder's: the chat's tools, its folder there and its catalog, with the tools of
# the MCP servers there (ui/panes/remote).
Elsewhere = Callable[[], tuple[ToolRunner, str, ToolCatalog]]

# The window's main conversation: in the window, or in the melgui host.
MainSession = AgentSession | RemoteSession


def not_in_host(what: str) -> str:
    """Why `what` cannot be done to a main conversation that runs in the melgui host."""
    return f"Not available while the conversation runs in the melgui host: {what}."


class HostSessions(Protocol):
    """The melgui host, as a window that is its view opens sessions there (HostView):
    this machine's, or the one on a remote folder's machine (`there`: its name), when
    that host's settings say `loop_there`."""

    there: str

    def main(self, *, model: str, role: str, conversation: str | None = None) -> RemoteSession: ...

    def worker(
        self, role: str, model: str, source: str, worktree: Worktree | None = None
    ) -> RemoteSession: ...


class WindowSessions:
    def __init__(self, desk: Desk, host: Callable[[], HostSessions | None] = lambda: None) -> None:
        self.desk = desk
        self.host = host  # the melgui host, when the window is its view
        self.elsewhere: Elsewhere | None = None
        self._recorders: weakref.WeakKeyDictionary[ChatSession, WireRecorder] = (
            weakref.WeakKeyDictionary()
        )
        self._policies: weakref.WeakKeyDictionary[AgentSession, RulePolicy] = (
            weakref.WeakKeyDictionary()
        )

    def main_or_hosted(
        self, conversation: Conversation, cid: str | None, *, model: str, role: Role
    ) -> MainSession:
        """A main conversation: in the melgui host when the window is its view (the
        history's conversation `cid` continued there), else in this window. A remote
        folder's runs in this window unless its host there is the view's; one of this
        machine's history (it has begun) is continued here: the host there has not it."""
        host = self.host()
        if host is None or (self.elsewhere is not None and not host.there):
            return self.main(conversation, model=model, role=role)
        if host.there and conversation.messages:
            return self.main(conversation, model=model, role=role)
        hosted = host.main(model=model, role=role, conversation=None if host.there else cid)
        hosted.conversation.messages[:] = conversation.messages  # drawn until it opens
        return hosted

    def worker_or_hosted(
        self, model: str, role: Role, source: str, worktree: Worktree | None
    ) -> AgentSession:
        """A worker: in the melgui host when the window is its view, else here. (A
        RemoteSession stands in for the AgentSession the panes and reviews take: what
        they use of it, it has.)"""
        host = self.host()
        if host is not None:
            return cast(AgentSession, host.worker(role, model, source, worktree))
        return self.worker(model=model, role=role, source=source, worktree=worktree)

    def main(
        self, conversation: Conversation, *, model: str, role: Role, source: str = "main"
    ) -> AgentSession:
        """A main conversation, with rules of its own; there, when the window is elsewhere."""
        recorder = self._recorder()
        tools, cwd, catalog = self.elsewhere() if self.elsewhere is not None else (None,) * 3
        policy = self.desk.conversation_policy(catalog=catalog)  # its own session rules
        session = self.desk.session(
            conversation, model=model, role=role, wire=recorder, source=source,
            policy=policy, tools=tools, cwd=cwd, catalog=catalog,
        )  # fmt: skip
        self._recorders[session] = recorder
        self._policies[session] = policy
        return session

    def worker(
        self, *, model: str, role: Role, source: str, worktree: Worktree | None
    ) -> AgentSession:
        """A worker on the same connection, folder (or `worktree`) and saved rules; on a
        remote folder's tools, there, when the window is elsewhere (a review's reader)."""
        recorder = self._recorder()
        there = self.elsewhere() if self.elsewhere is not None and worktree is None else None
        tools, cwd, catalog = there if there is not None else (None,) * 3
        session = self.desk.worker_session(
            model=model, role=role, wire=recorder, source=source, worktree=worktree,
            tools=tools, cwd=cwd, catalog=catalog,
        )  # fmt: skip
        self._recorders[session] = recorder
        return session

    def recorder(self, session: ChatSession) -> WireRecorder | None:
        return self._recorders.get(session)

    def policy(self, session: MainSession) -> RulePolicy:
        """`session`'s own rules, or the desk's when it has none of its own (one in the
        melgui host keeps its own there)."""
        if isinstance(session, RemoteSession):
            return self.desk.policy
        return self._policies.get(session, self.desk.policy)

    def _recorder(self) -> WireRecorder:
        api_key = self.desk.api_key
        return WireRecorder(secrets=(api_key,) if api_key else ())
