"""Fixtures for pane tests: an asyncio loop on Qt (qasync), as the app runs."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator

import pytest
import qasync
from PySide6.QtWidgets import QApplication


@pytest.fixture
def qloop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    # qasync does not install asyncio's async-generator hooks; without them an
    # unfinished generator (an HTTP stream) is finalized outside the loop.
    old_hooks = sys.get_asyncgen_hooks()
    sys.set_asyncgen_hooks(
        firstiter=loop._asyncgen_firstiter_hook,  # type: ignore[attr-defined]
        finalizer=loop._asyncgen_finalizer_hook,  # type: ignore[attr-defined]
    )
    try:
        yield loop
    finally:
        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        sys.set_asyncgen_hooks(*old_hooks)
        asyncio.set_event_loop(None)
        loop.close()
