"""A session's numbered changes: records gathered during a frame, merged where they can
be (text deltas of one kind), numbered when the frame ends, kept in memory for recent
reattaches and in the journal for everything.

    log = ChangeLog("s1", journal)
    log.add({"type": "prompt", "text": "hi"}); log.add({"type": "idle"})
    batch = log.flush()             # [{"seq": 1, "type": "prompt", ...}, {"seq": 2, ...}]
    log.since(0)                    # the same, from memory (or the journal)

Records are any JSON objects with a "type"; what they mean is the session's business
(the thread's changes and the host's own, in records.py), the numbering is this module's.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from melgui.host.change_journal import ChangeJournal

Record = dict[str, Any]
Merge = Callable[[Record, Record], Record | None]

KEEP_IN_MEMORY = 4096


class SequenceAhead(Exception):
    """A view says it has a number this session never gave: it must take a snapshot."""


def no_merge(earlier: Record, later: Record) -> Record | None:
    return None


class ChangeLog:
    def __init__(
        self,
        session: str,
        journal: ChangeJournal,
        *,
        merge: Merge = no_merge,
        keep: int = KEEP_IN_MEMORY,
    ) -> None:
        self.session = session
        self._journal = journal
        self._merge = merge
        self._pending: list[Record] = []
        self._memory: deque[Record] = deque(maxlen=keep)
        self.last_seq = journal.last_seq(session)

    @property
    def has_pending(self) -> bool:
        return bool(self._pending)

    @property
    def next_seq(self) -> int:
        """The number the next record added will have (unless it merges)."""
        return self.last_seq + len(self._pending) + 1

    def add(self, record: Record) -> None:
        if self._pending:
            merged = self._merge(self._pending[-1], record)
            if merged is not None:
                self._pending[-1] = merged
                return
        self._pending.append(record)

    def flush(self) -> list[Record]:
        """Number what the frame gathered, journal it, and return it (empty: nothing new)."""
        if not self._pending:
            return []
        first = self.last_seq + 1
        numbered = [{"seq": first + i, **record} for i, record in enumerate(self._pending)]
        self._pending.clear()
        self._journal.append(self.session, numbered)
        self.last_seq = numbered[-1]["seq"]
        self._memory.extend(numbered)
        return numbered

    def since(self, seq: int) -> list[Record]:
        """Every flushed record after `seq`, in order: from memory when it still holds
        them, else from the journal. Raises SequenceAhead for a number never given."""
        if seq > self.last_seq:
            raise SequenceAhead(f"{self.session} has no change {seq} (its last is {self.last_seq})")
        if seq == self.last_seq:
            return []
        if self._memory and self._memory[0]["seq"] <= seq + 1:
            return [record for record in self._memory if record["seq"] > seq]
        return self._journal.since(self.session, seq)

    def in_memory(self) -> int:
        return len(self._memory)
