"""Issue 15: quitting asks (1), terminals let the window's way out through (3), the layout
holds (4), the person opens and closes panes (5), and the menus and palette hold every
command."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QInputDialog
from pytestqt.qtbot import QtBot

from melgui.core.terminal.pty_session import process_alive
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.panes.terminal.pane import TerminalPane
from melgui.ui.panes.worker_dialog import WorkerDialog
from melgui.ui.window.main_window import MainWindow, build_main_window
from melgui.ui.window.palette import CommandPalette
from tests.fakes import RecordedRequest, ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import answer, relay_settings, settled, wait_until


def _input_dialog(window: MainWindow) -> QInputDialog:
    dialogs = [d for d in window.findChildren(QInputDialog) if d.isVisible()]
    assert len(dialogs) == 1
    return dialogs[0]


def _open_command(window: MainWindow, command: str) -> TerminalPane:
    window.actions_by_name["new_command"].trigger()
    dialog = _input_dialog(window)
    dialog.setTextValue(command)
    dialog.accept()
    info = window.pane_manager.registry.all()[-1]
    pane = window.pane_manager.pane(info.id)
    assert isinstance(pane, TerminalPane)
    return pane


def _worker_writes(request: RecordedRequest) -> list[Any]:
    if (request.last_message or {}).get("role") == "tool":
        return [text("written"), done()]
    return [tool_calls(tool_call("write_file", {"path": "w.txt", "content": "w"}))]


def test_quit_names_every_loss_and_cancel_keeps_everything(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    scripted_relay.on(lambda r: r.tool_role == "worker", _worker_writes)
    scripted_relay.script(
        [tool_calls(tool_call("write_file", {"path": "m.txt", "content": "m"}, id="m1"))],
        [text("done"), done()],
    )
    window: MainWindow = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        window.bridge.submit("write m")
        await wait_until(lambda: len(window.approvals.pending()) == 1)
        window.actions_by_name["new_worker"].trigger()
        (worker_dialog,) = [d for d in window.findChildren(WorkerDialog) if d.isVisible()]
        worker_dialog.task.setPlainText("write w")
        worker_dialog.accept()
        await wait_until(lambda: len(window.approvals.pending()) == 2)
        terminal = _open_command(window, "sleep 300")
        await wait_until(lambda: terminal.pty is not None and len(terminal.pty.session_pids()) > 0)

    run(scenario())
    terminal = window.pane_manager.pane(2)
    assert isinstance(terminal, TerminalPane) and terminal.pty is not None
    pids = terminal.pty.session_pids()
    window.actions_by_name["quit"].trigger()
    assert window.isVisible()
    shown = answer(window.guard.dialog, proceed=False)
    lines = shown.splitlines()
    assert lines[0] == "• main conversation: write_file waits for your approval"
    assert lines[1].startswith("• pane 1 (worker 1: write w): write_file waits")
    assert lines[2] == "• pane 2 (sleep 300): sleep 300 is still running"
    assert window.isVisible() and terminal.pty.poll() is None and terminal.pty.session_pids()
    assert len(window.approvals.pending()) == 2  # nothing was denied by asking

    window.actions_by_name["quit"].trigger()
    answer(window.guard.dialog, proceed=True)
    assert not window.isVisible()
    assert not [pid for pid in pids if process_alive(pid)]


def test_nothing_live_closes_without_a_question(make_window: Any, scripted_relay: Any) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.actions_by_name["new_terminal"].trigger()  # a shell at its prompt loses nothing
    window.close()
    assert not window.isVisible() and window.guard.dialog is None


def test_the_person_opens_a_terminal_and_closing_a_running_one_asks(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay))
    manager = window.pane_manager
    terminal = _open_command(window, "sleep 300")
    run(wait_until(lambda: terminal.pty is not None and terminal.pty.session_pids()))
    assert terminal.pty is not None
    pids = terminal.pty.session_pids()
    window.actions_by_name["close_pane"].trigger()
    assert "sleep 300 is still running" in answer(manager.close_dialog, proceed=False)
    assert manager.pane(1) is terminal and all(process_alive(pid) for pid in pids)
    manager.request_close(1)
    answer(manager.close_dialog, proceed=True)
    assert manager.pane(1) is None
    run(wait_until(lambda: not [pid for pid in pids if process_alive(pid)]))

    window.actions_by_name["new_terminal"].trigger()  # the login shell
    shell = manager.pane(2)
    assert isinstance(shell, TerminalPane) and shell.command is None
    # The shell runs (its start-up files' programs too, maybe: in its own group, no jobs).
    run(wait_until(lambda: shell.pty is not None and bool(shell.pty.session_pids())))
    manager.request_close(2)  # nothing runs in it: no question
    assert manager.pane(2) is None


def test_a_terminal_keeps_tab_and_esc_but_lets_the_way_out_through(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay))
    terminal = _open_command(window, "cat -vT")
    view = terminal.view
    run(wait_until(lambda: terminal.pty is not None and terminal.pty.session_pids()))
    window.activateWindow()  # the command's dialog had it
    run(wait_until(lambda: QApplication.activeWindow() is window))
    view.setFocus()
    run(wait_until(lambda: view.hasFocus()))
    qtbot.keyClick(view, Qt.Key.Key_Tab)
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    qtbot.keyClick(view, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)  # not New
    qtbot.keyClick(view, Qt.Key.Key_Return)
    screen = terminal.emulator.text
    run(wait_until(lambda: "^I^[^N" in screen(), 3))
    assert view.hasFocus()
    assert window.session.conversation.messages == []  # Ctrl+N did not start anew

    qtbot.keyClick(view, Qt.Key.Key_QuoteLeft, Qt.KeyboardModifier.ControlModifier)
    assert window.chat.input.hasFocus()  # back to the chat
    qtbot.keyClick(window.chat.input, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    assert view.hasFocus()  # Ctrl+Tab: the next pane
    qtbot.keyClick(view, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    assert window.chat.input.hasFocus()  # and round to the chat again


def test_the_layout_holds_at_1024_by_700_and_comes_back(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any, qtbot: QtBot
) -> None:
    scripted_relay.on(lambda r: r.tool_role == "worker", [text("ok"), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.resize(1024, 700)
    run(wait_until(lambda: window.width() == 1024))
    history_before = window.history_dock.width()
    chat_before = window.chat.width()
    assert window.side_panel.dock.isVisible()
    assert window.side_panel.dock.width() < chat_before  # an empty inspector is modest

    manager = window.pane_manager

    async def open_both() -> None:
        window.actions_by_name["new_terminal"].trigger()
        manager.spawn_agent("say ok", None, "down")
        await wait_until(
            lambda: isinstance(p := manager.pane(2), AgentPane) and p.state.name == "idle"
        )
        await settled(window)

    run(open_both())
    terminal = manager.pane(1)
    assert isinstance(terminal, TerminalPane)
    assert (window.width(), window.height()) == (1024, 700)  # did not grow by itself
    assert not window.side_panel.dock.isVisible()  # empty: folded away first
    history = window.history_dock  # its width, or folded: never squeezed unreadable
    assert not history.isVisible() or abs(history.width() - history_before) <= 4
    assert window.chat.width() >= 360
    assert terminal.emulator.rows >= 10
    assert manager.area.width() >= 300

    manager.close_pane(2)
    manager.close_pane(1)
    run(wait_until(window.side_panel.dock.isVisible))
    run(settled(window))
    assert abs(window.history_dock.width() - history_before) <= 4
    assert abs(window.chat.width() - chat_before) <= 8


def test_geometry_and_the_chat_share_are_remembered(
    qtbot: QtBot,
    scripted_relay: ScriptedRelay,
    run: Any,
    qloop: Any,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("MELGUI_CONFIG_DIR", str(tmp_path / "config"))
    settings = relay_settings(scripted_relay)
    first = build_main_window(str(project), settings, api_key="k")
    first.show()
    first.resize(1100, 760)
    run(wait_until(lambda: first.width() == 1100))
    first.history_dock.hide()
    first.pane_manager.open_terminal("sleep 5")
    run(settled(first))
    handle = first.pane_host.handle(1)
    middle = handle.rect().center()
    qtbot.mousePress(handle, Qt.MouseButton.LeftButton, pos=middle)
    qtbot.mouseMove(handle, middle + QPoint(150, 0))
    qtbot.mouseRelease(handle, Qt.MouseButton.LeftButton, pos=middle + QPoint(150, 0))
    sizes = first.pane_host.sizes()
    share = sizes[0] / (sizes[0] + sizes[1])
    assert first.layout_keeper.chat_share == pytest.approx(share)
    first.close()  # sleep 5 still runs: it asks
    assert "sleep 5 is still running" in answer(first.guard.dialog, proceed=True)
    run(first.aclose())
    first.deleteLater()
    second = build_main_window(str(project), settings, api_key="k")
    second.show()
    try:
        assert (second.width(), second.height()) == (1100, 760)
        assert not second.history_dock.isVisible()
        second.pane_manager.open_terminal("sleep 5")
        run(settled(second))
        sizes = second.pane_host.sizes()
        assert sizes[0] / (sizes[0] + sizes[1]) == pytest.approx(share, abs=0.02)
    finally:
        run(second.aclose())
        second.guard.allow()
        second.close()
        second.deleteLater()
        run(asyncio.sleep(0.05))
    assert (tmp_path / "config" / "window.ini").exists()


def test_every_command_is_in_a_menu_and_the_palette(make_window: Any, scripted_relay: Any) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay))
    menus = [a.text().replace("&", "") for a in window.menuBar().actions()]
    assert menus == ["File", "Conversation", "View", "Panes", "Help"]
    keys = {name: a.shortcut().toString() for name, a in window.actions_by_name.items()}
    assert keys["quit"] == "Ctrl+Q" and keys["new"] == "Ctrl+N"
    assert keys["settings"] == "Ctrl+," and keys["palette"] == "Ctrl+Shift+P"
    window.actions_by_name["palette"].trigger()
    palette = window.findChild(CommandPalette)
    assert palette is not None and len(palette.shown()) == len(window.actions_by_name)
    palette.query.setText("new term")
    assert palette.shown() == ["New terminal", "New terminal running"]
    palette.run_current()
    assert not palette.isVisible()
    assert len(window.pane_manager.registry.all()) == 1


def test_the_way_back_to_the_chat_is_configurable(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    from PySide6.QtGui import QKeySequence

    from melgui.ui.settings.dialog import SettingsDialog

    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.open_settings()
    dialog = window.findChild(SettingsDialog)
    assert dialog is not None
    dialog.focus_keys.setKeySequence(QKeySequence("Ctrl+Shift+J"))
    dialog.accept()
    assert window.settings.focus_chat_keys == "Ctrl+Shift+J"
    assert window.actions_by_name["focus_chat"].shortcut().toString() == "Ctrl+Shift+J"
    terminal = _open_command(window, "cat -v")
    run(wait_until(lambda: terminal.pty is not None and terminal.pty.session_pids()))
    window.activateWindow()
    run(wait_until(lambda: QApplication.activeWindow() is window))
    terminal.view.setFocus()
    run(wait_until(lambda: terminal.view.hasFocus()))
    qtbot.keyClick(terminal.view, Qt.Key.Key_QuoteLeft, Qt.KeyboardModifier.ControlModifier)
    assert terminal.view.hasFocus()  # the old keys go to the program now
    qtbot.keyClick(
        terminal.view,
        Qt.Key.Key_J,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert window.chat.input.hasFocus()


def test_an_inspector_with_calls_gives_up_width_before_the_chat(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    scripted_relay.script(
        [tool_calls(tool_call("read_file", {"path": "README.md"}))], [text("read"), done()]
    )
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.resize(1024, 700)
    manager = window.pane_manager

    async def scenario() -> None:
        await wait_until(lambda: window.width() == 1024)
        window.bridge.submit("read it")
        await wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 2)
        inspector_before = window.side_panel.dock.width()
        window.actions_by_name["new_terminal"].trigger()
        await settled(window)
        side = window.side_panel
        if side.dock.isVisible():  # it has a call: it stays, narrower, where there is room
            assert side.dock.width() < inspector_before
        else:  # else it folds to its icons, never to nothing (issue 38), before the chat
            assert side.fold.strip.isVisible() and "inspector" in side.fold.strip.names()
        assert (window.width(), window.height()) == (1024, 700)
        assert window.chat.width() >= 360
        terminal = manager.pane(1)
        assert isinstance(terminal, TerminalPane)
        assert terminal.emulator.columns >= 40 and terminal.emulator.rows >= 10

    run(scenario())
