"""Off Linux, or on Linux without a session bus, notifications go to Qt's tray icon; a
click on its message names the agent it was about. The real QSystemTrayIcon (offscreen
Qt has no tray to show it in, so the tray's availability is given, as a desktop would)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtGui import QIcon, QPixmap
from pytestqt.qtbot import QtBot

from melgui.ui.notifications.desktop import DesktopNotifier
from melgui.ui.runtime.aio import TaskKeeper
from tests.fakes.session_bus import NotificationBus


def _icon() -> QIcon:
    pixmap = QPixmap(16, 16)
    pixmap.fill()
    return QIcon(pixmap)


def test_off_linux_notifications_go_to_the_tray_and_a_click_names_the_agent(
    qtbot: QtBot, run: Any, notification_bus: NotificationBus
) -> None:
    tasks = TaskKeeper()
    notifier = DesktopNotifier(
        _icon(),
        lambda coro: tasks.spawn(coro, what="notifications"),
        platform="darwin",
        tray_available=lambda: True,
    )
    clicked: list[str] = []
    notifier.clicked.connect(clicked.append)
    assert run(notifier.start()) is False and notifier.where == "tray"
    tray = notifier.tray
    assert tray is not None and tray.isVisible()  # kept shown, or its messages go nowhere

    assert run(notifier.send("Pane 2 · worker 2 waits for your approval", "make", "pane-2")) is None
    assert run(notifier.send("Pane 3 · worker 3 finished", "Done.", "pane-3")) is None
    assert notification_bus.calls() == []  # a session bus is there; off Linux it is not used
    tray.messageClicked.emit()  # the person clicks the message shown last
    assert clicked == ["pane-3"]
    assert tray.isVisible()

    run(tasks.aclose())  # the window's tasks end: the icon goes
    assert not tray.isVisible()


def test_linux_without_a_bus_uses_the_tray_or_nothing(
    qtbot: QtBot, run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent")
    tasks = TaskKeeper()
    spawn = lambda coro: tasks.spawn(coro, what="notifications")  # noqa: E731
    with_tray = DesktopNotifier(_icon(), spawn, platform="linux", tray_available=lambda: True)
    assert run(with_tray.start()) is False and with_tray.where == "tray"
    assert "no session bus" in with_tray.last_error
    without = DesktopNotifier(_icon(), spawn, platform="linux", tray_available=lambda: False)
    assert run(without.start()) is False and without.where == "none"
    assert run(without.send("nobody sees this", "", "pane-1")) is None and without.tray is None
    run(tasks.aclose())
