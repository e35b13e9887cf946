"""How late a key press would land: events posted to the GUI thread from outside.

The window system hands the GUI thread its input from outside (the X11 or Wayland
socket); the event is handled once the thread finishes what it is doing and returns to
Qt's event loop. This probe does the same: a thread posts a stamped event every few
milliseconds, and the delay from posting to handling is what a key press pressed at
that moment would wait. The longest is the stall a person feels.

(An asyncio heartbeat measures something else under qasync: a sleep's timer fires in
one pass of the loop and its task resumes in the next, so it reports about two passes.)
"""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import QCoreApplication, QEvent, QObject


class _Stamp(QEvent):
    TYPE = QEvent.Type(QEvent.registerEventType())

    def __init__(self, posted: float) -> None:
        super().__init__(self.TYPE)
        self.posted = posted


class InputProbe(QObject):
    """`start()`, then `stop()` returns the longest delay in seconds; `delays` keeps all."""

    def __init__(self, interval_s: float = 0.005) -> None:
        super().__init__()
        self.interval = interval_s
        self.delays: list[float] = []
        self._running = threading.Event()
        self._closed = False
        self._thread = threading.Thread(target=self._post, name="input-probe", daemon=True)
        self._thread.start()

    def start(self) -> None:
        self.delays = []
        self._running.set()

    def stop(self) -> float:
        self._running.clear()
        QCoreApplication.sendPostedEvents(self)  # the ones still waiting count too
        return max(self.delays, default=0.0)

    def close(self) -> None:
        self._closed = True
        self._running.set()

    def percentile(self, share: float) -> float:
        ordered = sorted(self.delays)
        return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else 0.0

    def _post(self) -> None:
        while not self._closed:
            self._running.wait()
            if self._closed:
                return
            QCoreApplication.postEvent(self, _Stamp(time.perf_counter()))
            time.sleep(self.interval)

    def event(self, event: QEvent) -> bool:
        if isinstance(event, _Stamp):
            self.delays.append(time.perf_counter() - event.posted)
            return True
        return super().event(event)
