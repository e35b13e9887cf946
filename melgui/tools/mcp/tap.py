"""Sits between a transport and the ClientSession, writing each message to a LineLog."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage

from melgui.core.runtime.deadline import within
from melgui.tools.mcp.protocol_log import LineLog


def _text(message: SessionMessage | Exception) -> str:
    if isinstance(message, Exception):
        return f"error: {message}"
    return message.message.model_dump_json(by_alias=True, exclude_unset=True)


@asynccontextmanager
async def tapped(streams: TransportStreams, log: LineLog) -> AsyncIterator[TransportStreams]:
    inner_read, inner_write = streams
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def inbound() -> None:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            async with read_writer:
                async for message in inner_read:
                    log.add("← " + _text(message))
                    await read_writer.send(message)

    async def outbound() -> None:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            async with write_reader:
                async for message in write_reader:
                    log.add("→ " + _text(message))
                    await inner_write.send(message)

    tasks = [asyncio.ensure_future(inbound()), asyncio.ensure_future(outbound())]
    try:
        yield read_stream, write_stream
    finally:
        # Let queued outbound messages (a cancel notification) reach the transport.
        write_stream.close()
        with contextlib.suppress(TimeoutError):
            await within(asyncio.shield(tasks[1]), 0.5)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for stream in (read_stream, read_writer, write_reader):
            await stream.aclose()
