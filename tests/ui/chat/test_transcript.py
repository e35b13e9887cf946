"""The transcript: streamed text drawn once, cards updated in place, code copied."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.messages import Conversation, Message
from melgui.ui.chat.blocks.tool_cards import card_html
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.chat.transcript.document import ChatTranscript
from melgui.ui.chat.transcript.history_paging import HISTORY_PAGE
from melgui.ui.runtime.theme import LIGHT
from tests.fakes.sessions import offline_bridge

ANSWER = "Intro **bold**.\n\n- one\n- two\n\n```python\nprint('x')\n```\n\nEnd."


def test_streaming_in_pieces_shows_the_same_text_as_drawing_it_at_once(qtbot: QtBot) -> None:
    streamed = ChatTranscript(LIGHT)
    whole = ChatTranscript(LIGHT)
    qtbot.addWidget(streamed)
    qtbot.addWidget(whole)
    for n in range(0, len(ANSWER), 2):
        streamed.stream_text(ANSWER[n : n + 2])
        if n % 6 == 0:
            streamed.flush()
    streamed.finish_assistant(ANSWER)
    whole.add_assistant(ANSWER)
    assert streamed.toPlainText() == whole.toPlainText()
    shown = streamed.toPlainText()
    assert shown.count("Intro bold.") == 1 and shown.count("End.") == 1 and "**" not in shown


def test_the_copy_link_puts_the_code_on_the_clipboard(qtbot: QtBot) -> None:
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QGuiApplication

    transcript = ChatTranscript(LIGHT)
    qtbot.addWidget(transcript)
    transcript.add_assistant("```\nfirst\n```\n")
    transcript.add_assistant("```sh\nls -la\n```\n")
    transcript.anchorClicked.emit(QUrl("copy:2"))
    assert QGuiApplication.clipboard().text() == "ls -la"


def test_cards_change_status_in_place_and_link_to_the_inspector(qtbot: QtBot) -> None:
    from PySide6.QtCore import QUrl

    transcript = ChatTranscript(LIGHT)
    qtbot.addWidget(transcript)
    transcript.add_card("c1", card_html("c1", "read_file", "a.py", "requested", LIGHT))
    transcript.stream_text("after the card")
    transcript.flush()
    transcript.update_card("c1", card_html("c1", "read_file", "a.py", "ok", LIGHT, 0.25))
    transcript.finish_assistant(None)
    shown = transcript.toPlainText()
    assert "done · 250 ms" in shown and "queued" not in shown
    assert shown.index("Read a.py") < shown.index("after the card")
    with qtbot.waitSignal(transcript.callActivated) as blocker:
        transcript.anchorClicked.emit(QUrl("call:c1"))
    assert blocker.args == ["c1"]


def _view(qtbot: QtBot, conversation: Conversation) -> ChatView:
    view = ChatView(offline_bridge(conversation))
    qtbot.addWidget(view)
    return view


def test_a_long_conversation_opens_on_its_last_page(qtbot: QtBot) -> None:
    conversation = Conversation()
    for n in range(HISTORY_PAGE):
        conversation.append(Message.user(f"question {n}"))
        conversation.append(Message.assistant(f"answer {n}"))
    view = _view(qtbot, conversation)
    shown = view.transcript.toPlainText()
    assert f"Show {HISTORY_PAGE} earlier messages" in shown
    assert "answer 99" in shown and "question 49" not in shown
    view.transcript.moreRequested.emit()  # drawn a few messages per tick
    qtbot.waitUntil(lambda: "question 0" in view.transcript.toPlainText())


def test_reopened_calls_show_their_final_status(qtbot: QtBot) -> None:
    call = ToolCall("c9", "run_command", '{"command": "make"}')
    conversation = Conversation(
        [
            Message.user("build"),
            Message.assistant("", (call,)),
            Message.tool_result("c9", "The user denied this run_command call.", "denied"),
        ]
    )
    view = _view(qtbot, conversation)
    shown = view.transcript.toPlainText()
    assert "Run make" in shown and "denied" in shown


def test_a_flush_that_changes_nothing_leaves_the_document_alone(qtbot: QtBot) -> None:
    transcript = ChatTranscript(LIGHT)
    qtbot.addWidget(transcript)
    transcript.stream_text("A paragraph with **bold**")
    transcript.flush()
    revision = transcript.document().revision()
    transcript.flush()
    transcript.stream_text("")
    transcript.flush()
    assert transcript.document().revision() == revision
    transcript.stream_text(" and more")
    transcript.flush()
    assert transcript.document().revision() != revision
    assert "A paragraph with bold and more" in transcript.toPlainText()


def test_a_backlog_is_drawn_in_slices_and_ends_like_one_drawing(qtbot: QtBot) -> None:
    streamed = ChatTranscript(LIGHT)
    whole = ChatTranscript(LIGHT)
    qtbot.addWidget(streamed)
    qtbot.addWidget(whole)
    answer = "".join(f"Paragraph {n} with `code`.\n\n" for n in range(30)) + ANSWER
    streamed.stream_text(answer)
    streamed.flush(budget=0.0)  # one segment, the rest left for the scheduler
    assert "Paragraph 0" in streamed.toPlainText()
    assert "Paragraph 29" not in streamed.toPlainText()
    qtbot.waitUntil(lambda: "Paragraph 29" in streamed.toPlainText(), timeout=5000)
    streamed.finish_assistant(None)
    whole.add_assistant(answer)
    assert streamed.toPlainText() == whole.toPlainText()
