"""Inspector: the calls of one session (list + detail, with their state) and its wire log.

Constructible on its own from a SessionBridge (worker panes embed a small one). The
diff of write_file / edit_file comes from `diff_provider`, run in a worker thread;
without one (or when it fails) the arguments are shown instead.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QListWidgetItem,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from melgui.core.protocol.calls import exit_code_of, format_duration
from melgui.core.store.records import ToolCallRecord
from melgui.ui.chat.blocks.tool_cards import mark_of
from melgui.ui.inspector.argument_view import DiffProvider, has_diff
from melgui.ui.inspector.call_book import CallBook, CallRecord
from melgui.ui.inspector.call_detail import CallDetail
from melgui.ui.inspector.call_list import CALL_ID_ROLE, CallList
from melgui.ui.inspector.wire_view import WireLogView
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.bridge import SessionBridge
from melgui.ui.runtime.theme import LIGHT, Colors


class Inspector(QWidget):
    pendingChanged = Signal(int)  # how many calls of this session wait for a person

    def __init__(
        self,
        bridge: SessionBridge,
        colors: Colors = LIGHT,
        *,
        cwd: str = "",
        diff_provider: DiffProvider | None = None,
        tasks: TaskKeeper | None = None,
        book: CallBook | None = None,
        parent: QWidget | None = None,
    ) -> None:
        """`book`: the session's calls as recorded so far (an inspector built late)."""
        super().__init__(parent)
        self.bridge = bridge
        self.book = book if book is not None else CallBook(bridge, self)
        self.diff_provider = diff_provider
        self._tasks = tasks if tasks is not None else TaskKeeper()
        # Containers first, each part made in its place: a part moved into another
        # parent is restyled whole by the application's stylesheet, every time.
        self.tabs = QTabWidget(self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)
        split = QSplitter(Qt.Orientation.Vertical)
        self.tabs.addTab(split, "Calls")
        wire_page = QWidget()
        self.tabs.addTab(wire_page, "Wire log")
        self.calls = CallList(self._label_of, split)
        self.detail = CallDetail(colors, cwd or bridge.session.loop.cwd, split)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 3)
        self.wire_view = WireLogView(bridge, wire_page)
        wire_layout = QVBoxLayout(wire_page)
        wire_layout.setContentsMargins(0, 0, 0, 0)
        wire_layout.addWidget(self.wire_view)
        self.calls.currentItemChanged.connect(self._on_current)
        self.book.added.connect(self._on_added)
        self.book.changed.connect(self._on_changed)
        self.calls.add(self.book.records)  # a long reopened list: in slices

    # --- public --------------------------------------------------------------------

    def show_call(self, call_id: str) -> None:
        """Select a call (e.g. its card was clicked in the chat)."""
        item = self._item(call_id)
        if item is not None:
            self.tabs.setCurrentIndex(0)
            self.calls.setCurrentItem(item)

    def set_colors(self, colors: Colors) -> None:
        """Follow a theme change: the shown call is drawn again in `colors`."""
        self.detail.set_colors(colors)

    def load_stored(self, stored: Iterable[ToolCallRecord]) -> None:
        """Show each call of a reopened conversation as the store kept it (status,
        duration, decision, result)."""
        changed = self.book.apply_stored(stored)
        for call_id in changed:  # none waits for a person: only the labels change
            self.calls.relabel(call_id)
        shown = self.detail.record
        if shown is not None and shown.call.id in set(changed):
            self.detail.show_record(shown)
        self.pendingChanged.emit(len(self.book.pending()))

    def current_record(self) -> CallRecord | None:
        return self.detail.record

    # --- list ------------------------------------------------------------------------

    def _item(self, call_id: str) -> QListWidgetItem | None:
        return self.calls.item_for(call_id)

    def _label_of(self, call_id: str) -> str | None:
        record = self.book.get(call_id)
        return self._label(record) if record is not None else None

    def _label(self, record: CallRecord) -> str:
        duration = format_duration(record.duration)
        tail = f"  · {duration}" if duration else ""
        mark = mark_of(record.status, exit_code_of(record.result))
        return f"{mark}  {record.call.name}  {record.summary}{tail}"

    def _on_added(self, call_id: str) -> None:
        self.calls.add((call_id,))

    def _on_changed(self, call_id: str) -> None:
        record = self.book.get(call_id)
        if record is None:
            return
        self.calls.relabel(call_id)
        item = self._item(call_id) if record.awaiting_person else None
        if item is not None:
            # A call that waits for the person is brought into view at once.
            self.tabs.setCurrentIndex(0)
            self.calls.setCurrentItem(item)
            self._want_preview(record)
        if self.detail.record is record:
            self.detail.show_record(record)
        self.pendingChanged.emit(len(self.book.pending()))

    def _on_current(self, current: QListWidgetItem | None, _previous: object) -> None:
        record = self.book.get(current.data(CALL_ID_ROLE)) if current is not None else None
        if record is not None:
            self._want_preview(record)
        self.detail.show_record(record)

    # --- diff preview ----------------------------------------------------------------

    def _want_preview(self, record: CallRecord) -> None:
        request = record.request
        if record.preview is None and request is not None and request.preview:
            record.preview = request.preview  # the asker's own diff (an ACP agent's edit)
            return
        if record.preview is not None or not has_diff(record.call.name):
            return
        if record.arguments is None or record.status not in ("requested", "waiting"):
            return
        if self.diff_provider is None:
            record.preview = "(no diff preview available; see the arguments below)"
            return
        record.preview = ""  # computing; not asked twice
        self._tasks.spawn(self._compute_preview(record), what="diff preview")

    async def _compute_preview(self, record: CallRecord) -> None:
        provider = self.diff_provider
        assert provider is not None and record.arguments is not None
        try:
            diff = await asyncio.to_thread(provider, record.call.name, dict(record.arguments))
        except Exception as exc:  # a refusal (outside the folder, no match) is the preview
            diff = f"(the call would fail: {exc})"
        record.preview = diff
        with contextlib.suppress(RuntimeError):  # the view may be gone
            if self.detail.record is record:
                self.detail.show_record(record)
