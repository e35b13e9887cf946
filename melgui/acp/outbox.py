"""A session's messages to the client, sent in the order the loop produced them.

The loop's observers are plain functions; sending is async. Updates go through one queue
and one task, so a tool call's start always precedes its updates and the prompt's
response goes out only after `flush()`. Updates that pile up while one is being sent
are merged where `merge` allows (consecutive text chunks become one), so a fast stream
costs the client fewer messages, never different text.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

log = logging.getLogger(__name__)

Send = Callable[[Any], Awaitable[None]]
Action = Callable[[], Coroutine[Any, Any, None]]
Merge = Callable[[Any, Any], Any | None]


class _Action:
    def __init__(self, run: Action) -> None:
        self.run = run


class Outbox:
    def __init__(self, send: Send, merge: Merge | None = None) -> None:
        self._send = send
        self._merge = merge
        self._items: deque[Any] = deque()
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._actions: set[asyncio.Task[None]] = set()
        self._pump = asyncio.get_running_loop().create_task(self._run())

    def put(self, update: Any) -> None:
        self._push(update)

    def start(self, action: Action) -> None:
        """Run `action` (e.g. a permission request) once the updates before it are sent,
        without holding up the ones after it."""
        self._push(_Action(action))

    def _push(self, item: Any) -> None:
        self._items.append(item)
        self._idle.clear()
        self._wake.set()

    async def flush(self) -> None:
        await self._idle.wait()

    def _next(self) -> Any:
        item = self._items.popleft()
        if self._merge is None or isinstance(item, _Action):
            return item
        while self._items and not isinstance(self._items[0], _Action):
            merged = self._merge(item, self._items[0])
            if merged is None:
                break
            item = merged
            self._items.popleft()
        return item

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._items:
                item = self._next()
                try:
                    if isinstance(item, _Action):
                        task = asyncio.get_running_loop().create_task(item.run())
                        self._actions.add(task)
                        task.add_done_callback(self._actions.discard)
                    else:
                        await self._send(item)
                except Exception as exc:  # the client went away: nothing more to tell it
                    log.warning("could not send a session update: %s", exc)
            self._idle.set()

    async def aclose(self) -> None:
        tasks = [self._pump, *self._actions]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
