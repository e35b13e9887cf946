"""The window on a long session: the context meter fills and colours, Compact asks the
model for a summary the chat shows, Edit summary changes what the next leg sends, the
chat names the project instruction files, and a live session keeps its drawing bounded."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from melgui.core.protocol.messages import Message
from melgui.core.protocol.views.compacted import SUMMARY_HEAD, summary_text
from melgui.ui.chat.paging import MAX_DRAWN
from tests.fakes import ScriptedOpenAI
from tests.fakes.long_session import (
    LongModel,
    is_summary_request,
    openai_settings,
    serve_long_model,
    write_notes,
)
from tests.fakes.window import type_prompt, wait_until

SHOTS = os.environ.get("MELGUI_SCREENSHOTS")


def request_for(number: int) -> str:
    return f"Please read notes{2 * number}.txt and notes{2 * number + 1}.txt"


def test_meter_compact_and_edit_summary(
    qtbot: QtBot, make_window: Any, run: Any, project: Path
) -> None:
    (project / "AGENTS.md").write_text("Always run the tests.\n")
    write_notes(project, 10, 1500)
    with ScriptedOpenAI(models=[{"id": "m", "context_length": 16000}]) as server:
        serve_long_model(server, LongModel())
        window = make_window(openai_settings(server, compaction_preview=False))
        window.resize(1200, 800)
        meter = window.status.context_meter
        label = window.chat.instructions_label
        assert label.isVisible() and "AGENTS.md" in label.text()

        async def ask(prompt: str) -> None:
            legs = window.session.loop.legs
            type_prompt(qtbot, window, prompt)
            await wait_until(
                lambda: not window.bridge.busy and window.session.loop.legs >= legs + 2
            )

        async def scenario() -> None:
            for number in range(3):
                await ask(request_for(number))
            assert meter.fraction is not None and 0.3 < meter.fraction < 1
            assert "/ 16.0k" in meter.bar.format()
            assert "Window: 16,000 tokens" in meter.bar.toolTip()
            assert "This turn" in meter.tokens.text()
            if SHOTS:
                window.grab().save(os.path.join(SHOTS, "context-meter.png"))
            before = meter.fraction
            qtbot.mouseClick(meter.compact_button, Qt.MouseButton.LeftButton)
            await wait_until(lambda: not window.bridge.busy and meter.summary_button.isVisible())
            assert is_summary_request(server.legs_received[-1])
            requests = len(server.legs_received)
            type_prompt(qtbot, window, "/compact")  # typed: compacts again, sends nothing else
            await wait_until(
                lambda: not window.bridge.busy and len(server.legs_received) > requests
            )
            assert is_summary_request(server.legs_received[-1])
            assert "/compact" not in window.chat.transcript.toPlainText()
            assert meter.fraction is not None and meter.fraction < before
            shown = window.chat.transcript.toPlainText()
            assert "Compacted here" in shown and "Compacted:" in shown
            assert "## Goal" not in shown  # the summary is the model's; the divider opens it
            if SHOTS:
                window.grab().save(os.path.join(SHOTS, "context-compacted.png"))
            qtbot.mouseClick(meter.summary_button, Qt.MouseButton.LeftButton)
            assert meter.dialog is not None and "## Goal" in meter.dialog.editor.toPlainText()
            meter.dialog.editor.setPlainText("## Goal\nThe edited goal.")
            meter.dialog.accept()
            assert summary_text(window.session.conversation.messages) == "## Goal\nThe edited goal."
            assert "Compacted here" in window.chat.transcript.toPlainText()
            await ask(request_for(3))

        run(scenario())
    sent = server.legs_received[-1].messages
    assert any(m["content"] == SUMMARY_HEAD + "## Goal\nThe edited goal." for m in sent)
    assert "Always run the tests." in sent[0]["content"]


def test_a_live_session_keeps_its_drawing_bounded(
    qtbot: QtBot, make_window: Any, run: Any, project: Path
) -> None:
    with ScriptedOpenAI(models=[{"id": "m", "context_length": 10_000_000}]) as server:
        serve_long_model(server, LongModel())
        window = make_window(openai_settings(server, compaction_preview=False))
        chat = window.chat
        # Everything drawn, as after many live turns or "show earlier" clicks.
        for number in range(MAX_DRAWN // 2):
            window.session.conversation.append(Message.user(f"question {number}"))
            window.session.conversation.append(Message.assistant(f"answer {number}"))
        chat.load_conversation(window.session.conversation, 0)
        assert "question 0" in chat.transcript.toPlainText()
        drawn_all = chat.transcript.document().blockCount()

        async def scenario() -> None:
            type_prompt(qtbot, window, "live one")
            await wait_until(lambda: not window.bridge.busy and window.session.loop.legs >= 1)

        run(scenario())
        shown = chat.transcript.toPlainText()
        assert "live one" in shown and "Read them." in shown
        assert "question 0" not in shown and "earlier messages" in shown
        assert chat.transcript.document().blockCount() < drawn_all / 2


def test_ten_thousand_messages_page_back_and_forth_with_a_bounded_drawing(qtbot: QtBot) -> None:
    from melgui.core.agent.session import AgentSession
    from melgui.core.protocol.messages import Conversation
    from melgui.core.protocol.tooling import ToolRegistry
    from melgui.core.rules.policy import RulePolicy
    from melgui.core.transports.connection import UnconfiguredTransport
    from melgui.ui.chat.chat_view import ChatView
    from melgui.ui.chat.paging import HISTORY_PAGE
    from melgui.ui.runtime.bridge import SessionBridge

    conversation = Conversation()
    for number in range(5000):
        conversation.append(Message.user(f"question {number}"))
        conversation.append(Message.assistant(f"answer {number}"))
    session = AgentSession(
        UnconfiguredTransport("offline"),
        ToolRegistry(),
        RulePolicy(),
        conversation,
        model="m",
        role="assistant",
        cwd="/",
    )
    view = ChatView(SessionBridge(session))
    qtbot.addWidget(view)
    transcript = view.transcript
    assert (
        "answer 4999" in transcript.toPlainText() and "answer 4949" not in transcript.toPlainText()
    )
    blocks = []
    for _ in range(5):
        transcript.moreRequested.emit()
        qtbot.waitUntil(lambda: not view.paging.loading)
        blocks.append(transcript.document().blockCount())
    shown = transcript.toPlainText()
    first = 10_000 - 6 * HISTORY_PAGE
    assert f"question {first // 2}" in shown and "answer 4999" not in shown
    assert "later messages" in shown and "earlier messages" in shown
    assert blocks[-1] == blocks[-2]  # at most MAX_DRAWN messages drawn, however far back
    transcript.laterRequested.emit()
    qtbot.waitUntil(lambda: not view.paging.loading)
    assert f"question {(first + MAX_DRAWN) // 2}" in transcript.toPlainText()
