"""An httpx transport that hands a body over as it is read: HTTP/1.1 on asyncio.

httpx's own stack (httpcore, h11) hands a body over one HTTP chunk at a time, and a
server streaming an answer sends each event in a chunk of its own: some fifteen µs of
Python per event before melgui sees a byte, the better part of a long answer's CPU.
Here the chunked coding is undone in bulk: all a socket read brings comes out as one
piece, so the SSE decoder, the parser and the loop get many events at once. A melgui
exec that makes no other request imports neither httpcore, h11 nor anyio either.

The transports' clients (`leg_client`) send every request with a body of known length
over http or https here; a streamed request body goes to httpx's own transport, made
when first needed, and a client that would go through a proxy is httpx's own alone.
Failures are httpx's exceptions, with h11's words, so callers read them as before.
Connections are kept alive for the next request, as httpx does.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import re
import ssl
import time
import urllib.request
from collections.abc import AsyncIterator

import httpx

from melgui.core.transports.http.eyeballs import open_socket
from melgui.core.transports.http.tls import async_client, shared_context

MAX_HEAD = 100 * 1024  # a response head larger than this is refused (h11's bound)
KEEP_IDLE = 5.0  # seconds an idle connection is kept for reuse (httpx's default)
MAX_IDLE = 8  # idle connections kept per server
_PAUSE_AT = 4 * 1024 * 1024  # bytes read ahead of the reader before the socket pauses
# Bytes handed over by one `read` at most: what a busy reader let pile up comes in
# pieces, each parsed and shown in a step of the loop short enough to leave it frames.
READ_MOST = 8 * 1024
_CHUNK_SIZE = re.compile(rb"[ \t]*([0-9A-Fa-f]+)[ \t]*(?:;[^\r\n]*)?\r?\n")
_STATUS = re.compile(rb"HTTP/1\.([01]) (\d{3})(?: ([^\r\n]*))?")
_HEAD_END = re.compile(rb"\r?\n\r?\n")
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_FORBIDDEN = re.compile(rb"[\r\n\0]")


def leg_client(*, trust_env: bool = True) -> httpx.AsyncClient:
    """A client of this transport, unless a proxy would carry its requests or the
    environment asks for httpx's own (`MELGUI_HTTP=httpx`: a way out should a server
    speak HTTP/1.1 in a way this reader does not follow)."""
    if (trust_env and _proxies()) or os.environ.get("MELGUI_HTTP") == "httpx":
        return async_client(trust_env=trust_env)
    transport = BulkTransport(shared_context(trust_env), trust_env=trust_env)
    return async_client(trust_env=trust_env, transport=transport)


def _proxies() -> bool:
    """Whether the environment names a proxy httpx would use (any: then httpx decides)."""
    found = urllib.request.getproxies()
    return any(key != "no" and value for key, value in found.items())


class _Link(asyncio.Protocol):
    """One connection: what arrived, waiting for more, writing with flow control."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.eof = False
        self.error: Exception | None = None
        self.idle_since = 0.0
        self._waiter: asyncio.Future[None] | None = None
        self._drained: asyncio.Future[None] | None = None
        self._paused = False

    # -- asyncio's callbacks ------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > _PAUSE_AT and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # close

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self._wake()
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    def pause_writing(self) -> None:
        if self._drained is None or self._drained.done():
            self._drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- the transport's side -----------------------------------------------------------

    @property
    def reusable(self) -> bool:
        """Idle, open, and the server sent nothing meanwhile (else it closed or broke)."""
        transport = self.transport
        return (
            transport is not None
            and not transport.is_closing()
            and not self.eof
            and not self.buffer
            and time.monotonic() - self.idle_since < KEEP_IDLE
        )

    async def write(self, data: bytes, timeout: float | None) -> None:
        assert self.transport is not None
        try:
            if self.transport.is_closing():
                raise ConnectionResetError("the connection is closed")
            self.transport.write(data)
            if self._drained is not None and not self._drained.done():
                async with asyncio.timeout(timeout):
                    await asyncio.shield(self._drained)
            if self.error is not None:
                raise self.error
        except TimeoutError:
            raise httpx.WriteTimeout("timed out sending the request") from None
        except OSError as exc:
            raise httpx.WriteError(str(exc) or type(exc).__name__) from exc

    async def read(self, timeout: float | None) -> bytes:
        """What arrived (waiting for something); b"" at the end of the connection."""
        if not self.buffer and not self.eof:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                async with asyncio.timeout(timeout):
                    await self._waiter
            except TimeoutError:
                raise httpx.ReadTimeout("timed out reading the response") from None
            finally:
                self._waiter = None
        data = bytes(self.buffer[:READ_MOST])
        del self.buffer[:READ_MOST]
        if self._paused and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        if not data and self.error is not None:
            raise httpx.ReadError(str(self.error) or type(self.error).__name__)
        return data

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    async def aclose(self) -> None:
        """`close`, and a turn of the loop, in which asyncio closes the socket: a loop
        that ends right after (a window quitting) would leave it to the collector."""
        self.close()
        await asyncio.sleep(0)


