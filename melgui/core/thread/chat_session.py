"""A conversation as the views drive it (`ChatSession`): melgui's own AgentSession, a
session the melgui host runs (RemoteSession), or an ACP agent hosted in a pane. Each
keeps a thread model, which views read; the rest are the commands a view sends."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.content import Part
from melgui.core.protocol.loop_events import BranchReason, LoopEvent
from melgui.core.protocol.messages import Conversation, Message
from melgui.core.thread.thread import Thread

Observer = Callable[[LoopEvent], None]


class LoopView(Protocol):
    """What views read off a session's loop."""

    @property
    def model(self) -> str: ...

    @property
    def cwd(self) -> str: ...

    @property
    def role(self) -> str: ...

    def pending_approvals(self) -> list[ApprovalRequest]: ...


class ChatSession(Protocol):
    """A conversation as the window's views drive it: melgui's own AgentSession, one the
    melgui host runs (RemoteSession), or an ACP agent hosted in a pane (desk.hosted_agents).
    Each keeps a thread model."""

    @property
    def source(self) -> str: ...

    @property
    def busy(self) -> bool: ...

    @property
    def queued(self) -> list[str]: ...

    @property
    def queued_messages(self) -> list[Message]: ...

    @property
    def conversation(self) -> Conversation: ...

    @property
    def thread(self) -> Thread: ...

    @property
    def loop(self) -> LoopView: ...

    def subscribe(self, observer: Observer) -> Callable[[], None]: ...

    def submit(self, text: str, parts: tuple[Part, ...] = ()) -> None: ...

    def stop(self) -> list[str]: ...

    def request_compaction(self) -> None: ...

    def branch(self, messages: Sequence[Message], reason: BranchReason, note: str = "") -> None: ...

    def preface(self, note: str) -> None: ...

    async def wait_idle(self) -> None: ...

    async def aclose(self) -> None: ...
