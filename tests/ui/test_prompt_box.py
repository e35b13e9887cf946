"""The prompt box in the real window: images, `@` files, slash commands, prompt history.

Against the scripted relay over loopback; what the box attached is asserted on the
request the server received.
"""

from __future__ import annotations

import base64
import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import QMimeData, Qt, QUrl
from PySide6.QtGui import QColor, QImage
from pytestqt.qtbot import QtBot

from melgui.core.config.settings import Settings
from melgui.ui.chat.composer.images import MAX_SIDE
from tests.fakes import ScriptedOpenAI, ScriptedRelay, done, hold, http_error, text
from tests.fakes.window import idle, relay_settings, type_prompt, wait_until


def user_content(relay: ScriptedRelay, leg: int = 0) -> Any:
    return relay.legs_received[leg].messages[-1]["content"]


def test_a_pasted_image_reaches_the_request_as_an_image_url_part(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    scripted_relay.script([text("A red square."), done()])
    window = make_window(relay_settings(scripted_relay))
    big = QImage(3000, 1500, QImage.Format.Format_RGB32)
    big.fill(QColor("red"))
    mime = QMimeData()
    mime.setImageData(big)
    box = window.chat.input
    assert box.canInsertFromMimeData(mime)
    box.insertFromMimeData(mime)
    (chip,) = box.attachments.chips
    assert chip.isVisibleTo(window) and "1568×784" in chip.label.text()

    async def scenario() -> None:
        type_prompt(qtbot, window, "What is this?")
        await wait_until(lambda: idle(window, 1))

    run(scenario())
    content = user_content(scripted_relay)
    assert content[0] == {"type": "text", "text": "What is this?"}
    url = content[1]["image_url"]["url"]
    assert content[1]["type"] == "image_url" and url.startswith("data:image/png;base64,")
    sent = QImage.fromData(base64.b64decode(url.partition(",")[2]))
    assert (sent.width(), sent.height()) == (MAX_SIDE, MAX_SIDE // 2)
    assert not box.attachments.chips  # the chip went with the message
    shown = window.chat.transcript.document()
    assert "<img" in shown.toHtml()


def test_a_dropped_image_file_becomes_a_chip_and_other_files_do_not(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, project: Path
) -> None:
    window = make_window(relay_settings(scripted_relay))
    image = QImage(40, 30, QImage.Format.Format_RGB32)
    image.fill(QColor("blue"))
    image.save(str(project / "shot.webp"))
    (project / "fake.png").write_text("not an image")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(project / "shot.webp"))])
    box = window.chat.input
    box.insertFromMimeData(mime)
    (chip,) = box.attachments.chips
    assert chip.part.mime == "image/webp" and chip.part.name == "shot.webp"
    bad = QMimeData()
    bad.setUrls([QUrl.fromLocalFile(str(project / "fake.png"))])
    box.insertFromMimeData(bad)
    assert len(box.attachments.chips) == 1
    assert "only PNG, JPEG and WebP" in window.chat.note_label.text()


