"""Thread: one conversation's entries and state, changed only through numbered changes.

The session's reducer (`reducer.ThreadReducer`) is the one writer; views subscribe and
hear each `Change` after it is applied, so `thread.entries` already shows it. A copy
elsewhere is `Thread.from_snapshot(snapshot)` fed with `apply(change)`; it reads the same.

The pending question's answer channel (the loop's `ApprovalRequest`) stays with the
thread that runs the loop: `answer(call_id, decision)` resolves it there, and a copy
hands the answer to its `on_answer` (the socket back to the host).
"""

from __future__ import annotations

import logging
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import assert_never

from melgui.core.protocol.approval import ApprovalRequest, Decision
from melgui.core.thread.changes import (
    Change,
    EntriesReplaced,
    EntryAdded,
    EntryChanged,
    Snapshot,
    StateChanged,
    TextAppended,
)
from melgui.core.thread.entries import (
    AssistantEntry,
    CallEntry,
    Entry,
    ReasoningEntry,
    ThreadState,
)

log = logging.getLogger(__name__)

Listener = Callable[[Change], None]
Answer = Callable[[str, Decision], None]
KEEP_CHANGES = 20_000  # changes kept for `since`; an older reader takes a snapshot


class SeqGap(ValueError):
    """A copy was given a change that does not follow the last one it applied."""


