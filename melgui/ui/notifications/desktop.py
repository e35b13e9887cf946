"""Desktop notifications: freedesktop notifications over the D-Bus session bus on Linux,
Qt's tray message elsewhere or when there is no bus. Clicking one emits `clicked(key)`.

The bus is spoken with jeepney (pure Python, already installed with keyring on Linux) on
the app's asyncio loop, not with QtDBus: PySide6 cannot send a D-Bus uint32, and
`Notify` takes one (`replaces_id`); a strict notification server (GNOME's, dunst)
rejects the call when it arrives as an int32. The connection that sends `Notify` is
the one that hears `ActionInvoked`, which servers address to the sender.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QSystemTrayIcon

from melgui.core.runtime.deadline import within
from melgui.core.runtime.notification_bus import INTERFACE, PATH, SERVICE, open_notification_bus
from melgui.resources import APP_ID

log = logging.getLogger(__name__)

NOTIFY_SIGNATURE = "susssasa{sv}i"
APP_NAME = "melgui"
EXPIRE_DEFAULT = -1  # the server decides how long it shows
Spawn = Callable[[Coroutine[Any, Any, Any]], object]


class DesktopNotifier(QObject):
    """Shows notifications; `clicked(key)` when the person clicks one (its default action).

    `start()` connects to the session bus ($DBUS_SESSION_BUS_ADDRESS); without one,
    notifications go to a tray icon's message. A notification for a key replaces the
    previous one for that key, so one pane never stacks a pile of them.
    """

    clicked = Signal(str)

    def __init__(
        self,
        icon: QIcon,
        spawn: Spawn,
        parent: QObject | None = None,
        *,
        platform: str = sys.platform,
        tray_available: Callable[[], bool] = QSystemTrayIcon.isSystemTrayAvailable,
    ) -> None:
        super().__init__(parent)
        self._icon = icon
        self._spawn = spawn
        self._platform = platform
        self._tray_available = tray_available
        self._router: Any = None  # jeepney.io.asyncio.DBusRouter, once connected
        self._conn: Any = None
        self._filter: Any = None
        self._ready: asyncio.Future[bool] | None = None
        self._ids: dict[int, str] = {}  # notification id -> key
        self._by_key: dict[str, int] = {}
        self._tray: QSystemTrayIcon | None = None
        self._tray_key = ""
        self.where = "none"  # "dbus", "tray" or "none": where notifications go
        self.last_error = ""

    # -- connecting --------------------------------------------------------------------

    def begin(self) -> None:
        """Connect in the background (done by the first notification), for the life of
        the spawner's tasks: cancelling them (the window's close) closes the connection."""
        if self._ready is None:
            self._ready = asyncio.get_event_loop().create_future()
            self._spawn(self._serve())

    async def start(self) -> bool:
        """Wait until connected (Linux); False when notifications go to the tray."""
        self.begin()
        assert self._ready is not None
        return await asyncio.shield(self._ready)

    async def _serve(self) -> None:
        assert self._ready is not None
        try:
            queue = await self._connect() if self._platform.startswith("linux") else None
            if queue is None:
                self._use_tray()
            if not self._ready.done():
                self._ready.set_result(queue is not None)
            if queue is not None:
                await self._listen(queue)
            elif self._tray is not None:  # shown until the spawner's tasks end
                await asyncio.get_running_loop().create_future()
        finally:
            if not self._ready.done():
                self._ready.set_result(False)
            await self._disconnect()

    async def _connect(self) -> asyncio.Queue[Any] | None:
        bus = await open_notification_bus()
        if isinstance(bus, str):
            self.last_error = bus
            return None
        self._conn, self._router, self._filter = bus.conn, bus.router, bus.filter
        self.where = "dbus"
        return bus.signals

    @property
    def tray(self) -> QSystemTrayIcon | None:
        """The tray icon notifications go to when there is no bus (None: not used)."""
        return self._tray

    def _use_tray(self) -> None:
        if not self._tray_available():
            self.where = "none"
            return
        self._tray = QSystemTrayIcon(self._icon, self)
        self._tray.messageClicked.connect(lambda: self.clicked.emit(self._tray_key))
        self._tray.show()
        self.where = "tray"

    # -- sending -----------------------------------------------------------------------

    def notify(self, summary: str, body: str, key: str) -> None:
        """Show a notification now (in the background); clicking it emits `clicked(key)`."""
        self._spawn(self.send(summary, body, key))

    async def send(self, summary: str, body: str, key: str) -> int | None:
        """Show it and return the server's id (None on the tray, or when it failed)."""
        await self.start()
        if self._router is None:
            if self._tray is not None:
                self._tray_key = key
                self._tray.showMessage(summary, body, self._icon, 10000)
            return None
        from jeepney import DBusAddress, MessageType, new_method_call

        address = DBusAddress(PATH, bus_name=SERVICE, interface=INTERFACE)
        hints = {"urgency": ("y", 1), "desktop-entry": ("s", APP_ID)}
        arguments = (
            APP_NAME,
            self._by_key.get(key, 0),
            "",
            summary,
            body,
            ["default", "Show"],
            hints,
            EXPIRE_DEFAULT,
        )
        message = new_method_call(address, "Notify", NOTIFY_SIGNATURE, arguments)
        try:
            reply = await within(self._router.send_and_get_reply(message), 5)
        except (OSError, TimeoutError) as exc:
            self.last_error = f"Notify failed: {exc}"
            return None
        if reply.header.message_type != MessageType.method_return:
            self.last_error = f"Notify refused: {reply.body}"
            log.warning("notification refused: %s", reply.body)
            return None
        number = int(reply.body[0])
        self._ids[number] = key
        self._by_key[key] = number
        return number

    # -- hearing clicks ----------------------------------------------------------------

    async def _listen(self, queue: asyncio.Queue[Any]) -> None:
        from jeepney import HeaderFields

        while True:
            message = await queue.get()
            member = message.header.fields.get(HeaderFields.member)
            body = message.body
            if member == "ActionInvoked" and len(body) == 2:
                key = self._ids.get(int(body[0]))
                if key is not None and body[1] in ("default", "Show"):
                    self.clicked.emit(key)
            elif member == "NotificationClosed" and body:
                key = self._ids.pop(int(body[0]), None)
                if key is not None and self._by_key.get(key) == int(body[0]):
                    del self._by_key[key]

    # -- end ---------------------------------------------------------------------------

    async def _disconnect(self) -> None:
        if self._tray is not None:
            self._tray.hide()
        if self._filter is not None:
            self._filter.close()
            self._filter = None
        router, conn = self._router, self._conn
        self._router = self._conn = None
        if router is not None:
            with contextlib.suppress(Exception):
                await router.__aexit__(None, None, None)
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()
