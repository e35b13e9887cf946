"""What happens to a thread, as numbered values: each change has the thread's next `seq`.

A copy of a thread elsewhere (a window attached to an agent host) starts from a
`Snapshot` (the entries and state at one `seq`) and applies the changes that follow it,
in order, with no gap: `Thread.from_snapshot(snapshot)` then `thread.apply(change)`.
`codec.change_to_json` / `change_from_json` give each change as plain JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from melgui.core.thread.entries import Entry, ThreadState


@dataclass(frozen=True, slots=True)
class EntryAdded:
    seq: int
    index: int  # always the end of the list: the number of entries before it
    entry: Entry
    kind: Literal["entry_added"] = "entry_added"


@dataclass(frozen=True, slots=True)
class EntryChanged:
    """The entry at `index` is now `entry` (same id)."""

    seq: int
    index: int
    entry: Entry
    kind: Literal["entry_changed"] = "entry_changed"


@dataclass(frozen=True, slots=True)
class TextAppended:
    """Streamed text added to the assistant (or, with `reasoning`, the reasoning) entry at
    `index`; a reader need not look the entry up for each piece."""

    seq: int
    index: int
    text: str
    reasoning: bool = False
    kind: Literal["text_appended"] = "text_appended"


@dataclass(frozen=True, slots=True)
class EntriesReplaced:
    """The whole list is now `entries`: a branch (compaction, rewind, edit, retry; the
    last entry is then its BranchEntry) or a conversation loaded from the store
    (`reason` "load")."""

    seq: int
    entries: tuple[Entry, ...]
    reason: str
    kind: Literal["entries_replaced"] = "entries_replaced"


@dataclass(frozen=True, slots=True)
class StateChanged:
    seq: int
    state: ThreadState
    kind: Literal["state_changed"] = "state_changed"


Change = EntryAdded | EntryChanged | TextAppended | EntriesReplaced | StateChanged


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A thread at `seq`: what a copy starts from; the change numbered `seq + 1` follows."""

    thread_id: str
    seq: int
    entries: tuple[Entry, ...]
    state: ThreadState
