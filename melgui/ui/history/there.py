"""The conversations a remote folder's main conversation ran in melgui's host there: they
are in that host's history (its store, on its machine), not this one's, and are listed
by asking it (`history/list`, over the folder's link).

    there = ThereListing("me@build", ask)       # ask(query) -> the host's rows
    ticket = there.read("search words")         # finished(ticket, rows or the exception)
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from melgui.core.store import ConversationSummary

# The host there's `history/list` for the folder, with the sidebar's search.
Ask = Callable[[str], Awaitable[list[dict[str, Any]]]]


class ThereListing(QObject):
    """`read(query)` -> ticket; `finished(ticket, rows or the exception)` once the host
    there answered (on the window's loop: the GUI thread)."""

    finished = Signal(int, object)

    def __init__(self, where: str, folder: str, ask: Ask, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.where = where  # the host's name, as the status bar says it (`me@build`)
        self.folder = folder  # the folder there
        self._ask = ask
        self._ticket = 0
        self._tasks: set[asyncio.Task[None]] = set()

    def read(self, query: str) -> int:
        self._ticket += 1
        task = asyncio.get_event_loop().create_task(self._read(self._ticket, query))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return self._ticket

    async def _read(self, ticket: int, query: str) -> None:
        try:
            rows = [self._summary(row) for row in await self._ask(query)]
        except Exception as exc:  # the link's trouble, said by the sidebar in one line
            self.finished.emit(ticket, exc)
            return
        self.finished.emit(ticket, rows)

    def _summary(self, row: dict[str, Any]) -> ConversationSummary:
        return ConversationSummary(
            id=str(row["id"]),
            folder=self.folder,
            title=str(row.get("title") or ""),
            created_at=float(row["created_at"]),
            updated_at=float(row["updated_at"]),
        )

    def stop(self) -> None:
        """No more answers: the asks still on their way are cancelled."""
        for task in list(self._tasks):
            task.cancel()
