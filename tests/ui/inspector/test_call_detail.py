"""One call in full: its title line, the approval buttons while it waits, arguments, result."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QPushButton
from pytestqt.qtbot import QtBot

from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.events import ToolCall
from melgui.ui.inspector import call_detail
from melgui.ui.inspector.argument_view import arguments_html
from melgui.ui.inspector.call_book import CallRecord
from melgui.ui.inspector.call_detail import CallDetail
from melgui.ui.runtime.qt_loop import QtEventLoop
from melgui.ui.runtime.render_thread import THREAD_NAME, render_pool
from melgui.ui.runtime.theme import DARK, LIGHT

RUN = ToolCall("c7", "run_command", '{"command": "make test"}')


def detail(qtbot: QtBot) -> CallDetail:
    view = CallDetail(LIGHT, "/project")
    qtbot.addWidget(view)
    view.show()
    return view


def test_nothing_selected_says_what_to_do(qtbot: QtBot) -> None:
    view = detail(qtbot)
    assert view.title.text() == "Select a call to see its arguments and result."
    assert view.waiting.isHidden()
    assert view.arguments.toPlainText() == "" and view.result.toPlainText() == ""


def test_a_finished_call_shows_status_duration_decision_source_and_result(
    qtbot: QtBot,
) -> None:
    view = detail(qtbot)
    record = CallRecord(RUN, RUN.parsed, "worker 2", status="error", duration=1.5)
    record.decision = "approved:session"
    record.result = "make: *** No rule to make target 'test'."
    view.show_record(record)
    assert view.title.text() == (
        '<b>run_command</b> · <span style="color:#b42323">✗ failed</span> · 1.5 s'
        " · approved for this conversation · from worker 2"
        ' · <span style="color:#5e6069">id c7</span>'
    )
    assert view.result.toPlainText() == "make: *** No rule to make target 'test'."
    assert view.arguments.toPlainText().startswith("Command\nmake test\nFolder /project")
    assert view.waiting.isHidden()


def test_a_waiting_call_says_so_without_buttons_until_decided(
    qtbot: QtBot, qloop: QtEventLoop
) -> None:
    view = detail(qtbot)
    request = ApprovalRequest(RUN, {"command": "make test"}, future=qloop.create_future())
    record = CallRecord(RUN, RUN.parsed, "main", status="waiting", request=request)
    view.show_record(record)
    assert view.waiting.isVisible() and "on its card in the chat" in view.waiting.text()
    assert view.findChildren(QPushButton) == []  # answered on the card, not here
    assert view.title.text().startswith(
        '<b>run_command</b> · <span style="color:#a04c00">◆ waiting for approval</span> · '
    )
    request.approve()
    view.show_record(record)
    assert view.waiting.isHidden()


def test_a_theme_change_redraws_the_shown_call(qtbot: QtBot) -> None:
    view = detail(qtbot)
    record = CallRecord(RUN, RUN.parsed, "main", status="ok", duration=0.25)
    view.show_record(record)
    assert '<span style="color:#1a7437">✓ done</span> · 250 ms' in view.title.text()
    view.set_colors(DARK)
    assert view.record is record
    assert '<span style="color:#5fcf76">✓ done</span> · 250 ms' in view.title.text()
    expected = arguments_html(
        "run_command", RUN.arguments, RUN.parsed, DARK, cwd="/project", preview=None
    )
    probe = CallDetail(DARK, "/project")
    qtbot.addWidget(probe)
    probe.arguments.setHtml(expected)
    assert view.arguments.toHtml() == probe.arguments.toHtml()


def test_huge_arguments_are_formatted_off_the_gui_thread(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[str] = []

    def spied(*args: Any, **kwargs: Any) -> str:
        threads.append(threading.current_thread().name)
        return arguments_html(*args, **kwargs)

    monkeypatch.setattr(call_detail, "arguments_html", spied)
    view = detail(qtbot)
    content = "line of text\n" * 20_000
    call = ToolCall("w1", "create_pdf", json.dumps({"path": "big.pdf", "markdown": content}))
    view.show_record(CallRecord(call, call.parsed, "main", status="ok"))
    assert "Formatting" in view.arguments.toPlainText()
    qtbot.waitUntil(lambda: "big.pdf" in view.arguments.toPlainText())
    assert threads == [THREAD_NAME + "_0"]
    small = CallRecord(RUN, RUN.parsed, "main", status="ok")
    view.show_record(small)  # shown at once, on this thread
    assert "make test" in view.arguments.toPlainText()
    assert threads[-1] == threading.current_thread().name


def test_a_late_formatting_never_replaces_a_newer_call(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    view = detail(qtbot)
    call = ToolCall("w2", "create_pdf", json.dumps({"path": "old.pdf", "markdown": "x" * 50_000}))
    view.show_record(CallRecord(call, call.parsed, "main", status="ok"))
    view.show_record(CallRecord(RUN, RUN.parsed, "main", status="ok"))
    render_pool().submit(lambda: None).result()  # the old formatting has finished
    QCoreApplication.processEvents()  # and its delivery, queued before that, has run
    shown = view.arguments.toPlainText()
    assert "make test" in shown and "old.pdf" not in shown
