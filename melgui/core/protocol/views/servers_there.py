"""The MCP servers that run on other machines for this window (a remote folder's, a
configured host's), as their hosts last said, and a remote folder's own
`.melgui/mcp.json` waiting for the person's trust: the model the MCP panel shows beside
this machine's servers.

    there = ServersThere()
    there.subscribe(panel.refresh)
    there.show("build", [ServerThere("build", "db", "ready", "ready, 2 tools", ...)])
    there.wait_for_trust(ProjectFileThere("build", "/srv/p/.melgui/mcp.json", url, sha, ["db"]))
    there.trust("build")                    # remembered here; the servers start there
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from melgui.core.protocol.catalog import ToolDef


@dataclass(frozen=True, slots=True)
class ServerThere:
    where: str  # the host's name (a remote folder's: its label, user@host)
    name: str
    status: str  # "ready", "failed", … (melgui/tools/mcp/server.py's)
    line: str  # "ready, 3 tools", "failed: command not found: x"
    describe: str = ""  # its command or URL there
    tools: tuple[ToolDef, ...] = ()


@dataclass(frozen=True, slots=True)
class ProjectFileThere:
    where: str
    path: str  # the file there
    key: str  # what its trust is kept under here: its URL
    digest: str  # the SHA-256 of its content there
    names: tuple[str, ...]  # the servers it lists


class ServersThere:
    def __init__(self) -> None:
        self.servers: dict[str, list[ServerThere]] = {}  # by host
        self.untrusted: dict[str, ProjectFileThere] = {}  # by host
        # Set by who reaches the hosts: trust that host's project file and start it there.
        self.on_trust: Callable[[ProjectFileThere], None] | None = None
        # Set by who reaches the hosts: start server (where, name) again there.
        self.on_restart: Callable[[str, str], None] | None = None
        self._listeners: list[Callable[[], None]] = []

    def subscribe(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def every(self) -> list[ServerThere]:
        return [server for servers in self.servers.values() for server in servers]

    def show(self, where: str, servers: list[ServerThere]) -> None:
        self.servers[where] = list(servers)
        self._changed()

    def wait_for_trust(self, file: ProjectFileThere) -> None:
        self.untrusted[file.where] = file
        self._changed()

    def trust(self, where: str) -> None:
        """The person trusts `where`'s project file as it was read."""
        file = self.untrusted.pop(where, None)
        if file is not None and self.on_trust is not None:
            self.on_trust(file)
        self._changed()

    def restart(self, where: str, name: str) -> None:
        """The person restarts a server there (the panel's Restart)."""
        if self.on_restart is not None:
            self.on_restart(where, name)

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener()
