"""The history sidebar: this folder's conversations, newest first; open, rename, delete
with undo, search, export and import. Storage trouble becomes a one-line `problem`.

A remote folder whose main conversation runs in melgui's host there lists the ones kept
in that host's history too (`list_there`), asked over the folder's link; those are only
opened (in the host there): rename, delete and export are not offered for them."""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TypeVar

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from melgui.core.store import ConversationSummary, Store
from melgui.core.store.export import (
    ConversationImportError,
    export_json_text,
    export_markdown,
    import_json,
)
from melgui.ui.history.model import ID_ROLE, UNTITLED, ConversationListModel
from melgui.ui.history.reader import ListingReader
from melgui.ui.history.row_delegate import ConversationRowDelegate
from melgui.ui.history.there import ThereListing
from melgui.ui.history.undo_bar import UndoBar
from melgui.ui.runtime.look.tokens import SPACE_XS

SEARCH_DELAY_MS = 150
ExportFormat = Literal["markdown", "json"]
T = TypeVar("T")


class HistorySidebar(QWidget):
    """The list is queried on a thread of its own (a file store; an in-memory one is
    queried at once): `refresh()` asks, `listed` says the list shown is the answer."""

    conversationOpened = Signal(str)  # the person picked a stored conversation
    newConversationRequested = Signal()
    problem = Signal(str)  # one line for the status bar
    listed = Signal()  # the list now shows the store as of the last refresh()

    def __init__(self, store: Store, folder: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.folder = folder
        self.current_id: str | None = None
        # The conversation shown has a message: listed before its host has written it.
        self.said: Callable[[], bool] = lambda: False
        self.model = ConversationListModel(self)
        self.model.renameRequested.connect(self.rename)

        self.notice = QLabel(self)
        self.notice.setWordWrap(True)
        self.notice.setObjectName("historyNotice")
        self.notice.setVisible(bool(store.notice))
        self.notice.setText(store.notice or "")
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Search conversations")
        self.search.setClearButtonEnabled(True)
        self.new_button = QPushButton("New", self)
        self.new_button.setToolTip("Start a new conversation")
        self.new_button.clicked.connect(self.newConversationRequested)
        self.list = QListView(self)
        self.list.setModel(self.model)
        self.list.setUniformItemSizes(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._delegate = ConversationRowDelegate(self.list)  # keep its Python side alive
        self.list.setItemDelegate(self._delegate)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.EditKeyPressed)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._context_menu)
        self.list.clicked.connect(self._open_index)
        self.list.activated.connect(self._open_index)
        self.empty = QLabel(self)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self.undo_bar = UndoBar(self)
        self.undo_bar.undoRequested.connect(self.undelete)

        top = QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(self.new_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACE_XS, SPACE_XS, SPACE_XS, SPACE_XS)
        layout.addWidget(self.notice)
        layout.addLayout(top)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.empty)
        layout.addWidget(self.undo_bar)

        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self.refresh)
        self.search.textChanged.connect(lambda _text: self._search_timer.start())
        self.list.installEventFilter(self)
        self._listing = ListingReader(self)
        # Queued even when the answer comes back at once: `_wanted` is set by then.
        self._listing.finished.connect(self._on_listed, Qt.ConnectionType.QueuedConnection)
        self._wanted = 0  # the listing to show: the last one asked for
        self.there: ThereListing | None = None  # the host there's history, when listed
        self._there_wanted = 0  # its listing to show, asked once this machine's answered
        self._here: list[ConversationSummary] = []  # this machine's rows, until then
        self.refresh()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Delete removes the selected conversation, Undo brings it back (list focused)."""
        if watched is self.list and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            if event.matches(QKeySequence.StandardKey.Delete):
                self._delete_selected()
                return True
            if event.matches(QKeySequence.StandardKey.Undo):
                self.undo()
                return True
        return super().eventFilter(watched, event)

    # -- what the window calls -------------------------------------------------------

    def refresh(self) -> None:
        """Reload the list from the store (after a turn, a search, a rename...), and
        from the host there's history when it is listed."""
        self._there_wanted = 0  # an answer of the host there still coming is not shown
        query, behind = self.search.text(), self.store.behind
        keep = self.current_id if self.said() else None
        if self.store.path is not None:  # read by the listing thread; shown when it answers
            after = behind.last if behind is not None else None  # what the writer has yet to do
            self._wanted = self._listing.read(self.store.path, self.folder, query, after, keep)
            return
        rows = self._safe(
            lambda: self.store.conversations(self.folder, query=query, empty=False, keep=keep)
        )
        if rows is not None:
            self._listed_here(rows)

    def list_there(self, there: ThereListing | None) -> None:
        """List the conversations of the host there's history too (None: no more)."""
        if self.there is not None:
            self.there.stop()
            self.there.deleteLater()
        self.there = there
        if there is not None:
            there.setParent(self)
            there.finished.connect(self._on_there, Qt.ConnectionType.QueuedConnection)
        self.refresh()

    def lives_there(self, cid: str) -> bool:
        """`cid` is kept in the history of the host there (not this machine's)."""
        return self.model.is_there(cid)

    @property
    def listing(self) -> bool:
        """A refresh is on its way: the list shown may be older than the store."""
        return self._wanted != 0 or self._there_wanted != 0

    def _on_listed(self, ticket: int, result: object) -> None:
        if ticket != self._wanted:
            return  # a later refresh was asked for: its answer is the one to show
        self._wanted = 0
        if isinstance(result, sqlite3.Error | OSError):
            self.problem.emit(f"History: {getattr(result, 'strerror', None) or result}")
        elif isinstance(result, BaseException):
            raise result
        elif isinstance(result, list):
            self._listed_here(result)

    def _listed_here(self, rows: list[ConversationSummary]) -> None:
        """This machine's rows: shown, or with the host there's once it answers."""
        if self.there is None:
            self._show_rows(rows)
            return
        self._here = rows
        self._there_wanted = self.there.read(self.search.text())

    def _on_there(self, ticket: int, result: object) -> None:
        if ticket != self._there_wanted or self.there is None:
            return  # a later refresh was asked for: its answer is the one to show
        self._there_wanted = 0
        here, self._here = self._here, []
        if not isinstance(result, list):  # this machine's rows are shown all the same
            self.problem.emit(f"History on {self.there.where}: {result}")
            self._show_rows(here)
            return
        rows = sorted([*here, *result], key=lambda row: row.updated_at, reverse=True)
        self._show_rows(rows, frozenset(row.id for row in result))

    def _show_rows(
        self, rows: list[ConversationSummary], there: frozenset[str] = frozenset()
    ) -> None:
        self.model.set_rows(rows, there, self.there.where if self.there is not None else "")
        self._select(self.current_id)
        searching = bool(self.search.text().strip())
        self.empty.setText("Nothing matches." if searching else "No conversations yet.")
        self.empty.setVisible(not rows)
        self.listed.emit()

    def set_folder(self, folder: str) -> None:
        self.folder = folder
        self.current_id = None
        self.undo_bar.dismiss()
        self.refresh()

    def set_current(self, cid: str | None) -> None:
        """Mark the conversation the window shows (without emitting conversationOpened)."""
        self.current_id = cid
        self.refresh()

    def ids(self) -> list[str]:
        """The ids listed, top to bottom."""
        return [row.id for row in self.model.rows()]

    # -- actions ---------------------------------------------------------------------

    def open(self, cid: str) -> None:
        if cid == self.current_id:
            return
        self.current_id = cid
        self._select(cid)
        self.conversationOpened.emit(cid)

    def rename(self, cid: str, title: str) -> None:
        if self._kept_there(cid, "renamed"):
            return
        if self._safe(lambda: self.store.rename(cid, title), ok=True):
            self.refresh()

    def start_rename(self, cid: str) -> None:
        row = self.model.row_of(cid)
        if row >= 0:
            self.list.edit(self.model.index(row))

    def delete(self, cid: str) -> None:
        """Hide the conversation; the undo bar (or Ctrl+Z) brings it back."""
        if self._kept_there(cid, "deleted"):
            return
        summary = self._safe(lambda: self.store.summary(cid))
        if not self._safe(lambda: self.store.delete(cid), ok=True):
            return
        self.undo_bar.offer(cid, (summary.title if summary else "") or UNTITLED)
        self.refresh()
        if cid == self.current_id:
            self.current_id = None
            self.newConversationRequested.emit()

    def undo(self) -> None:
        cid = self.undo_bar.pending
        self.undo_bar.dismiss()
        if cid is not None:
            self.undelete(cid)

    def undelete(self, cid: str) -> None:
        if self._safe(lambda: self.store.undelete(cid), ok=True):
            self.refresh()

    def export_to(self, cid: str, path: str | os.PathLike[str], fmt: ExportFormat) -> bool:
        """Write the conversation to `path` (atomically); False (and `problem`) on failure."""
        render = export_markdown if fmt == "markdown" else export_json_text
        text = self._safe(lambda: render(self.store, cid))
        if text is None:
            return False
        written = bool(self._safe(lambda: _write_atomically(Path(path), text), ok=True))
        if written:
            self.problem.emit(f"Exported to {path}")  # the confirmation, in the status bar
        return written

    def import_from(self, path: str | os.PathLike[str]) -> str | None:
        """Import a JSON export into this folder; returns its id and shows it."""

        def load() -> str:
            data = Path(path).read_bytes()
            return import_json(self.store, data, folder=self.folder)

        cid = self._safe(load)
        if cid is not None:
            self.refresh()
        return cid

    # -- internals -------------------------------------------------------------------

    def _safe(self, action: Callable[[], T], ok: bool = False) -> T | None:
        try:
            result = action()
        except (sqlite3.Error, OSError) as exc:
            self.problem.emit(f"History: {getattr(exc, 'strerror', None) or exc}")
            return None
        except ConversationImportError as exc:
            self.problem.emit(f"Cannot import: {exc}")
            return None
        return True if ok else result  # type: ignore[return-value]

    def _kept_there(self, cid: str, what: str) -> bool:
        """`cid` is in the host there's history, so it cannot be `what` from here: said."""
        if not self.lives_there(cid):
            return False
        where = self.model.where
        self.problem.emit(f"History: that conversation is kept on {where}: not {what} here.")
        return True

    def _select(self, cid: str | None) -> None:
        row = self.model.row_of(cid) if cid else -1
        if row < 0:
            self.list.clearSelection()
            return
        self.list.setCurrentIndex(self.model.index(row))

    def _open_index(self, index: QModelIndex) -> None:
        cid = index.data(ID_ROLE)
        if isinstance(cid, str):
            self.open(cid)

    def _delete_selected(self) -> None:
        cid = self.list.currentIndex().data(ID_ROLE)
        if isinstance(cid, str):
            self.delete(cid)

    def _context_menu(self, point: QPoint) -> None:
        menu = self.context_menu(self.list.indexAt(point).data(ID_ROLE))
        menu.exec(self.list.viewport().mapToGlobal(point))

    def context_menu(self, cid: object) -> QMenu:
        menu = QMenu(self)
        if isinstance(cid, str):
            entries: list[tuple[str, Callable[[], object]]] = [("Open", lambda: self.open(cid))]
            if not self.lives_there(cid):  # the host there's: opened there, nothing more
                entries += [
                    ("Rename", lambda: self.start_rename(cid)),
                    ("Export as Markdown…", lambda: self._ask_export(cid, "markdown")),
                    ("Export as JSON…", lambda: self._ask_export(cid, "json")),
                    ("Delete", lambda: self.delete(cid)),
                ]
            for text, slot in entries:
                action = QAction(text, menu)
                action.triggered.connect(slot)
                menu.addAction(action)
            menu.addSeparator()
        action = QAction("Import conversation…", menu)
        action.triggered.connect(self._ask_import)
        menu.addAction(action)
        return menu

    def _ask_export(self, cid: str, fmt: ExportFormat) -> None:
        summary = self._safe(lambda: self.store.summary(cid))
        stem = _file_stem(summary.title if summary else "") or "conversation"
        suffix, kind = (
            (".md", "Markdown (*.md)") if fmt == "markdown" else (".json", "JSON (*.json)")
        )
        path, _ = QFileDialog.getSaveFileName(self, "Export conversation", stem + suffix, kind)
        if path:
            self.export_to(cid, path, fmt)

    def _ask_import(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import conversation", "", "JSON (*.json)")
        if path:
            cid = self.import_from(path)
            if cid is not None:
                self.open(cid)


def _write_atomically(path: Path, text: str) -> None:
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def export_default(folder: str, title: str, suffix: str) -> str:
    """Where an export is offered first: the project folder, named for the title."""
    return str(Path(folder) / ((_file_stem(title) or "conversation") + suffix))


def _file_stem(title: str) -> str:
    safe = "".join(c if c.isalnum() or c in " -_" else " " for c in title)
    return "-".join(safe.split())[:60]