class BulkTransport(httpx.AsyncBaseTransport):
    """See the module's docstring."""

    def __init__(self, context: ssl.SSLContext, *, trust_env: bool = True) -> None:
        self.context = context
        self.trust_env = trust_env
        self._httpx: httpx.AsyncBaseTransport | None = None  # for what is not read here
        self._idle: dict[tuple[str, str, int], list[_Link]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        body = _known_body(request)
        if url.scheme not in ("http", "https") or body is None:
            return await self._fallback().handle_async_request(request)
        timeouts = request.extensions.get("timeout", {})
        head = _request_head(request)
        origin = (url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80))
        link = self._reused(origin)
        if link is None:
            link = await self._connect(origin, timeouts.get("connect"))
        try:
            await link.write(head + body, timeouts.get("write"))
            version, status, reason, headers, rest = await _response_head(
                link, timeouts.get("read")
            )
        except BaseException:
            await link.aclose()
            raise
        stream = _Body(self, origin, link, rest, version, headers, timeouts.get("read"))
        if request.method == "HEAD" or status in (204, 304):
            stream.chunked, stream.length = False, 0  # no body, whatever the head says
        return httpx.Response(
            status,
            headers=headers,
            stream=stream,
            extensions={"http_version": b"HTTP/1." + version, "reason_phrase": reason},
        )

    def _fallback(self) -> httpx.AsyncBaseTransport:
        if self._httpx is None:
            self._httpx = httpx.AsyncHTTPTransport(verify=self.context, trust_env=self.trust_env)
        return self._httpx

    def _reused(self, origin: tuple[str, str, int]) -> _Link | None:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # connections belong to the loop that made them
            self._close_idle()
            self._loop = loop
        links = self._idle.get(origin, [])
        while links:
            link = links.pop()
            if link.reusable:
                return link
            link.close()
        return None

    def release(self, origin: tuple[str, str, int], link: _Link) -> None:
        """A connection whose response was read to its end, kept for the next request."""
        links = self._idle.setdefault(origin, [])
        if len(links) >= MAX_IDLE or asyncio.get_running_loop() is not self._loop:
            link.close()
            return
        link.idle_since = time.monotonic()
        links.append(link)

    async def _connect(self, origin: tuple[str, str, int], timeout: float | None) -> _Link:
        scheme, host, port = origin
        loop = asyncio.get_running_loop()
        secure = scheme == "https"
        context, name = (self.context, host) if secure else (None, None)
        try:
            async with asyncio.timeout(timeout):
                if _address(host):  # one way to try
                    _, link = await loop.create_connection(
                        _Link, host, port, ssl=context, server_hostname=name
                    )
                    return link
                # A name: RFC 8305, as httpx's anyio does (a dead IPv6 route costs 250 ms,
                # not the whole connect timeout), by a race that closes what it tried.
                sock = await open_socket(host, port)
                try:
                    _, link = await loop.create_connection(
                        _Link, sock=sock, ssl=context, server_hostname=name
                    )
                except BaseException:
                    sock.close()
                    raise
        except TimeoutError:
            raise httpx.ConnectTimeout(f"timed out connecting to {host}:{port}") from None
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__) from exc
        return link

    def _close_idle(self) -> None:
        for links in self._idle.values():
            for link in links:
                link.close()
        self._idle.clear()

    async def aclose(self) -> None:
        self._close_idle()
        await asyncio.sleep(0)  # asyncio closes their sockets in the loop's next turn
        if self._httpx is not None:
            await self._httpx.aclose()


