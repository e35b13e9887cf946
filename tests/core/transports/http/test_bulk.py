"""The legs' HTTP/1.1 transport: bodies come out as they are read, not chunk by chunk.

A raw loopback server writes each response exactly as the test gives it, so chunk
framing, cuts and keep-alive are the test's to choose.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import httpx
import pytest

from melgui.core.transports.http.bulk import READ_MOST, BulkTransport, _Chunked, leg_client

EVENTS = [b'data: {"n": %d}\n\n' % n for n in range(200)]


def chunked(pieces: list[bytes], trailer: bytes = b"") -> bytes:
    body = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(piece), piece) for piece in pieces)
    return body + b"0\r\n" + trailer + b"\r\n"


def reply(body: bytes, *headers: bytes) -> bytes:
    head = [b"HTTP/1.1 200 OK", b"Content-Type: text/event-stream", *headers]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


Answer = Callable[[int], bytes]  # the request's number on its connection -> the reply


@asynccontextmanager
async def raw_server(answer: Answer, connections: list[int]) -> AsyncIterator[str]:
    """Answers each request with `answer(n)` written in one go, closing after a reply
    that says so (or none); counts connections."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        number = 0
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                answered = answer(number)
                writer.write(answered)
                number += 1
                await writer.drain()
                if not answered or b"Connection: close" in answered:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1/chat/completions"
    finally:
        server.close()


async def read_body(client: httpx.AsyncClient, url: str) -> list[bytes]:
    async with client.stream("POST", url, json={"stream": True}) as r:
        assert r.status_code == 200
        return [piece async for piece in r.aiter_bytes()]


async def test_a_read_brings_many_events_in_one_piece() -> None:
    """httpx hands over one piece per HTTP chunk (200 here); this transport what it read."""
    connections: list[int] = []
    answer = reply(chunked(EVENTS), b"Transfer-Encoding: chunked")
    async with raw_server(lambda n: answer, connections) as url, leg_client() as client:
        pieces = await read_body(client, url)
    assert b"".join(pieces) == b"".join(EVENTS)
    assert len(pieces) < len(EVENTS) / 4


async def test_what_piled_up_while_the_reader_was_busy_comes_in_bounded_pieces() -> None:
    """A reader busy elsewhere (a window drawing) lets megabytes pile up; they come out a
    bounded piece at a time, so no step of the loop parses and shows them all at once."""
    body = b"".join(b'data: {"n": %d}\n\n' % n for n in range(60_000))  # about 1.1 MB
    answer = reply(body, b"Content-Length: %d" % len(body))
    connections: list[int] = []
    async with (
        raw_server(lambda n: answer, connections) as url,
        leg_client() as client,
        client.stream("POST", url, json={"stream": True}) as r,
    ):
        await asyncio.sleep(0.3)  # all of it arrives meanwhile (loopback)
        pieces = [piece async for piece in r.aiter_bytes()]
    assert b"".join(pieces) == body
    assert max(len(piece) for piece in pieces) <= READ_MOST
    assert len(pieces) >= len(body) // READ_MOST


async def test_keep_alive_reuses_the_connection_unless_the_server_closes() -> None:
    def answer(number: int) -> bytes:
        close = (b"Connection: close",) if number == 1 else ()
        return reply(chunked(EVENTS[:3]), b"Transfer-Encoding: chunked", *close)

    connections: list[int] = []
    async with raw_server(answer, connections) as url, leg_client() as client:
        for _ in range(3):
            assert b"".join(await read_body(client, url)) == b"".join(EVENTS[:3])
    assert len(connections) == 2  # the second reply said close: the third made a new one


async def test_content_length_and_read_to_close_bodies() -> None:
    body = b"".join(EVENTS)
    sized = reply(body, b"Content-Length: %d" % len(body))
    connections: list[int] = []
    async with raw_server(lambda n: sized, connections) as url, leg_client() as client:
        assert b"".join(await read_body(client, url)) == body
        assert b"".join(await read_body(client, url)) == body
    assert len(connections) == 1
    closing = reply(body, b"Connection: close")
    async with raw_server(lambda n: closing, []) as url, leg_client() as client:
        assert b"".join(await read_body(client, url)) == body


async def test_a_body_cut_short_is_a_protocol_error() -> None:
    cut = reply(chunked(EVENTS)[:-40], b"Transfer-Encoding: chunked", b"Connection: close")
    async with raw_server(lambda n: cut, []) as url, leg_client() as client:
        with pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked read"):
            await read_body(client, url)


async def test_no_response_at_all() -> None:
    async with raw_server(lambda n: b"", []) as url, leg_client() as client:
        with pytest.raises(httpx.RemoteProtocolError, match="without sending a response"):
            await read_body(client, url)


async def test_a_streamed_request_body_goes_to_httpx() -> None:
    async def body() -> AsyncIterator[bytes]:
        yield b"{}"

    answer = reply(chunked(EVENTS[:20]), b"Transfer-Encoding: chunked")
    async with (
        raw_server(lambda n: answer, []) as url,
        leg_client() as client,
        client.stream("POST", url, content=body(), headers={"Content-Length": "2"}) as r,
    ):
        pieces = [piece async for piece in r.aiter_bytes()]
    assert len(pieces) == 20  # one per HTTP chunk: httpx's own


def test_a_proxy_in_the_environment_leaves_httpx_its_transport(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in (
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
    ):
        monkeypatch.delenv(name, raising=False)
    assert isinstance(leg_client()._transport, BulkTransport)
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    assert not isinstance(leg_client()._transport, BulkTransport)


def test_the_chunked_coding_split_anywhere() -> None:
    body = chunked([b"hello ", b"w\r\norld"], b"X-Trailer: 1\r\n")
    expected = b"hello w\r\norld"
    for cut in range(len(body) + 1):
        decoder = _Chunked()
        out = decoder.feed(body[:cut]) + decoder.feed(body[cut:])
        assert (out, decoder.done, decoder.extra) == (expected, True, b"")
    decoder = _Chunked()
    out = b"".join(decoder.feed(body[n : n + 1]) for n in range(len(body)))
    assert (out, decoder.done) == (expected, True)


def test_an_illegal_chunk_header() -> None:
    with pytest.raises(httpx.RemoteProtocolError, match="illegal chunk header"):
        _Chunked().feed(b"zz\r\nabc\r\n")
    with pytest.raises(httpx.RemoteProtocolError, match="malformed chunk footer"):
        _Chunked().feed(b"3\r\nabcXY")


def test_melgui_http_httpx_asks_for_httpx_own_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("ALL_PROXY", raising=False)
    monkeypatch.setenv("MELGUI_HTTP", "httpx")
    assert not isinstance(leg_client()._transport, BulkTransport)
    monkeypatch.setenv("MELGUI_HTTP", "")
    assert isinstance(leg_client()._transport, BulkTransport)
