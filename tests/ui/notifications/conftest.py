"""A private session bus with a fake notification server, for the signals tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.session_bus import NotificationBus


@pytest.fixture
def notification_bus(monkeypatch: pytest.MonkeyPatch) -> Iterator[NotificationBus]:
    """dbus-daemon --session with org.freedesktop.Notifications owned by the fake server;
    the app under test finds it through DBUS_SESSION_BUS_ADDRESS."""
    if not NotificationBus.available():
        pytest.fail("dbus-daemon is missing: apt-get install dbus (.ci/run installs it)")
    bus = NotificationBus().start()
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus.address)
    try:
        yield bus
    finally:
        bus.close()
