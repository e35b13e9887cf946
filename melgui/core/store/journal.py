"""The Journal: writes a session's conversation to the store as it happens.

    journal = Journal(store, conversation_id, session.conversation)
    journal.attach(session)                 # and pass wire=journal.record_wire

The messages come from the loop's events (a user message sent, an assistant message with
its calls at the end of its leg, a branch: the thread has no whole assistant message);
the streamed text, a tool call's life (requested / awaiting approval / approved / denied
/ finished), the notes, the plans and the turn's end come from the session's thread
model. Each is committed at once. Streaming text is batched: the
partial assistant row is rewritten in place at most every `flush_interval` seconds, and
a timer makes sure text that arrived is on disk within that time even if the stream
stalls. Wire log
lines are batched the same way. A storage failure never reaches the loop: it is
reported once through `on_problem` and in `problem`.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from typing import Protocol, assert_never

from melgui.core.protocol.call_life import CallPhase
from melgui.core.protocol.events import WireEntry
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
from melgui.core.protocol.messages import Conversation, Message
from melgui.core.store.store import Store
from melgui.core.thread.changes import (
    Change,
    EntryAdded,
    EntryChanged,
    StateChanged,
    TextAppended,
)
from melgui.core.thread.entries import (
    AssistantEntry,
    CallEntry,
    NoteEntry,
    ReasoningEntry,
    ThreadState,
)
from melgui.core.thread.thread import Thread

FLUSH_INTERVAL = 0.5  # seconds; the promise is "at least every second"
WIRE_CHUNK = 1000  # wire log lines written together at most
# Each flush rewrites the whole partial answer: past this many characters the interval
# grows with its size, so a huge answer costs linear, not quadratic, writing.
PARTIAL_STEP = 1024 * 1024


class Recorded(Protocol):
    """A session as the journal records it (core.agent's AgentSession)."""

    @property
    def thread(self) -> Thread: ...

    def subscribe(self, observer: Callable[[LoopEvent], None]) -> Callable[[], None]: ...


class Journal:
    """An AgentSession observer that keeps one stored conversation up to date.

    `stored`: the messages the store holds for `conversation_id`, when the caller knows
    them (a conversation just resumed); the journal then reads none of them again.
    """

    def __init__(
        self,
        store: Store,
        conversation_id: str,
        conversation: Conversation | None = None,
        *,
        stored: Sequence[Message] | None = None,
        flush_interval: float = FLUSH_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        on_problem: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.conversation_id = conversation_id
        self.problem: str | None = None
        self.flushes = 0  # partial-text writes, for benchmarks and tests
        self._interval = flush_interval
        self._partial_size = 0  # characters of the partial answer last written
        self._clock = clock
        self._on_problem = on_problem
        self._text: list[str] = []
        self._reasoning: list[str] = []  # streamed with the text, written with it
        self._text_dirty = False
        self._partial_seq: int | None = None
        self._wire: list[WireEntry] = []  # entries of leg `_wire_leg` not written yet
        self._wire_leg = 0
        self._last_flush = clock()
        self._timer: asyncio.TimerHandle | None = None
        self._checkpoint: asyncio.Future[None] | None = None
        self._calls: dict[str, tuple[CallPhase, str]] = {}  # phase and decision stored
        self._turn = ThreadState()
        self._thread = threading.get_ident()
        self._mirror: list[Message] = self._start_mirror(conversation, stored)

    def _start_mirror(
        self, conversation: Conversation | None, known: Sequence[Message] | None
    ) -> list[Message]:
        """The messages as stored; a given conversation that differs is written over them."""
        try:
            # Known rows are trusted while their count is right (a journal still ending
            # its turn may have added some since they were read: then read them all).
            if known is not None and self.store.message_count(self.conversation_id) == len(known):
                stored = list(known)
            else:
                stored = [s.message for s in self.store.messages(self.conversation_id)]
            if conversation is None:
                return stored
            mirror = list(conversation.messages)
            if stored != mirror:
                self.store.replace_messages(self.conversation_id, mirror)
            return mirror
        except sqlite3.Error as exc:
            self._report(exc)
            return list(conversation.messages) if conversation is not None else []

    # -- the observer ----------------------------------------------------------------

    def observe(self, event: LoopEvent) -> None:
        """Record one loop event; never raises for storage trouble."""
        try:
            self._record(event)
        except sqlite3.Error as exc:
            self._report(exc)

    def record_wire(self, entry: WireEntry) -> None:
        """A WireSink: keeps one wire log line, written with the next batch."""
        wire = self._wire
        wire.append(entry)
        # Only the loop's thread writes; an entry from elsewhere waits for the next flush.
        if self._timer is None or len(wire) >= WIRE_CHUNK:
            if threading.get_ident() != self._thread:
                return
            if len(wire) >= WIRE_CHUNK:  # small chunks: no long pause at the end of a leg
                self._write_wire()
            elif not self._arm_timer():
                self._flush_if_due()

    def _record(self, event: LoopEvent) -> None:
        cid = self.conversation_id
        match event:
            case LegStarted(leg=leg):
                self._flush_wire()
                self._wire_leg = leg
                self._drop_partial()
            case MessageAdded(message=message):
                self._add_message(message)
            case LegFinished():
                self._flush_wire()
            case HistoryRepaired(repair=repair):
                conversation = Conversation(self._mirror)
                conversation.repair_pairing()
                with self.store.transaction():
                    self.store.replace_messages(cid, self._mirror)
                    self.store.add_note(cid, "repair", repair.describe())
            case HistoryBranched(messages=messages, reason=reason, note=note):
                self.flush()
                self._mirror = list(messages)
                self._partial_seq = None
                self.store.branch(cid, messages, reason, note)
            case (
                AssistantText() | AssistantReasoning()
                | ToolCallRequested() | ApprovalNeeded() | ToolCallStarted() | ToolCallFinished()
                | Retrying() | ContextNotice() | TurnFinished() | TurnFailed() | TurnCancelled()
            ):  # fmt: skip
                pass  # the thread says these (`hear`)
            case _:
                assert_never(event)

    # -- the thread: calls, notes, plans, turn ends ------------------------------------

    def attach(self, session: Recorded) -> Callable[[], None]:
        """Record `session`: its messages from its events, the rest from its thread;
        returns a function that stops."""
        stop_events = session.subscribe(self.observe)
        stop_thread = self.follow(session.thread)

        def detach() -> None:
            stop_events()
            stop_thread()

        return detach

    def follow(self, thread: Thread) -> Callable[[], None]:
        """Record the streamed text, calls, notes, plans and turn ends of `thread`;
        returns a function that stops."""
        self._turn = thread.state
        return thread.subscribe(self.hear)

    def hear(self, change: Change) -> None:
        """Record one change of the thread; never raises for storage trouble."""
        try:
            self._hear(change)
        except sqlite3.Error as exc:
            self._report(exc)

    def _hear(self, change: Change) -> None:
        match change:
            case TextAppended(text=text, reasoning=reasoning):
                self._stream(text, reasoning=reasoning)
            case EntryAdded(entry=AssistantEntry(streaming=True, text=text)):
                self._stream(text, reasoning=False)
            case EntryAdded(entry=ReasoningEntry(streaming=True, text=text)):
                self._stream(text, reasoning=True)
            case EntryAdded(entry=CallEntry() as entry):
                self.store.calls.requested(self.conversation_id, entry.call)
                self._calls[entry.call_id] = ("requested", "")
            case EntryChanged(entry=CallEntry() as entry):
                self._call_changed(entry)
            case EntryAdded(entry=NoteEntry() as note):
                self._note(note)
            case StateChanged(state=state):
                ended = state.turns != self._turn.turns
                self._turn = state
                if ended and state.outcome == "done":
                    self.flush()
                    self._checkpoint_soon()
            case _:
                pass

    def _stream(self, text: str, *, reasoning: bool) -> None:
        """A streamed piece (per token: no I/O, no clock); written with the next flush."""
        (self._reasoning if reasoning else self._text).append(text)
        self._text_dirty = True
        if self._timer is None and not self._arm_timer():
            self._flush_if_due()

    def _call_changed(self, entry: CallEntry) -> None:
        cid, call_id = self.conversation_id, entry.call_id
        phase, decision = self._calls.get(call_id, ("requested", ""))
        if entry.phase == "waiting" and phase != "waiting":
            self.store.calls.phase(cid, call_id, "waiting")
        if entry.decision and entry.decision != decision:
            self.store.calls.decided(cid, call_id, entry.decision)
        if entry.phase == "running" and phase != "running":
            self.store.calls.phase(cid, call_id, "running")
        self._calls[call_id] = (entry.phase, entry.decision)
        result = entry.result
        if result is None or phase not in ("requested", "waiting", "running"):
            return
        with self.store.transaction():
            self.store.calls.finished(cid, call_id, result.status, result.content, entry.timing.ran)
            if entry.name == "write_plan" and result.status == "ok":
                arguments = entry.arguments or {}
                title = str(arguments.get("title", ""))
                markdown = str(arguments.get("markdown", ""))
                self.store.add_plan(cid, title, markdown, call_id=call_id)

    def _note(self, note: NoteEntry) -> None:
        cid = self.conversation_id
        match note.note:
            case "error" | "stopped":
                self.flush()
                self.store.add_note(cid, note.note, note.text)
                self._checkpoint_soon()
            case "retry":
                self.store.add_note(cid, "retry", f"attempt {note.attempt + 1} after: {note.text}")
            case "context":
                if note.level == "warning":
                    self.store.add_note(cid, "context", note.text)
            case "repair":
                pass  # written with the repaired messages
            case _:
                assert_never(note.note)

    def _add_message(self, message: Message) -> None:
        self._cancel_timer()
        seq = len(self._mirror)
        self._mirror.append(message)
        # An assistant message takes the place of its partial row; anything else comes after.
        if self._partial_seq is not None and message.role != "assistant":
            self.store.drop_messages_from(self.conversation_id, self._partial_seq)
        self.store.put_message(self.conversation_id, seq, message)
        self._text.clear()
        self._reasoning.clear()
        self._text_dirty = False
        self._partial_size = 0
        self._partial_seq = None

    # -- batching ----------------------------------------------------------------------

    def flush(self) -> None:
        """Write the streamed text so far and the buffered wire log now."""
        self._cancel_timer()
        self._last_flush = self._clock()
        try:
            if self._text_dirty and (self._text or self._reasoning):
                seq = len(self._mirror)
                text, reasoning = "".join(self._text), "".join(self._reasoning)
                self._text[:] = [text] if text else []
                self._reasoning[:] = [reasoning] if reasoning else []
                partial = Message.assistant(text, reasoning=reasoning)
                self.store.put_message(self.conversation_id, seq, partial, partial=True)
                self._partial_seq = seq
                self._partial_size = len(text) + len(reasoning)
                self._text_dirty = False
                self.flushes += 1
            self._flush_wire()
        except sqlite3.Error as exc:
            self._report(exc)

    def _write_wire(self) -> None:
        try:
            self._flush_wire()
        except sqlite3.Error as exc:
            self._report(exc)

    def _flush_wire(self) -> None:
        if self._wire:
            entries, self._wire = self._wire, []
            self.store.wire.add_chunk(self.conversation_id, self._wire_leg, entries)

    def _drop_partial(self) -> None:
        """A new leg (or a retry) starts: a partial row left over is not part of it."""
        self._text.clear()
        self._reasoning.clear()
        self._text_dirty = False
        self._partial_size = 0
        if self._partial_seq is not None:
            self.store.drop_messages_from(self.conversation_id, self._partial_seq)
            self._partial_seq = None

    def _checkpoint_soon(self) -> None:
        """Between turns, fold the WAL into the database in a worker thread."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._checkpoint is None or self._checkpoint.done():
            self._checkpoint = loop.run_in_executor(None, self.store.checkpoint)

    def _arm_timer(self) -> bool:
        """Schedule a flush within the interval; False when there is no running loop."""
        if self._timer is not None:
            return True
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False
        delay = max(0.0, self._due_interval() - (self._clock() - self._last_flush))
        self._timer = loop.call_later(delay, self._on_timer)
        return True

    def _flush_if_due(self) -> None:
        """Without a loop (a synchronous caller) the events themselves pace the flushes."""
        if self._clock() - self._last_flush >= self._due_interval():
            self.flush()

    def _due_interval(self) -> float:
        return self._interval * max(1.0, self._partial_size / PARTIAL_STEP)

    def _on_timer(self) -> None:
        self._timer = None
        self.flush()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def close(self) -> None:
        """Write what is buffered; call when the session ends."""
        self.flush()

    def _report(self, exc: sqlite3.Error) -> None:
        first = self.problem is None
        self.problem = f"History not saved: {exc}."
        if first and self._on_problem is not None:
            self._on_problem(self.problem)
