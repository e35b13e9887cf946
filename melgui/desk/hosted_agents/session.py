"""HostedAgentSession: an ACP agent with AgentSession's surface (observers, a queue of turns,
stop, wait_idle), so the window's SessionBridge, chat view and worker pane drive it.

The agent starts on the first turn (or `start()`, once); a start that fails shows as a
failed turn with the agent's stderr tail (so does every later message: open a new pane).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.content import Part
from melgui.core.protocol.loop_events import ContextNotice, LoopEvent, TurnFailed
from melgui.core.protocol.messages import Conversation, Message
from melgui.core.protocol.views.agent_state import AgentFailed, AuthRequired
from melgui.core.runtime.deadline import within
from melgui.core.thread.thread import Thread
from melgui.desk.hosted_agents.session_book import SessionBook, SessionEntry

if TYPE_CHECKING:
    from melgui.desk.hosted_agents.host import AcpHost

log = logging.getLogger(__name__)


@dataclass
class HostedAgentLoopView:
    """What views read off a session's `loop`: model, folder, role, pending approvals."""

    model: str
    cwd: str
    role: str = "worker"
    pending: list[ApprovalRequest] = field(default_factory=list)

    def pending_approvals(self) -> list[ApprovalRequest]:
        return [request for request in self.pending if request.pending]


class HostedAgentSession:
    """Queued prompts to one ACP agent, one after another; LoopEvents to observers."""

    def __init__(
        self, host: AcpHost, resume: str | None = None, book: SessionBook | None = None
    ) -> None:
        self.host = host
        self.book = book  # where the session is noted, to be reopened later
        self.source = host.source
        self.loop = HostedAgentLoopView(host.command.name, host.cwd, pending=host.gate.pending)
        self.last_stop = ""
        self._resume = resume
        self._started = False
        self._queue: deque[Message] = deque()
        self._runner: asyncio.Task[None] | None = None
        self._turn: asyncio.Task[str] | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self._cancelling: asyncio.Task[None] | None = None
        self._starting: asyncio.Task[None] | None = None
        host.state.listen(self._follow_model)

    @property
    def conversation(self) -> Conversation:
        return self.host.conversation

    @property
    def busy(self) -> bool:
        return not self._idle.is_set()

    @property
    def queued(self) -> list[str]:
        return [message.content for message in self._queue]

    @property
    def queued_messages(self) -> list[Message]:
        return list(self._queue)

    @property
    def thread(self) -> Thread:
        return self.host.thread

    def subscribe(self, observer: Callable[[LoopEvent], None]) -> Callable[[], None]:
        return self.host.subscribe(observer)

    def _follow_model(self) -> None:
        state = self.host.state
        self.loop.model = state.model or state.agent_info or state.name

    # -- turns ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the agent now (else the first message does); raises AgentFailed,
        AuthRequired."""
        if self._started:
            return
        if self._starting is None:  # one start: the pane's and a first message's await it
            self._starting = asyncio.get_running_loop().create_task(self._start_once())
        await asyncio.shield(self._starting)

    async def _start_once(self) -> None:
        await self.host.start(self._resume)
        self._started = True
        self._follow_model()
        await self._note()

    async def sign_in(self, method_id: str) -> None:
        """Sign in with a method the agent offered, then open its session; raises
        AgentFailed, AuthRequired."""
        await self.host.authenticate(method_id)
        await self.host.open_session()
        self.mark_started()

    def mark_started(self) -> None:
        """The session was opened by hand (after a sign-in)."""
        self._started = True
        self._follow_model()

    def submit(self, text: str, parts: tuple[Part, ...] = ()) -> None:
        """Queue a prompt; attached images and files are not sent (named in a notice)."""
        if parts:
            self.host.emit(ContextNotice("Attachments are not sent to ACP agents yet.", "warning"))
        self._queue.append(Message.user(text))
        self._idle.clear()
        if self._runner is None or self._runner.done():
            self._runner = asyncio.get_running_loop().create_task(self._run_queue())

    async def _run_queue(self) -> None:
        try:
            while self._queue:
                message = self._queue.popleft()
                self._turn = asyncio.get_running_loop().create_task(self._one(message.content))
                try:
                    self.last_stop = await self._turn
                except asyncio.CancelledError:
                    if self._runner is not None and self._runner.cancelling():
                        raise
                    self.last_stop = "cancelled"
                finally:
                    self._turn = None
        finally:
            self._idle.set()

    async def _one(self, text: str) -> str:
        try:
            await self.start()
        except AuthRequired as exc:
            self.host.emit(TurnFailed(f"{exc}. Choose a sign-in method in the pane."))
            return "failed"
        except AgentFailed as exc:
            self.host.emit(TurnFailed(str(exc)))
            return "failed"
        stop = await self.host.prompt(text)
        await self._note()
        return stop

    async def _note(self) -> None:
        """Keep the session in the book (agents that can load or resume it only)."""
        host, state = self.host, self.host.state
        if self.book is None or not state.session_id or not (state.can_load or state.can_resume):
            return
        first = next((m.content for m in host.conversation.messages if m.role == "user"), "")
        entry = SessionEntry(
            host.command.name,
            host.command.text(),
            host.cwd,
            state.session_id,
            state.title or _first_line(first),
        )
        try:
            await asyncio.to_thread(self.book.record, entry)
        except OSError as exc:  # the history of sessions is a convenience: say so, go on
            log.warning("cannot note the ACP session: %s", exc)

    def stop(self) -> list[str]:
        """Cancel the running turn (session/cancel); returns the queued texts not sent."""
        dropped = self.queued
        self._queue.clear()
        if self._turn is not None and not self._turn.done():
            try:
                self._cancelling = asyncio.get_running_loop().create_task(self.host.cancel())
            except RuntimeError:  # no loop: the app is ending
                self.host.kill_now()
        return dropped

    def request_compaction(self) -> None:
        self.host.emit(ContextNotice("This agent manages its own context; nothing compacted."))

    def branch(self, messages: Sequence[Message], reason: str, note: str = "") -> None:
        raise RuntimeError("an ACP agent keeps its own history; it cannot be edited here")

    def preface(self, note: str) -> None:
        return None

    async def wait_idle(self) -> None:
        await self._idle.wait()

    async def aclose(self) -> None:
        """Cancel the turn, end the agent (open permission requests answered cancelled)."""
        self._queue.clear()
        await self.host.cancel()
        runner = self._runner
        if runner is not None and not runner.done():
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await within(asyncio.shield(runner), 3)
            runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await runner
        await self.host.aclose()


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0][:80] if lines else ""
