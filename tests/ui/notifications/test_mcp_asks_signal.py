"""An MCP server's form or request for a model's answer waits for the person as an
approval does: with the window behind another, the window's own signal says it (the
desktop notification, the taskbar hint) and the waiting line counts it until answered.
Real MCP server (tests/fakes/mcp_server.py), scripted relay, the real window."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.mcp import fake_entry
from tests.fakes.window import prompt_and_approve, relay_settings, wait_until


def _behind_another(qtbot: QtBot, window: MainWindow, run: Any) -> list[QWidget]:
    alerts: list[QWidget] = []

    def alert(widget: QWidget, duration: int) -> None:
        alerts.append(widget)
        QApplication.alert(widget, duration)

    window.signals.attention.alert = alert
    other = QWidget()  # the person works in another window
    qtbot.addWidget(other)
    other.show()
    other.activateWindow()
    run(wait_until(lambda: not window.isActiveWindow()))
    return alerts


def _asked(window: MainWindow, summary: str) -> list[tuple[str, str, str]]:
    return [told for told in window.signals.attention.notified if told[1] == summary]


def test_a_form_and_a_sampling_request_signal_and_are_counted(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, tmp_path: Path
) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"fake": fake_entry()}}))
    scripted_relay.script(
        [tool_calls(tool_call("mcp__fake__book", {}, id="b1"))],
        [tool_calls(tool_call("mcp__fake__ask_model", {}, id="a1"))],
        [text("Done."), done()],
    )
    window: MainWindow = make_window(relay_settings(scripted_relay))
    form, sampling, count = window.mcp.form, window.mcp.sampling, window.waiting_bar.count
    alerts = _behind_another(qtbot, window, run)

    async def form_asks() -> None:
        await window.desk.start_mcp(extra=config)
        await prompt_and_approve(qtbot, window, "book us a table", form.isVisible)

    run(form_asks())
    said = _asked(window, "MCP server fake asks you to fill in a form")
    assert said == [("main", said[0][1], "Book a table at Chez Nous: who, how many, where?")]
    assert alerts.count(window) == 2  # the approval's, then the form's
    assert "&nbsp;1&nbsp;waiting" in count.text()
    form.cancel_button.click()

    async def sampling_asks() -> None:
        await wait_until(count.isHidden)
        await wait_until(lambda: window.inspector.book.pending(), 20)
        assert window.approve_key()
        await wait_until(lambda: sampling.isVisible(), 20)

    run(sampling_asks())
    said = _asked(window, "MCP server fake asks for a model's answer")
    assert [body for _key, _summary, body in said] == ["It waits for your approval"]
    assert "&nbsp;1&nbsp;waiting" in count.text()
    sampling.refuse_button.click()
    run(wait_until(lambda: not window.bridge.busy, 20))
    assert count.isHidden()  # nothing waits any more
