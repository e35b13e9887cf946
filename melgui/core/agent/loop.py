"""The agent loop: legs until Done, every tool call answered once (docs/wire-protocol.md §5).

No Qt and no HTTP here: a Transport yields events, an ApprovalPolicy (or a person,
through an ApprovalRequest) decides, a ToolRunner runs, and observers hear LoopEvents.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, replace
from typing import Any, assert_never

from melgui.core.agent.call_judge import judge
from melgui.core.agent.plan_mode import PlanMode
from melgui.core.protocol.approval import (
    ApprovalPolicy,
    ApprovalRequest,
    Approve,
    Deny,
    decision_of,
    denial_text,
)
from melgui.core.protocol.catalog import Role, ToolCatalog
from melgui.core.protocol.events import (
    Done,
    ReasoningDelta,
    StreamError,
    TextDelta,
    ToolCall,
    ToolCalls,
    Usage,
)
from melgui.core.protocol.judgement import Judgement
from melgui.core.protocol.loop_events import (
    ApprovalNeeded,
    AssistantReasoning,
    AssistantText,
    HistoryRepaired,
    LegFinished,
    LegStarted,
    LoopEvent,
    MessageAdded,
    Retrying,
    ToolCallFinished,
    ToolCallRequested,
    ToolCallStarted,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
)
from melgui.core.protocol.messages import Conversation, Message, ResultStatus
from melgui.core.protocol.tooling import (
    RUNNING_CALL,
    CallHooks,
    HookRun,
    ResultPart,
    ToolOutcome,
    ToolRunner,
)
from melgui.core.protocol.transport import LegRequest, ToolChoice, Transport, WireSink

Emit = Callable[[LoopEvent], None]
Sleep = Callable[[float], Awaitable[None]]
# Entered around running an approved call (a checkpoint of the files, say): given the call
# and the session's source; its exit runs when the result is in, even after a cancel.
CallGuard = Callable[[ToolCall, str], AbstractAsyncContextManager[object]]

CANCELLED_RESULT = "The user stopped this call before it finished."
SKIPPED_RESULT = "Not run: the user stopped the turn before this call started."
PERMISSION_HOOK = "a PermissionRequest hook"  # who answered for the person
YIELD_EVERY = 0.003  # seconds of uninterrupted streaming before yielding to the event loop


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of a leg that failed before any event arrived (never after a tool ran)."""

    attempts: int = 4  # total tries of one leg
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_retry_after: float = 60.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return max(0.0, min(retry_after, self.max_retry_after))
        return min(self.base_delay * 2 ** (attempt - 1), self.max_delay)


@dataclass(frozen=True)
class TurnResult:
    """How a turn ended: "done", "failed" or "cancelled", with a message when it failed."""

    outcome: str
    message: str = ""
    status: int | None = None