def _address(host: str) -> bool:
    """`host` is an IP address, not a name."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _known_body(request: httpx.Request) -> bytes | None:
    """The request's body when it is all in memory (a JSON body is), else None."""
    try:
        content = request.content
    except httpx.RequestNotRead:
        return None
    if content and "content-length" not in request.headers:
        return None
    return content


def _request_head(request: httpx.Request) -> bytes:
    lines = [b"%s %s HTTP/1.1" % (request.method.encode("ascii"), request.url.raw_path)]
    for name, value in request.headers.raw:
        if not _TOKEN.fullmatch(name) or _FORBIDDEN.search(value):
            raise httpx.LocalProtocolError(f"invalid header {name!r}")
        lines.append(name + b": " + value)
    return b"\r\n".join(lines) + b"\r\n\r\n"


async def _response_head(
    link: _Link, timeout: float | None
) -> tuple[bytes, int, bytes, list[tuple[bytes, bytes]], bytes]:
    """(minor version, status, reason, headers, the bytes after the head), past any
    interim (1xx) response."""
    data = b""
    while True:
        found = _HEAD_END.search(data)
        while found is None:
            more = await link.read(timeout)
            if not more:
                if data:
                    raise httpx.RemoteProtocolError("the server closed in its response's head")
                raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
            data += more
            if len(data) > MAX_HEAD and _HEAD_END.search(data, 0, MAX_HEAD) is None:
                raise httpx.RemoteProtocolError("the server's response head is too large")
            found = _HEAD_END.search(data)
        head, data = data[: found.start()], data[found.end() :]
        status_line, *lines = head.split(b"\n")
        matched = _STATUS.fullmatch(status_line.rstrip(b"\r"))
        if matched is None:
            raise httpx.RemoteProtocolError(f"malformed status line: {status_line!r}")
        status = int(matched.group(2))
        if 100 <= status < 200:
            if status == 101:
                raise httpx.RemoteProtocolError("the server switched protocols")
            continue  # 100 Continue, 103 Early Hints: the response follows
        headers = []
        for line in lines:
            name, colon, value = line.rstrip(b"\r").partition(b":")
            if not colon or not _TOKEN.fullmatch(name):
                raise httpx.RemoteProtocolError(f"the server sent a malformed header: {line!r}")
            headers.append((name, value.strip(b" \t")))
        return matched.group(1), status, matched.group(3) or b"", headers, data