def test_at_picks_a_file_and_its_content_reaches_the_request(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    (project / "src").mkdir()
    (project / "src" / "greeting.py").write_text("def greet():\n    return 'hi'\n")
    (project / ".gitignore").write_text("secret.py\n")
    (project / "secret.py").write_text("KEY = 1\n")
    scripted_relay.script([text("It greets."), done()])
    window = make_window(relay_settings(scripted_relay))
    box = window.chat.input

    async def scenario() -> None:
        box.setFocus()
        qtbot.keyClicks(box, "Explain @greet")
        assert box.picker.isVisible()
        assert box.picker.values()[0] == "src/greeting.py"
        qtbot.keyClicks(box, "")
        box.clear()
        qtbot.keyClicks(box, "@secret")
        assert "secret.py" not in box.picker.values()  # ignore rules respected
        box.clear()
        qtbot.keyClicks(box, "Explain @gree")
        qtbot.keyClick(box, Qt.Key.Key_Return)  # picks, does not send
        assert not box.picker.isVisible()
        assert [c.label.text() for c in box.attachments.chips] == ["@src/greeting.py"]
        qtbot.keyClicks(box, "please")
        qtbot.keyClick(box, Qt.Key.Key_Return)
        await wait_until(lambda: idle(window, 1))

    run(scenario())
    content = user_content(scripted_relay)
    assert content[0] == {"type": "text", "text": "Explain please"}
    assert content[1]["type"] == "text"
    assert '<file path="src/greeting.py">' in content[1]["text"]
    assert "return 'hi'" in content[1]["text"]


def test_a_custom_slash_command_expands_its_arguments(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    commands = project / ".melgui" / "commands"
    commands.mkdir(parents=True)
    (commands / "audit.md").write_text("description: Audit code\nAudit $ARGUMENTS carefully.")
    scripted_relay.script([text("Reviewed."), done()])
    window = make_window(relay_settings(scripted_relay))
    box = window.chat.input

    async def scenario() -> None:
        box.setFocus()
        qtbot.keyClicks(box, "/aud")
        assert box.picker.isVisible() and box.picker.values() == ["audit"]
        qtbot.keyClick(box, Qt.Key.Key_Tab)
        assert box.toPlainText() == "/audit "
        qtbot.keyClicks(box, "src/app.py")
        qtbot.keyClick(box, Qt.Key.Key_Return)
        await wait_until(lambda: idle(window, 1))

    run(scenario())
    assert user_content(scripted_relay) == "Audit src/app.py carefully."
    type_prompt(qtbot, window, "/nosuch thing")
    assert "Unknown command /nosuch" in window.chat.note_label.text()
    assert box.toPlainText() == "/nosuch thing"  # kept, not sent
    assert len(scripted_relay.legs_received) == 1


def test_clear_and_help_commands(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    scripted_relay.script([text("Hi."), done()])
    window = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "hello")
        await wait_until(lambda: idle(window, 1))

    run(scenario())
    first = window.session
    type_prompt(qtbot, window, "/help")
    shown = window.chat.transcript.toPlainText()
    assert "/clear — Start a new conversation" in shown and "/role <role>" in shown
    type_prompt(qtbot, window, "/clear")
    assert window.session is not first and not window.session.conversation.messages
    type_prompt(qtbot, window, "/role worker")
    assert window.session.loop.role == "worker"
    assert len(scripted_relay.legs_received) == 1  # commands never reach the server


def test_up_recalls_the_last_prompt_after_a_restart(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    scripted_relay.script([text("One."), done()], [text("Two."), done()])
    window = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "first prompt")
        await wait_until(lambda: idle(window, 1))
        box = window.chat.input
        qtbot.keyClicks(box, "second")
        qtbot.keyClick(box, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
        type_prompt(qtbot, window, "prompt")
        await wait_until(lambda: idle(window, 2))

    run(scenario())
    run(window.aclose())
    window.close()
    again = make_window(relay_settings(scripted_relay))  # a restart: a new window
    box = again.chat.input
    box.setFocus()
    qtbot.keyClicks(box, "draft")
    qtbot.keyClick(box, Qt.Key.Key_Up)
    assert box.toPlainText() == "second\nprompt"
    qtbot.keyClick(box, Qt.Key.Key_Up)  # the cursor is on the last line: moves up a line
    assert box.toPlainText() == "second\nprompt"
    qtbot.keyClick(box, Qt.Key.Key_Up)
    assert box.toPlainText() == "first prompt"
    qtbot.keyClick(box, Qt.Key.Key_Down)
    assert box.toPlainText() == "second\nprompt"
    qtbot.keyClick(box, Qt.Key.Key_Down)
    assert box.toPlainText() == "draft"


def red_square() -> QMimeData:
    image = QImage(64, 64, QImage.Format.Format_RGB32)
    image.fill(QColor("red"))
    mime = QMimeData()
    mime.setImageData(image)
    return mime


def test_a_model_listed_as_text_only_gets_no_image(
    qtbot: QtBot, scripted_openai: ScriptedOpenAI, make_window: Any, run: Any
) -> None:
    scripted_openai.models = [
        {"id": "text-only", "architecture": {"input_modalities": ["text"]}},
        {"id": "sees", "architecture": {"input_modalities": ["text", "image"]}},
    ]
    settings = Settings(connection="openai", openai_base_url=scripted_openai.base_url)
    settings.model = "text-only"
    window = make_window(settings)
    run(wait_until(lambda: "text-only" in window.desk.prompt.models))
    box = window.chat.input
    box.insertFromMimeData(red_square())
    type_prompt(qtbot, window, "look")
    assert "text-only does not take images" in window.chat.note_label.text()
    assert box.toPlainText() == "look" and len(box.attachments.chips) == 1  # nothing lost
    assert not scripted_openai.legs_received


def test_a_server_refusing_an_image_says_so_and_the_next_message_goes_through(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    refusal = {"error": {"message": "This model does not support image input", "code": 400}}
    scripted_relay.script([http_error(400, refusal)], [text("Fine."), done()])
    window = make_window(relay_settings(scripted_relay))
    window.chat.input.insertFromMimeData(red_square())

    async def scenario() -> None:
        type_prompt(qtbot, window, "what is this")
        await wait_until(lambda: "images are taken out" in shown())
        type_prompt(qtbot, window, "then just say hi")
        await wait_until(lambda: idle(window, 1))

    def shown() -> str:
        return str(window.chat.transcript.toPlainText())

    run(scenario())
    notices = [line for line in shown().splitlines() if "cannot take images" in line]
    assert len(notices) == 1
    second = scripted_relay.legs_received[1].messages
    assert "image_url" not in str(second)
    assert "could not take" in str(second)  # the model is told an image was there


def test_stop_puts_a_queued_message_back_with_its_image(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    gate = threading.Event()
    scripted_relay.script([text("Working"), hold(gate), done()])
    window = make_window(relay_settings(scripted_relay))
    box = window.chat.input

    async def scenario() -> None:
        type_prompt(qtbot, window, "first")
        await wait_until(lambda: "Working" in window.chat.transcript.toPlainText())
        box.insertFromMimeData(red_square())
        type_prompt(qtbot, window, "look at this")
        await wait_until(lambda: window.chat.queued_label.isVisible())
        assert not box.attachments.chips
        window.chat.stop()
        gate.set()
        await wait_until(lambda: not window.bridge.busy)

    run(scenario())
    assert box.toPlainText() == "look at this"
    assert [chip.part.mime for chip in box.attachments.chips] == ["image/png"]
