"""A freedesktop notification server for tests, run as its own process on a session bus.

It owns `org.freedesktop.Notifications` and answers like a strict server (GDBus-based
ones: GNOME Shell, dunst): `Notify` with any other signature than `susssasa{sv}i` gets
InvalidArgs. It keeps every Notify call, and a test drives it through a second
interface, `org.melgui.FakeNotifications`: `Calls()` returns them as JSON, and
`Click(id, action)` sends `ActionInvoked` to the client that showed notification `id`,
as servers do when the person clicks it.

Run: `python tests/fakes/notification_service.py` with DBUS_SESSION_BUS_ADDRESS set.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from jeepney import DBusAddress, HeaderFields, MessageType, new_error, new_method_return, new_signal
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

SERVICE = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
CONTROL = "org.melgui.FakeNotifications"
SIGNATURE = "susssasa{sv}i"


def serve() -> None:
    conn = open_dbus_connection(bus="SESSION")
    reply = conn.send_and_get_reply(message_bus.RequestName(SERVICE, 4))  # do not queue
    if reply.body != (1,):
        sys.exit(f"could not own {SERVICE}: {reply.body}")
    print("ready", flush=True)
    calls: list[dict[str, Any]] = []
    senders: dict[int, str] = {}
    next_id = 1
    while True:
        message = conn.receive()
        header = message.header
        if header.message_type != MessageType.method_call:
            continue
        member = header.fields.get(HeaderFields.member)
        interface = header.fields.get(HeaderFields.interface)
        signature = header.fields.get(HeaderFields.signature, "")
        sender = header.fields.get(HeaderFields.sender, "")
        if interface == CONTROL and member == "Calls":
            conn.send(new_method_return(message, "s", (json.dumps(calls),)))
        elif interface == CONTROL and member == "Click":
            number, action = message.body
            signal = new_signal(
                DBusAddress(PATH, interface=SERVICE), "ActionInvoked", "us", (number, action)
            )
            signal.header.fields[HeaderFields.destination] = senders.get(number, "")
            conn.send(signal)
            conn.send(new_method_return(message))
        elif member == "Notify":
            if signature != SIGNATURE:
                error = f"Type of message, “({signature})”, does not match “({SIGNATURE})”"
                conn.send(
                    new_error(message, "org.freedesktop.DBus.Error.InvalidArgs", "s", (error,))
                )
                continue
            app, replaces, icon, summary, body, actions, hints, timeout = message.body
            number = replaces if replaces in senders else next_id
            if number == next_id:
                next_id += 1
            senders[number] = sender
            calls.append(
                {
                    "id": number,
                    "app": app,
                    "replaces": replaces,
                    "icon": icon,
                    "summary": summary,
                    "body": body,
                    "actions": list(actions),
                    "hints": sorted(hints),
                    "timeout": timeout,
                }
            )
            conn.send(new_method_return(message, "u", (number,)))
        elif member == "GetCapabilities":
            conn.send(new_method_return(message, "as", (["actions", "body"],)))
        elif member == "GetServerInformation":
            conn.send(new_method_return(message, "ssss", ("fake", "melgui tests", "1", "1.2")))
        else:
            conn.send(
                new_error(message, "org.freedesktop.DBus.Error.UnknownMethod", "s", (member,))
            )


if __name__ == "__main__":
    serve()
