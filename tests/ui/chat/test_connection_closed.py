"""The server's connection closing mid-answer, in the real window: the chat says the
connection closed and how much of the answer was kept, with Retry right there."""

from __future__ import annotations

from typing import Any

from pytestqt.qtbot import QtBot

from melgui.core.config.settings import Settings
from tests.fakes import ScriptedOpenAI, delta, done, drop, raw
from tests.fakes.window import idle, type_prompt, wait_until

# What a killed server leaves: an event cut in the middle of its JSON, then nothing.
CUT = raw(b'data: {"id": "c1", "choices": [{"index": 0, "delta": {"content": "more')


def test_a_dropped_connection_says_so_keeps_the_text_and_offers_retry(
    qtbot: QtBot, scripted_openai: ScriptedOpenAI, make_window: Any, run: Any
) -> None:
    scripted_openai.script(
        [delta(content="The first half of the answer, "), CUT, drop()],
        [delta(content="The whole answer."), done()],
    )
    settings = Settings(connection="openai", openai_base_url=scripted_openai.base_url, model="m")
    window = make_window(settings)

    async def scenario() -> None:
        type_prompt(qtbot, window, "Explain")
        await wait_until(lambda: not window.bridge.busy and "closed" in shown())

    def shown() -> str:
        return window.chat.transcript.toPlainText()

    run(scenario())
    assert "malformed JSON" not in shown()
    assert "The connection to the server closed before the answer finished" in shown()
    assert "30 characters of the answer were kept" in shown()
    assert "The first half of the answer," in shown()
    html = window.chat.transcript.toHtml()
    assert 'href="act:retry/"' in html  # Retry, inline in the notice

    async def retried() -> None:
        window.chat.transcript.actionRequested.emit("retry", "")  # the link, followed
        await wait_until(lambda: idle(window, 1) and "The whole answer." in shown())

    run(retried())