class _Chunked:
    """The chunked coding undone in bulk: `feed` returns all the data complete chunks
    (and the start of an incomplete one) hold; `done` once the last chunk and the
    trailers are in."""

    def __init__(self) -> None:
        self.left = 0  # data bytes of the current chunk still to come
        self.crlf = False  # the current chunk's data is in; its CRLF is not
        self.trailers = False
        self.done = False
        self.extra = b""  # bytes after the message: the connection cannot be reused
        self._pending = b""

    def feed(self, data: bytes) -> bytes:
        buffer = self._pending + data if self._pending else data
        size = len(buffer)
        out: list[bytes] = []
        at = 0
        while at < size:
            if self.left:
                end = min(size, at + self.left)
                out.append(buffer[at:end])
                self.left -= end - at
                at = end
                self.crlf = not self.left
                continue
            if self.crlf:
                if buffer[at : at + 1] == b"\n":
                    at += 1
                elif size - at < 2:
                    break
                elif buffer[at : at + 2] == b"\r\n":
                    at += 2
                else:
                    raise httpx.RemoteProtocolError(
                        f"malformed chunk footer: {buffer[at : at + 2]!r} (expected b'\\r\\n')"
                    )
                self.crlf = False
                continue
            if self.trailers:
                end = buffer.find(b"\n", at)
                if end < 0:
                    break
                line, at = buffer[at:end], end + 1
                if not line.rstrip(b"\r"):
                    self.done = True
                    self.extra = buffer[at:]
                    return b"".join(out)
                continue
            matched = _CHUNK_SIZE.match(buffer, at)
            if matched is None:
                if buffer.find(b"\n", at) >= 0 or size - at > 1024:
                    raise httpx.RemoteProtocolError(
                        f"illegal chunk header: {buffer[at : at + 40]!r}"
                    )
                break
            at = matched.end()
            self.left = int(matched.group(1), 16)
            self.trailers = not self.left
        self._pending = buffer[at:]
        return b"".join(out)


class _Body(httpx.AsyncByteStream):
    """A response's body: chunked, of a Content-Length, or up to the connection's end."""

    def __init__(
        self,
        transport: BulkTransport,
        origin: tuple[str, str, int],
        link: _Link,
        first: bytes,
        version: bytes,
        headers: list[tuple[bytes, bytes]],
        timeout: float | None,
    ) -> None:
        self.transport = transport
        self.origin = origin
        self.link = link
        self.first = first
        self.timeout = timeout
        self.finished = False  # read to its end, with nothing after it
        self.closed = False
        fields = {name.lower(): value for name, value in headers}
        coding = fields.get(b"transfer-encoding", b"").lower()
        self.chunked = coding.rsplit(b",", 1)[-1].strip() == b"chunked"
        length = fields.get(b"content-length")
        self.length: int | None = None
        if not self.chunked and length is not None:
            if not length.strip().isdigit():
                raise httpx.RemoteProtocolError(f"bad Content-Length: {length!r}")
            self.length = int(length)
        connection = fields.get(b"connection", b"").lower()
        self.keep = version == b"1" and b"close" not in connection
        if coding and not self.chunked:
            self.keep = False  # read up to the close

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self.chunked:
            pieces = self._chunked()
        elif self.length is not None:
            pieces = self._sized(self.length)
        else:
            pieces = self._to_close()
        async for piece in pieces:
            yield piece

    async def _chunked(self) -> AsyncIterator[bytes]:
        decoder = _Chunked()
        data = self.first
        while True:
            if data:
                piece = decoder.feed(data)
                if piece:
                    yield piece
                if decoder.done:
                    self.finished = not decoder.extra
                    return
            data = await self.link.read(self.timeout)
            if not data:
                raise httpx.RemoteProtocolError(
                    "peer closed connection without sending complete message body "
                    "(incomplete chunked read)"
                )

    async def _sized(self, length: int) -> AsyncIterator[bytes]:
        data, left = self.first, length
        while True:
            if data:
                piece, data = data[:left], data[left:]
                left -= len(piece)
                if piece:
                    yield piece
            if not left:
                self.finished = not data
                return
            data = await self.link.read(self.timeout)
            if not data:
                raise httpx.RemoteProtocolError(
                    "peer closed connection without sending complete message body "
                    f"(received {length - left} bytes, expected {length})"
                )

    async def _to_close(self) -> AsyncIterator[bytes]:
        self.keep = False
        data = self.first
        while True:
            if data:
                yield data
            data = await self.link.read(self.timeout)
            if not data:
                return

    async def aclose(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.finished and self.keep:
            self.transport.release(self.origin, self.link)
        else:
            await self.link.aclose()


__all__ = ["BulkTransport", "leg_client"]
