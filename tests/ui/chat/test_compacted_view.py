"""What the model is sent and what the person reads are two views. After an automatic
compaction the chat keeps the original messages (dimmed) above a "Compacted here"
divider that opens the summary; it shows no invented "[Summary…]" message from the
person or "Understood…" answer, draws each answer once, hides the notes melgui writes
for the model ("[melgui] The person rewound…"), and reads the same after reopening."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QUrl
from pytestqt.qtbot import QtBot

from melgui.core.protocol.views.compacted import SUMMARY_ACK, SUMMARY_HEAD
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedOpenAI
from tests.fakes.long_session import LongModel, openai_settings, serve_long_model, write_notes
from tests.fakes.scenario import Step, done, text
from tests.fakes.scripted_server import RecordedRequest
from tests.fakes.window import type_prompt, wait_until

TURNS = 6
NOTE_FOR_THE_MODEL = "[melgui] The person rewound this conversation to before their message."


class AnsweringModel(LongModel):
    """LongModel whose answers differ per turn, so a doubled one can be seen."""

    answers = 0

    def leg(self, request: RecordedRequest) -> list[Step]:
        steps = super().leg(request)
        if request.messages and request.messages[-1].get("role") == "tool":
            self.answers += 1
            return [text(f"Answer {self.answers} is here."), done(usage=self.usage(request))]
        return steps


def request_for(number: int) -> str:
    return f"Please read notes{2 * number}.txt and notes{2 * number + 1}.txt"


def check_the_persons_view(shown: str) -> None:
    assert SUMMARY_HEAD.strip()[:30] not in shown and SUMMARY_ACK not in shown
    assert "[melgui]" not in shown
    divider = shown.index("Compacted here")
    assert shown.index(request_for(0)) < divider  # the originals stay, above it
    assert divider < shown.rindex("After the rewind")
    answers = [line for line in shown.splitlines() if line.startswith("Answer ")]
    assert len(answers) == len(set(answers)), f"an answer drawn twice: {answers}"


def test_compaction_keeps_the_persons_view(
    qtbot: QtBot, make_window: Any, run: Any, project: Path
) -> None:
    write_notes(project, 2 * TURNS + 2, 1500)
    with ScriptedOpenAI(models=[{"id": "m", "context_length": 9000}]) as server:
        serve_long_model(server, AnsweringModel())
        window: MainWindow = make_window(openai_settings(server, compaction_preview=False))
        window.resize(1200, 800)
        chat = window.chat

        async def ask(prompt: str) -> None:
            legs = window.session.loop.legs
            type_prompt(qtbot, window, prompt)
            await wait_until(lambda: not window.bridge.busy and window.session.loop.legs > legs)

        async def scenario() -> None:
            for number in range(TURNS):
                await ask(request_for(number))
            assert any(
                m.content.startswith(SUMMARY_HEAD) for m in window.session.conversation.messages
            )
            window.session.preface(NOTE_FOR_THE_MODEL)
            await ask("After the rewind, say hello.")
            await wait_until(lambda: len(window.history.ids()) == 1)

        run(scenario())
        sent = server.legs_received[-1].messages
        assert any(NOTE_FOR_THE_MODEL in str(m.get("content")) for m in sent)  # the model's view
        check_the_persons_view(chat.transcript.toPlainText())
        if os.environ.get("MELGUI_SHOTS_DIR"):
            shown = chat.transcript
            qtbot.wait(100)  # the last answer's scroll to the end first
            top = shown.cursorRect(shown.document().find("Compacted here")).top()
            bar = shown.verticalScrollBar()
            bar.setValue(bar.value() + top - shown.viewport().height() // 2)  # mid-screen
            qtbot.wait(50)
            window.grab().save(os.path.join(os.environ["MELGUI_SHOTS_DIR"], "compacted-here.png"))

        chat.transcript.anchorClicked.emit(QUrl("act:summary/"))  # the divider's link
        meter = window.status.context_meter
        assert meter.dialog is not None and "## Goal" in meter.dialog.editor.toPlainText()
        meter.dialog.reject()

        cid = window.history.ids()[0]
        window.history.new_button.click()
        run(wait_until(lambda: "Compacted here" not in window.chat.transcript.toPlainText()))
        window.history.open(cid)
        run(wait_until(lambda: "After the rewind" in window.chat.transcript.toPlainText()))
        window.chat.paging.finish()
        check_the_persons_view(window.chat.transcript.toPlainText())
