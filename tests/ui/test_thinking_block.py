"""The Thinking block in the real window, against the scripted OpenAI-compatible server."""

from __future__ import annotations

import threading
from typing import Any

from pytestqt.qtbot import QtBot

from melgui.core.config.settings import Settings
from melgui.core.protocol.messages import Message
from melgui.ui.settings.dialog import SettingsDialog
from tests.fakes import ScriptedOpenAI, delta, done, hold, tool_call, tool_calls
from tests.fakes.window import idle, type_prompt, wait_until

THOUGHT = "The user wants a greeting. I should keep it short."


def openai_settings(server: ScriptedOpenAI) -> Settings:
    return Settings(connection="openai", openai_base_url=server.base_url, model="reasoner")


def test_thinking_streams_open_then_folds_when_the_answer_starts(
    qtbot: QtBot, scripted_openai: ScriptedOpenAI, make_window: Any, run: Any
) -> None:
    gate = threading.Event()
    scripted_openai.script(
        [
            delta(reasoning_content=THOUGHT[:20]),
            delta(reasoning_content=THOUGHT[20:]),
            hold(gate),
            delta(content="Hello!"),
            done(),
        ]
    )
    window = make_window(openai_settings(scripted_openai))
    transcript = window.chat.transcript

    async def scenario() -> None:
        type_prompt(qtbot, window, "Say hi")
        await wait_until(lambda: THOUGHT in transcript.toPlainText())
        (block,) = transcript.thinking_blocks()
        assert block.streaming and block.open
        assert "Thinking…" in transcript.toPlainText()
        gate.set()
        await wait_until(lambda: idle(window, 1))

    run(scenario())
    (block,) = transcript.thinking_blocks()
    assert not block.streaming and not block.open and block.duration is not None
    shown = transcript.toPlainText()
    assert "Thought for" in shown and "Hello!" in shown
    assert THOUGHT not in shown  # folded, and never mixed into the answer
    last = window.session.conversation.messages[-1]
    assert (last.content, last.reasoning) == ("Hello!", THOUGHT)
    transcript.toggle_thinking(block.number)
    opened = transcript.toPlainText()
    assert block.open and "▾ Thought for" in opened
    assert opened.index("Thought for") < opened.index(THOUGHT) < opened.index("Hello!")
    transcript.toggle_thinking(block.number)
    assert transcript.toPlainText() == shown  # folded again, the answer untouched
    window.chat.load_conversation(window.session.conversation)  # reopened: folded
    (reopened,) = transcript.thinking_blocks()
    assert not reopened.open and "▸ Thinking" in transcript.toPlainText()
    transcript.toggle_thinking(reopened.number)
    assert THOUGHT in transcript.toPlainText()
    # Reasoning is not sent back by default.
    scripted_openai.script([delta(content="again"), done()])

    async def second() -> None:
        type_prompt(qtbot, window, "Once more")
        await wait_until(lambda: idle(window, 2))

    run(second())
    sent = scripted_openai.legs_received[1].messages
    assert all("reasoning_content" not in message for message in sent)


def test_think_tags_become_a_folded_block(
    qtbot: QtBot, scripted_openai: ScriptedOpenAI, make_window: Any, run: Any
) -> None:
    scripted_openai.script(
        [delta(content="<thi"), delta(content="nk>pondering</th"), delta(content="ink>42"), done()]
    )
    window = make_window(openai_settings(scripted_openai))

    async def scenario() -> None:
        type_prompt(qtbot, window, "Answer?")
        await wait_until(lambda: idle(window, 1))

    run(scenario())
    shown = window.chat.transcript.toPlainText()
    assert "42" in shown and "pondering" not in shown and "<think>" not in shown
    assert window.session.conversation.messages[-1].reasoning == "pondering"


def test_reasoning_before_tool_calls_folds_above_the_cards(
    qtbot: QtBot, scripted_openai: ScriptedOpenAI, make_window: Any, run: Any
) -> None:
    scripted_openai.script(
        [
            delta(reasoning="I need the readme."),
            tool_calls(tool_call("read_file", {"path": "README.md"})),
        ],
        [delta(reasoning="It says hello."), delta(content="It says hello."), done()],
    )
    window = make_window(openai_settings(scripted_openai))

    async def scenario() -> None:
        type_prompt(qtbot, window, "What does the readme say?")
        await wait_until(lambda: idle(window, 2))

    run(scenario())
    first, second = window.chat.transcript.thinking_blocks()
    assert not first.streaming and not second.streaming
    shown = window.chat.transcript.toPlainText()
    assert shown.index("Thought for") < shown.index("Read ") < shown.rindex("Thought for")
    assert "I need the readme." not in shown
    messages = window.session.conversation.messages
    assert [m.reasoning for m in messages if m.role == "assistant"] == [
        "I need the readme.",
        "It says hello.",
    ]


def test_sending_reasoning_back_is_set_per_connection_in_settings(
    qtbot: QtBot, scripted_openai: ScriptedOpenAI, make_window: Any, run: Any
) -> None:
    window = make_window(openai_settings(scripted_openai))
    dialog = SettingsDialog(window.settings, window.policy, [], window.tasks, window)
    qtbot.addWidget(dialog)
    assert not dialog.send_reasoning.isChecked()  # off by default
    dialog.send_reasoning.setChecked(True)
    assert dialog.draft().send_reasoning == ["custom"]
    dialog.preset.setCurrentIndex(dialog.preset.findData("ollama"))
    assert not dialog.send_reasoning.isChecked()  # another connection: its own setting
    dialog.base_url.setText(scripted_openai.base_url)
    dialog._url_edited(scripted_openai.base_url)
    assert dialog.send_reasoning.isChecked()
    applied: list[Any] = []
    dialog.applied.connect(lambda settings, key: applied.append(settings))
    dialog.accept()
    window.apply_settings(applied[0], "k")
    window.session.loop.conversation.append(Message.assistant("x", reasoning="why"))
    scripted_openai.script([delta(content="ok"), done()])

    async def scenario() -> None:
        type_prompt(qtbot, window, "next")
        await wait_until(lambda: idle(window, 1))

    run(scenario())
    sent = scripted_openai.legs_received[0].messages
    assert [m.get("reasoning_content") for m in sent if m["role"] == "assistant"] == ["why"]
