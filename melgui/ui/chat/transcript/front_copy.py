"""Copying a scratch transcript's drawing (earlier messages) in at the front of another."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QTextCursor, QTextDocument

# Both are melgui.ui.chat.transcript.document.ChatTranscript (not imported: the transcript
# imports this module, and the UI's parts import no cycle, not even for types).
ChatTranscript = Any

IMAGE_RESOURCE = QTextDocument.ResourceType.ImageResource


def copy_in_front(target: ChatTranscript, scratch: ChatTranscript, at: int) -> None:
    """`scratch`'s drawing in at `at` of `target`, exactly as if it had been drawn there
    in order; its cards, Thinking blocks and code work from there on."""
    scratch.finish_assistant(None)
    source = scratch.document()
    length = source.characterCount() - 1  # up to its last (empty) block
    target._next_code_id = scratch._next_code_id
    target._next_think = scratch._next_think
    target._codes.update(scratch._codes)
    for url in scratch._image_urls:  # the copy names the images; they come along
        image = source.resource(IMAGE_RESOURCE, QUrl(url))
        target.document().addResource(IMAGE_RESOURCE, QUrl(url), image)
    if length <= 0:
        return
    whole = QTextCursor(source)
    whole.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
    doc = target.document()
    bar = target.verticalScrollBar()
    height = doc.size().height()
    with target._writer.edit():
        target._writer.changing()
        cursor = QTextCursor(doc)
        cursor.setPosition(at)
        joined = (cursor.blockFormat(), cursor.blockCharFormat())
        first = source.begin()
        cursor.insertFragment(whole.selection())
        # Qt gives the two blocks where the copy meets the document the wrong
        # formats; each gets its own back.
        cursor.setPosition(at)
        cursor.setBlockFormat(first.blockFormat())
        cursor.setBlockCharFormat(first.charFormat())
        cursor.setPosition(at + length)
        cursor.setBlockFormat(joined[0])
        cursor.setBlockCharFormat(joined[1])
    for call_id, table in scratch._cards.items():
        cursor.setPosition(at + table.firstPosition())
        moved = cursor.currentTable()
        if moved is not None:
            target._cards[call_id] = moved
            target._card_html[call_id] = scratch._card_html.get(call_id, "")
    for number, block in scratch._thinking.items():
        block.moved_to(doc, at)
        target._thinking[number] = block
    if not target._stick:  # keep what the reader looks at in place
        bar.setValue(bar.value() + round(doc.size().height() - height))
    target._scroll_if_stuck()


def reset_scratch(target: ChatTranscript, other: ChatTranscript) -> ChatTranscript:
    """`other` emptied, hidden, in `target`'s colours, its copy ids and Thinking numbers
    following `target`'s: ready to draw earlier messages into."""
    other.hide()
    other.clear_all()
    if other.colors != target.colors:
        other.set_colors(target.colors)
    other._next_code_id = target._next_code_id
    other._next_think = target._next_think
    return other
