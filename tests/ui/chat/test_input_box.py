"""The prompt box: Enter sends, Shift+Enter breaks the line, blank text is not sent."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from melgui.ui.chat.composer.input_box import MAX_LINES, PromptInput


def make(qtbot: QtBot) -> tuple[PromptInput, list[tuple[str, object]]]:
    """A box without a project kit (no / or @ lists); what it sends: (text, parts)."""
    box = PromptInput()
    qtbot.addWidget(box)
    sent: list[tuple[str, object]] = []
    box.submitted.connect(lambda text, parts: sent.append((text, parts)))
    return box, sent


def test_enter_sends_the_text_and_clears_the_box(qtbot: QtBot) -> None:
    box, sent = make(qtbot)
    qtbot.keyClicks(box, "hello")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert sent == [("hello", ())] and box.toPlainText() == ""


def test_shift_enter_starts_a_new_line_and_keypad_enter_sends(qtbot: QtBot) -> None:
    box, sent = make(qtbot)
    qtbot.keyClicks(box, "one")
    qtbot.keyClick(box, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(box, "two")
    assert sent == [] and box.toPlainText() == "one\ntwo"
    qtbot.keyClick(box, Qt.Key.Key_Enter)
    assert sent == [("one\ntwo", ())]


def test_blank_text_is_not_sent(qtbot: QtBot) -> None:
    box, sent = make(qtbot)
    qtbot.keyClicks(box, "   ")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert sent == [] and box.toPlainText() == "   "


def test_the_box_grows_with_its_lines_up_to_a_limit(qtbot: QtBot) -> None:
    box, _ = make(qtbot)
    line = box.fontMetrics().lineSpacing()
    assert box.sizeHint().height() == line * 2 + 14
    box.setPlainText("\n".join("x" * 5))
    assert box.sizeHint().height() == line * 5 + 14
    box.setPlainText("\n".join("x" * 30))
    assert box.sizeHint().height() == line * MAX_LINES + 14
    assert box.minimumSizeHint().height() == line * 2 + 14
