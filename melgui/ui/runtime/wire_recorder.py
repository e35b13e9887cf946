"""Keeps a session's raw wire log, split into legs, with secrets redacted (no Qt here)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from melgui.core.config.redaction import redact
from melgui.core.protocol.events import WireEntry

MAX_LEGS = 200  # older legs are dropped from memory (the journal keeps them)
MAX_ENTRIES_PER_LEG = 5000


@dataclass
class Leg:
    number: int
    entries: list[WireEntry] = field(default_factory=list)


Listener = Callable[[WireEntry], None]


class WireRecorder:
    """A WireSink: pass it as `wire=` to a session. Thread-safe; listeners hear each entry."""

    def __init__(self, secrets: tuple[str, ...] = ()) -> None:
        self.secrets = secrets
        self.legs: list[Leg] = []
        self._count = 0
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()

    def __call__(self, entry: WireEntry) -> None:
        clean = entry  # an HTTP transport's entries come redacted: once is enough
        if not entry.redacted:
            text = redact(entry.text, self.secrets)
            clean = WireEntry(entry.direction, text, entry.at, redacted=True)
        with self._lock:
            if clean.direction == "request" or not self.legs:
                self._count += 1
                self.legs.append(Leg(self._count))
                del self.legs[:-MAX_LEGS]
            leg = self.legs[-1]
            if len(leg.entries) < MAX_ENTRIES_PER_LEG:
                leg.entries.append(clean)
            listeners = list(self._listeners)
        for listener in listeners:
            listener(clean)

    def listen(self, listener: Listener) -> Callable[[], None]:
        with self._lock:
            self._listeners.append(listener)

        def stop() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return stop
