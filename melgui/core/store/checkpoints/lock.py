"""One checkpointed call at a time per project folder, across sessions and processes.

An asyncio lock serialises the sessions of one melgui; an flock on a file in the shadow
folder serialises melgui processes (the window and `melgui exec`). The flock is polled
so the event loop never blocks; the kernel drops it when a process dies, even by kill -9.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from collections.abc import AsyncIterator
from pathlib import Path

POLL = 0.02
_LOCKS: dict[tuple[str, int], asyncio.Lock] = {}


def _process_lock(path: str) -> asyncio.Lock:
    key = (path, id(asyncio.get_running_loop()))  # an asyncio.Lock serves one event loop
    lock = _LOCKS.get(key)
    if lock is None:
        lock = _LOCKS[key] = asyncio.Lock()
    return lock


@contextlib.asynccontextmanager
async def folder_lock(lock_file: Path) -> AsyncIterator[None]:
    """Hold the lock of the folder whose shadow lock file is `lock_file`."""
    async with _process_lock(str(lock_file)):
        lock_file.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock_file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    await asyncio.sleep(POLL)
            yield
        finally:
            os.close(fd)  # closing releases the flock
