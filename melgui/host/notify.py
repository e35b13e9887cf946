"""Desktop notifications from the host, with no Qt and no window: a question that waits
in the host with no view attached to its session is said on the freedesktop bus, and a
click on it opens a window on the session's folder (`melgui FOLDER`).

The window's notifier (`ui/notifications/desktop.py`) is a QObject with a tray icon for
when there is no bus, so the host cannot drive it; this speaks the same `Notify` call
with jeepney on the host's loop. With no session bus (or no jeepney) it stays silent,
and `melgui --list-running` still lists the question.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
from typing import Any

from melgui.core.deadline import within
from melgui.core.notification_bus import (
    INTERFACE,
    PATH,
    SERVICE,
    NotificationBus,
    open_notification_bus,
)

log = logging.getLogger(__name__)

NOTIFY_SIGNATURE = "susssasa{sv}i"
EXPIRE_DEFAULT = -1


class HostNotifier:
    def __init__(self) -> None:
        self._bus: NotificationBus | None = None
        self._router: Any = None
        self._conn: Any = None
        self._listening: asyncio.Task[None] | None = None
        self._folders: dict[int, str] = {}  # notification id -> the folder to open
        self._tried = False
        self.where = "none"  # "dbus" once connected
        self.last_error = ""

    async def _connect(self) -> bool:
        if self._tried:
            return self._router is not None
        self._tried = True
        if not os.environ.get("DBUS_SESSION_BUS_ADDRESS") or not sys.platform.startswith("linux"):
            self.last_error = "no session bus"
            return False
        bus = await open_notification_bus()
        if isinstance(bus, str):
            self.last_error = bus
            return False
        self._bus = bus
        self._conn, self._router = bus.conn, bus.router
        queue = bus.signals
        self.where = "dbus"
        self._listening = asyncio.get_running_loop().create_task(self._listen(queue))
        return True

    async def notify(self, summary: str, body: str, folder: str) -> int | None:
        """Say it on the desktop; a click opens a window on `folder`. None: not said."""
        if not await self._connect():
            return None
        from jeepney import DBusAddress, MessageType, new_method_call

        address = DBusAddress(PATH, bus_name=SERVICE, interface=INTERFACE)
        hints = {"urgency": ("y", 1), "desktop-entry": ("s", "melgui")}
        arguments = ("melgui", 0, "", summary, body, ["default", "Open"], hints, EXPIRE_DEFAULT)
        message = new_method_call(address, "Notify", NOTIFY_SIGNATURE, arguments)
        try:
            reply = await within(self._router.send_and_get_reply(message), 5)
        except (OSError, TimeoutError) as exc:
            self.last_error = f"Notify failed: {exc}"
            return None
        if reply.header.message_type != MessageType.method_return:
            self.last_error = f"Notify refused: {reply.body}"
            return None
        number = int(reply.body[0])
        self._folders[number] = folder
        return number

    async def _listen(self, queue: asyncio.Queue[Any]) -> None:
        from jeepney import HeaderFields

        while True:
            message = await queue.get()
            member = message.header.fields.get(HeaderFields.member)
            if member == "ActionInvoked" and len(message.body) == 2:
                folder = self._folders.pop(int(message.body[0]), None)
                if folder is not None:
                    open_window(folder)
            elif member == "NotificationClosed" and message.body:
                self._folders.pop(int(message.body[0]), None)

    async def aclose(self) -> None:
        if self._listening is not None:
            self._listening.cancel()
        bus, self._bus = self._bus, None
        self._router = self._conn = None
        if bus is not None:
            await bus.aclose()


def open_window(folder: str) -> None:
    """A window on `folder`, a view of this host (it reopens the session's pane)."""
    log.info("opening a window on %s", folder)
    subprocess.Popen(
        [sys.executable, "-m", "melgui", folder],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
