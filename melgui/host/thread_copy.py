"""A view's copy of a host session's thread: the thread's own changes, as the host sends
them (JSON), applied in order; a run of text the host merged into one change counts as
the run's numbers.

    copy = ThreadCopy(on_answer=send)
    copy.restart(snapshot_from_json(part["thread"]))   # from an attach's snapshot
    copy.take(record)                                   # each `change` record after it

`take` skips a change it already has (a snapshot taken again overlaps the batches in
flight) and raises SeqGap for one that does not follow: the view asks for a snapshot.
"""

from __future__ import annotations

from typing import Any

from melgui.core.thread.changes import EntriesReplaced, Snapshot, StateChanged
from melgui.core.thread.codec import change_from_json
from melgui.core.thread.thread import SeqGap, Thread


class ThreadCopy(Thread):
    def restart(self, snapshot: Snapshot) -> None:
        """Start again from `snapshot`; the views subscribed hear it as a load of the whole
        list, then the state."""
        self.thread_id = snapshot.thread_id
        self.seq = snapshot.seq - 1
        self._commit(EntriesReplaced(snapshot.seq, snapshot.entries, "load"))
        if snapshot.state != self.state:
            self.seq = snapshot.seq - 1
            self._commit(StateChanged(snapshot.seq, snapshot.state))

    def take(self, record: dict[str, Any]) -> bool:
        """Apply one `change` record; False when it was already applied."""
        change = change_from_json(record["change"])
        first = int(record.get("first", change.seq))
        if change.seq <= self.seq:
            return False
        if first != self.seq + 1:
            raise SeqGap(f"change {first} does not follow {self.seq}")
        self._commit(change)  # a merged run: its last number
        return True
