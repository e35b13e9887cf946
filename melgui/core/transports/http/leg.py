"""Running one leg over HTTP + SSE: the part both network transports share.

A transport supplies a `LegParser` (its protocol: SSE events in, stream events out);
`stream_leg` does the POST, the status check, the bounded decoding, the wire log, and
turns every failure into exactly one final StreamError. It never retries.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any, Protocol, cast

import httpx

from melgui.core.config.redaction import MIN_SECRET, SecretStream, redact
from melgui.core.protocol import bounded_json
from melgui.core.protocol.events import (
    ENDED_EARLY,
    Done,
    ReasoningDelta,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolCalls,
)
from melgui.core.transports.http.leg_bounds import LegBudget, LegLimits, LegTooLarge
from melgui.core.transports.http.replies import (
    WireLog,
    describe_failure,
    is_retryable_failure,
    one_line,
    read_bounded,
    status_error,
)
from melgui.core.transports.http.sse import (
    DEFAULT_MAX_EVENT_BYTES,
    EventTooLarge,
    SSEComment,
    SSEDecoder,
    SSEEvent,
    SSEItem,
)

# Tuples, not `A | B`: a union written in the call is built again for each event.
_TERMINAL = (ToolCalls, Done, StreamError)
_DELTAS = (TextDelta, ReasoningDelta)


class LegFormatError(ValueError):
    """The stream broke its protocol (malformed JSON, wrong shape); message for people."""


class LegParser(Protocol):
    """One transport's reading of a leg's events."""

    def on_event(self, event: SSEEvent) -> list[StreamEvent]:
        """Events for one SSE event; a terminal one ends the leg. May raise LegFormatError."""
        ...

    def on_end(self) -> StreamEvent | None:
        """The body ended; the final event, or None when the leg was cut short."""
        ...

    def held_back(self) -> list[StreamEvent]:
        """The body ended: text kept back while it might have been a tag's start."""
        ...

    def on_json_body(self, payload: Any) -> list[StreamEvent]:
        """The server answered with plain JSON instead of a stream."""
        ...


def is_terminal(event: StreamEvent) -> bool:
    return isinstance(event, _TERMINAL)


def merged(events: list[StreamEvent]) -> list[StreamEvent]:
    """`events` with each run of text (or of reasoning) as one delta: a read brings many
    events at once, and every delta costs the loop, the thread and its views a step."""
    if len(events) < 2:
        return events
    out: list[StreamEvent] = []
    run: list[str] = []  # the texts of the run out[-1] starts
    for event in events:
        if run and isinstance(event, _DELTAS) and type(event) is type(out[-1]):
            run.append(event.text)
            continue
        _end_run(out, run)
        out.append(event)
        run = [event.text] if isinstance(event, _DELTAS) else []
    _end_run(out, run)
    return out


def _end_run(out: list[StreamEvent], run: list[str]) -> None:
    if len(run) > 1:
        text = "".join(run)
        out[-1] = ReasoningDelta(text) if isinstance(out[-1], ReasoningDelta) else TextDelta(text)


def body_chunks(response: httpx.Response) -> AsyncGenerator[bytes, None]:
    """The body as it arrives; an async generator, so `aclosing` can close it early."""
    return cast(AsyncGenerator[bytes, None], response.aiter_bytes())


def stream_timeout(read_timeout: float) -> httpx.Timeout:
    return httpx.Timeout(connect=15.0, read=read_timeout, write=30.0, pool=15.0)


