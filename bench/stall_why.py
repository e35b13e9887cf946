"""Why the GUI thread stalled: set MELGUI_BENCH_WHY=1 and a benchmark whose meter calls
this (bench_panes.py's LatenessMeter: bench_panes, bench_host's panes) prints, for each
stall over a frame, how its time went on the GUI thread (Linux's schedstat):

- cpu: running, its own work;
- no core: runnable, waiting for a core (other processes, the host's, the relay's);
- waiting: neither, inside a stall: for the GIL (the render thread rendering Markdown, a
  reader thread) or another lock;

and the Qt events and asyncio callbacks that took over 2 ms in it, with their CPU. The
application must be made by `application()`. It times every event Qt delivers from its
loop, a call into Python per event: the stalls measured with it are longer, and a paint
of many widgets, each a wait for the GIL while the render thread renders, shows more
"waiting" than it has without it. Compare runs with it to runs with it.

    MELGUI_BENCH_WHY=1 python bench/bench_host.py --only panes
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from typing import Any

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication

ENABLED = bool(os.environ.get("MELGUI_BENCH_WHY"))
FRAME_S = 1 / 60
SLOW_S = 0.002  # events and callbacks listed in a stall: this long at least
SHOWN = 8  # stalls printed, the longest first

# (started, wall, cpu, what): Qt events delivered from the loop, and asyncio callbacks
_slow: list[tuple[float, float, float, str]] = []
_stalls: list[tuple[float, float, float, float]] = []  # (start, end, cpu, no core)
_gui_tid = threading.get_native_id()
_last: tuple[float, float] | None = None


class TimedApplication(QApplication):
    """Times each event Qt delivers from its loop (not the ones sent inside another)."""

    _depth = 0

    def notify(self, receiver: QObject, event: QEvent) -> bool:
        if TimedApplication._depth:
            TimedApplication._depth += 1
            try:
                return super().notify(receiver, event)
            finally:
                TimedApplication._depth -= 1
        TimedApplication._depth = 1
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return super().notify(receiver, event)
        finally:
            TimedApplication._depth = 0
            took = time.perf_counter() - wall
            if took > SLOW_S:
                what = f"{type(receiver).__name__} {event.type().name}"
                _slow.append((wall, took, time.thread_time() - cpu, what))


def application() -> QApplication:
    """The benchmark's application: timed when MELGUI_BENCH_WHY is set."""
    existing = QApplication.instance()
    if isinstance(existing, QApplication):
        return existing
    if not ENABLED:
        return QApplication(sys.argv)
    _time_callbacks()
    return TimedApplication(sys.argv)


def _time_callbacks() -> None:
    run = asyncio.events.Handle._run

    def timed(handle: asyncio.events.Handle) -> None:
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            run(handle)
        finally:
            took = time.perf_counter() - wall
            if took > SLOW_S:
                callback: Any = getattr(handle, "_callback", None)
                what = getattr(callback, "__qualname__", repr(callback))
                owner = getattr(callback, "__self__", None)
                if isinstance(owner, asyncio.Task):
                    what = f"task {getattr(owner.get_coro(), '__qualname__', '?')}"
                _slow.append((wall, took, time.thread_time() - cpu, f"callback {what}"))

    asyncio.events.Handle._run = timed  # type: ignore[method-assign]


def _schedstat() -> tuple[float, float]:
    """The GUI thread's (cpu, waited for a core), in seconds, since it started."""
    try:
        with open(f"/proc/self/task/{_gui_tid}/schedstat") as stat:
            ran, queued, _ = stat.read().split()
    except OSError:
        return 0.0, 0.0
    return int(ran) / 1e9, int(queued) / 1e9


def begin() -> None:
    """The meter starts: what came before is not this measurement's."""
    global _last
    _slow.clear()
    _stalls.clear()
    _last = _schedstat()


def tick(previous: float, now: float, interval: float) -> None:
    """The meter's tick at `now`, the one before at `previous`."""
    global _last
    stat = _schedstat()
    if _last is not None and now - previous - interval > FRAME_S:
        _stalls.append((previous, now, stat[0] - _last[0], stat[1] - _last[1]))
    _last = stat


def report(label: str) -> None:
    if not ENABLED:
        return
    print(f"   why the GUI thread stalled ({label}): {len(_stalls)} stalls over a frame")
    for start, end, cpu, queued in sorted(_stalls, key=lambda s: s[0] - s[1])[:SHOWN]:
        wall = end - start
        waited = max(0.0, wall - cpu - queued)
        print(
            f"   - {wall * 1000:.1f} ms between ticks: cpu {cpu * 1000:.1f}, no core"
            f" {queued * 1000:.1f}, waiting (GIL, locks) {waited * 1000:.1f}"
        )
        for at, took, spent, what in _slow:
            if at < end and at + took > start:
                print(f"       {took * 1000:6.1f} ms (cpu {spent * 1000:5.1f})  {what}")
