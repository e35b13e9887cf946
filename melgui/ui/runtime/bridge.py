"""The one adapter between an AgentSession and Qt: its thread's changes, LoopEvents and wire
entries become Signals.

The agent loop runs on the qasync loop, i.e. the GUI thread, and the views do not run on
its path: each change and event is queued, in the order they happen, and the views hear
them together at the window's next drawing tick (the shared flush scheduler's, FLUSH_MS),
under the same budget as the transcripts that draw what they heard, as the agent host
sends a view attached over its socket one batch at a time (docs/host-protocol.md). They
hear the same sequence as before, only later. Heard at once, with everything queued
before them:

- an approval asked: a person is waited for;
- the entries replaced and a turn's end: their views read the whole conversation, which
  must still be what the change left;
- what a view asked for itself (`submit`, `stop`, `compact`) and the session going idle.

A wire entry coming from a transport's worker thread is queued by Qt, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import deque
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from shiboken6 import isValid

from melgui.core.protocol.content import Part
from melgui.core.protocol.events import WireEntry
from melgui.core.protocol.loop_events import (
    ApprovalNeeded,
    LoopEvent,
    MessageAdded,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
)
from melgui.core.thread.changes import Change, EntriesReplaced
from melgui.core.thread.chat_session import ChatSession
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.flush_scheduler import shared_scheduler
from melgui.ui.runtime.wire_recorder import WireRecorder

AT_ONCE = (ApprovalNeeded, TurnFinished, TurnFailed, TurnCancelled)

EVENT, CHANGE, QUEUED = 0, 1, 2  # what a queued item is: a LoopEvent, a Change, the texts


class SessionBridge(QObject):
    """Signals for one session. `submit`/`stop` go through here so `busy` stays exact."""

    loopEvent = Signal(object)  # every LoopEvent, in order
    threadChange = Signal(object)  # every Change of the session's thread, in order
    wire = Signal(object)  # WireEntry
    busyChanged = Signal(bool)
    queuedChanged = Signal(list)  # texts waiting to be sent

    def __init__(
        self,
        session: ChatSession,
        recorder: WireRecorder | None = None,
        tasks: TaskKeeper | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.recorder = recorder if recorder is not None else WireRecorder()
        self._tasks = tasks if tasks is not None else TaskKeeper()
        self._busy = False
        # (kind, value) in the order they happened, not yet heard by the views
        self._queue: deque[tuple[int, object]] = deque()
        self._delivering = False
        self._all = False  # the delivery under way goes to the end (something is due at once)
        self._scheduler = shared_scheduler()
        self._unsubscribe = session.subscribe(self._on_event)
        self._unthread = session.thread.subscribe(self._on_change)
        self._unwire = self.recorder.listen(self._on_wire)

    @property
    def busy(self) -> bool:
        return self._busy

    @property
    def source(self) -> str:
        return self.session.source

    def submit(self, text: str, parts: tuple[Part, ...] = ()) -> None:
        """Queue a user message (sent after the running turn, if any)."""
        self.session.submit(text, parts)
        self._queue.append((QUEUED, self.session.queued))
        self.flush()
        self._set_busy(True)
        self._tasks.spawn(self._watch_idle(), what="waiting for the turn to end")

    def compact(self) -> None:
        """Compact the conversation now (after the running turn, if any)."""
        self.session.request_compaction()
        self.flush()
        self._set_busy(True)
        self._tasks.spawn(self._watch_idle(), what="waiting for the compaction to end")

    def stop(self) -> list[str]:
        """Stop the running turn and any tool; returns the queued texts that were not sent."""
        dropped = self.session.stop()
        self._queue.append((QUEUED, []))
        self.flush()
        return dropped

    def flush(self) -> None:
        """Let the views hear now everything queued for them."""
        if not isValid(self):  # deleted without detach: nobody left to hear it
            self.detach()
            return
        if self._delivering:  # a view's handler asked: the delivery under way goes on to the end
            self._all = True
            return
        self._scheduler.cancel(self)
        self.deliver(math.inf)

    def deliver(self, deadline: float) -> bool:
        """Emit the queued items in order until `time.perf_counter()` passes `deadline`
        (after one at least); True when some are left for the next tick."""
        if self._delivering:
            return bool(self._queue)
        self._delivering = True
        queue = self._queue
        try:
            while queue:
                kind, value = queue.popleft()
                if kind == CHANGE:
                    self.threadChange.emit(value)
                elif kind == EVENT:
                    self.loopEvent.emit(value)
                else:
                    self.queuedChanged.emit(value)
                if not self._all and time.perf_counter() > deadline:
                    break
        finally:
            self._delivering = self._all = False
        return bool(queue)

    def scheduled_flush(self, deadline: float) -> bool:
        """What the shared scheduler calls at its tick: deliver under its budget."""
        return self.deliver(deadline)

    def detach(self) -> None:
        """Stop listening (the session may live on); what the views had not heard is dropped."""
        self._unsubscribe()
        self._unthread()
        self._unwire()
        self._queue.clear()
        self._scheduler.cancel(self)

    def follow(self, session: ChatSession) -> None:
        """Be `session`'s bridge from now on, for the views built on this one (an idle
        session's, whose conversation they show: the melgui host's continuing it, as the
        window attaches); what they had not heard of the one before is dropped. The wire
        log stays this bridge's."""
        self._unsubscribe()
        self._unthread()
        self._queue.clear()
        self._scheduler.cancel(self)
        self.session = session
        self._unsubscribe = session.subscribe(self._on_event)
        self._unthread = session.thread.subscribe(self._on_change)

    async def _watch_idle(self) -> None:
        await self.session.wait_idle()
        # Let the session's own bookkeeping finish before reporting idle.
        await asyncio.sleep(0)
        if not self.session.busy:
            with contextlib.suppress(RuntimeError):  # the bridge may be gone (deleted)
                self.flush()  # the turn's last changes are heard before it is idle
                self._set_busy(False)

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busyChanged.emit(busy)

    def _on_event(self, event: LoopEvent) -> None:
        self._queue.append((EVENT, event))
        if isinstance(event, MessageAdded) and event.message.role == "user":
            self._queue.append((QUEUED, self.session.queued))
        if isinstance(event, AT_ONCE):
            self.flush()
        else:
            self._request()

    def _on_change(self, change: Change) -> None:
        self._queue.append((CHANGE, change))
        if isinstance(change, EntriesReplaced) and change.reason != "load":
            self.flush()
        else:
            self._request()

    def _request(self) -> None:
        if isValid(self):
            self._scheduler.request(self)
        else:  # deleted without detach: nobody left to hear it
            self.detach()

    def _on_wire(self, entry: WireEntry) -> None:
        self.wire.emit(entry)


# What a pane is given to make its session's bridge (the window's bridge_for).
BridgeFactory = Callable[[ChatSession], SessionBridge]
