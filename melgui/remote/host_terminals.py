"""The terminals one view has in a melgui host, whichever way it is reached: a remote
folder's host over its link (link.py), or the user's own host over its socket (a window
opened with --with-host: ui/window/host_view.py). One implementation of the term/* side
of a view: open, attach again from the offset this side has, hear output, exits and
closes, and end every program's pane in plain words when the host is gone.

    terminals = HostTerminals("the melgui host", lambda: client)
    client.on_notification = terminals.heard            # term/output, term/exit, …
    pty = await terminals.open("/p", None, 100, 30)      # read by the usual pane and reader
    kept = await terminals.kept("/p")                    # what the host kept for the folder
    await terminals.adopt(client, kept[0], 100, 30)      # its pane again, from the kept tail
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from melgui.host.client import HostClient, HostGone
from melgui.host.wire import PAYLOAD, RpcError
from melgui.remote.remote_pty import HUNG_UP, RemotePty

CLOSED_THERE = "the terminal was closed on the remote"


class TerminalUnavailable(Exception):
    """A terminal could not be opened or listed; the message says why."""


class HostTerminals:
    def __init__(
        self,
        label: str,
        current: Callable[[], HostClient | None],
        state: Callable[[], str] = lambda: "closed",
        *,
        here: bool = False,
    ) -> None:
        """`label`: the host in words; `current`: its client while connected; `here`: the
        host runs on this machine (a program's pid there is one here: its jobs can be read
        for the quit question)."""
        self.label = label
        self._current = current
        self._state = state
        self.here = here
        self.open_ptys: dict[str, RemotePty] = {}
        self.closed_note = CLOSED_THERE

    def _client(self) -> HostClient:
        client = self._current()
        if client is None:
            raise TerminalUnavailable(f"not connected to {self.label} now: {self._state()}")
        return client

    async def open(
        self,
        folder: str,
        command: str | None,
        columns: int,
        rows: int,
        env: dict[str, str] | None = None,
        *,
        argv: list[str] | None = None,
        pipes: bool = False,
    ) -> RemotePty:
        """A program in a pty in the host (the login shell there when `command` is None;
        `argv`: exactly that program, no shell; `pipes`: on plain pipes), read here
        through a RemotePty. Raises TerminalUnavailable saying why it could not start."""
        client = self._client()
        try:
            opened = await client.call(
                "term/open", folder=folder, command=command, columns=columns, rows=rows,
                env=env or {}, **({"argv": argv} if argv else {}),
                **({"pipes": True} if pipes else {}),
            )  # fmt: skip
        except RpcError as exc:
            raise TerminalUnavailable(f"{self.label}: {exc.message}") from None
        except (HostGone, ConnectionError):
            raise TerminalUnavailable(f"the connection to {self.label} dropped") from None
        return await self.adopt(client, opened, columns, rows, pipes=pipes)

    async def kept(self, folder: str) -> list[dict[str, Any]]:
        """The terminals the host keeps for `folder` that no other view shows and that are
        no agent's stdio (`term/list`), oldest first: a new window's panes again."""
        client = self._client()
        try:
            listed = await client.call("term/list", folder=os.path.realpath(folder))
        except RpcError as exc:
            raise TerminalUnavailable(f"{self.label}: {exc.message}") from None
        except (HostGone, ConnectionError):
            raise TerminalUnavailable(f"the connection to {self.label} dropped") from None
        terminals: list[dict[str, Any]] = listed["terminals"]
        return [t for t in terminals if not t.get("views") and not t.get("pipes")]

    async def adopt(
        self,
        client: HostClient,
        described: dict[str, Any],
        columns: int,
        rows: int,
        *,
        pipes: bool = False,
    ) -> RemotePty:
        """A terminal the host has (`term/open`'s or `term/list`'s entry), heard here from
        its start or the kept tail (a reset first when that is not its start)."""
        pid = int(described.get("pid") or 0) if self.here else 0
        pty = RemotePty(self, str(described["term"]), str(described["title"]), columns, rows,
                        pipes=pipes, host_pid=pid)  # fmt: skip
        self.open_ptys[pty.term_id] = pty
        await self.attach(client, pty)
        return pty

    async def attach(self, client: HostClient, pty: RemotePty) -> None:
        """Hear the terminal from the offset this side has (again, after a drop)."""
        try:
            await client.call(
                "term/attach", term=pty.term_id, since=pty.offset, columns=pty.columns,
                rows=pty.rows,
            )  # fmt: skip
        except RpcError:  # the host has no such terminal any more
            self.open_ptys.pop(pty.term_id, None)
            pty.ended(HUNG_UP, self.closed_note)
            return
        except (HostGone, ConnectionError):
            return  # the next reconnect attaches it
        pty.reattached()

    async def attach_all(self, client: HostClient) -> None:
        for pty in list(self.open_ptys.values()):
            await self.attach(client, pty)

    def heard(self, method: str, params: dict[str, Any]) -> None:
        """A notification from the host: term/* ones for these terminals are taken."""
        if not method.startswith("term/"):
            return
        pty = self.open_ptys.get(str(params.get("term")))
        if pty is None:
            return
        if method == "term/output":
            pty.output(int(params["at"]), bytes(params[PAYLOAD]))
        elif method == "term/exit":
            self.open_ptys.pop(pty.term_id, None)
            pty.stderr = str(params.get("stderr") or "")
            pty.ended(int(params["code"]))
        elif method == "term/closed":
            self.open_ptys.pop(pty.term_id, None)
            pty.ended(HUNG_UP, self.closed_note)

    # -- what a RemotePty asks of its link ------------------------------------------------

    def terminal_notify(self, method: str, **params: object) -> bool:
        client = self._current()
        if client is None or client.gone:
            return False
        client.notify(method, **params)
        return True

    def forget_terminal(self, term_id: str) -> None:
        self.open_ptys.pop(term_id, None)

    def end_all(self, note: str) -> None:
        """The host is gone (or the link lost for good): each pane says why its program
        ended."""
        terminals, self.open_ptys = self.open_ptys, {}
        for pty in terminals.values():
            pty.ended(HUNG_UP, note)

    def keep_running(self) -> None:
        """The window goes and these programs stay in the host for the next one: closing
        their panes detaches them instead of ending them."""
        for pty in self.open_ptys.values():
            pty.kept = True
