"""A view's copy of a host session's thread: the thread's own changes, as the host sends
them (JSON), applied in order; a run of text the host merged into one change counts as
the run's numbers.

    copy = ThreadCopy(on_answer=send)
    copy.restart(snapshot_from_json(part["thread"]))   # from an attach's snapshot (Thread's)
    copy.take(record)                                   # each `change` record after it

`take` skips a change it already has (a snapshot taken again overlaps the batches in
flight) and raises SeqGap for one that does not follow: the view asks for a snapshot.
"""

from __future__ import annotations

from typing import Any

from melgui.core.thread.codec import change_from_json
from melgui.core.thread.thread import Thread


class ThreadCopy(Thread):
    def take(self, record: dict[str, Any]) -> bool:
        """Apply one `change` record; False when it was already applied."""
        change = change_from_json(record["change"])
        first = int(record.get("first", change.seq))
        if change.seq <= self.seq:
            return False
        self.apply(change, first=first)  # a merged run: its last number
        return True
