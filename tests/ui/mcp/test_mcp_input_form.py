"""An MCP server asks for input during a call: the window shows a form built from the
requested schema under the chat, naming the server and the call; Accept sends
what the person typed (a bad value is refused in words first), Decline says no."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit
from pytestqt.qtbot import QtBot

from melgui.tools.mcp.asks.input_answers import InputPolicy
from melgui.ui.mcp.input_form import InputForm
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.mcp import fake_entry
from tests.fakes.window import idle, prompt_and_approve, relay_settings, wait_until


def test_the_form_asks_and_answers_for_the_call(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, tmp_path: Path
) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"fake": fake_entry()}}))
    scripted_relay.script(
        [text("Booking."), tool_calls(tool_call("mcp__fake__book", {}, id="b1"))],
        [tool_calls(tool_call("mcp__fake__book", {"place": "Bistro"}, id="b2"))],
        [text("Done."), done()],
    )
    window: MainWindow = make_window(relay_settings(scripted_relay))
    form: InputForm = window.mcp.form
    shown: list[tuple[str, str]] = []
    form.showRequested.connect(lambda source, call: shown.append((source, call)))

    async def scenario() -> None:
        await window.desk.start_mcp(extra=config)
        await prompt_and_approve(qtbot, window, "book us a table", form.isVisible)

    run(scenario())
    assert "Input asked" in form.title.text()
    assert "<b>fake</b>" in form.title.text() and "mcp__fake__book" in form.title.text()
    assert form.message.text() == "Book a table at Chez Nous: who, how many, where?"
    editors = form.editors
    assert list(editors) == ["guest", "party", "budget", "outside", "course"]
    guest, party, budget = editors["guest"], editors["party"], editors["budget"]
    assert isinstance(guest, QLineEdit) and guest.text() == ""
    assert isinstance(party, QLineEdit) and party.text() == "2"
    assert party.placeholderText() == "1 to 12"
    assert isinstance(budget, QLineEdit) and budget.text() == "40.5"
    outside, course = editors["outside"], editors["course"]
    assert isinstance(outside, QCheckBox) and not outside.isChecked()
    assert isinstance(course, QComboBox) and course.currentData() == "main"
    assert [course.itemText(i) for i in range(course.count())] == ["starter", "main", "dessert"]
    label = form.rows.itemAt(0, form.rows.ItemRole.LabelRole)
    assert label.widget().text() == "Guest *"
    form.show_button.click()
    assert shown == [(window.session.source, "b1")]

    form.accept_button.click()  # guest is still empty
    assert form.problem.isVisible() and form.problem.text() == "Guest is required."
    assert form.isVisible()
    qtbot.keyClicks(guest, "Ada Lovelace")
    assert not form.problem.isVisible()  # typing clears the complaint
    party.setText("4")
    outside.setChecked(True)
    course.setCurrentIndex(2)
    window.resize(1200, 860)
    shots = Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
    assert window.grab().save(str(shots / "mcp-elicitation.png"))
    form.accept_button.click()

    async def second() -> None:
        await wait_until(lambda: window.inspector.book.pending(), 20)
        assert window.approve_key()
        await wait_until(lambda: form.isVisible() and "Bistro" in form.message.text(), 20)
        form.decline_button.click()
        await wait_until(lambda: idle(window, 3), 20)

    run(second())
    assert not form.isVisible()
    records = window.inspector.book.records
    assert records["b1"].status == "ok"
    assert records["b1"].result == (
        'accepted {"guest":"Ada Lovelace","party":4,"budget":40.5,"outside":true,'
        '"course":"dessert"}'
    )
    assert (records["b2"].status, records["b2"].result) == ("ok", "decline")
    run(window.desk.aclose())


def test_a_page_to_open_is_shown_in_full_and_opens_only_on_the_persons_click(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, tmp_path: Path
) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"fake": fake_entry()}}))
    scripted_relay.script(
        [text("Paying."), tool_calls(tool_call("mcp__fake__pay", {}, id="p1"))],
        [tool_calls(tool_call("mcp__fake__pay", {}, id="p2"))],
        [text("Paid."), done()],
    )
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.resize(1100, 700)
    form: InputForm = window.mcp.form
    opened: list[str] = []
    window.desk.mcp.input_policy = InputPolicy(browser=lambda url: opened.append(url) or True)

    async def scenario() -> None:
        await window.desk.start_mcp(extra=config)
        await prompt_and_approve(qtbot, window, "pay the deposit", form.isVisible)

    run(scenario())
    assert "A page to open, from" in form.title.text() and "<b>fake</b>" in form.title.text()
    assert form.message.text() == "Pay the deposit for table 7."
    assert "https://<b>pay.example</b>/checkout?table=7" in form.address.text()
    assert form.address.isVisible() and form.rows.rowCount() == 0
    assert form.accept_button.text() == "Open in browser"
    shots = Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
    assert window.grab().save(str(shots / "mcp-url-elicitation.png"))
    form.decline_button.click()

    async def again() -> None:
        await wait_until(lambda: window.inspector.book.pending(), 20)
        assert window.approve_key()
        await wait_until(lambda: form.isVisible(), 20)
        assert opened == []  # declined: never opened
        form.accept_button.click()
        await wait_until(lambda: idle(window, 3), 20)

    run(again())
    assert opened == ["https://pay.example/checkout?table=7"]
    assert window.inspector.book.records["p1"].result == "decline"
    assert window.inspector.book.records["p2"].result == "accept"
    run(window.desk.aclose())
