"""An incremental, bounded Server-Sent Events decoder: bytes in, events out.

Written here rather than taken from httpx-sse because the transports need three things
it does not do: a bound on an event's size (a huge or endless event becomes an error,
not unbounded memory), the event left pending when a body ends without its blank line,
and comment lines (keep-alives) for the wire log. Lines end with CRLF, CR or LF, also
when the CR and the LF arrive in different chunks; a UTF-8 character split across
chunks is decoded whole, because lines are split as bytes (CR and LF never occur
inside a multi-byte UTF-8 sequence) and decoded once complete.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

DEFAULT_MAX_EVENT_BYTES = 32 * 1024 * 1024
_new_event = tuple.__new__
_BOM = b"\xef\xbb\xbf"


class SSEEvent(NamedTuple):
    """One dispatched event; `event` is "" when the server named none. A named tuple: a
    long answer makes tens of thousands, and a frozen dataclass costs thrice as much."""

    event: str
    data: str
    id: str | None = None
    retry: int | None = None

    def wire_text(self, limit: int = 64 * 1024) -> str:
        """The event as it looked on the wire, cut after `limit` characters of data."""
        data = self.data
        if len(data) > limit:
            data = f"{data[:limit]}… ({len(self.data) - limit} more characters)"
        head = f"event: {self.event}\n" if self.event else ""
        if "\n" not in data:
            return head + "data: " + data
        return head + "\n".join(f"data: {line}" for line in data.split("\n"))


@dataclass(frozen=True, slots=True)
class SSEComment:
    """A comment line (`: …`), typically a keep-alive."""

    text: str

    def wire_text(self, limit: int = 64 * 1024) -> str:
        return f":{self.text[:limit]}"


SSEItem = SSEEvent | SSEComment


class EventTooLarge(ValueError):
    """An event (or a line) grew past the decoder's bound."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"an event of the stream is larger than {describe_size(limit)}")
        self.limit = limit


def describe_size(size: int) -> str:
    for unit, scale in (("MB", 1024 * 1024), ("KB", 1024)):
        if size >= scale:
            return f"{size / scale:g} {unit}"
    return f"{size} bytes"


class SSEDecoder:
    """Feed bytes as they arrive; get the complete events and comments back.

    `feed` raises EventTooLarge when the pending event exceeds `max_event_bytes`; the
    decoder is then reset and holds nothing. Call `close` at the end of the body.
    """

    def __init__(self, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        self.max_event_bytes = max_event_bytes
        self._reset()

    def _reset(self) -> None:
        self._partial: list[bytes] = []  # bytes of the current, unterminated line
        self._partial_size = 0
        self._skip_lf = False  # the previous chunk ended with CR: a leading LF is its pair
        self._started = False
        self._event = ""
        self._data: list[str] = []
        self._event_size = 0
        self._has_fields = False
        self._id: str | None = None
        self._retry: int | None = None

    def feed(self, chunk: bytes) -> list[SSEItem]:
        if not chunk:
            return []
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
                if not chunk:
                    return []
        if b"\r" in chunk:
            self._skip_lf = chunk[-1:] == b"\r"
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = chunk.split(b"\n")
        tail = lines.pop()
        items: list[SSEItem] = []
        if lines and self._partial:
            self._partial.append(lines[0])
            lines[0] = b"".join(self._partial)
            self._partial = []
            self._partial_size = 0
        limit = self.max_event_bytes
        for line in lines:
            self._event_size += len(line)
            if self._event_size > limit:
                self._fail()
            # The lines of nearly every event, read here without a call: a
            # `data: ` line, and the blank line that ends the event.
            if line[:6] == b"data: " and self._started:
                self._data.append(line[6:].decode("utf-8", "replace"))
                self._has_fields = True
            elif not line and self._started:
                if self._has_fields:
                    items.append(self._event_now())
                else:
                    self._event_size = 0
            elif (item := self._line(line)) is not None:
                items.append(item)
        if tail:
            self._partial.append(tail)
            self._partial_size += len(tail)
            if self._event_size + self._partial_size > self.max_event_bytes:
                self._fail()
        return items

    def close(self) -> list[SSEItem]:
        """End of body: the unterminated line and the pending event, if any, are kept."""
        items: list[SSEItem] = []
        if self._partial:
            line = b"".join(self._partial)
            self._partial = []
            self._partial_size = 0
            item = self._line(line)
            if item is not None:
                items.append(item)
        item = self._dispatch()
        if item is not None:
            items.append(item)
        return items

    def _fail(self) -> None:
        self._reset()  # drop everything held
        raise EventTooLarge(self.max_event_bytes)

    def _line(self, raw: bytes) -> SSEItem | None:
        if not self._started:
            self._started = True
            if raw.startswith(_BOM):
                raw = raw[len(_BOM) :]
        if not raw:
            return self._dispatch()
        line = raw.decode("utf-8", "replace")
        if line[0] == ":":
            return SSEComment(line[1:].removeprefix(" "))
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._has_fields = True
        elif name == "event":
            self._event = value
            self._has_fields = True
        elif name == "id" and "\0" not in value:
            self._id = value
        elif name == "retry" and value.isdigit():
            self._retry = int(value)
        return None

    def _dispatch(self) -> SSEEvent | None:
        # Lenient: an event with a name but no data line still counts (data "").
        if not self._has_fields:
            self._event_size = 0
            return None
        return self._event_now()

    def _event_now(self) -> SSEEvent:
        data = self._data[0] if len(self._data) == 1 else "\n".join(self._data)
        event = _new_event(SSEEvent, (self._event, data, self._id, self._retry))
        self._event = ""
        self._data = []
        self._event_size = 0
        self._has_fields = False
        self._retry = None
        return event
