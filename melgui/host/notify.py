"""Desktop notifications from the host, with no Qt and no window: a question that waits
in the host with no view showing it (`UnseenQuestions`: an approval or a compaction's
preview of a session no view is attached to, a form or a sampling request of a folder's
MCP server no view watches) is said on the freedesktop bus, and a click on it opens a
window on its folder (`melgui FOLDER`).

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
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any

from melgui.core.protocol.tools.definition import shorten
from melgui.core.protocol.tools.mcp.asks import InputRequest, SamplingRequest
from melgui.core.runtime.deadline import within
from melgui.core.runtime.notification_bus import (
    INTERFACE,
    PATH,
    SERVICE,
    NotificationBus,
    open_notification_bus,
)

if TYPE_CHECKING:
    from melgui.desk.mcp.hosted import HostMcp
    from melgui.host.session import HostedSession

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


class UnseenQuestions:
    """Says each question no view shows on the desktop, once (HostServer asks each frame):
    an approval or a compaction's preview of a session no view is attached to, and a form
    (or a request for a model's answer) of a folder's MCP server that no view watches (a
    window on the folder shows those, whichever of its conversations' calls made it ask)."""

    def __init__(self, notifier: HostNotifier) -> None:
        self.notifier = notifier
        self._told: set[tuple[str, str]] = set()  # (session, call) or (folder, ask) said

    def tell(
        self, sessions: Iterable[HostedSession], attached: AbstractSet[str], mcp: HostMcp
    ) -> None:
        """`attached`: the sessions a view is attached to now."""
        for session in sessions:
            if session.id not in attached:
                self._tell_session(session)
        for folder, servers in mcp.folders.items():
            if mcp.watched(folder):
                continue
            for ask_id, request in list(servers.asks.items()):
                if request.pending and self._first((folder, ask_id)):
                    summary, line = ask_said(request)
                    self._say(summary, f"{line}\n{folder}", folder)

    def _tell_session(self, session: HostedSession) -> None:
        folder = session.row.folder
        if session.compaction is not None and self._first((session.id, session.compaction[0])):
            summary = "The main conversation waits before compacting"
            self._say(summary, f"What it would cut and keep, for you to check\n{folder}", folder)
        for call_id, request in list(session.approvals.items()):
            if request.pending and self._first((session.id, call_id)):
                question = session.question(request)
                body = f"{question['name']}: {question['summary']}\n{folder}"
                self._say(f"{question['source'] or 'An agent'} asks for approval", body, folder)

    def _first(self, key: tuple[str, str]) -> bool:
        """Not said yet (and counted as said from now on)."""
        if key in self._told:
            return False
        self._told.add(key)
        return True

    def _say(self, summary: str, body: str, folder: str) -> None:
        asyncio.get_running_loop().create_task(self.notifier.notify(summary, body, folder))


def ask_said(request: InputRequest | SamplingRequest) -> tuple[str, str]:
    """An MCP server's question as a notification says it: its summary and first line."""
    server = f"MCP server {request.server}"
    if isinstance(request, SamplingRequest):
        return f"{server} asks for a model's answer", "It waits for your approval"
    verb = "to open a page" if request.url else "to fill in a form"
    return f"{server} asks you {verb}", shorten(request.message, 120)


def open_window(folder: str) -> None:
    """A window on `folder`, a view of this host (it reopens the session's pane)."""
    log.info("opening a window on %s", folder)
    subprocess.Popen(
        [sys.executable, "-m", "melgui", folder],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
