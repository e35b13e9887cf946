"""ThreadReducer: the one place the agent loop's events become a thread's changes.

The session applies every LoopEvent here before any other observer hears it, so a view
reading the thread in its own observer already sees the event's effect.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import assert_never

from melgui.core.protocol.approval import ApprovalRequest, Decision
from melgui.core.protocol.call_life import AUTO_BY, decision_text
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.loop_events import (
    ApprovalNeeded,
    AssistantReasoning,
    AssistantText,
    ContextNotice,
    HistoryBranched,
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
from melgui.core.protocol.messages import Message
from melgui.core.protocol.tooling import HookRun
from melgui.core.protocol.tools.pins import PIN_FACT
from melgui.core.thread.entries import (
    AssistantEntry,
    BranchEntry,
    CallEntry,
    CallResult,
    Entry,
    NoteEntry,
    Origin,
    Pin,
    PlanEntry,
    Question,
    ReasoningEntry,
    Timing,
    TurnOutcome,
    UserEntry,
)
from melgui.core.thread.thread import Thread

STOPPED_TEXT = "Stopped: the answer before this point may be incomplete."
MELGUI = "melgui"  # the origin of the app's own tools, as the catalog names it

# A tool's origin as the catalog names it: "melgui", "mcp:<server>" or "acp:<agent>".
ToolOrigin = Callable[[str], str]
# A call's hook runs and the lines the steps after it added (a language server's diagnostics).
CallSteps = tuple[tuple[HookRun, ...], tuple[str, ...]]


class ThreadReducer:
    """Applies one session's loop events to its thread.

    `source` is the session's ("main" or a pane's title); `agent` names an ACP agent when
    the session is one hosted in a pane; `tool_origin` says which MCP server serves a tool.
    """

    def __init__(
        self,
        thread: Thread,
        *,
        source: str = "main",
        agent: str = "",
        tool_origin: ToolOrigin | None = None,
    ) -> None:
        self.thread = thread
        self.source = source
        self.agent = agent
        self._tool_origin = tool_origin
        self._text: int | None = None  # index of the assistant entry streaming this leg
        self._reasoning: int | None = None
        self._leg = 0
        self._legs_before = 0  # legs of a stored conversation the loop goes on from
        self._replies: dict[str, Message] = {}  # results in before their call's end

    def origin(self, name: str) -> Origin:
        """Where a call of tool `name` comes from (the catalog's "mcp:<server>" or
        "acp:<agent>" names a tool's server; else the session says)."""
        tool = self._tool_origin(name) if self._tool_origin is not None else MELGUI
        prefix, _, server = tool.partition(":")
        if prefix == "mcp" and server:
            return Origin("mcp", server, self.source)
        if prefix == "acp" and server:
            return Origin("acp", server, self.source)
        if self.agent:
            return Origin("acp", self.agent, self.source)
        if self.source == "main":
            return Origin("main", "", self.source)
        return Origin("worker", self.source, self.source)

    def load(self, messages: Sequence[Message]) -> None:
        """Start from a stored conversation (entries from its messages, no events)."""
        self._legs_before = sum(1 for m in messages if m.role == "assistant")
        self.thread.replace_all(self._entries_of(messages), "load")

    def restore(self, steps: Mapping[str, CallSteps]) -> None:
        """Put back what a stored conversation kept of its calls beyond the messages: by
        call id, the hooks that ran around each and the lines steps after it added."""
        entries = list(self.thread.entries)
        changed = False
        for index, entry in enumerate(entries):
            if not isinstance(entry, CallEntry) or entry.call_id not in steps:
                continue
            hooks, notes = steps[entry.call_id]
            if (hooks, notes) != (entry.hooks, entry.notes):
                entries[index] = replace(entry, hooks=hooks, notes=notes)
                changed = True
        if changed:
            self.thread.replace_all(entries, "load")

    def apply(self, event: LoopEvent) -> None:
        thread = self.thread
        match event:
            case LegStarted(leg=leg, attempt=attempt):
                self._leg = self._legs_before + leg
                self._text = self._reasoning = None
                state = replace(
                    thread.state, status="running", outcome="", leg=leg, attempt=attempt
                )
                thread.set_state(state)
            case AssistantText(text=text):
                self._text = self._stream(self._text, text, reasoning=False)
            case AssistantReasoning(text=text):
                self._reasoning = self._stream(self._reasoning, text, reasoning=True)
            case MessageAdded(message=message):
                self._message(message)
            case ToolCallRequested(call=call):
                thread.add(self._new_call(call))
            case ApprovalNeeded(request=request):
                self._asked(request)
            case ToolCallStarted(
                call=call, allowed_by=allowed_by, judgement=judgement, ran_with=ran_with
            ):
                entry = self._call(call)
                decision = entry.decision
                if entry.question is None and not decision:
                    decision = f"{AUTO_BY}{allowed_by}" if allowed_by else "auto"
                thread.change(
                    replace(
                        entry,
                        phase="running",
                        decision=decision,
                        question=None,
                        judgement=judgement or entry.judgement,
                        ran_with=ran_with,
                    )
                )
            case ToolCallFinished() as finished:
                self._finished(finished)
            case LegFinished(usage=usage):
                state = thread.state
                total = state.usage + usage if usage is not None else state.usage
                thread.set_state(replace(state, legs=state.legs + 1, usage=total, last_usage=usage))
            case Retrying(attempt=attempt, delay=delay, reason=reason):
                thread.add(
                    NoteEntry(thread.new_id(), "retry", reason, attempt=attempt, delay=delay)
                )
            case HistoryRepaired(repair=repair):
                thread.add(NoteEntry(thread.new_id(), "repair", repair.describe()))
            case HistoryBranched(messages=messages, reason=reason, note=note, replaced=replaced):
                self._text = self._reasoning = None
                entries = self._entries_of(messages)
                branch = BranchEntry(
                    thread.new_id(), reason, note, len(messages), replaced, tuple(messages)
                )
                entries.append(branch)
                thread.replace_all(entries, reason)
            case ContextNotice(text=text, level=level):
                thread.add(NoteEntry(thread.new_id(), "context", text, level))
            case TurnFinished():
                self._turn_ended("done")
            case TurnFailed(message=message, status=status):
                thread.add(NoteEntry(thread.new_id(), "error", message, "warning", status=status))
                self._turn_ended("failed")
            case TurnCancelled():
                thread.add(NoteEntry(thread.new_id(), "stopped", STOPPED_TEXT))
                self._turn_ended("cancelled")
            case _:
                assert_never(event)

    def _turn_ended(self, outcome: TurnOutcome) -> None:
        state = self.thread.state
        ended = replace(state, status="idle", outcome=outcome, turns=state.turns + 1)
        self.thread.set_state(ended)

    # -- messages ----------------------------------------------------------------------

    def _stream(self, index: int | None, text: str, *, reasoning: bool) -> int:
        thread = self.thread
        if index is not None:
            thread.append_text(index, text)
            return index
        cls = ReasoningEntry if reasoning else AssistantEntry
        return thread.add(cls(thread.new_id(), text, streaming=True, leg=self._leg))

    def _message(self, message: Message) -> None:
        thread = self.thread
        if message.role == "user":
            thread.add(UserEntry(thread.new_id(), message))
        elif message.role == "assistant":
            # What was not streamed is added (reasoning first); what was ends, the answer
            # first (a view closing the leg's message on it then has its final text). The
            # answer's entry holds the message whole.
            if self._reasoning is None and message.reasoning:
                thread.add(ReasoningEntry(thread.new_id(), message.reasoning, leg=self._leg))
            if self._text is None:
                answer_id = thread.new_id()
                thread.add(
                    AssistantEntry(answer_id, message.content, leg=self._leg, message=message)
                )
            self._settle(self._text, message.content, message)
            self._settle(self._reasoning, message.reasoning)
            self._text = self._reasoning = None
        elif message.role == "tool" and message.tool_call_id is not None:
            self._reply(message.tool_call_id, message)

    def _settle(self, index: int | None, text: str, message: Message | None = None) -> None:
        """The leg's message is in: the streamed entry ends with its final text."""
        if index is not None:
            streamed = self.thread.entries[index]
            if isinstance(streamed, AssistantEntry):
                streamed = replace(streamed, message=message)
            assert isinstance(streamed, AssistantEntry | ReasoningEntry)
            self.thread.change(replace(streamed, text=text, streaming=False))

    def _reply(self, call_id: str, message: Message) -> None:
        """A call's result message: on its entry with the call's end (the loop adds it
        just before saying the call finished; a hosted agent just after)."""
        entry = self.thread.call(call_id)
        if entry is not None and entry.result is not None and entry.reply is None:
            self.thread.change(replace(entry, reply=message))
        else:
            self._replies[call_id] = message

    def _entries_of(self, messages: Sequence[Message]) -> list[Entry]:
        """Entries for a message list; a call the thread already shows keeps its entry.

        Reopening a long conversation builds every entry before its first paint (10,000
        messages, 4,000 calls): a call's entry is made once, whole, and a tool's origin
        asked once per name."""
        thread = self.thread
        results = {m.tool_call_id: m for m in messages if m.role == "tool"}
        origins: dict[str, Origin] = {}
        shown = bool(thread.entries)  # else no call can keep its entry (a load's)
        entries: list[Entry] = []
        leg = 0
        for message in messages:
            if message.role == "user":
                entries.append(UserEntry(thread.new_id(), message))
            elif message.role == "assistant":
                leg += 1
                if message.reasoning:
                    entries.append(ReasoningEntry(thread.new_id(), message.reasoning, leg=leg))
                answer_id = thread.new_id()
                entries.append(AssistantEntry(answer_id, message.content, leg=leg, message=message))
                for call in message.tool_calls:
                    kept = thread.call(call.id) if shown else None
                    if kept is None:
                        origin = origins.get(call.name)
                        if origin is None:
                            origin = origins[call.name] = self.origin(call.name)
                        kept = self._stored_call(call, results.get(call.id), leg, origin)
                    entries.append(kept)
        return entries

    # -- calls -------------------------------------------------------------------------

    def _new_call(self, call: ToolCall) -> CallEntry:
        arguments, problem = call.decode()
        return CallEntry(
            self.thread.new_id(),
            call,
            arguments=arguments,
            problem=problem or "",
            origin=self.origin(call.name),
            leg=self._leg,
        )

    def _stored_call(
        self, call: ToolCall, result: Message | None, leg: int, origin: Origin
    ) -> CallEntry:
        """A stored call's entry, with its result message when it has one."""
        arguments, problem = call.decode()
        if result is None:
            return CallEntry(
                self.thread.new_id(),
                call,
                arguments=arguments,
                problem=problem or "",
                origin=origin,
                leg=leg,
            )
        status = result.status or "ok"
        return CallEntry(
            self.thread.new_id(),
            call,
            phase=status,
            arguments=arguments,
            problem=problem or "",
            result=CallResult(status, result.content),
            origin=origin,
            leg=leg,
            reply=result,
        )

    def _call(self, call: ToolCall) -> CallEntry:
        """The call's entry; one is added for a call the thread has not heard of."""
        entry = self.thread.call(call.id)
        if entry is None:
            self.thread.add(self._new_call(call))
            entry = self.thread.call(call.id)
            assert entry is not None
        return entry

    def _asked(self, request: ApprovalRequest) -> None:
        thread = self.thread
        entry = self._call(request.call)
        question = Question(request.options, request.draft, request.preview)
        thread.hold(request)
        thread.change(
            replace(entry, phase="waiting", judgement=request.judgement, question=question)
        )
        call_id = request.call.id
        request.future.add_done_callback(lambda future: self._decided(call_id, future))

    def _decided(self, call_id: str, future: asyncio.Future[Decision]) -> None:
        self.thread.release(call_id)
        entry = self.thread.call(call_id)
        if entry is None:
            return
        if future.cancelled() or future.exception() is not None:  # the turn was stopped
            if entry.question is not None:
                self.thread.change(replace(entry, question=None))
            return
        self.thread.change(replace(entry, decision=decision_text(future.result()), question=None))

    def _finished(self, event: ToolCallFinished) -> None:
        thread = self.thread
        call = event.call
        entry = self._call(call)
        thread.release(call.id)
        thread.change(
            replace(
                entry,
                phase=event.status,
                question=None,
                result=CallResult(event.status, event.content, event.parts),
                timing=Timing(event.duration, event.waited),
                judgement=event.judgement or entry.judgement,
                checkpoint=event.checkpoint if event.checkpoint is not None else entry.checkpoint,
                hooks=event.hooks,
                notes=event.notes,
                reply=self._replies.pop(call.id, entry.reply),
            )
        )
        if call.name == "write_plan" and event.status == "ok" and entry.arguments is not None:
            title = str(entry.arguments.get("title", ""))
            markdown = str(entry.arguments.get("markdown", ""))
            thread.add(PlanEntry(thread.new_id(), title, markdown, call.id))
        ran = entry.ran_with if entry.ran_with is not None else entry.arguments
        if call.name == PIN_FACT.name and event.status == "ok" and ran is not None:
            fact = ran.get("fact")
            if isinstance(fact, str):
                self.pin(Pin(fact.strip(), "model"))

    # -- pins ------------------------------------------------------------------------

    def pin(self, pin: Pin) -> bool:
        """Pin a fact (once; a blank one is not pinned); False when nothing changed."""
        pins = self.thread.state.pins
        if not pin.text or any(p.text == pin.text for p in pins):
            return False
        self.set_pins((*pins, pin))
        return True

    def unpin(self, text: str) -> bool:
        pins = self.thread.state.pins
        kept = tuple(p for p in pins if p.text != text)
        if kept == pins:
            return False
        self.set_pins(kept)
        return True

    def set_pins(self, pins: Sequence[Pin]) -> None:
        """The conversation's pins are now `pins` (a stored conversation's, reopened)."""
        self.thread.set_state(replace(self.thread.state, pins=tuple(pins)))