class Thread:
    def __init__(
        self, thread_id: str = "", *, keep: int = KEEP_CHANGES, on_answer: Answer | None = None
    ) -> None:
        self.thread_id = thread_id or uuid.uuid4().hex
        self.seq = 0
        self.state = ThreadState()
        self._entries: list[Entry] = []
        self._calls: dict[str, int] = {}  # call id -> index of its entry
        self._requests: dict[str, ApprovalRequest] = {}
        self._listeners: list[Listener] = []
        self._text_listeners: list[Listener] = []  # those that hear streamed text too
        self._log: deque[Change] = deque(maxlen=keep)
        self._ids = 0
        # Streamed pieces not yet joined into their entry's text, by index: joining on
        # each piece would copy a long answer once per piece.
        self._pieces: dict[int, list[str]] = {}
        self.on_answer = on_answer

    # -- reading ---------------------------------------------------------------------

    @property
    def entries(self) -> Sequence[Entry]:
        """The entries in order (a live view: read, do not change it)."""
        if self._pieces:
            self._join_pieces()
        return self._entries

    def call(self, call_id: str) -> CallEntry | None:
        index = self._calls.get(call_id)
        if index is None:
            return None
        entry = self._entries[index]
        assert isinstance(entry, CallEntry)
        return entry

    def call_index(self, call_id: str) -> int | None:
        return self._calls.get(call_id)

    def calls(self) -> list[CallEntry]:
        return [e for e in self._entries if isinstance(e, CallEntry)]

    def request(self, call_id: str) -> ApprovalRequest | None:
        """The loop's question for a waiting call (only where the loop runs)."""
        return self._requests.get(call_id)

    def snapshot(self) -> Snapshot:
        self._join_pieces()
        return Snapshot(self.thread_id, self.seq, tuple(self._entries), self.state)

    def since(self, seq: int) -> list[Change] | None:
        """The changes after `seq`, in order; None when they are no longer all kept (the
        reader takes a snapshot instead)."""
        if seq >= self.seq:
            return []
        if not self._log or self._log[0].seq > seq + 1:
            return None
        return [c for c in self._log if c.seq > seq]

    def subscribe(self, listener: Listener, *, text: bool = True) -> Callable[[], None]:
        """Hear every change after it is applied; returns a function that unsubscribes.
        A listener that raises is logged and skipped. `text=False`: not each streamed
        piece (TextAppended, one per token); such a listener reads the streamed entry's
        text from `entries` when it wants it."""
        self._listeners.append(listener)
        if text:
            self._text_listeners.append(listener)

        def unsubscribe() -> None:
            for listeners in (self._listeners, self._text_listeners):
                if listener in listeners:
                    listeners.remove(listener)

        return unsubscribe

    # -- answering -------------------------------------------------------------------

    def answer(self, call_id: str, decision: Decision) -> None:
        """A person's answer to a waiting call; ignored once answered."""
        request = self._requests.get(call_id)
        if request is None:
            if self.on_answer is not None:
                self.on_answer(call_id, decision)
            return
        if request.pending:
            request.future.set_result(decision)

    def set_draft(self, call_id: str, text: str) -> None:
        """The deny reason being typed for a waiting call."""
        request = self._requests.get(call_id)
        if request is not None:
            request.draft = text
        entry = self.call(call_id)
        if entry is not None and entry.question is not None and entry.question.draft != text:
            self.change(replace(entry, question=replace(entry.question, draft=text)))

    # -- writing (the reducer; a copy only through `apply`) ----------------------------

    def new_id(self) -> str:
        self._ids += 1
        return f"e{self._ids}"

    def add(self, entry: Entry) -> int:
        index = len(self._entries)
        self._commit(EntryAdded(self.seq + 1, index, entry))
        return index

    def change(self, entry: Entry) -> None:
        """Replace the entry with `entry`'s id (a call's by its call id)."""
        index = self._index_of(entry)
        self._commit(EntryChanged(self.seq + 1, index, entry))

    def append_text(self, index: int, text: str) -> None:
        streamed = self._entries[index]
        reasoning = isinstance(streamed, ReasoningEntry)
        self._commit(TextAppended(self.seq + 1, index, text, reasoning))

    def replace_all(self, entries: Sequence[Entry], reason: str) -> None:
        self._commit(EntriesReplaced(self.seq + 1, tuple(entries), reason))

    def set_state(self, state: ThreadState) -> None:
        if state != self.state:
            self._commit(StateChanged(self.seq + 1, state))

    def hold(self, request: ApprovalRequest) -> None:
        self._requests[request.call.id] = request

    def release(self, call_id: str) -> None:
        self._requests.pop(call_id, None)

    # -- copies ----------------------------------------------------------------------

    @classmethod
    def from_snapshot(cls, snapshot: Snapshot, *, on_answer: Answer | None = None) -> Thread:
        thread = cls(snapshot.thread_id, on_answer=on_answer)
        thread.seq = snapshot.seq
        thread.state = snapshot.state
        thread._set_entries(snapshot.entries)
        return thread

    def apply(self, change: Change, *, first: int | None = None) -> None:
        """A change made elsewhere, next in order (else SeqGap: take a snapshot). `first`:
        where a run its source merged into this one began (streamed text sent once per
        frame); the run must follow this thread's last change, and ends at `change.seq`."""
        start = change.seq if first is None else first
        if start != self.seq + 1 or change.seq < start:
            raise SeqGap(f"change {start} does not follow {self.seq}")
        self._commit(change)

    def restart(self, snapshot: Snapshot) -> None:
        """Start again from `snapshot`, whatever this copy held: listeners hear it as a
        load of the whole list (EntriesReplaced, reason "load"), then the state if it
        differs. Changes kept from before it no longer chain: `since` then says so."""
        self.thread_id = snapshot.thread_id
        self._log.clear()
        self.seq = snapshot.seq - 1
        self._commit(EntriesReplaced(snapshot.seq, snapshot.entries, "load"))
        if snapshot.state != self.state:
            self.seq = snapshot.seq - 1
            self._commit(StateChanged(snapshot.seq, snapshot.state))

    # -- inside ----------------------------------------------------------------------

    def _index_of(self, entry: Entry) -> int:
        if isinstance(entry, CallEntry) and entry.call_id in self._calls:
            return self._calls[entry.call_id]
        for index in range(len(self._entries) - 1, -1, -1):
            if self._entries[index].id == entry.id:
                return index
        raise KeyError(f"no entry {entry.id!r}")

    def _join_pieces(self) -> None:
        for index, pieces in self._pieces.items():
            streamed = self._entries[index]
            assert isinstance(streamed, AssistantEntry | ReasoningEntry)
            self._entries[index] = replace(streamed, text=streamed.text + "".join(pieces))
        self._pieces.clear()

    def _set_entries(self, entries: Sequence[Entry]) -> None:
        self._pieces.clear()
        self._entries = list(entries)
        self._calls = {
            e.call_id: i for i, e in enumerate(self._entries) if isinstance(e, CallEntry)
        }
        numbers = [int(e.id[1:]) for e in self._entries if e.id[1:].isdigit()]
        self._ids = max([self._ids, *numbers])

    def _commit(self, change: Change) -> None:
        match change:
            case EntryAdded(index=index, entry=entry):
                assert index == len(self._entries)
                self._entries.append(entry)
                if isinstance(entry, CallEntry):
                    self._calls[entry.call_id] = index
                if entry.id[1:].isdigit():
                    self._ids = max(self._ids, int(entry.id[1:]))
            case EntryChanged(index=index, entry=entry):
                self._pieces.pop(index, None)  # the entry is replaced whole
                self._entries[index] = entry
            case TextAppended(index=index, text=text):
                assert isinstance(self._entries[index], AssistantEntry | ReasoningEntry)
                self._pieces.setdefault(index, []).append(text)
            case EntriesReplaced(entries=entries):
                self._set_entries(entries)
            case StateChanged(state=state):
                self.state = state
            case _:
                assert_never(change)
        self.seq = change.seq
        self._log.append(change)
        heard = self._text_listeners if type(change) is TextAppended else self._listeners
        for listener in list(heard):
            try:
                listener(change)
            except Exception:
                log.exception("thread listener %r failed on %s", listener, change.kind)
