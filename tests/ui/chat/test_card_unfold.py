"""A card unfolds in place: an edit to its diff lines, a command to its output; it grows
over a few ticks (about 150 ms) when nothing streams, and folds back to one line."""

from __future__ import annotations

from PySide6.QtCore import QUrl
from pytestqt.qtbot import QtBot

from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.messages import Conversation, Message
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.chat.transcript.history_paging import REVEAL_STEPS
from tests.fakes.sessions import offline_bridge

OUTPUT = "\n".join(f"line {n}" for n in range(1, 31))


def _view(qtbot: QtBot) -> ChatView:
    run = ToolCall("r1", "run_command", '{"command": "make test"}')
    edit = ToolCall(
        "e1", "edit_file", '{"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}'
    )
    conversation = Conversation(
        [
            Message.user("test it"),
            Message.assistant("", (run, edit)),
            Message.tool_result("r1", f"exit_code=1\n{OUTPUT}"),
            Message.tool_result("e1", "Edited a.py"),
        ]
    )
    view = ChatView(offline_bridge(conversation))
    qtbot.addWidget(view)
    return view


def _lines(view: ChatView) -> list[str]:
    return view.transcript.toPlainText().splitlines()


def test_a_command_unfolds_to_its_output_growing_then_folds(qtbot: QtBot) -> None:
    view = _view(qtbot)
    assert "line 30" not in _lines(view) and "$ make test" not in _lines(view)
    view.transcript.anchorClicked.emit(QUrl("card:r1"))
    first = [line for line in _lines(view) if line.startswith("line ")]
    assert 0 < len(first) < REVEAL_STEPS[-1] and "line 30" in first  # the end first
    qtbot.waitUntil(lambda: "line 1" in _lines(view))  # grown to the whole output
    assert "$ make test" in _lines(view)
    view.transcript.anchorClicked.emit(QUrl("card:r1"))
    assert "line 30" not in _lines(view)


def test_an_edit_unfolds_to_its_diff(qtbot: QtBot) -> None:
    view = _view(qtbot)
    view.transcript.anchorClicked.emit(QUrl("card:e1"))
    qtbot.waitUntil(lambda: "+x = 2" in _lines(view))
    assert "-x = 1" in _lines(view)
    html = view.transcript.toHtml()
    assert view.colors.diff_add in html and view.colors.diff_del in html
