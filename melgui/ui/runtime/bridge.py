"""The one adapter between an AgentSession and Qt: its thread's changes, LoopEvents and wire
entries become Signals.

The agent loop runs on the qasync loop, i.e. the GUI thread, so signals are delivered
directly; a wire entry coming from a transport's worker thread is queued by Qt.
"""

from __future__ import annotations

import asyncio
import contextlib

from PySide6.QtCore import QObject, Signal

from melgui.core.agent.session import ChatSession
from melgui.core.protocol.content import Part
from melgui.core.protocol.events import WireEntry
from melgui.core.protocol.loop_events import LoopEvent, MessageAdded
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.wire_recorder import WireRecorder


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
        self._unsubscribe = session.subscribe(self._on_event)
        self._unthread = session.thread.subscribe(self.threadChange.emit)
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
        self.queuedChanged.emit(self.session.queued)
        self._set_busy(True)
        self._tasks.spawn(self._watch_idle(), what="waiting for the turn to end")

    def compact(self) -> None:
        """Compact the conversation now (after the running turn, if any)."""
        self.session.request_compaction()
        self._set_busy(True)
        self._tasks.spawn(self._watch_idle(), what="waiting for the compaction to end")

    def stop(self) -> list[str]:
        """Stop the running turn and any tool; returns the queued texts that were not sent."""
        dropped = self.session.stop()
        self.queuedChanged.emit([])
        return dropped

    def detach(self) -> None:
        """Stop listening (the session may live on)."""
        self._unsubscribe()
        self._unthread()
        self._unwire()

    async def _watch_idle(self) -> None:
        await self.session.wait_idle()
        # Let the session's own bookkeeping finish before reporting idle.
        await asyncio.sleep(0)
        if not self.session.busy:
            with contextlib.suppress(RuntimeError):  # the bridge may be gone (deleted)
                self._set_busy(False)

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busyChanged.emit(busy)

    def _on_event(self, event: LoopEvent) -> None:
        self.loopEvent.emit(event)
        if isinstance(event, MessageAdded) and event.message.role == "user":
            self.queuedChanged.emit(self.session.queued)

    def _on_wire(self, entry: WireEntry) -> None:
        self.wire.emit(entry)
