"""Signals in the real window against a real session bus: a worker in a background pane
asks for an approval, and the person gets a desktop notification naming the pane, the
urgency hint, a badge on the pane and a count on the approval queue; clicking the
notification brings that pane and its approval forward."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from melgui.core.terminal.panes import PaneInfo
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.window.main_window import MainWindow
from tests.fakes import RecordedRequest, ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.session_bus import NotificationBus
from tests.fakes.window import relay_settings, wait_until


def _worker(request: RecordedRequest) -> list[Any]:
    if (request.last_message or {}).get("role") == "tool":
        return [text("Built."), done()]
    return [text("Building."), tool_calls(tool_call("run_command", {"command": "touch built.txt"}))]


def _record_alerts(window: MainWindow) -> list[QWidget]:
    """The urgency hint, wrapped at its boundary: recorded, then really asked for."""
    attention = window.signals.attention
    alerts: list[QWidget] = []

    def alert(widget: QWidget, duration: int) -> None:
        alerts.append(widget)
        QApplication.alert(widget, duration)

    attention.alert = alert
    return alerts


def test_an_approval_in_a_background_pane_signals_and_a_click_shows_it(
    qtbot: QtBot,
    scripted_relay: ScriptedRelay,
    make_window: Any,
    run: Any,
    project: Path,
    notification_bus: NotificationBus,
) -> None:
    scripted_relay.on(lambda r: r.tool_role == "worker", _worker)
    window = make_window(relay_settings(scripted_relay))
    alerts = _record_alerts(window)
    manager = window.pane_manager
    assert run(window.signals.notifier.start()) and window.signals.notifier.where == "dbus"

    async def asked() -> PaneInfo:
        worker = manager.spawn_agent("build it", None, "tab")
        manager.open_terminal("sleep 300", "tab")  # the person is looking at another pane
        await wait_until(lambda: len(window.approvals) == 1)
        await wait_until(lambda: len(notification_bus.calls()) == 1)
        return worker

    worker = run(asked())
    call = notification_bus.calls()[0]
    assert (
        call["summary"]
        == f"Pane {worker.id} · worker {worker.id}: build it waits for your approval"
    )
    assert call["body"] == "run_command: touch built.txt"
    assert call["app"] == "melgui" and call["actions"] == ["default", "Show"]
    assert call["hints"] == ["desktop-entry", "urgency"] and call["replaces"] == 0
    assert alerts == [window] and window.signals.attention.urgent
    area = manager.area
    frame = area.frame(worker.id)
    assert frame is not None and frame.badge == 1 and not frame.badge_label.isHidden()
    assert area.tabs.tabText(area.tab_of(worker.id)).endswith("● 1")
    assert "1\xa0waiting" in window.waiting_bar.count.text().replace("&nbsp;", "\xa0")
    assert window.waiting_bar.count.isVisible()

    notification_bus.click(call["id"])  # the person clicks the notification
    pane = manager.pane(worker.id)
    assert isinstance(pane, AgentPane)
    waiting = pane.pending_approvals()[0].call.id
    # its card brought forward, the keyboard on it: where the question is answered
    run(wait_until(lambda: area.focused_id == worker.id and pane.chat.answers.focused()))
    assert area.tabs.currentIndex() == area.tab_of(worker.id)
    assert pane.chat.answers.focused() == waiting
    assert frame.badge == 0 and not frame.badge_label.isVisible()
    assert not area.tabs.tabText(area.tab_of(worker.id)).endswith("● 1")
    assert window.isActiveWindow()

    pane.pending_approvals()[0].approve()
    run(wait_until(lambda: pane.state.name == "idle" and not pane.bridge.busy))
    assert (project / "built.txt").exists()
    assert len(notification_bus.calls()) == 1, "its pane is in front now: no signal"
    assert not window.waiting_bar.count.isVisible()


def test_a_turn_ending_behind_another_window_signals_unless_turned_off(
    qtbot: QtBot,
    scripted_relay: ScriptedRelay,
    make_window: Any,
    run: Any,
    notification_bus: NotificationBus,
) -> None:
    scripted_relay.script([text("First answer."), done()], [text("Second answer."), done()])
    window = make_window(relay_settings(scripted_relay))
    alerts = _record_alerts(window)
    assert run(window.signals.notifier.start())
    other = QWidget()  # the person works in another window
    qtbot.addWidget(other)
    other.show()
    other.activateWindow()
    run(wait_until(lambda: not window.isActiveWindow()))

    async def turn(text: str, legs: int) -> None:
        window.bridge.submit(text)
        await wait_until(lambda: window.session.loop.legs == legs and not window.bridge.busy)

    run(turn("hello", 1))
    run(wait_until(lambda: len(notification_bus.calls()) == 1))
    call = notification_bus.calls()[0]
    assert (call["summary"], call["body"]) == (
        "Main conversation finished its turn",
        "First answer.",
    )
    assert alerts == [window]

    window.settings.signal_turn_end = False
    window.settings.signal_taskbar = False
    run(turn("again", 2))
    row = window.signals.board.row("main")
    assert row is not None and row.state == "finished"
    assert len(notification_bus.calls()) == 1 and alerts == [window]

    window.activateWindow()
    run(wait_until(lambda: window.isActiveWindow()))
    assert not window.signals.attention.urgent
