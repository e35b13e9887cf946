"""One timer for the window's view work: the session bridges letting their views hear
what the agents did, and the streaming transcripts drawing it.

Each transcript used to flush on its own timer with its own time budget, so eight panes
streaming at once could all fire in the same turn of the event loop and stall it for
eight budgets plus eight layouts; a bridge ticking on a timer of its own landed in the
same turn as a transcript's drawing. Here one timer ticks for all of them: a tick serves
the dirty clients in round-robin order under ONE budget, so eight panes cost no more per
tick than one, and what a bridge delivers is drawn in the same tick when the budget
allows (a client made dirty during the tick is served after the ones before it). A
client that was not reached, or that still has work, is served first on the next tick,
which comes right after the loop has run once; no pane starves. A tick is a turn of the
GUI thread's own (render_thread.gui_turn): the render thread pauses its rendering
meanwhile, instead of halving the tick's share of the GIL.
"""

from __future__ import annotations

import time
from typing import Protocol

from PySide6.QtCore import QObject, QTimer
from shiboken6 import isValid

from melgui.ui.runtime.render_thread import gui_turn

FLUSH_MS = 40  # how long view work (heard changes, streamed deltas) is batched
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
        """Serve dirty clients in order until the budget is spent (at least one is served);
        one made dirty by a client served in this tick is served after it, budget allowing.
        No client is served twice in a tick."""
        with gui_turn():  # the render thread waits meanwhile: this Python keeps the GIL
            self._serve()

    def _serve(self) -> None:
        deadline = time.perf_counter() + self.budget_s
        hurry = False
        served: set[Flushable] = set()
        while not hurry:
            waiting = [client for client in self._dirty if client not in served]
            if not waiting:
                break
            for client in waiting:
                if client not in self._dirty:
                    continue  # cancelled by a client served before it
                if served and time.perf_counter() >= deadline:
                    hurry = True  # the rest go first on the next tick
                    break
                del self._dirty[client]
                if isinstance(client, QObject) and not isValid(client):
                    continue  # its widget was deleted while it waited
                served.add(client)
                if client.scheduled_flush(deadline):
                    self._dirty[client] = None  # more to do: to the back of the line
                    hurry = True
        if hurry:
            self._timer.start(0)
        elif self._dirty:
            if not self._timer.isActive():
                self._timer.start(self.interval_ms)  # asked for while this tick ran
        else:
            self._timer.stop()  # started by a request served in this very tick


_shared: FlushScheduler | None = None


def shared_scheduler() -> FlushScheduler:
    """The process's scheduler (created on first use, once the application exists)."""
    global _shared
    if _shared is None or not isValid(_shared):
        _shared = FlushScheduler()
    return _shared
