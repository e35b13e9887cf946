"""A message's actions show while the pointer is over it (no links drawn in the text):
copy and edit on the person's message, rewind when checkpoints offer it, copy and retry
on the last answer; each does what it says. The context menu holds them too."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QContextMenuEvent, QGuiApplication, QTextCursor
from PySide6.QtWidgets import QApplication, QMenu
from pytestqt.qtbot import QtBot

from melgui.core.protocol.messages import Conversation, Message
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.chat.transcript.backfill import first_screen_start
from tests.fakes.sessions import offline_bridge
from tests.fakes.window import hover_message
from tests.ui.chat.test_history_backfill import conversation

LEFT = Qt.MouseButton.LeftButton


def _shown(qtbot: QtBot, conversation: Conversation) -> ChatView:
    view = ChatView(offline_bridge(conversation))
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    qtbot.waitExposed(view)
    return view


def _two_turns() -> Conversation:
    return Conversation(
        [
            Message.user("first question"),
            Message.assistant("first answer"),
            Message.user("second question"),
            Message.assistant("second answer"),
        ]
    )


def _visible(bar: object) -> set[str]:
    return {verb for verb, button in bar.buttons.items() if button.isVisibleTo(bar)}  # type: ignore[attr-defined]


def test_the_persons_message_shows_copy_and_edit_on_hover_and_they_work(qtbot: QtBot) -> None:
    view = _shown(qtbot, _two_turns())
    assert not view.transcript.hover.bar().isVisible()  # nothing until pointed at
    anchors = set()
    cursor = QTextCursor(view.transcript.document())
    for position in range(1, view.transcript.document().characterCount()):
        cursor.setPosition(position)
        anchors.add(cursor.charFormat().anchorHref().partition("/")[0])
    assert not {"act:copy", "act:edit", "act:rewind"} & anchors  # no links in the text

    # A real pointer move, through the window system, shows the bar.
    transcript = view.transcript
    found = transcript.document().find("first question")
    qtbot.mouseMove(transcript.viewport(), transcript.cursorRect(found).center())
    bar = transcript.hover.bar()
    qtbot.waitUntil(bar.isVisible)
    assert bar.key == hover_message(transcript, "first question").key  # the same message
    assert _visible(bar) == {"copy", "edit"}  # no checkpoints here: no rewind
    assert bar.buttons["copy"].toolTip() == "Copy the message"
    QGuiApplication.clipboard().clear()
    qtbot.mouseClick(bar.buttons["copy"], LEFT)
    assert QGuiApplication.clipboard().text() == "first question"
    qtbot.mouseClick(bar.buttons["edit"], LEFT)
    assert view.input.toPlainText() == "first question"

    # The pointer leaves the page: the bar goes.
    QApplication.sendEvent(view.transcript.viewport(), QEvent(QEvent.Type.Leave))
    assert not bar.isVisible()


def test_an_answer_offers_copy_and_only_the_last_one_retry(qtbot: QtBot) -> None:
    view = _shown(qtbot, _two_turns())
    asked: list[tuple[str, str]] = []
    view.actionRequested.connect(lambda verb, argument: asked.append((verb, argument)))
    idle = True
    view.transcript.hover.retry = lambda: idle

    bar = hover_message(view.transcript, "first answer")
    assert _visible(bar) == {"copy"}  # an earlier answer is not asked again
    assert bar.buttons["copy"].toolTip() == "Copy the answer"
    qtbot.mouseClick(bar.buttons["copy"], LEFT)
    assert QGuiApplication.clipboard().text() == "first answer"

    bar = hover_message(view.transcript, "second answer")
    assert _visible(bar) == {"copy", "retry"}
    qtbot.mouseClick(bar.buttons["retry"], LEFT)
    assert asked == [("retry", "")]

    idle = False  # while the agent works there is nothing to retry
    bar = hover_message(view.transcript, "second question")
    bar = hover_message(view.transcript, "second answer")
    assert _visible(bar) == {"copy"}


def test_rewind_shows_when_offered_and_asks_for_its_message(qtbot: QtBot) -> None:
    view = _shown(qtbot, _two_turns())
    asked: list[tuple[str, str]] = []
    view.actionRequested.connect(lambda verb, argument: asked.append((verb, argument)))
    view.transcript.hover.rewind = True
    bar = hover_message(view.transcript, "second question")
    assert _visible(bar) == {"copy", "edit", "rewind"}
    assert bar.buttons["rewind"].toolTip() == "Rewind to here"
    qtbot.mouseClick(bar.buttons["rewind"], LEFT)
    assert ("rewind", "2") in asked  # the message's index in the conversation


def test_messages_drawn_in_above_a_long_conversations_end_act_on_themselves(
    qtbot: QtBot,
) -> None:
    conv = conversation(60)
    view = _shown(qtbot, conv)
    qtbot.waitUntil(lambda: not view.paging.drawing_in, timeout=10_000)
    messages = conv.messages
    start = view.paging.shown_from
    first_screen = first_screen_start(messages, start)
    index = next(i for i in range(start, first_screen) if messages[i].role == "user")
    words = messages[index].content  # drawn in a chunk, then copied in above
    view.transcript.hover.rewind = True
    asked: list[tuple[str, str]] = []
    view.actionRequested.connect(lambda verb, argument: asked.append((verb, argument)))
    bar = hover_message(view.transcript, words)
    qtbot.mouseClick(bar.buttons["edit"], LEFT)
    assert view.input.toPlainText() == words
    qtbot.mouseClick(bar.buttons["rewind"], LEFT)
    assert asked[-1] == ("rewind", str(index))


def test_the_context_menu_holds_the_messages_actions_for_the_keyboard(qtbot: QtBot) -> None:
    view = _shown(qtbot, _two_turns())
    asked: list[tuple[str, str]] = []
    view.actionRequested.connect(lambda verb, argument: asked.append((verb, argument)))
    view.transcript.hover.rewind = True
    transcript = view.transcript
    point = transcript.cursorRect(transcript.document().find("second question")).center()
    global_point = transcript.viewport().mapToGlobal(point)
    event = QContextMenuEvent(QContextMenuEvent.Reason.Keyboard, point, global_point)
    QApplication.sendEvent(transcript.viewport(), event)  # as the menu key sends it
    menus = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMenu) and w.isVisible()]
    assert len(menus) == 1
    words = [action.text() for action in menus[0].actions() if not action.isSeparator()]
    assert words[-3:] == ["Copy the message", "Edit a copy in the prompt box", "Rewind to here"]
    rewind = next(a for a in menus[0].actions() if a.text() == "Rewind to here")
    rewind.trigger()
    assert asked == [("rewind", "2")]
    menus[0].close()
    answer = transcript.cursorRect(transcript.document().find("first answer")).center()
    menu = transcript.message_menu(answer)
    assert [a.text() for a in menu.actions()][-1] == "Copy the answer"
