"""Scripted HTTP servers for tests: a Mel relay and an OpenAI-compatible server.

A real HTTP/1.1 server on 127.0.0.1 (ephemeral port) in a background thread; usable
from sync and async tests alike. It plays a script of legs, one per streaming POST,
and records every request it receives, so tests assert on what the client sent.

    from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls

    with ScriptedRelay() as relay:              # or the `scripted_relay` fixture
        relay.script(
            [text("Let me look."), tool_calls(tool_call("read_file", {"path": "a"}, id="c1"))],
            [text("It says hi."), done(usage={"prompt_tokens": 9, "completion_tokens": 3})],
        )
        transport = RelayTransport(relay.base_url, "key")
        ...                                     # run the loop
        second = relay.legs_received[1]
        assert second.messages[-1]["tool_call_id"] == "c1"

The same legs play on `ScriptedOpenAI` (pass `server.base_url`, which ends in `/v1`, to
OpenAITransport). Other steps: `error_event`, `http_error(429, {...}, {"Retry-After":
"2"})`, `drop()`, `pause(s)`, `hold(gate)`, `comment()`, `raw(b"...")`, `sse(obj)`,
`pieces(3)` (send the body 3 bytes at a time, splitting UTF-8 characters), and
`framing("\\r\\n")`. A leg may be a function of the request; `on(predicate, leg)` answers
matching requests (e.g. every worker) before the script is consulted:

    relay.on(lambda r: r.tool_role == "worker", lambda r: [text(f"did {r.last_user_text}"), done()])

A request that finds no leg gets HTTP 500 and is listed in `problems`; the fixtures
fail the test on teardown when there are any (set `strict = False` to allow it).
"""

from __future__ import annotations

import collections
import contextlib
import json
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

from tests.fakes.responses_api import ResponsesEncoder
from tests.fakes.scenario import (
    STEP_TYPES,
    Drop,
    Framing,
    Hold,
    HttpReply,
    Leg,
    OpenAIEncoder,
    Pause,
    Pieces,
    Step,
    encode_relay,
)

Predicate = Callable[["RecordedRequest"], bool]
RESPONSES_PATH = "/v1/responses"


@dataclass
class RecordedRequest:
    """One request as the server received it; header names are lower case."""

    number: int
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    json: Any = None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.json.get("messages", [])) if isinstance(self.json, dict) else []

    @property
    def tool_role(self) -> str | None:
        return self.json.get("tool_role") if isinstance(self.json, dict) else None

    @property
    def tool_names(self) -> list[str]:
        """Names of the tools sent, in either the relay's flat or the OpenAI shape."""
        tools = self.json.get("tools", []) if isinstance(self.json, dict) else []
        return [tool.get("function", tool).get("name", "") for tool in tools]

    @property
    def last_message(self) -> dict[str, Any] | None:
        return self.messages[-1] if self.messages else None

    @property
    def last_user_text(self) -> str:
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return str(message.get("content") or "")
        return ""

    @property
    def authorization(self) -> str | None:
        return self.headers.get("authorization")


@dataclass
class _Rule:
    predicate: Predicate
    leg: Leg
    times: int | None


