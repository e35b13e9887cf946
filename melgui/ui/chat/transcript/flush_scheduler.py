"""One drawing timer for every streaming transcript in the process.

Each transcript used to flush on its own timer with its own time budget, so eight panes
streaming at once could all fire in the same turn of the event loop and stall it for
eight budgets plus eight layouts. Here one timer ticks for all of them: a tick draws the
dirty clients in round-robin order under ONE budget, so eight panes cost no more per
tick than one. A client that was not reached, or that still has work, is drawn first on
the next tick, which comes right after the loop has run once; no pane starves.
"""

from __future__ import annotations

import time
from typing import Protocol

from PySide6.QtCore import QObject, QTimer
from shiboken6 import isValid

FLUSH_MS = 40  # how long deltas are batched before they are drawn
FLUSH_BUDGET_S = 0.005  # drawing time per tick, shared by every client (layout and paint follow)


class Flushable(Protocol):
    def scheduled_flush(self, deadline: float) -> bool:
        """Draw what is buffered, stopping once `time.perf_counter()` passes `deadline`
        (after at least one unit of work). True when work is left for a later tick."""
        ...


class FlushScheduler(QObject):
    def __init__(
        self,
        interval_ms: int = FLUSH_MS,
        budget_s: float = FLUSH_BUDGET_S,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.interval_ms = interval_ms
        self.budget_s = budget_s
        self._dirty: dict[Flushable, None] = {}  # an ordered set: who is drawn first
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.tick)

    def request(self, client: Flushable, *, soon: bool = False) -> None:
        """`client` has something to draw: within `interval_ms`, or right after the
        loop has run once when `soon`."""
        self._dirty.setdefault(client, None)
        if soon:
            self._timer.start(0)
        elif not self._timer.isActive():
            self._timer.start(self.interval_ms)

    def cancel(self, client: Flushable) -> None:
        """`client` has nothing to draw any more (it drew everything, or is closing)."""
        self._dirty.pop(client, None)
        if not self._dirty:
            self._timer.stop()

    def is_pending(self, client: Flushable) -> bool:
        return client in self._dirty

    def tick(self) -> None:
        """Draw dirty clients in order until the budget is spent (at least one is drawn)."""
        deadline = time.perf_counter() + self.budget_s
        hurry = False
        served = 0
        for client in list(self._dirty):
            if client not in self._dirty:
                continue  # cancelled by a client drawn before it
            if served and time.perf_counter() >= deadline:
                hurry = True  # the rest go first on the next tick
                break
            del self._dirty[client]
            if isinstance(client, QObject) and not isValid(client):
                continue  # its widget was deleted while it waited
            served += 1
            if client.scheduled_flush(deadline):
                self._dirty[client] = None  # more to draw: to the back of the line
                hurry = True
        if hurry:
            self._timer.start(0)
        elif self._dirty and not self._timer.isActive():
            self._timer.start(self.interval_ms)  # asked for while this tick ran


_shared: FlushScheduler | None = None


def shared_scheduler() -> FlushScheduler:
    """The process's scheduler (created on first use, once the application exists)."""
    global _shared
    if _shared is None or not isValid(_shared):
        _shared = FlushScheduler()
    return _shared
