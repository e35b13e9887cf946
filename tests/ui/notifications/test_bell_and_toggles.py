"""A terminal's bell signals like an agent does; each signal can be turned off (the
waiting line's count too); a pane in front signals nothing. Real terminals in real ptys,
real workers on the scripted relay, the real window, a real session bus."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from melgui.core.config.settings import Settings
from melgui.core.terminal.panes import PaneInfo
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, tool_call, tool_calls
from tests.fakes.session_bus import NotificationBus
from tests.fakes.window import relay_settings, wait_until

# A title (OSC, ended by BEL) rings nothing; the lone BEL after it rings once.
RING = "printf '\\033]0;a title\\007'; sleep 0.2; printf 'done\\007\\n'; sleep 300"


def _window(make_window: Any, **settings: Any) -> tuple[MainWindow, list[QWidget]]:
    window = make_window(Settings(connection="relay", relay_url="http://127.0.0.1:9", **settings))
    alerts: list[QWidget] = []

    def alert(widget: QWidget, duration: int) -> None:
        alerts.append(widget)
        QApplication.alert(widget, duration)

    window.signals.attention.alert = alert
    return window, alerts


def _ring_behind_another_pane(window: MainWindow, run: Any) -> PaneInfo:
    manager = window.pane_manager

    async def ring() -> PaneInfo:
        ringing = manager.open_terminal(RING, "tab")
        manager.open_terminal("sleep 300", "tab")  # the person looks at this one
        pane = manager.pane(ringing.id)
        assert pane is not None and hasattr(pane, "emulator")
        await wait_until(lambda: "done" in pane.emulator.screen_text())
        return ringing

    return run(ring())


def test_a_bell_in_a_background_terminal_signals_once(
    qtbot: QtBot, make_window: Any, run: Any, notification_bus: NotificationBus
) -> None:
    window, alerts = _window(make_window)
    assert run(window.signals.notifier.start())
    ringing = _ring_behind_another_pane(window, run)
    run(wait_until(lambda: len(notification_bus.calls()) == 1))
    call = notification_bus.calls()[0]
    assert call["summary"] == f"Pane {ringing.id} · {ringing.title} rang the bell"
    frame = window.pane_manager.area.frame(ringing.id)
    assert frame is not None and frame.badge == 1  # the title's BEL rang nothing
    assert alerts == [window]
    window.signals.attention.show(f"pane-{ringing.id}")  # as a click on it does
    assert window.pane_manager.area.focused_id == ringing.id and frame.badge == 0


def test_each_signal_can_be_turned_off(qtbot: QtBot, make_window: Any, run: Any) -> None:
    window, alerts = _window(
        make_window, signal_desktop=False, signal_badges=False, signal_taskbar=True
    )
    ringing = _ring_behind_another_pane(window, run)
    attention = window.signals.attention
    run(wait_until(lambda: alerts == [window]))  # the taskbar hint alone
    assert attention.notified == [] and attention.unseen == {}
    frame = window.pane_manager.area.frame(ringing.id)
    assert frame is not None and frame.badge == 0 and frame.badge_label.isHidden()

    window.settings.signal_bell = False
    _ring_behind_another_pane(window, run)
    assert alerts == [window], "a bell with signal_bell off signals nothing"


def test_a_pane_in_front_signals_nothing(qtbot: QtBot, make_window: Any, run: Any) -> None:
    window, alerts = _window(make_window)
    manager = window.pane_manager

    async def ring_in_front() -> None:
        info = manager.open_terminal(RING, "tab")
        manager.area.focus_pane(info.id)
        pane = manager.pane(info.id)
        assert pane is not None and hasattr(pane, "emulator")
        await wait_until(lambda: "done" in pane.emulator.screen_text())

    window.activateWindow()
    run(wait_until(window.isActiveWindow))
    run(ring_in_front())
    attention = window.signals.attention
    assert alerts == [] and attention.notified == [] and attention.unseen == {}
    assert not attention.urgent


def test_the_approval_count_can_be_turned_off(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    asks = tool_calls(tool_call("run_command", {"command": "touch built.txt"}))
    scripted_relay.on(lambda r: r.tool_role == "worker", lambda r: [asks])
    settings = relay_settings(scripted_relay, signal_desktop=False, signal_approval_count=False)
    window = make_window(settings)
    manager = window.pane_manager

    async def asked(task: str) -> None:
        count = len(window.approvals)
        manager.spawn_agent(task, None, "tab")
        await wait_until(lambda: len(window.approvals) == count + 1)

    run(asked("one"))
    assert window.waiting_bar.isVisible() and not window.waiting_bar.count.isVisible()
    window.settings.signal_approval_count = True  # as Settings → Signals sets it
    run(asked("two"))
    assert window.waiting_bar.count.isVisible()
    assert "2&nbsp;waiting" in window.waiting_bar.count.text()
    for request in window.approvals.pending():
        request.deny("test over")
