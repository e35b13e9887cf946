"""A private D-Bus session bus (a real dbus-daemon) with the fake notification server on
it, for tests. `NotificationBus.start()`; `calls()` and `click()` drive the server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection

from melgui.core.runtime.processes import reset_signals

SERVICE_SCRIPT = Path(__file__).with_name("notification_service.py")
CONTROL = DBusAddress(
    "/org/freedesktop/Notifications",
    bus_name="org.freedesktop.Notifications",
    interface="org.melgui.FakeNotifications",
)


class NotificationBus:
    """dbus-daemon --session plus the fake server; `address` goes in
    DBUS_SESSION_BUS_ADDRESS."""

    def __init__(self) -> None:
        self.address = ""
        self._daemon: subprocess.Popen[str] | None = None
        self._service: subprocess.Popen[str] | None = None
        self._conn: Any = None

    @staticmethod
    def available() -> bool:
        return shutil.which("dbus-daemon") is not None

    def start(self) -> NotificationBus:
        self._daemon = subprocess.Popen(
            ["dbus-daemon", "--session", "--nofork", "--print-address"],
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=reset_signals,
        )
        assert self._daemon.stdout is not None
        self.address = self._daemon.stdout.readline().strip()
        if not self.address:
            raise RuntimeError("dbus-daemon printed no address")
        env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": self.address}
        self._service = subprocess.Popen(
            [sys.executable, str(SERVICE_SCRIPT)],
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            preexec_fn=reset_signals,
        )
        assert self._service.stdout is not None
        if self._service.stdout.readline().strip() != "ready":
            raise RuntimeError("the fake notification server did not start")
        self._conn = open_dbus_connection(self.address)
        return self

    def _call(self, member: str, signature: str | None = None, body: tuple[Any, ...] = ()) -> Any:
        message = new_method_call(CONTROL, member, signature, body)
        return self._conn.send_and_get_reply(message, timeout=5).body

    def calls(self) -> list[dict[str, Any]]:
        """Every Notify call the server accepted, oldest first."""
        calls: list[dict[str, Any]] = json.loads(self._call("Calls")[0])
        return calls

    def click(self, number: int, action: str = "default") -> None:
        """The person clicks notification `number` (its default action)."""
        self._call("Click", "us", (number, action))

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
        for process in (self._service, self._daemon):
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(5)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            if process is not None and process.stdout is not None:
                process.stdout.close()
