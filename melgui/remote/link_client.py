"""The host on the other end of a link, as a RemoteSession's client: sessions whose loop
runs there (with a key the view sent), seen from here across the link's drops.

    link = Link(target, host_argv()); await link.open()
    client = LinkClient(link)
    session = RemoteSession.start(client, folder="/srv/p", settings=..., api_key=key)

A dropped link does not stop the turn: the loop runs in the user's host there, which
outlives the connection. Each new connection reattaches every session from the last
number this side has, so the view hears what it missed once, in order, with no gap; a
number the host never gave (its journal was lost) takes a snapshot instead.

A request is sent on the connection there is now, waiting while the link reconnects. It
is never sent twice: a request whose connection dropped before its answer raises
HostGone (a prompt sent twice would be two turns).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from melgui.host.changes import Record
from melgui.host.client import HostClient, HostGone
from melgui.host.wire import UNKNOWN_SESSION, RpcError
from melgui.remote.link import Link

log = logging.getLogger(__name__)


class LinkClient:
    def __init__(self, link: Link) -> None:
        self.link = link
        # Shared with each connection's HostClient: its checked numbers reach these.
        self.sessions: dict[str, Callable[[list[Record]], None]] = {}
        self.resets: dict[str, Callable[[dict[str, Any]], None]] = {}
        self.lost: dict[str, Callable[[str], None]] = {}
        self.last_seq: dict[str, int] = {}
        self.gaps: list[str] = []
        self.reattached = 0  # connections after the first that reattached sessions
        self.on_gone: Callable[[str], None] | None = None  # the link is lost for good: why
        link.on_connect.append(self._connected)
        link.on_lost.append(self._lost)
        if link.current is not None:
            self._adopt(link.current)

    def _adopt(self, client: HostClient) -> None:
        client.sessions = self.sessions
        client.last_seq = self.last_seq
        client.gaps = self.gaps

    async def _connected(self, client: HostClient) -> None:
        """A new connection: the sessions attached before hear what they missed."""
        self._adopt(client)
        if not self.sessions:
            return
        wanted: dict[str, int | None] = {sid: self.last_seq.get(sid) for sid in self.sessions}
        try:
            try:
                answer = await client.attach(wanted)
            except RpcError as exc:
                if exc.code != UNKNOWN_SESSION:
                    raise
                answer = await self._one_by_one(client, wanted)  # some the host forgot
        except (HostGone, ConnectionError, RpcError) as exc:
            log.info("%s: reattaching sessions failed: %s", self.link.target.label, exc)
            return  # the link's watch finds it dead and connects again
        self.reattached += 1
        for session_id, part in answer.items():
            reset = self.resets.get(session_id)
            if "snapshot" in part and reset is not None:
                reset(part["snapshot"])

    async def _one_by_one(
        self, client: HostClient, wanted: dict[str, int | None]
    ) -> dict[str, Any]:
        """Each session attached alone: one the host there no longer has (it lost its
        journal) is said lost, the others go on."""
        answer: dict[str, Any] = {}
        for session_id, since in wanted.items():
            try:
                answer.update(await client.attach({session_id: since}))
            except RpcError as exc:
                if exc.code != UNKNOWN_SESSION:
                    raise
                self.sessions.pop(session_id, None)
                gone = self.lost.pop(session_id, None)
                if gone is not None:
                    gone(f"melgui's host on {self.link.target.label} no longer has this "
                         "session (its journal there is gone)")  # fmt: skip
        return answer

    def _lost(self, why: str) -> None:
        """The link is lost for good: every session here says so."""
        for gone in list(self.lost.values()):
            gone(why)
        if self.on_gone is not None:
            self.on_gone(why)

    async def call(self, method: str, **params: Any) -> Any:
        client = await self.link.client()
        return await client.call(method, **params)

    async def attach(
        self, sessions: dict[str, int | None], page: int | None = None
    ) -> dict[str, Any]:
        client = await self.link.client()
        self._adopt(client)
        return await client.attach(sessions, page)