DEFAULT_RELAY_MODELS: list[dict[str, Any]] = [
    {"id": "mel-default", "name": "Mel default", "supported_parameters": ["tools", "tool_choice"]},
    {"id": "mel-chat", "name": "Mel chat", "supported_parameters": ["temperature"]},
]
DEFAULT_OPENAI_MODELS: list[dict[str, Any]] = [
    {"id": "gpt-test", "object": "model", "owned_by": "scripted"},
    {"id": "small-test", "object": "model", "owned_by": "scripted"},
]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.owner._track(self.connection, True)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self.server.owner._track(self.connection, False)

    def _serve(self) -> None:
        self.server.owner._serve(self)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _serve

    def log_message(self, format: str, *args: Any) -> None:
        pass  # tests read `requests`, not stderr


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True

    def __init__(self, owner: ScriptedServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that went away is normal in fault tests


class _Body:
    """A chunked SSE response body, written in pieces of `size` bytes."""

    def __init__(self, handler: _Handler, stop: threading.Event, size: int | None, delay: float):
        self.handler = handler
        self.stop = stop
        self.size = size
        self.delay = delay
        self.started = False

    def start(self) -> None:
        self.started = True
        self.handler.send_response(200)
        self.handler.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.handler.send_header("Cache-Control", "no-cache")
        self.handler.send_header("Transfer-Encoding", "chunked")
        self.handler.end_headers()

    def write(self, data: bytes) -> None:
        if not self.started:
            self.start()
        step = self.size or max(1, len(data))
        for offset in range(0, len(data), step):
            piece = data[offset : offset + step]
            self.handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            if self.delay:
                self.stop.wait(self.delay)

    def finish(self) -> None:
        if not self.started:
            self.start()
        self.handler.wfile.write(b"0\r\n\r\n")

    def drop(self) -> None:
        self.handler.close_connection = True
        with contextlib.suppress(OSError):
            self.handler.connection.shutdown(socket.SHUT_RDWR)


def send_reply(handler: _Handler, reply: HttpReply) -> None:
    body = reply.body
    content_type = "text/plain; charset=utf-8"
    if body is None:
        data = b""
    elif isinstance(body, bytes):
        data = body
    elif isinstance(body, str):
        data = body.encode()
    else:
        data = json.dumps(body).encode()
        content_type = "application/json"
    handler.send_response(reply.status)
    headers = {"Content-Type": content_type, **reply.headers, "Content-Length": str(len(data))}
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(data)


def not_found(what: str) -> HttpReply:
    return HttpReply(404, {"error": {"message": f"Not found: {what}", "code": "not_found"}})


class ScriptedServer:
    """Shared machinery; use ScriptedRelay or ScriptedOpenAI."""

    flavour = ""
    stream_path = ""
    url_suffix = ""

    def __init__(
        self,
        *legs: Leg,
        chunk_size: int | None = None,
        chunk_delay: float = 0.0,
        newline: str = "\n",
        api_key: str | None = None,
        models: list[dict[str, Any]] | None = None,
    ) -> None:
        self.chunk_size = chunk_size
        self.chunk_delay = chunk_delay
        self.newline = newline
        self.api_key = api_key  # when set, a request without `Bearer <api_key>` gets 401
        self.models: list[dict[str, Any]] | None = models
        self.models_error: HttpReply | None = None
        # Other endpoints, e.g. routes[("POST", "/api/show")] = HttpReply(200, {...}).
        self.routes: dict[tuple[str, str], HttpReply] = {}
        self.requests: list[RecordedRequest] = []
        self.problems: list[str] = []
        self.strict = True
        self._script: collections.deque[Leg] = collections.deque()
        self._rules: list[_Rule] = []
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._stop = threading.Event()
        self._connections: set[socket.socket] = set()
        self._streaming: set[socket.socket] = set()  # connections inside a leg
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.script(*legs)

    # --- life cycle ----------------------------------------------------------------

    def start(self) -> Self:
        if self._httpd is None:
            self._httpd = _HTTPServer(self)
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"scripted-{self.flavour}",
                daemon=True,
            )
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving; ends pauses and holds, closes open connections."""
        if self._httpd is None:
            return
        self._stop.set()
        self._httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)
        self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def url(self) -> str:
        """http://127.0.0.1:PORT (the server root)."""
        if self._httpd is None:
            raise RuntimeError("the scripted server is not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def base_url(self) -> str:
        """What to give the transport as its base URL."""
        return self.url + self.url_suffix

    # --- the script ----------------------------------------------------------------

    def script(self, *legs: Leg) -> None:
        """Append legs, played in order, one per streaming request."""
        for leg in legs:
            _check_leg(leg)
        with self._lock:
            self._script.extend(legs)

    def on(self, predicate: Predicate, leg: Leg, times: int | None = None) -> None:
        """Answer requests matching `predicate` with `leg` (before the script), `times`
        times or forever. Rules are tried in the order they were added."""
        _check_leg(leg)
        with self._lock:
            self._rules.append(_Rule(predicate, leg, times))

    @property
    def unplayed(self) -> int:
        """Scripted legs not played yet."""
        with self._lock:
            return len(self._script)

    @property
    def legs_received(self) -> list[RecordedRequest]:
        """The streaming requests (one per leg), in order."""
        with self._lock:
            return [r for r in self.requests if self.is_stream(r.path)]

    def wait_for_legs(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Block until `count` legs arrived (for tests driving a client in another thread)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while sum(self.is_stream(r.path) for r in self.requests) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"expected {count} legs within {timeout} s")
                self._changed.wait(left)
        return self.legs_received

    def streams_open(self) -> int:
        """Legs still streaming whose client has not closed the connection (the server
        would read end-of-file on a closed one): 0 once every stream was really closed.
        Idle keep-alive connections (listing models, ...) do not count."""
        with self._lock:
            connections = list(self._streaming)
        return sum(not _closed_by_peer(c) for c in connections)

    def wait_for_streams_closed(self, timeout: float = 10.0) -> None:
        """Block until streams_open() is 0 (for tests driving a client in another thread
        or a plain asyncio loop)."""
        deadline = time.monotonic() + timeout
        while (count := self.streams_open()) > 0:
            if time.monotonic() > deadline:
                raise AssertionError(f"{count} stream(s) still open by their client")
            time.sleep(0.02)

    def check(self) -> None:
        """Raise AssertionError if a request found no leg (or another problem)."""
        if self.problems:
            raise AssertionError("scripted server: " + "; ".join(self.problems))

    # --- serving -------------------------------------------------------------------

    def _track(self, connection: socket.socket, alive: bool) -> None:
        with self._lock:
            if alive:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    def _serve(self, handler: _Handler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        parsed = urllib.parse.urlsplit(handler.path)
        try:
            payload = json.loads(body) if body else None
        except ValueError:
            payload = None
        with self._changed:
            request = RecordedRequest(
                len(self.requests) + 1,
                handler.command,
                parsed.path,
                dict(urllib.parse.parse_qsl(parsed.query)),
                {name.lower(): value for name, value in handler.headers.items()},
                body,
                payload,
            )
            self.requests.append(request)
            self._changed.notify_all()
        try:
            if self.api_key is not None and request.authorization != f"Bearer {self.api_key}":
                send_reply(handler, HttpReply(401, {"error": {"message": "Invalid API key"}}))
            elif self.is_stream(request.path) and request.method == "POST":
                with self._lock:
                    self._streaming.add(handler.connection)
                try:
                    self._play(handler, request, self._leg_for(request))
                finally:
                    with self._lock:
                        self._streaming.discard(handler.connection)
            else:
                send_reply(handler, self._route(request))
        except OSError:  # the client went away
            handler.close_connection = True
        except Exception as exc:  # a broken scenario: tell the test, not stderr
            self.problems.append(f"request #{request.number} failed in the server: {exc!r}")
            handler.close_connection = True

    def is_stream(self, path: str) -> bool:
        """Whether a POST to `path` plays the next leg."""
        return path == self.stream_path

    def encoder_for(self, request: RecordedRequest) -> OpenAIEncoder | ResponsesEncoder:
        model = str((request.json or {}).get("model", ""))
        if request.path == RESPONSES_PATH:
            return ResponsesEncoder(model, request.number)
        return OpenAIEncoder(model, request.number)

    def _leg_for(self, request: RecordedRequest) -> Sequence[Step]:
        leg: Leg | None = None
        with self._lock:
            for rule in self._rules:
                if rule.times != 0 and _matches(rule.predicate, request):
                    if rule.times is not None:
                        rule.times -= 1
                    leg = rule.leg
                    break
            else:
                leg = self._script.popleft() if self._script else None
            if leg is None:
                message = f"no leg left for request #{request.number} ({request.path})"
                self.problems.append(message)
                return [HttpReply(500, {"error": {"message": f"scripted server: {message}"}})]
        return leg(request) if callable(leg) else leg

    def _play(self, handler: _Handler, request: RecordedRequest, steps: Sequence[Step]) -> None:
        out = _Body(handler, self._stop, self.chunk_size, self.chunk_delay)
        newline = self.newline
        encoder = self.encoder_for(request)
        for step in steps:
            if self._stop.is_set():
                out.drop()
                return
            if isinstance(step, Pieces):
                out.size, out.delay = step.size, step.delay
            elif isinstance(step, Framing):
                newline = step.newline
            elif isinstance(step, HttpReply):
                if out.started:
                    self.problems.append(f"http_error after the body started (#{request.number})")
                    out.drop()
                else:
                    send_reply(handler, step)
                return
            elif isinstance(step, Drop):
                out.drop()
                return
            elif isinstance(step, Pause):
                self._stop.wait(step.seconds)
            elif isinstance(step, Hold):
                deadline = time.monotonic() + step.timeout
                while not step.gate.wait(0.02) and not self._stop.is_set():
                    if time.monotonic() > deadline:
                        break
            elif self.flavour == "openai":
                out.write(encoder.encode(step, newline))
            else:
                out.write(encode_relay(step, newline))
        out.finish()

    def _route(self, request: RecordedRequest) -> HttpReply:
        if (request.method, request.path) in self.routes:
            return self.routes[(request.method, request.path)]
        if request.path == "/v1/models" and request.method == "GET":
            if self.models_error is not None:
                return self.models_error
            if self.models is None:
                return not_found(request.path)
            return HttpReply(200, {"object": "list", "data": self.models})
        return not_found(request.path)


def _closed_by_peer(connection: socket.socket) -> bool:
    """True when the client closed its end (a peek reads end-of-file or the socket is gone)."""
    try:
        return connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False  # open, nothing to read
    except OSError:
        return True


def _check_leg(leg: object) -> None:
    if callable(leg):
        return
    if not isinstance(leg, list | tuple):
        raise TypeError(f"a leg is a list of steps (or a function returning one), not {leg!r}")
    for step in leg:
        if not isinstance(step, STEP_TYPES):
            raise TypeError(f"not a scripted step: {step!r}")


def _matches(predicate: Predicate, request: RecordedRequest) -> bool:
    try:
        return bool(predicate(request))
    except (KeyError, IndexError, TypeError, AttributeError, ValueError):
        return False


class ScriptedRelay(ScriptedServer):
    """A Mel relay: SSE `delta`/`tool_calls`/`done`/`error` events, /v1/models, /v1/memory.

    `memory_enabled = False` makes /v1/memory answer 404; `memory_error` (an
    `http_error(...)`) makes it fail; notes are kept per `cwd` in `memory_notes`.
    """

    flavour = "relay"
    stream_path = "/v1/agent/stream"

    def __init__(self, *legs: Leg, stream_path: str = "/v1/agent/stream", **options: Any):
        options.setdefault("models", [dict(model) for model in DEFAULT_RELAY_MODELS])
        super().__init__(*legs, **options)
        self.stream_path = stream_path
        self.memory_enabled = True
        self.memory_error: HttpReply | None = None
        self.memory_notes: dict[str, list[dict[str, str]]] = {}

    def _route(self, request: RecordedRequest) -> HttpReply:
        if (request.method, request.path) in self.routes:
            return self.routes[(request.method, request.path)]
        if request.path != "/v1/memory":
            return super()._route(request)
        if self.memory_error is not None:
            return self.memory_error
        if not self.memory_enabled:
            return not_found(request.path)
        if request.method == "GET":
            cwd = request.query.get("cwd")
            if not cwd:
                return HttpReply(400, {"error": {"message": "cwd is required"}})
            return HttpReply(200, {"notes": list(self.memory_notes.get(cwd, []))})
        if request.method == "POST":
            body = request.json if isinstance(request.json, dict) else {}
            cwd, note = body.get("cwd"), body.get("note")
            if not isinstance(cwd, str) or not isinstance(note, str) or not cwd or not note:
                return HttpReply(400, {"error": {"message": "cwd and note are required"}})
            created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            self.memory_notes.setdefault(cwd, []).append({"note": note, "created_at": created})
            return HttpReply(200, {"ok": True})
        return HttpReply(405, {"error": {"message": "method not allowed"}})


class ScriptedOpenAI(ScriptedServer):
    """An OpenAI-compatible server: /v1/chat/completions chunks + [DONE], /v1/models; the
    same legs play on /v1/responses as Responses API events (tests/fakes/responses_api.py)."""

    flavour = "openai"
    stream_path = "/v1/chat/completions"
    url_suffix = "/v1"

    def __init__(self, *legs: Leg, **options: Any):
        options.setdefault("models", [dict(model) for model in DEFAULT_OPENAI_MODELS])
        super().__init__(*legs, **options)

    def is_stream(self, path: str) -> bool:
        return path in (self.stream_path, RESPONSES_PATH)
