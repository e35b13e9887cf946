"""A remote folder's checkpoint links on call cards: the host there keeps the records
(docs/host-protocol.md, `checkpoint/calls`), this keeps what it last said of each call.

A card asks `note(call_id)` as it draws; a call not known yet is asked of the host in
one batch with the others, and the cards are drawn again (`redraw`) when it answers.
After an undo there, everything is asked again (a record's "undone" changed).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from melgui.core.protocol.tooling import RestoresThere
from melgui.core.store.checkpoints.changes import FileState
from melgui.core.store.checkpoints.log import CheckpointRecord
from melgui.core.store.checkpoints.restore import CHOICES, PathPlan
from melgui.core.store.checkpoints.sent import record_from_json
from melgui.remote.link import LinkError
from melgui.ui.checkpoints.review_bar import FileLines
from melgui.ui.runtime.aio import TaskKeeper

Known = tuple[CheckpointRecord, CheckpointRecord | None]  # a record, and what undid it


class CheckpointsThere:
    """`there`: the remote folder's tools; `redraw`: draw the cards again."""

    def __init__(self, there: RestoresThere, tasks: TaskKeeper, redraw: Callable[[], None]):
        self.there = there
        self.tasks = tasks
        self.redraw = redraw
        self.known: dict[str, Known | None] = {}  # by the model's call id; None: no record
        self.by_id: dict[int, CheckpointRecord] = {}
        self._wanted: set[str] = set()
        self._asking: asyncio.Task[None] | None = None
        self.problem = ""  # why the host could not be asked, the last time it could not

    def note(self, call_id: str) -> Known | None:
        """The call's record as last heard (None: none, or not heard yet: then asked)."""
        if call_id in self.known:
            return self.known[call_id]
        self._wanted.add(call_id)
        if self._asking is None:
            self._asking = self.tasks.spawn(self._ask(), what="reading checkpoints there")
        return None

    def forget(self) -> None:
        """Ask again for every call shown (after an undo or a redo there)."""
        self._wanted |= set(self.known)
        self.known.clear()
        if self._asking is None and self._wanted:
            self._asking = self.tasks.spawn(self._ask(), what="reading checkpoints there")

    async def _ask(self) -> None:
        try:
            await asyncio.sleep(0)  # the cards drawn in the same pass join this batch
            while self._wanted:
                calls, self._wanted = sorted(self._wanted), set()
                try:
                    answer = await self.there.ask_there("checkpoint/calls", calls=calls)
                except LinkError as exc:  # not now: asked again when a card is drawn
                    self.problem = str(exc)
                    return
                self.problem = ""
                found = {call: None for call in calls} | self._read(answer["records"])
                self.known.update(found)
                self.redraw()
        finally:
            self._asking = None

    def _read(self, records: list[dict[str, Any]]) -> dict[str, Known | None]:
        found: dict[str, Known | None] = {}
        for data in records:
            record, undo = record_from_json(data)
            self.by_id[record.id] = record
            if undo is not None:
                self.by_id[undo.id] = undo
            found[record.call_id] = (record, undo)  # the latest of a call wins
        return found

    async def diff(self, record_id: int, compare: bool) -> str:
        answer = await self.there.ask_there("checkpoint/diff", record=record_id, compare=compare)
        return str(answer["text"])

    async def restore(
        self, record_id: int, plan_only: bool, choices: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """Undo checkpoint `record_id` there (a call's, or a restore's: redo)."""
        return await self.restore_all([record_id], plan_only, choices)

    async def restore_all(
        self, record_ids: list[int], plan_only: bool, choices: dict[str, str] | None = None
    ) -> dict[str, Any]:
        return await self.there.ask_there(
            "checkpoint/restore", records=record_ids, plan_only=plan_only, choices=choices or {}
        )

    # -- the turn's review bar -----------------------------------------------------------

    async def turn(self, calls: list[str]) -> list[tuple[CheckpointRecord, list[FileLines]]]:
        """The checkpoints of the turn's calls that changed files and are not undone, each
        with its files' lines added and removed."""
        if not calls:
            return []
        answer = await self.there.ask_there("checkpoint/calls", calls=calls, lines=True)
        found = []
        for data in answer["records"]:
            record, undo = record_from_json(data)
            lines = [FileLines(str(p), int(a), int(r)) for p, a, r in data.get("lines") or []]
            if record.files and undo is None:
                found.append((record, lines))
        return found

    async def undo_file(self, calls: list[str], path: str) -> dict[str, Any] | None:
        """`path` back as it was before the turn's calls, by the host there; every other
        file stays as it is now."""
        records = [record for record, _ in await self.turn(calls)]
        if not records:
            return None
        others = {c.path for r in records for c in r.files if c.path != path}
        done = await self.restore_all([r.id for r in records], False, dict.fromkeys(others, "now"))
        self.forget()
        return done


def plan_there(path: str, texts: dict[str, str | None]) -> PathPlan:
    """A conflict the host there sent, as the window's dialog takes it: a version it has
    no file for is None; the text itself comes from `texts`, not from a blob here."""
    states = {c: None if texts.get(c) is None else FileState("", c) for c in CHOICES}
    return PathPlan(path, states["before"], states["agent"], states["now"])