class AgentLoop:
    """Runs turns of one conversation. One turn at a time; cancel the task to stop it."""

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
        emit: Emit | None = None,
        wire: WireSink | None = None,
        retry: RetryPolicy | None = None,
        sleep: Sleep = asyncio.sleep,
        source: str = "main",
        max_legs_per_turn: int = 100,
        catalog: ToolCatalog | None = None,
        around_call: CallGuard | None = None,
        hooks: CallHooks | None = None,
    ) -> None:
        self.transport = transport
        self.hooks = hooks
        self.plan = PlanMode()
        self.around_call = around_call
        self.tools = tools
        self.catalog = catalog or ToolCatalog()
        self.policy = policy
        self.conversation = conversation if conversation is not None else Conversation()
        self.model = model
        self.role: Role = role
        self.cwd = cwd
        self.tool_choice: ToolChoice = "auto"
        self.legs = 0
        self.usage = Usage()
        self._emit_fn = emit
        self._wire = wire
        self._retry = retry or RetryPolicy()
        self._sleep = sleep
        self._source = source
        self._max_legs = max_legs_per_turn
        self._waiting: list[ApprovalRequest] = []
        # Context window: awaited before every leg; the session's compactor.
        self.before_leg: Callable[[], Awaitable[None]] | None = None

    def pending_approvals(self) -> list[ApprovalRequest]:
        """The approvals this loop waits for now, oldest first."""
        return list(self._waiting)

    def _emit(self, event: LoopEvent) -> None:
        if self._emit_fn is not None:
            self._emit_fn(event)

    def _append(self, message: Message) -> None:
        self.conversation.append(message)
        self._emit(MessageAdded(message))

    async def run_turn(self, text: str | Message | None) -> TurnResult:
        """Add `text` as a user message (unless None) and run legs until the turn ends.

        A Message is added as it is (a user message with images or attached files).

        Cancelling the task running this coroutine stops the leg or tool in flight,
        answers every call left open, and re-raises CancelledError.
        """
        if isinstance(text, Message):
            self._append(text)
        elif text is not None:
            self._append(Message.user(text))
        try:
            return await self._run_legs()
        except asyncio.CancelledError:
            self._close_open_calls()
            self._emit(TurnCancelled())
            raise

    async def _run_legs(self) -> TurnResult:
        for _ in range(self._max_legs):
            repair = self.conversation.repair_pairing()
            if repair:
                self._emit(HistoryRepaired(repair))
            if self.before_leg is not None:  # context window: compact before a leg that overflows
                await self.before_leg()
            ended = await self._run_one_leg()
            if ended is not None:
                return ended
        message = f"Stopped after {self._max_legs} legs in one turn without a final answer."
        self._emit(TurnFailed(message))
        return TurnResult("failed", message)

    async def _run_one_leg(self) -> TurnResult | None:
        """One leg with its retries; None means tools ran and another leg follows."""
        attempt = 0
        while True:
            attempt += 1
            self._emit(LegStarted(self.legs + 1, attempt))
            parts = _LegText()
            try:
                final = await self._stream_leg(parts)
            except asyncio.CancelledError:
                if parts:
                    self._append(parts.message())
                raise
            match final:
                case StreamError() as error:
                    if parts:
                        self._append(parts.message())
                    retry = (
                        error.retryable
                        and not error.events_seen
                        and not parts
                        and attempt < self._retry.attempts
                    )
                    if retry:
                        delay = self._retry.delay(attempt, error.retry_after)
                        self._emit(Retrying(attempt, delay, error.message))
                        await self._sleep(delay)
                        continue
                    self._emit(TurnFailed(error.message, error.status))
                    return TurnResult("failed", error.message, error.status)
                case Done() as done:
                    self._count_leg(done.usage)
                    self._append(parts.message())
                    self._emit(TurnFinished(self.legs, self.usage))
                    return TurnResult("done")
                case ToolCalls() as calls:
                    self._count_leg(calls.usage)
                    unique = _unique_ids(calls.calls)
                    self._append(parts.message(unique))
                    for call in unique:
                        self._emit(ToolCallRequested(call))
                    for call in unique:
                        await self._answer(call)
                    return None
                case _:
                    assert_never(final)

    async def _stream_leg(self, parts: _LegText) -> StreamError | Done | ToolCalls:
        request = LegRequest(
            model=self.model,
            messages=self.conversation.to_wire(),
            tools=self.plan.offered(self.catalog.for_role(self.role)),
            tool_role=self.role,
            cwd=self.cwd,
            tool_choice=self.tool_choice,
        )
        stream = self.transport.stream(request, self._wire)
        next_yield = time.monotonic() + YIELD_EVERY
        try:
            async for event in stream:
                match event:
                    case TextDelta(text=text) | ReasoningDelta(text=text):
                        if text:
                            reasoning = isinstance(event, ReasoningDelta)
                            parts.add(text, reasoning)
                            self._emit(
                                AssistantReasoning(text) if reasoning else AssistantText(text)
                            )
                        if time.monotonic() >= next_yield:
                            # A fast server delivers thousands of buffered deltas without
                            # a pause; let the event loop (the window) run in between.
                            await asyncio.sleep(0)
                            next_yield = time.monotonic() + YIELD_EVERY
                    case ToolCalls() | Done() | StreamError():
                        return event
                    case _:
                        assert_never(event)
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
        return StreamError("The stream ended before the leg finished.", events_seen=bool(parts))

    def _count_leg(self, usage: Usage | None) -> None:
        self.legs += 1
        if usage is not None:
            self.usage = self.usage + usage
        self._emit(LegFinished(self.legs, usage))

    async def _answer(self, call: ToolCall) -> None:
        """Decide on, run and answer one call; exactly one result, whatever happens."""
        started = time.monotonic()
        waited = 0.0
        arguments, problem = self._parse(call)
        if problem is not None:
            self._finish(call, "error", problem, started)
            return
        assert arguments is not None
        tool = self.catalog.get(call.name)
        judged = await judge(  # once: the call keeps it
            call, arguments, self.policy, tool=tool, plan=self.plan, hooks=self.hooks
        )
        given = arguments
        judgement, arguments, runs = judged.judgement, judged.arguments, judged.runs
        decision = decision_of(judgement)
        if decision is None and self.hooks is not None:  # would ask: a hook may answer
            asked = await self.hooks.permission_request(call, arguments)
            runs += asked.runs
            if asked.verdict == "allow":
                arguments = dict(asked.arguments) if asked.arguments is not None else arguments
                decision = Approve(rule=PERMISSION_HOOK)
            elif asked.verdict == "deny":
                decision = Deny(f"{PERMISSION_HOOK}: {asked.reason}")
        ran_with = arguments if arguments != given else None
        allowed_by = decision.rule if isinstance(decision, Approve) else ""
        if decision is None:
            request = ApprovalRequest(call, arguments, source=self._source, judgement=judgement)
            self._waiting.append(request)
            self._emit(ApprovalNeeded(request))
            try:
                decision = await request.future
            except asyncio.CancelledError:
                self._finish(call, "cancelled", CANCELLED_RESULT, started, hooks=runs)
                raise
            finally:
                self._waiting.remove(request)
            self.policy.record(call, judgement, decision)
            waited, started = time.monotonic() - started, time.monotonic()
        match decision:
            case Deny(reason=reason):
                text = denial_text(call.name, reason)
                self._finish(
                    call, "denied", text, started, waited=waited, judgement=judgement, hooks=runs
                )
                return
            case Approve():
                pass
            case _:
                assert_never(decision)
        self._emit(ToolCallStarted(call, allowed_by, judgement, ran_with))
        taken: list[int] = []  # the checkpoint the guard took, if any
        try:
            outcome = await self._run_guarded(call, arguments, taken)
        except asyncio.CancelledError:
            self._finish(
                call,
                "cancelled",
                CANCELLED_RESULT,
                started,
                waited=waited,
                judgement=judgement,
                checkpoint=taken[0] if taken else None,
                hooks=runs,
            )
            raise
        except Exception as exc:  # a tool's bug must not end the conversation
            outcome = ToolOutcome.error(f"{call.name} failed: {type(exc).__name__}: {exc}")
        status: ResultStatus = "ok" if outcome.status == "ok" else "error"
        content, parts = outcome.content, outcome.parts
        notes: tuple[str, ...] = ()
        checkpoint = taken[0] if taken else None
        if self.hooks is not None:
            try:
                after = await self.hooks.after_call(call, arguments, status, content)
            except asyncio.CancelledError:
                self._finish(
                    call, status, content, started, parts,
                    waited=waited, judgement=judgement, checkpoint=checkpoint, hooks=runs,
                )  # fmt: skip
                raise
            runs, notes = runs + after.runs, after.notes
            if after.context:
                content = f"{content.rstrip()}\n\n{after.context}"
        self._finish(
            call, status, content, started, parts,
            waited=waited, judgement=judgement, checkpoint=checkpoint, hooks=runs, notes=notes,
        )  # fmt: skip

    async def _run_guarded(
        self, call: ToolCall, arguments: dict[str, Any], taken: list[int]
    ) -> ToolOutcome:
        guard = (
            self.around_call(call, self._source)
            if self.around_call is not None
            else contextlib.nullcontext()
        )
        async with guard as checkpoint:
            if isinstance(checkpoint, int):
                taken.append(checkpoint)
            token = RUNNING_CALL.set((self._source, call.id, call.name))
            try:
                return await self.tools.run(call.name, arguments)
            finally:
                RUNNING_CALL.reset(token)

    def _parse(self, call: ToolCall) -> tuple[dict[str, Any] | None, str | None]:
        # Plan mode does not hide a tool here: a write asked for while planning is
        # refused by its judgement, with the reason, not called unknown.
        allowed = {tool.name for tool in self.catalog.for_role(self.role)}
        if call.name not in allowed or not self.tools.knows(call.name):
            if gone := self.catalog.gone(call.name):
                return None, gone
            names = ", ".join(sorted(n for n in allowed if self.tools.knows(n)))
            return None, f"Unknown tool {call.name!r} for role {self.role}. Available: {names}."
        return call.decode()

    def _finish(
        self,
        call: ToolCall,
        status: ResultStatus,
        content: str,
        started: float,
        parts: tuple[ResultPart, ...] = (),
        *,
        waited: float = 0.0,
        judgement: Judgement | None = None,
        checkpoint: int | None = None,
        hooks: tuple[HookRun, ...] = (),
        notes: tuple[str, ...] = (),
    ) -> None:
        self._append(Message.tool_result(call.id, content, status))
        ran = time.monotonic() - started
        finished = ToolCallFinished(call, status, content, ran, parts, waited)
        self._emit(
            replace(finished, judgement=judgement, checkpoint=checkpoint, hooks=hooks, notes=notes)
        )

    def _close_open_calls(self) -> None:
        """After a cancel: every call still without a result gets one, in order."""
        messages = self.conversation.messages
        for call_id in self.conversation.pending_call_ids():
            call = next(
                c
                for m in reversed(messages)
                if m.role == "assistant"
                for c in m.tool_calls
                if c.id == call_id
            )
            self._append(Message.tool_result(call_id, SKIPPED_RESULT, "cancelled"))
            self._emit(ToolCallFinished(call, "cancelled", SKIPPED_RESULT, 0.0))


class _LegText:
    """The answer and the reasoning one leg has streamed so far."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []

    def add(self, text: str, reasoning: bool) -> None:
        (self.reasoning if reasoning else self.text).append(text)

    def __bool__(self) -> bool:
        return bool(self.text or self.reasoning)

    def message(self, calls: tuple[ToolCall, ...] = ()) -> Message:
        return Message.assistant("".join(self.text), calls, "".join(self.reasoning))


def _unique_ids(calls: tuple[ToolCall, ...]) -> tuple[ToolCall, ...]:
    """Pairing needs distinct ids; a server that repeats one gets a suffix on the repeat."""
    seen: set[str] = set()
    unique: list[ToolCall] = []
    for call in calls:
        call_id = call.id or "call"
        candidate, n = call_id, 1
        while candidate in seen:
            n += 1
            candidate = f"{call_id}_{n}"
        seen.add(candidate)
        unique.append(
            call if candidate == call.id else ToolCall(candidate, call.name, call.arguments)
        )
    return tuple(unique)
