"""AgentSession: one conversation, its loop, its observers and a queue of messages to send."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import replace

from melgui.core.agent.compaction import Compactor, WindowLookup
from melgui.core.agent.context import ContextTracker
from melgui.core.agent.loop import AgentLoop, CallGuard, TurnResult
from melgui.core.agent.session_hooks import SessionHooks
from melgui.core.hooks.call_steps import AfterStep, CallSteps
from melgui.core.hooks.hooks import Hooks
from melgui.core.protocol.approval import ApprovalPolicy
from melgui.core.protocol.catalog import Role, ToolCatalog
from melgui.core.protocol.content import Part
from melgui.core.protocol.loop_events import (
    ApprovalNeeded,
    BranchReason,
    ContextNotice,
    HistoryBranched,
    LegFinished,
    LoopEvent,
    MessageAdded,
    TurnFailed,
)
from melgui.core.protocol.messages import Conversation, Message
from melgui.core.protocol.tooling import ToolRunner
from melgui.core.protocol.transport import Transport, WireSink
from melgui.core.protocol.views.compacted import NOTE_MARK
from melgui.core.thread.chat_session import Observer
from melgui.core.thread.entries import Pin
from melgui.core.thread.reducer import ThreadReducer
from melgui.core.thread.thread import Thread

log = logging.getLogger(__name__)


class AgentSession:
    """Runs queued user messages as turns, one after another, and fans out loop events.

    An observer that raises is logged and skipped: a broken view never stops the loop.
    The session's `thread` hears each event first (its reducer is the one writer), so an
    observer, or a view subscribed to the thread, reads the event's effect there.
    """

    def __init__(
        self,
        transport: Transport,
        tools: ToolRunner,
        policy: ApprovalPolicy,
        conversation: Conversation | None = None,
        *,
        model: str,
        role: Role,
        cwd: str,
        wire: WireSink | None = None,
        source: str = "main",
        catalog: ToolCatalog | None = None,
        around_call: CallGuard | None = None,
        window_lookup: WindowLookup | None = None,
        agent: str = "",
        hooks: Hooks | None = None,
        after_call: Sequence[AfterStep] = (),
    ) -> None:
        self._observers: list[Observer] = []
        self.thread = Thread()
        self.loop = AgentLoop(
            transport,
            tools,
            policy,
            conversation,
            model=model,
            role=role,
            cwd=cwd,
            emit=self._dispatch,
            wire=wire,
            source=source,
            catalog=catalog,
            around_call=around_call,
            hooks=CallSteps(hooks, after_call) if hooks or after_call else None,
        )
        self.source = source
        self.reducer = ThreadReducer(
            self.thread, source=source, agent=agent, tool_origin=self._tool_origin
        )
        if self.loop.conversation.messages:
            self.reducer.load(self.loop.conversation.messages)
        self.last_result: TurnResult | None = None
        # Context window: the estimate, the window, compaction before legs.
        self.context = ContextTracker()
        self.compactor = Compactor(
            self.loop,
            self.context,
            lookup=window_lookup,
            replace=self._compacted,
            emit=self._dispatch,
            wire=wire,
        )
        self.compactor.pinned = lambda: [pin.text for pin in self.thread.state.pins]
        self.loop.before_leg = self.compactor.before_leg
        # The hooks around turns (those around calls run in the loop).
        self.hooks = SessionHooks(hooks, self.loop, self._dispatch) if hooks else None
        if self.hooks is not None:
            self.compactor.before_compacting = self.hooks.before_compacting
        self._queue: deque[Message | None] = deque()  # None: compact now (/compact)
        self._preface = ""
        self._runner: asyncio.Task[None] | None = None
        self._turn: asyncio.Task[TurnResult] | None = None
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def conversation(self) -> Conversation:
        return self.loop.conversation

    @property
    def busy(self) -> bool:
        return not self._idle.is_set()

    @property
    def queued(self) -> list[str]:
        return [message.content for message in self._queue if message is not None]

    @property
    def queued_messages(self) -> list[Message]:
        """The queued user messages whole (with their images and attached files)."""
        return [message for message in self._queue if message is not None]

    def subscribe(self, observer: Observer) -> Callable[[], None]:
        """Hear every LoopEvent; returns a function that unsubscribes."""
        self._observers.append(observer)

        def unsubscribe() -> None:
            if observer in self._observers:
                self._observers.remove(observer)

        return unsubscribe

    def _dispatch(self, event: LoopEvent) -> None:
        match event:  # the context tracker hears usage first, so its warning follows
            case LegFinished(usage=usage):
                warning = self.context.reported(usage)
            case MessageAdded(message=message) if message.role == "user":
                self.context.new_turn()
                warning = ""
            case ApprovalNeeded(request=request) if self.hooks is not None:
                self.hooks.waiting(request)
                warning = ""
            case _:
                warning = ""
        try:
            self.reducer.apply(event)
        except Exception:
            log.exception("the thread failed on %s", event.kind)
        for observer in list(self._observers):
            try:
                observer(event)
            except Exception:
                log.exception("observer %r failed on %s", observer, event.kind)
        if warning:
            self._dispatch(ContextNotice(warning, "warning"))

    def _tool_origin(self, name: str) -> str:
        tool = self.loop.catalog.get(name)
        return tool.origin if tool is not None else "melgui"

    def submit(self, text: str, parts: tuple[Part, ...] = ()) -> None:
        """Queue a user message (with its images and attached files, if any); it is
        sent when the turns before it have ended."""
        self._queue.append(Message.user(text, parts))
        self._idle.clear()
        if self._runner is None or self._runner.done():
            self._runner = asyncio.get_running_loop().create_task(self._run_queue())

    async def _run_queue(self) -> None:
        try:
            while self._queue:
                next_message = self._queue.popleft()
                if next_message is None:
                    work = self._compact_now()
                else:
                    if self._preface:
                        text = f"{self._preface}\n\n{next_message.content}"
                        next_message, self._preface = replace(next_message, content=text), ""
                    hooked = self.hooks
                    work = (
                        hooked.turn(next_message)
                        if hooked is not None
                        else self.loop.run_turn(next_message)
                    )
                self._turn = asyncio.get_running_loop().create_task(work)
                try:
                    self.last_result = await self._turn
                except asyncio.CancelledError:
                    if self._runner is not None and self._runner.cancelling():
                        raise
                    self.last_result = TurnResult("cancelled")
                except Exception as exc:  # a bug in the loop must not kill the session
                    log.exception("turn failed")
                    message = f"Internal error: {type(exc).__name__}: {exc}"
                    self._dispatch(TurnFailed(message))
                    self.last_result = TurnResult("failed", message)
                finally:
                    self._turn = None
        finally:
            self._idle.set()

    def request_compaction(self) -> None:
        """Compact now (/compact, the button); runs after the turns queued before it."""
        self._queue.append(None)
        self._idle.clear()
        if self._runner is None or self._runner.done():
            self._runner = asyncio.get_running_loop().create_task(self._run_queue())

    async def _compact_now(self) -> TurnResult:
        try:
            await self.compactor.refresh_window()
            await self.compactor.compact(forced=True)
        except asyncio.CancelledError:
            self._dispatch(ContextNotice("Compaction stopped; the conversation is unchanged."))
            raise
        return TurnResult("done")

    def _compacted(self, messages: list[Message], note: str) -> None:
        """Compaction's result; runs inside a turn, between legs, so no busy check."""
        self._replace(messages, "compaction", note)

    def stop(self) -> list[str]:
        """Cancel the running turn; returns the queued messages that were not sent."""
        dropped = self.queued
        self._queue.clear()
        if self._turn is not None and not self._turn.done():
            self._turn.cancel()
        return dropped

    def branch(self, messages: Sequence[Message], reason: BranchReason, note: str = "") -> None:
        """Replace the conversation's messages; the old list stays in history as a branch.

        Only between turns. Raises ValueError when the new list would leave a tool call
        without its result (or a result without its call): the conversation stays valid.
        """
        if self.busy:
            raise RuntimeError("cannot change the history while a turn runs")
        self._replace(messages, reason, note)

    def _replace(self, messages: Sequence[Message], reason: BranchReason, note: str) -> None:
        replacement = Conversation(list(messages))
        if replacement.repair_pairing():
            raise ValueError("the new history would break the pairing of calls and results")
        replaced = tuple(self.loop.conversation.messages)
        self.loop.conversation.messages[:] = replacement.messages
        self._dispatch(HistoryBranched(tuple(replacement.messages), reason, note, replaced))

    @property
    def pins(self) -> tuple[Pin, ...]:
        """The facts every compaction keeps word for word."""
        return self.thread.state.pins

    def pin(self, text: str) -> bool:
        """The person pins a fact; the model reads it with the next message. False when
        it is blank or already pinned."""
        text = text.strip()
        if not self.reducer.pin(Pin(text, "person")):
            return False
        note = f"{NOTE_MARK}The person pinned a fact, kept word for word at every compaction: "
        note += text
        self._preface = f"{self._preface}\n{note}" if self._preface else note
        return True

    def unpin(self, text: str) -> bool:
        return self.reducer.unpin(text)

    def preface(self, note: str) -> None:
        """Start the next user message with `note` (what the app did meanwhile, told plainly
        to the model in the message it reads next; roles keep alternating). Notes given
        before that message are all told, each on its line."""
        self._preface = f"{self._preface}\n{note}" if self._preface else note

    async def wait_idle(self) -> None:
        await self._idle.wait()

    async def aclose(self) -> None:
        """Stop everything this session runs; the conversation stays valid."""
        self.stop()
        if self.hooks is not None:
            self.hooks.close()
        runner = self._runner
        if runner is not None and not runner.done():
            with contextlib.suppress(asyncio.CancelledError):
                await runner
        if self.hooks is not None:
            await self.hooks.ended()
        self._observers.clear()