class LegRun:
    """One POST whose reply is read as an event stream. Iterate `events()` once."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        url: str,
        body: dict[str, Any],
        *,
        headers: dict[str, str],
        parser: LegParser,
        wire: WireLog,
        read_timeout: float,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        limits: LegLimits | None = None,
    ) -> None:
        self.client = client
        self.url = url
        self.body = body
        self.headers = headers
        self.parser = parser
        self.wire = wire
        self.read_timeout = read_timeout
        self.max_event_bytes = max_event_bytes
        self.budget = LegBudget(limits)
        # A key too short to be a real one would hide ordinary words of the answer.
        self._secrets = (wire.secret,) if wire.secret and len(wire.secret) >= MIN_SECRET else ()
        # Text and reasoning each hide the key even when it comes split across deltas.
        self._streams: dict[type, SecretStream] = {
            kind: SecretStream(self._secrets) for kind in (TextDelta, ReasoningDelta)
        }
        self._last: dict[type, TextDelta | ReasoningDelta] = {}
        self.events_seen = False  # a TextDelta reached the caller
        self._body_started = False

    async def events(self) -> AsyncIterator[StreamEvent]:
        self.wire("request", f"POST {self.url}\n{json.dumps(self.body, ensure_ascii=False)}")
        try:
            async with self.client.stream(
                "POST",
                self.url,
                json=self.body,
                headers=self.headers,
                timeout=stream_timeout(self.read_timeout),
            ) as response:
                self.wire("response", f"HTTP {response.status_code} {response.reason_phrase}")
                async with aclosing(self._read(response)) as events:
                    async for event in events:
                        if is_terminal(event):
                            for held in self._held_back():
                                yield held
                            yield self._finish(event)
                            return
                        if (shown := self._hide(event)) is not None:
                            yield shown
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            if self._body_started and not isinstance(exc, httpx.TimeoutException):
                message = f"{ENDED_EARLY} (connection lost: {exc or type(exc).__name__})"
            else:
                message = describe_failure(exc, self.url, self.read_timeout)
            for held in self._held_back():
                yield held
            yield self._finish(StreamError(message, retryable=is_retryable_failure(exc)))

    def _finish(self, event: StreamEvent) -> StreamEvent:
        if isinstance(event, StreamError):
            # A server's error text may quote the key it was sent ("Incorrect API key…").
            message = redact(event.message, self._secrets)
            event = dataclasses.replace(event, message=message, events_seen=self.events_seen)
            self.wire("note", f"leg failed: {event.message}")
        return event

    async def _read(self, response: httpx.Response) -> AsyncGenerator[StreamEvent, None]:
        if response.status_code >= 400:
            yield status_error(response, await read_bounded(response))
            return
        content_type = response.headers.get("content-type", "")
        if "html" in content_type:  # a proxy, a login page, or a wrong base URL
            page = one_line(await read_bounded(response, 2048), 120)
            yield StreamError(
                f"the server answered with a web page instead of an event stream "
                f"(is the URL right?): {page}"
            )
            return
        if "json" in content_type and "event-stream" not in content_type:
            async for event in self._read_json(response):
                yield event
            return
        decoder = SSEDecoder(self.max_event_bytes)
        async with aclosing(body_chunks(response)) as chunks:
            async for chunk in chunks:
                self._body_started = True
                events: list[StreamEvent] = []
                try:
                    ended = self._read_items(decoder.feed(chunk), events)
                except (EventTooLarge, LegFormatError, LegTooLarge) as exc:
                    ended = True
                    events.append(StreamError(str(exc)))
                for event in merged(events):
                    yield event
                if ended:
                    return
        try:
            for item in decoder.close():
                for event in self._handle(item):
                    yield event
        except LegFormatError:
            # An event the body's end cut in its middle: the connection closed, nothing
            # is wrong with what arrived before it.
            yield StreamError(f"{ENDED_EARLY} (the connection closed mid-event)", retryable=True)
            return
        except (EventTooLarge, LegTooLarge) as exc:
            yield StreamError(str(exc))
            return
        for event in self.parser.held_back():
            yield event
        yield self.parser.on_end() or StreamError(ENDED_EARLY, retryable=True)

    def _hide(self, event: StreamEvent) -> StreamEvent | None:
        """A delta with the key hidden, should the model repeat it; None while all of it
        is held back (it could be the start of the key)."""
        if not self._secrets or not isinstance(event, _DELTAS):
            return event
        self._last[type(event)] = event
        text = self._streams[type(event)].feed(event.text)
        if not text:
            return None
        return event if text == event.text else dataclasses.replace(event, text=text)

    def _held_back(self) -> list[StreamEvent]:
        """The leg ends: the text held back in case it began the key."""
        held: list[StreamEvent] = []
        for kind, last in self._last.items():
            if text := self._streams[kind].flush():
                held.append(dataclasses.replace(last, text=text))
        return held

    def _read_items(self, items: list[SSEItem], events: list[StreamEvent]) -> bool:
        """The events of what one read brought, into `events`, up to a final one (True)."""
        logged = self.wire.sink is not None
        texts = [item.wire_text() for item in items] if logged else []
        clean = logged and self.wire.clean(texts)  # one look for the key in them all
        at = time.time()  # the events of one read arrived together
        for number, item in enumerate(items):
            if logged:
                self.wire("event", texts[number], at, clean)
            for event in self._parsed(item):
                events.append(event)
                if isinstance(event, _TERMINAL):
                    return True
        return False

    def _handle(self, item: SSEItem) -> list[StreamEvent]:
        self.wire("event", item.wire_text())
        return self._parsed(item)

    def _parsed(self, item: SSEItem) -> list[StreamEvent]:
        if isinstance(item, SSEComment):
            return []
        events = self.parser.on_event(item)
        for event in events:
            self.budget.count(event)
        if not self.events_seen:
            self.events_seen = any(isinstance(event, _DELTAS) for event in events)
        return events

    async def _read_json(self, response: httpx.Response) -> AsyncIterator[StreamEvent]:
        text = await read_bounded(response, self.max_event_bytes)
        self.wire("event", text)
        try:
            payload = bounded_json.loads(text)
        except ValueError:
            yield StreamError(f"the server answered with malformed JSON: {one_line(text, 80)!r}")
            return
        try:
            events = self.parser.on_json_body(payload)
        except LegFormatError as exc:
            yield StreamError(str(exc))
            return
        for event in events:
            if isinstance(event, _DELTAS):
                self.events_seen = True
            yield event
        if not any(is_terminal(event) for event in events):
            yield StreamError(ENDED_EARLY)
