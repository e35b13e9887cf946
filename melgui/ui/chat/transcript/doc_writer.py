"""Appending HTML to the end of a QTextDocument, in edit blocks (no widget here).

`append_html` inserts a fragment at the end and starts a fresh empty block, putting back
the first block's format that Qt drops when it merges that block into the empty one at
the cursor. `edit()` groups changes into one edit block, opened on the first change
only, so Qt lays the document out (and a view moves its scroll bar) once per group.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QObject
from PySide6.QtGui import (
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextDocumentFragment,
)

from melgui.ui.chat.transcript.hover_actions import block_key, mark_block

# The tags before a fragment's first text decide its first block's format.
_LEADING_TAGS = re.compile(r"(?:\s*<[^>]*>)*")
_FORMAT_CACHE_SIZE = 256


class DocWriter:
    def __init__(self, document: QTextDocument, parent: QObject | None = None) -> None:
        self.document = document
        self.drawing = False  # inside edit(): changes go into one edit block
        self._edit_cursor: QTextCursor | None = None
        self._scratch = QTextDocument(parent)
        self._block_formats: dict[str, QTextBlockFormat | None] = {}

    def forget_formats(self) -> None:
        """The theme changed: first-block formats are worked out again."""
        self._block_formats.clear()

    @contextmanager
    def edit(self) -> Iterator[None]:
        """One edit block around the changes made inside (nested calls join the outer)."""
        if self.drawing:
            yield
            return
        self.drawing = True
        try:
            yield
        finally:
            if self._edit_cursor is not None:
                self._edit_cursor.endEditBlock()
                self._edit_cursor = None
            self.drawing = False

    def changing(self) -> None:
        """The document is about to change: open the edit block if one is wanted."""
        if self.drawing and self._edit_cursor is None:
            self._edit_cursor = QTextCursor(self.document)
            self._edit_cursor.beginEditBlock()

    def append_html(self, fragment_html: str) -> int:
        """Insert at the end, then start a fresh empty block; returns characters added."""
        self.changing()
        doc = self.document
        fragment = QTextDocumentFragment.fromHtml(fragment_html, doc)
        cursor = QTextCursor(doc)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        start = cursor.position()
        key = block_key(cursor.block())  # a message's mark on the block stays with it
        cursor.insertFragment(fragment)
        fix = QTextCursor(doc)
        fix.setPosition(start)
        first = self._first_block_format(fragment_html, fragment)
        if fix.block().length() == 1 and fix.block().next().position() < cursor.position():
            # A fragment starting with a list leaves the block at the cursor empty: fold it.
            folded = QTextBlockFormat()
            folded.setLineHeight(0, QTextBlockFormat.LineHeightTypes.FixedHeight.value)
            fix.setBlockFormat(folded)
        elif first is not None:
            # Qt merges the first block into the (empty) block at the cursor and drops
            # its format (margins, background); put it back.
            fix.setBlockFormat(first)
        if key:
            mark_block(fix.block(), key)
        cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
        return cursor.position() - start

    def _first_block_format(
        self, fragment_html: str, fragment: QTextDocumentFragment
    ) -> QTextBlockFormat | None:
        """The format of the fragment's first block (None for a list or a table cell).

        It depends only on the tags before the first text, so it is worked out once
        per distinct opening (in a scratch document) and cached.
        """
        match = _LEADING_TAGS.match(fragment_html)
        key = match.group(0) if match else ""
        if key in self._block_formats:
            return self._block_formats[key]
        scratch = self._scratch
        scratch.clear()
        QTextCursor(scratch).insertFragment(fragment)
        block = scratch.begin()
        first: QTextBlockFormat | None = None
        if block.textList() is None and not block.blockFormat().isTableCellFormat():
            first = block.blockFormat()
        if len(self._block_formats) >= _FORMAT_CACHE_SIZE:
            self._block_formats.clear()
        self._block_formats[key] = first
        return first
