"""The freedesktop notification service's bus, with no Qt: one session-bus connection,
its router and the queue of the service's signals (a notification clicked or closed).
The window's notifier and the host's open it the same way; each says its own `Notify`."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

from melgui.core.runtime.deadline import within

SERVICE = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
INTERFACE = SERVICE


@dataclass
class NotificationBus:
    conn: Any
    router: Any
    filter: Any  # the router's filter that feeds `signals`
    signals: asyncio.Queue[Any]

    async def aclose(self) -> None:
        self.filter.close()
        with contextlib.suppress(Exception):
            await self.router.__aexit__(None, None, None)
        with contextlib.suppress(Exception):
            await self.conn.close()


async def open_notification_bus(timeout: float = 5) -> NotificationBus | str:
    """The session bus, listening for the notification service's signals; or, in words,
    why there is none (no jeepney, no bus, no answer within `timeout` seconds)."""
    try:
        from jeepney import MatchRule
        from jeepney.bus_messages import message_bus
        from jeepney.io.asyncio import DBusRouter, open_dbus_connection
    except ImportError as exc:
        return f"no D-Bus library: {exc}"
    conn: Any = None
    router: Any = None
    try:
        conn = await within(open_dbus_connection("SESSION"), timeout)
        router = DBusRouter(conn)
        await router.__aenter__()
        rule = MatchRule(type="signal", interface=INTERFACE, path=PATH)
        signals: asyncio.Queue[Any] = asyncio.Queue()
        listening = router.filter(rule, queue=signals)
        await within(router.send_and_get_reply(message_bus.AddMatch(rule)), timeout)
    except (OSError, KeyError, ValueError, TimeoutError, RuntimeError) as exc:
        with contextlib.suppress(Exception):
            if router is not None:
                await router.__aexit__(None, None, None)
        with contextlib.suppress(Exception):
            if conn is not None:
                await conn.close()
        return f"no session bus: {exc}"
    return NotificationBus(conn, router, listening, signals)
