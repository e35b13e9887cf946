"""A session's messages to the client, sent in the order the loop produced them.

The loop's observers are plain functions; sending is async. Updates go through one queue
and one task, so a tool call's start always precedes its updates and the prompt's
response goes out only after `flush()`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger(__name__)

Send = Callable[[Any], Awaitable[None]]
Action = Callable[[], Awaitable[None]]


class Outbox:
    def __init__(self, send: Send) -> None:
        self._send = send
        self._queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._actions: set[asyncio.Task[None]] = set()
        self._pump = asyncio.get_running_loop().create_task(self._run())

    def put(self, update: Any) -> None:
        self._queue.put_nowait(("update", update))

    def start(self, action: Action) -> None:
        """Run `action` (e.g. a permission request) once the updates before it are sent,
        without holding up the ones after it."""
        self._queue.put_nowait(("action", action))

    async def flush(self) -> None:
        await self._queue.join()

    async def _run(self) -> None:
        while True:
            kind, item = await self._queue.get()
            try:
                if kind == "update":
                    await self._send(item)
                else:
                    task = asyncio.get_running_loop().create_task(item())
                    self._actions.add(task)
                    task.add_done_callback(self._actions.discard)
            except Exception as exc:  # the client went away: nothing more to tell it
                log.warning("could not send a session update: %s", exc)
            finally:
                self._queue.task_done()

    async def aclose(self) -> None:
        tasks = [self._pump, *self._actions]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
