"""The inspector's list of calls, one row per call id, built in slices.

A reopened conversation of 10,000 messages brings 4,000 calls; making every row (and its
label) before the window first paints cost more than the paint itself, and finding a row
by scanning the list made a reopening quadratic. Rows are found through a map, and the
rows of many calls at once are made a slice per event-loop tick, the first few at once.
A row asked for (shown, changed while waiting for a person) is made at once with the
rows before it, so the order is always the calls' order.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

CALL_ID_ROLE = Qt.ItemDataRole.UserRole
FIRST_ROWS = 100  # made at once: a small list is complete as soon as it is given
SLICE_S = 0.004  # seconds of row-making per tick, well inside a frame


class CallList(QListWidget):
    """Rows labelled by `label_of(call_id)` (None: no such call, no row)."""

    def __init__(self, label_of: Callable[[str], str | None], parent: QWidget | None = None):
        super().__init__(parent)
        self.setUniformItemSizes(True)
        self._label_of = label_of
        self._items: dict[str, QListWidgetItem] = {}
        self._queued: deque[str] = deque()
        self._queued_ids: set[str] = set()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(lambda: self._make_rows(SLICE_S))

    @property
    def complete(self) -> bool:
        """Whether every call given has its row."""
        return not self._queued

    def add(self, call_ids: Iterable[str]) -> None:
        """Rows for calls not listed yet, after the others: a few at once, the rest in slices."""
        for call_id in call_ids:
            if call_id not in self._items and call_id not in self._queued_ids:
                self._queued.append(call_id)
                self._queued_ids.add(call_id)
        self._make_rows(None, limit=FIRST_ROWS)

    def item_for(self, call_id: str) -> QListWidgetItem | None:
        """The row of `call_id`, made now (with the rows before it) if it waited its turn."""
        if call_id in self._queued_ids:
            while call_id in self._queued_ids:
                self._make_row(self._queued.popleft())
            self._schedule()
        return self._items.get(call_id)

    def relabel(self, call_id: str) -> None:
        """Label the call's row again; a row still to be made gets the label then."""
        item = self._items.get(call_id)
        label = self._label_of(call_id) if item is not None else None
        if item is not None and label is not None:
            item.setText(label)

    def _make_rows(self, budget: float | None, limit: int | None = None) -> None:
        deadline = None if budget is None else time.perf_counter() + budget
        made = 0
        while self._queued:
            self._make_row(self._queued.popleft())
            made += 1
            if limit is not None and made >= limit:
                break
            if deadline is not None and time.perf_counter() > deadline:
                break
        self._schedule()

    def _make_row(self, call_id: str) -> None:
        self._queued_ids.discard(call_id)
        label = self._label_of(call_id)
        if label is None:
            return
        item = QListWidgetItem(label)
        item.setData(CALL_ID_ROLE, call_id)
        self.addItem(item)
        self._items[call_id] = item

    def _schedule(self) -> None:
        if self._queued and not self._timer.isActive():
            self._timer.start(0)
