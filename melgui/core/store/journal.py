"""The Journal: writes a session's conversation to the store as it happens.

    journal = Journal(store, conversation_id, session.conversation)
    journal.attach(session)                 # and pass wire=journal.record_wire

Everything comes from the session's thread model: the messages whole (a user entry's, the
message an answer's entry holds once its leg is in, the result message a call's entry
holds), the streamed text, a tool call's life (requested / awaiting approval / approved
/ denied / finished, and the arguments it ran with when a hook changed them), the notes,
the plans, the pinned facts, a branch's new list, the legs and the turn's end. Each is
handed at once to the store's writer thread (`store.write_behind`), which writes them
in order: encoding, redacting, indexing an answer for search and committing never run
on the loop's thread, and whatever else uses the store waits for them first, so it reads
what the journal was told. Streaming text is batched: the journal does not hear each
streamed piece; while entries stream, a timer reads their text from the thread and
rewrites the partial assistant row in place every `flush_interval` seconds, so text
that arrived is on disk within that time (and the writer's few milliseconds) even if
the stream stalls. Wire log lines are batched the same way, handed over with the next
flush in chunks of at most `wire_chunk` lines; a leg's lines are handed over once its
end is heard. When a turn ends, and in `flush` and `close`, the journal waits until
everything handed over is written: a turn that ended is in the history. Its last wire
lines and its answer's search indexing are handed over after that wait and not waited
for, so a stream shorter than the interval pays for no wire log writing while it
streams, nor does its end wait on it. A storage failure never reaches the loop: it is
reported once through `on_problem` and in `problem`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import ParamSpec, Protocol, assert_never

from melgui.core.protocol.call_life import CallPhase
from melgui.core.protocol.events import WireEntry
from melgui.core.protocol.messages import Conversation, Message
from melgui.core.store.store import Store
from melgui.core.thread.changes import (
    Change,
    EntriesReplaced,
    EntryAdded,
    EntryChanged,
    StateChanged,
    TextAppended,
)
from melgui.core.thread.entries import (
    AssistantEntry,
    BranchEntry,
    CallEntry,
    Entry,
    NoteEntry,
    ReasoningEntry,
    ThreadState,
    UserEntry,
    leg_started,
    turn_ended,
)
from melgui.core.thread.thread import Thread

FLUSH_INTERVAL = 0.5  # seconds; the promise is "at least every second"
# Wire log lines in one stored chunk at most: fewer, larger chunks cost the writer less,
# and a bounded chunk holds the interpreter (which the loop needs) for a bounded time
# while it is encoded. The flush interval bounds when a chunk is written.
WIRE_CHUNK = 8192
P = ParamSpec("P")
# Each flush rewrites the whole partial answer: past this many characters the interval
# grows with its size, so a huge answer costs linear, not quadratic, writing.
PARTIAL_STEP = 1024 * 1024


class Recorded(Protocol):
    """A session as the journal records it (core.agent's AgentSession)."""

    @property
    def thread(self) -> Thread: ...


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
        wire_chunk: int = WIRE_CHUNK,
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
        self._source: Thread | None = None  # the thread followed: its streamed text
        self._streams: list[int] = []  # the entries streaming into the partial answer
        self._partial_seq: int | None = None
        self._wire: list[WireEntry] = []  # lines of leg `_wire_leg` not handed over yet
        self._wire_chunk = wire_chunk
        self._leg_wire: asyncio.Handle | None = None  # hands over an ended leg's lines
        self._writes: list[Future[object]] = []  # handed to the writer thread, not yet seen done
        self._wire_leg = 0
        self._last_flush = clock()
        self._timer: asyncio.TimerHandle | None = None
        self._checkpoint: asyncio.Future[object] | None = None
        self._calls: dict[str, tuple[CallPhase, str]] = {}  # phase and decision stored
        self._answers: set[str] = set()  # answer entries whose message is stored
        self._replies: set[str] = set()  # calls whose result message is stored
        self._turn = ThreadState()
        self._unindexed = False  # an answer is stored but not yet handed to the search index
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

    def record_wire(self, entry: WireEntry) -> None:
        """A WireSink: keeps one wire log line, written with the next batch."""
        self._wire.append(entry)  # one line of 20,000 a long answer: nothing more, mostly
        # Only the loop's thread writes; an entry from elsewhere waits for the next flush.
        if self._timer is None and threading.get_ident() == self._thread and not self._arm_timer():
            self._flush_if_due()

    # -- the thread --------------------------------------------------------------------

    def attach(self, session: Recorded) -> Callable[[], None]:
        """Record `session` from its thread; returns a function that stops."""
        return self.follow(session.thread)

    def follow(self, thread: Thread) -> Callable[[], None]:
        """Record what `thread` does from now on; returns a function that stops."""
        self.track(thread)
        return thread.subscribe(self.hear, text=False)

    def track(self, thread: Thread) -> None:
        """Go on from `thread` as it is now; the caller hands over each change after this
        (`hear`), streamed pieces or not: the streamed text is read from `thread`."""
        self._source = thread
        self._turn = thread.state
        self._wire_leg = thread.state.leg
        self._held(thread.entries)

    def hear(self, change: Change) -> None:
        """Record one change of the thread; never raises for storage trouble."""
        if type(change) is TextAppended and self._timer is not None:  # per token: no I/O
            return
        try:
            self._hear(change)
        except sqlite3.Error as exc:
            self._report(exc)

    def _write(self, write: Callable[P, object], /, *args: P.args, **kwargs: P.kwargs) -> None:
        """Hand one write to the store's writer thread (the arguments must not change
        after: copies of lists the journal goes on changing)."""
        self._seen(wait=False)
        future = self.store.write_behind(write, *args, **kwargs)
        if future is not None:
            self._writes.append(future)
            with contextlib.suppress(RuntimeError):  # no loop: the next write reports it
                loop = asyncio.get_running_loop()
                future.add_done_callback(lambda done: self._failed(loop, done))

    def _failed(self, loop: asyncio.AbstractEventLoop, done: Future[object]) -> None:
        """On the writer thread: a write that failed is reported on the loop, at once."""
        if done.exception() is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(self._seen, False)

    def _hear(self, change: Change) -> None:
        match change:
            case TextAppended():
                self._stream()
            case (
                EntryAdded(index=index, entry=AssistantEntry(streaming=True))
                | EntryAdded(index=index, entry=ReasoningEntry(streaming=True))
            ):
                self._streams.append(index)
                self._stream()
            case EntryAdded(entry=UserEntry(message=message)):
                self._add_message(message)
            case (
                EntryAdded(entry=AssistantEntry() as entry)
                | EntryChanged(entry=AssistantEntry() as entry)
            ):
                self._answered(entry)
            case EntryAdded(entry=CallEntry() as entry):
                self._write(self.store.calls.requested, self.conversation_id, entry.call)
                self._calls[entry.call_id] = ("requested", "")
            case EntryChanged(entry=CallEntry() as entry):
                self._call_changed(entry)
            case EntryAdded(entry=NoteEntry() as note):
                self._note(note)
            case EntriesReplaced(entries=entries, reason=reason):
                marker = entries[-1] if entries else None
                if reason != "load" and isinstance(marker, BranchEntry):
                    self._branched(marker)
                self._held(entries)
            case StateChanged(state=state):
                self._state(state)
            case _:
                pass

    def _answered(self, entry: AssistantEntry) -> None:
        """The leg's message is in: it takes the place of the partial answer row."""
        if entry.message is not None and not entry.streaming and entry.id not in self._answers:
            self._answers.add(entry.id)
            self._add_message(entry.message)

    def _state(self, state: ThreadState) -> None:
        before, self._turn = self._turn, state
        if state.pins != before.pins:
            pins = [(pin.text, pin.by) for pin in state.pins]
            self._write(self.store.set_pins, self.conversation_id, pins)
        started = leg_started(before, state)
        ended = turn_ended(before, state)
        if started:  # the last leg's lines, under its number
            self._flush_wire()
            self._wire_leg = state.leg
            self._drop_partial()
        elif state.legs != before.legs and not ended:
            self._hand_over_leg_wire()
        if ended:
            if state.outcome == "done":
                self._flush(wire=False)
                self._checkpoint_soon()
            self._streams.clear()  # nothing streams between turns: the timer stops
            # A turn that ended is in the history, for other processes too (a host's
            # view reads it once the session is idle): the one wait of a turn, for its
            # messages. Its answer's search indexing and its last wire lines are handed
            # over after it, and not waited for.
            self._seen(wait=True)
            self._index()
            self._write_wire()

    def _hand_over_leg_wire(self) -> None:
        """A leg ended: its lines are handed over once the changes of its end are heard
        (its message, and the turn's end when the leg ends the turn: then after the
        turn's wait, which so waits on its messages only)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop: at once
            self._write_wire()
            return
        if self._leg_wire is None:
            self._leg_wire = loop.call_soon(self._leg_wire_due)

    def _leg_wire_due(self) -> None:
        self._leg_wire = None
        self._write_wire()

    def _branched(self, marker: BranchEntry) -> None:
        """The message list was replaced: the old one stays in the store as a branch."""
        self._flush()
        self._mirror = list(marker.current)
        self._partial_seq = None
        current = list(marker.current)
        self._write(self.store.branch, self.conversation_id, current, marker.reason, marker.note)

    def _held(self, entries: Sequence[Entry]) -> None:
        """Which of the messages these entries hold are stored already (the very ones the
        journal's list has): only the others are written, once they are in."""
        stored = {id(message) for message in self._mirror}
        self._streams.clear()  # their places in the list no longer hold
        self._answers = {
            e.id for e in entries if isinstance(e, AssistantEntry) and id(e.message) in stored
        }
        self._replies = {
            e.call_id for e in entries if isinstance(e, CallEntry) and id(e.reply) in stored
        }

    def _stream(self) -> None:
        """Text streams: it is written with the next flush."""
        if self._timer is None and not self._arm_timer():
            self._flush_if_due()

    def _streamed(self) -> tuple[str, str]:
        """The answer's and the reasoning's text streamed so far, as the thread holds it."""
        texts: list[str] = []
        thoughts: list[str] = []
        entries = self._source.entries if self._source is not None else ()
        for index in self._streams:
            entry = entries[index] if index < len(entries) else None
            if isinstance(entry, AssistantEntry):
                texts.append(entry.text)
            elif isinstance(entry, ReasoningEntry):
                thoughts.append(entry.text)
        return "".join(texts), "".join(thoughts)

    def _call_changed(self, entry: CallEntry) -> None:
        cid, call_id = self.conversation_id, entry.call_id
        if entry.reply is not None and call_id not in self._replies:
            self._replies.add(call_id)
            self._add_message(entry.reply)
        phase, decision = self._calls.get(call_id, ("requested", ""))
        calls = self.store.calls
        if entry.phase == "waiting" and phase != "waiting":
            self._write(calls.phase, cid, call_id, "waiting")
        if entry.decision and entry.decision != decision:
            self._write(calls.decided, cid, call_id, entry.decision)
        if entry.phase == "running" and phase != "running":
            self._write(calls.phase, cid, call_id, "running")
            if entry.ran_with is not None:
                self._write(calls.ran_with, cid, call_id, json.dumps(entry.ran_with))
        self._calls[call_id] = (entry.phase, entry.decision)
        if entry.result is not None and phase in ("requested", "waiting", "running"):
            self._write(self._finished, entry)

    def _finished(self, entry: CallEntry) -> None:
        """A call's end, with its steps and the plan it wrote: one commit."""
        cid, call_id, result = self.conversation_id, entry.call_id, entry.result
        assert result is not None
        with self.store.transaction():
            self.store.calls.finished(cid, call_id, result.status, result.content, entry.timing.ran)
            if entry.hooks or entry.notes:
                self.store.calls.steps(cid, call_id, entry.hooks, entry.notes)
            if entry.name == "write_plan" and result.status == "ok":
                arguments = entry.arguments or {}
                title = str(arguments.get("title", ""))
                markdown = str(arguments.get("markdown", ""))
                self.store.add_plan(cid, title, markdown, call_id=call_id)

    def _note(self, note: NoteEntry) -> None:
        cid = self.conversation_id
        match note.note:
            case "error" | "stopped":
                self._flush()
                self._write(self.store.add_note, cid, note.note, note.text)
                self._checkpoint_soon()
            case "retry":
                text = f"attempt {note.attempt + 1} after: {note.text}"
                self._write(self.store.add_note, cid, "retry", text)
            case "context":
                if note.level == "warning":
                    self._write(self.store.add_note, cid, "context", note.text)
            case "repair":  # the loop repaired its list just so: the same repair here
                Conversation(self._mirror).repair_pairing()
                self._write(self._repaired, list(self._mirror), note.text)
            case _:
                assert_never(note.note)

    def _repaired(self, messages: list[Message], note: str) -> None:
        with self.store.transaction():
            self.store.replace_messages(self.conversation_id, messages)
            self.store.add_note(self.conversation_id, "repair", note)

    def _add_message(self, message: Message) -> None:
        self._cancel_timer()
        self._index()
        seq = len(self._mirror)
        self._mirror.append(message)
        # An assistant message takes the place of its partial row; anything else comes after.
        if self._partial_seq is not None and message.role != "assistant":
            self._write(self.store.drop_messages_from, self.conversation_id, self._partial_seq)
        # An answer's text (the turn's last, the largest) is indexed for search in a write
        # of its own, handed over after the turn's wait (`_index`): the turn's end waits
        # not on it. A leg's calls without text cost the index nothing: indexed at once.
        answer = message.role == "assistant" and bool(message.content)
        self._write(self.store.put_message, self.conversation_id, seq, message, indexed=not answer)
        self._unindexed = self._unindexed or answer
        self._streams.clear()
        self._partial_size = 0
        self._partial_seq = None

    # -- batching ----------------------------------------------------------------------

    def flush(self) -> None:
        """Write the streamed text so far and the buffered wire log now, and wait until
        everything handed over is written (an answer's search indexing too)."""
        self._flush()
        self._index()
        self._seen(wait=True)

    def _index(self) -> None:
        """Hand the stored answers' search indexing to the writer."""
        if self._unindexed:
            self._unindexed = False
            self._write(self.store.index_pending, self.conversation_id)

    def _flush(self, *, wire: bool = True) -> None:
        self._cancel_timer()
        self._last_flush = self._clock()
        try:
            if self._streams:
                self._write_partial()
            if wire:
                self._flush_wire()
        except sqlite3.Error as exc:
            self._report(exc)

    def _write_partial(self) -> None:
        text, reasoning = self._streamed()
        if len(text) + len(reasoning) == self._partial_size:  # nothing new since written
            return
        seq = len(self._mirror)
        partial = Message.assistant(text, reasoning=reasoning)
        self._write(self.store.put_message, self.conversation_id, seq, partial, partial=True)
        self._partial_seq = seq
        self._partial_size = len(text) + len(reasoning)
        self.flushes += 1

    def _write_wire(self) -> None:
        try:
            self._flush_wire()
        except sqlite3.Error as exc:
            self._report(exc)

    def _flush_wire(self) -> None:
        """Hand over the lines kept, in chunks of at most `wire_chunk` lines."""
        if self._wire:
            wire, self._wire = self._wire, []
            size = self._wire_chunk
            chunks = [wire[start : start + size] for start in range(0, len(wire), size)]
            self._write(self.store.wire.add_chunks, self.conversation_id, self._wire_leg, chunks)

    def _seen(self, wait: bool) -> None:
        """Report the first failure of the writes done (`wait`: of all, once written)."""
        still: list[Future[object]] = []
        for future in self._writes:
            if not wait and not future.done():
                still.append(future)
                continue
            problem = future.exception()
            if isinstance(problem, sqlite3.Error):
                self._report(problem)
            elif problem is not None:
                raise problem
        self._writes = still

    def _drop_partial(self) -> None:
        """A new leg (or a retry) starts: a partial row left over is not part of it."""
        self._streams.clear()
        self._partial_size = 0
        if self._partial_seq is not None:
            self._write(self.store.drop_messages_from, self.conversation_id, self._partial_seq)
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
        self._flush()
        if self._streams:  # still streaming: the next flush is due in an interval
            self._arm_timer()

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
