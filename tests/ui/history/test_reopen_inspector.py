"""Reopening a stored conversation shows each call in the inspector as it was: status,
duration and the person's decision come from the store, not only from the messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from melgui.core.protocol.call_life import PHASE_MARK
from melgui.core.protocol.calls import format_duration
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import relay_settings, wait_until


def send(qtbot: QtBot, window: MainWindow, prompt: str) -> None:
    window.chat.input.setFocus()
    qtbot.keyClicks(window.chat.input, prompt)
    qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)


def rows(window: MainWindow) -> list[str]:
    calls = window.inspector.calls
    return [calls.item(row).text() for row in range(calls.count())]


def test_reopened_calls_keep_their_status_duration_and_decision(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    write = tool_call("write_file", {"path": "kept.txt", "content": "kept\n"}, id="w1")
    command = tool_call("run_command", {"command": "rm -rf build"}, id="c1")
    scripted_relay.script(
        [text("Two things."), tool_calls(write, command)],
        [text("Done what I could."), done()],
        [text("Other chat."), done()],
    )
    window: MainWindow = make_window(relay_settings(scripted_relay))
    sidebar = window.history

    async def scenario() -> str:
        send(qtbot, window, "Write and clean")
        book = window.inspector.book
        await wait_until(lambda: [r.call.id for r in book.pending()] == ["w1"])
        window.inspector.show_call("w1")
        assert window.approve_key()
        await wait_until(lambda: [r.call.id for r in book.pending()] == ["c1"])
        window.inspector.show_call("c1")
        window.session.thread.set_draft("c1", "not now")  # as typed on its card
        assert window.deny_key()
        await wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 2)
        cid = sidebar.current_id
        assert cid is not None
        await wait_until(
            lambda: [r.result_status for r in sidebar.store.calls.of(cid)] == ["ok", "denied"]
        )
        sidebar.new_button.click()
        send(qtbot, window, "Something else")
        await wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 1)
        sidebar.open(cid)
        await wait_until(lambda: window.inspector.calls.count() == 2)
        book = window.inspector.book  # the calls' records come after the chat is shown
        await wait_until(lambda: all(r.duration is not None for r in book.records.values()))
        return cid

    cid = run(scenario())
    assert (project / "kept.txt").read_text() == "kept\n"
    stored = {r.call_id: r for r in sidebar.store.calls.of(cid)}
    assert stored["w1"].decision == "approved" and stored["c1"].decision == "denied"
    book = window.inspector.book
    written, denied = book.records["w1"], book.records["c1"]
    assert (written.status, written.decision) == ("ok", "approved")
    assert (denied.status, denied.decision) == ("denied", "denied")
    assert written.duration == stored["w1"].duration and written.duration is not None
    assert denied.duration == stored["c1"].duration
    first, second = rows(window)
    assert first.startswith(PHASE_MARK["ok"]) and format_duration(written.duration) in first
    assert second.startswith(PHASE_MARK["denied"])
    assert denied.duration is not None and format_duration(denied.duration) in second
    window.inspector.show_call("w1")
    title = window.inspector.detail.title.text()
    assert "done" in title and "approved once" in title
    assert format_duration(written.duration) in title
    window.inspector.show_call("c1")
    assert "denied by you" in window.inspector.detail.title.text()
