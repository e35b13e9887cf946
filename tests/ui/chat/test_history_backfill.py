"""A long conversation opens at its end: the first screen is drawn at once, the rest of
the page in above it in slices; the result must be the drawing of the page in one go."""

from __future__ import annotations

from itertools import pairwise

from PySide6.QtCore import QBuffer, QIODevice, QUrl
from PySide6.QtGui import QImage, QTextDocument
from pytestqt.qtbot import QtBot

from melgui.core.protocol.content import ImagePart
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.messages import Conversation, Message
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.chat.paging import HISTORY_PAGE
from melgui.ui.chat.transcript.backfill import chunk_starts, first_screen_start, speaker_before
from tests.fakes.sessions import offline_bridge

CODE = "Here:\n\n```python\ndef f(x):\n    return x + 1\n```\n\n- a\n- b\n"


def _image() -> ImagePart:
    image = QImage(40, 30, QImage.Format.Format_RGB32)
    image.fill(0x3366CC)
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return ImagePart("image/png", bytes(buffer.data()), "shot.png")


def conversation(turns: int) -> Conversation:
    """Every kind of message: text, reasoning, code, lists, calls with results of every
    status, a long turn of calls with no user message in it, a system note, an image."""
    messages: list[Message] = []
    for n in range(turns):
        parts = (_image(),) if n % 7 == 3 else ()
        messages.append(Message.user(f"question {n}", parts) if parts else Message.user(f"q {n}"))
        if n % 5 == 2:  # a long turn: many calls in a row, no user message between
            for k in range(12):
                call = ToolCall(f"c{n}-{k}", "read_file", f'{{"path": "src/m{k}.py"}}')
                messages.append(Message.assistant("", (call,)))
                status = "denied" if k == 4 else "ok"
                messages.append(Message.tool_result(call.id, "x = 1\n", status))
        if n % 4 == 1:
            messages.append(Message.system(f"note {n}"))
        thought = f"think {n}" if n % 3 == 0 else ""
        messages.append(Message.assistant(f"answer {n}\n\n{CODE}", reasoning=thought))
    return Conversation(messages)


def _blocks(document: QTextDocument) -> list[tuple[str, float, float, float, int, str]]:
    shape = []
    block = document.begin()
    while block.isValid():
        fmt = block.blockFormat()
        shape.append(
            (
                block.text(),
                fmt.topMargin(),
                fmt.bottomMargin(),
                fmt.leftMargin(),
                int(fmt.alignment()),
                fmt.background().color().name(),
            )
        )
        block = block.next()
    return shape


def _open(qtbot: QtBot, conv: Conversation, *, lazy: bool, failures: bool = False) -> ChatView:
    view = ChatView(offline_bridge(Conversation()))
    qtbot.addWidget(view)
    view.bridge.session.conversation.messages[:] = conv.messages
    if failures:
        view.failures = [(len(conv.messages) - 30, "error", "HTTP 500 from the server")]
        view.failures.append((len(conv.messages) - 60, "retry", "connection reset"))
    view.load_conversation(view.bridge.session.conversation, lazy=lazy)
    return view


def _done(view: ChatView) -> bool:
    return not view.paging.drawing_in


def test_the_first_screen_comes_first_and_the_rest_ends_up_as_one_drawing(
    qtbot: QtBot,
) -> None:
    conv = conversation(60)
    assert len(conv.messages) > HISTORY_PAGE
    eager = _open(qtbot, conv, lazy=False, failures=True)
    lazy = _open(qtbot, conv, lazy=True, failures=True)
    first = lazy.transcript.toPlainText()
    assert "answer 59" in first and first != eager.transcript.toPlainText()
    assert not _done(lazy)  # the rest is drawn on later ticks
    qtbot.waitUntil(lambda: _done(lazy), timeout=10_000)
    assert lazy.transcript.toPlainText() == eager.transcript.toPlainText()
    assert _blocks(lazy.transcript.document()) == _blocks(eager.transcript.document())
    # Cards, Thinking blocks, code and images drawn in above work like any others.
    assert set(lazy.transcript.card_ids()) == set(eager.transcript.card_ids())
    assert len(lazy.transcript.thinking_blocks()) == len(eager.transcript.thinking_blocks())
    oldest = lazy.transcript.thinking_blocks()[0]
    lazy.transcript.toggle_thinking(oldest.number)
    assert oldest.text in lazy.transcript.toPlainText()
    page_start = lazy.paging.shown_from
    some_call = next(m.tool_calls[0].id for m in conv.messages[page_start:] if m.tool_calls)
    before = lazy.transcript.toPlainText().count("interrupted")
    lazy.cards.set(some_call, "interrupted", 1.5)  # the card in the document changes
    assert lazy.transcript.toPlainText().count("interrupted") == before + 1
    codes = [lazy.transcript.code_text(n) for n in range(1, 200)]
    assert codes.count("def f(x):\n    return x + 1") >= 10
    images = [m for m in conv.messages[page_start:] if m.parts]
    assert images
    url = f"melgui-image:{images[0].parts[0].sha256}"  # type: ignore[union-attr]
    shown = lazy.transcript.document().resource(QTextDocument.ResourceType.ImageResource, QUrl(url))
    assert isinstance(shown, QImage) and not shown.isNull()


def test_a_live_event_draws_the_rest_first(qtbot: QtBot) -> None:
    from melgui.core.protocol.loop_events import AssistantText

    conv = conversation(60)
    eager = _open(qtbot, conv, lazy=False)
    lazy = _open(qtbot, conv, lazy=True)
    lazy.bridge.session.reducer.apply(AssistantText("more"))  # through the session's thread
    assert not _done(lazy)
    lazy.bridge.flush()  # the view hears it now, with earlier chunks still to draw
    assert _done(lazy)
    lazy.transcript.finish_assistant(None)
    eager.bridge.session.reducer.apply(AssistantText("more"))
    eager.bridge.flush()
    eager.transcript.finish_assistant(None)
    assert lazy.transcript.toPlainText() == eager.transcript.toPlainText()


def test_reopening_with_failures_redraws_lazily_to_the_same_result(qtbot: QtBot) -> None:
    conv = conversation(40)
    view = _open(qtbot, conv, lazy=True)
    view.failures = [(len(conv.messages) - 20, "stopped", "by the user")]
    view.load_conversation(conv)
    qtbot.waitUntil(lambda: _done(view), timeout=10_000)
    assert "Stopped." in view.transcript.toPlainText()


def test_chunks_cover_the_page_and_never_split_a_call_from_its_results() -> None:
    messages = conversation(60).messages
    start = len(messages) - HISTORY_PAGE
    first = first_screen_start(messages, start)
    assert start < first < len(messages) and messages[first].role != "tool"
    chunks = chunk_starts(messages, start, first)
    assert chunks[0][0] == start and chunks[-1][1] == first
    assert all(a[1] == b[0] for a, b in pairwise(chunks))
    assert all(messages[a].role != "tool" for a, _ in chunks)
    assert speaker_before(messages, start, start, ()) == ""
    after_user = next(i for i in range(start + 1, first) if messages[i - 1].role == "user")
    assert speaker_before(messages, start, after_user, ()) == "You"
    assert speaker_before(messages, start, after_user, {after_user - 1}) == "You"
