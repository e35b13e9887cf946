"""The machines workers and terminals can run on: Settings.hosts, each reached by one
link, opened when first used and shared by everything on it.

    hosts = RemoteHosts(settings.hosts, ask=dialog, say=status_line)
    place = await hosts.place("build")        # opens the link (may ask the person)
    RemoteTools(place.link, place.folder, options=place.options, mcp=place.mcp)
    await place.link.open_terminal(place.folder, None, 120, 40, env=place.env)

A host's `mcp_servers` (names in the person's MCP configuration) start there when its
link opens, before its place is given (a worker's first leg offers their tools); their
tools are in `place.mcp`, and a server that did not start is said through `on_note`.

A remote folder opened in the window is a host too (named by its URL), so its terminals
and workers share that link, and every configured server starts there, with the
folder's own `.melgui/mcp.json` there once the person trusted it as it is (asked as for
a local folder's, through `there`, the MCP panel's model; remembered here by its URL).
The servers' states go to `there` too, each time they start.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field, replace
from typing import Any

from melgui.core.config.settings import RemoteHost
from melgui.core.config.trust import FolderTrust
from melgui.core.protocol.catalog import ToolCatalog
from melgui.core.protocol.views.servers_there import ProjectFileThere, ServersThere, ServerThere
from melgui.remote.askpass import Ask
from melgui.remote.connect import folder_key, open_link
from melgui.remote.link import Link, LinkError
from melgui.remote.remote_mcp import (
    RemoteServer,
    configured_entries,
    failures,
    offer,
    project_file_there,
    project_key,
    servers_from_json,
    start_there,
)
from melgui.remote.target import (
    SshTarget,
    Target,
    TargetError,
    command_target,
    parse_folder,
)
from melgui.tools.mcp.trust import TrustStore

# (host name, what the link says now: "connected", "reconnecting to … (attempt 2)", "lost")
StateSink = Callable[[str, str], None]


@dataclass(frozen=True, slots=True)
class Place:
    """Where a worker or terminal on a host works: the link, its folder, its settings."""

    name: str
    link: Link
    folder: str
    options: dict[str, Any] = field(default_factory=dict)
    # Its MCP servers' tools, as they are ready there (the host's, shared by its places).
    mcp: ToolCatalog = field(default_factory=ToolCatalog)

    @property
    def env(self) -> dict[str, str]:
        return dict(self.options.get("env") or {})

    @property
    def label(self) -> str:
        return self.link.target.label

    @property
    def loop_settings(self) -> dict[str, Any]:
        """What a session whose loop runs in the host there is opened with beside the
        connection: the host's sandbox and env, as its single tool calls get them
        (`options_of`; no `sandbox`: that machine's own setting)."""
        settings: dict[str, Any] = {}
        if isinstance(self.options.get("sandbox"), bool):
            settings["sandbox_commands"] = self.options["sandbox"]
        if self.env:
            settings["env"] = self.env
        return settings


def target_of(host: RemoteHost) -> Target:
    """The host's target; raises TargetError saying what is wrong with it."""
    text = host.target.strip()
    if text.startswith("ssh://"):
        has_path = "/" in text[len("ssh://") :]
        target = parse_folder(text if has_path else text + "/")
        folder = host.folder or (target.path if target.path != "/" else "")
        if not folder.startswith("/"):
            raise TargetError(f"host {host.name!r}: give its folder (an absolute path there)")
        return replace(target, path=folder.rstrip("/") or "/")
    if not host.folder.startswith("/"):
        raise TargetError(f"host {host.name!r}: give its folder (an absolute path there)")
    return command_target(text, host.folder)


def configured_for(hosts: list[RemoteHost], folder: SshTarget) -> RemoteHost | None:
    """The configured host a remote folder is on (an ssh target naming the same
    `user@host:port`), whose settings the folder takes: `loop_there`, `sandbox`, `env`."""
    for host in hosts:
        text = host.target.strip()
        if not text.startswith("ssh://"):
            continue
        try:
            target = parse_folder(text if "/" in text[len("ssh://") :] else text + "/")
        except TargetError:
            continue
        if target.label == folder.label:
            return host
    return None


def options_of(host: RemoteHost) -> dict[str, Any]:
    # `diagnostics`: the language servers there check each edit there (docs/host-protocol.md);
    # a configured host's are on (the person named it), a remote folder's as it is trusted
    options: dict[str, Any] = {"diagnostics": True}
    if host.sandbox is not None:
        options["sandbox"] = host.sandbox
    if host.env:
        options["env"] = dict(host.env)
    return options


class RemoteHosts:
    def __init__(
        self,
        hosts: list[RemoteHost],
        *,
        ask: Ask | None = None,
        on_state: StateSink | None = None,
        host_argv: list[str] | None = None,
    ) -> None:
        self.hosts = {host.name: host for host in hosts}
        self.ask = ask
        self.on_state = on_state
        self.host_argv = host_argv  # None: melgui's own install there
        # (host name, a line to show): an MCP server that did not start there, and why.
        self.on_note: StateSink | None = None
        self.every_mcp: set[str] = set()  # hosts every configured MCP server starts on
        self._places: dict[str, Place] = {}
        self._opening: dict[str, asyncio.Lock] = {}
        self._tasks: set[asyncio.Future[None]] = set()
        self._catalogs: dict[str, ToolCatalog] = {}
        self.trust = TrustStore()
        self.there: ServersThere | None = None  # the MCP panel's model: servers, trust

    def show_in(self, there: ServersThere) -> None:
        """Say the servers' states to `there`, and ask there about a project file."""
        self.there = there
        there.on_trust = lambda file: self._spawn(self._trusted(file))
        there.on_restart = lambda where, name: self._spawn(self._restart(where, name))

    def names(self) -> list[str]:
        return list(self.hosts)

    def add(self, host: RemoteHost) -> None:
        self.hosts[host.name] = host

    def describe(self) -> str:
        """For the model (list_panes): the hosts and how to put a worker on one."""
        if not self.hosts:
            return ""
        names = ", ".join(f"{name} ({host.target})" for name, host in self.hosts.items())
        return (
            f"Hosts a worker can run on: {names}. Start one there with spawn_agent and a "
            "task that begins `@NAME ` (e.g. `@" + next(iter(self.hosts)) + " run the tests`); "
            "an ACP agent pane, with open_pane and its command after `@NAME `."
        )

    def catalog(self, name: str) -> ToolCatalog:
        """The tools of the MCP servers that run on `name` (empty until they are ready)."""
        return self._catalogs.setdefault(name, ToolCatalog())

    def state(self, name: str) -> str:
        place = self._places.get(name)
        return place.link.state if place is not None else "not connected"

    async def place(self, name: str) -> Place:
        """The host's place, its link opened first if need be (raises LinkError, saying
        why it could not be reached)."""
        host = self.hosts.get(name)
        if host is None:
            known = ", ".join(self.hosts) or "none are configured"
            raise LinkError(f"no host named {name!r} (hosts: {known})")
        lock = self._opening.setdefault(name, asyncio.Lock())
        async with lock:
            place = self._places.get(name)
            if place is not None and place.link.state != "lost":
                return place
            try:
                target = target_of(host)
            except TargetError as exc:
                raise LinkError(str(exc)) from None
            say = self._sink(name)
            link = await open_link(target, say, self.host_argv, ask=self.ask)
            link.on_state = lambda state: self._link_state(name, state)
            say("connected")
            options = options_of(host)
            if name in self.every_mcp:  # a remote folder's window: as the person trusts it
                options["diagnostics"] = FolderTrust().is_trusted(folder_key(target))
                await self._project_file(name, host, link, target.path, options)
            wanted = None if name in self.every_mcp else host.mcp_servers
            if wanted is None or wanted:
                entries = configured_entries(
                    wanted, say=lambda line: self._note(name, f"{line} (for {name})")
                )
                if entries:
                    options["mcp_servers"] = entries
            place = Place(name, link, target.path, options, self.catalog(name))
            self._places[name] = place
            link.on_mcp = lambda folder, described: self._mcp_changed(name, folder, described)
            await self._start_mcp(place)
            return place

    async def _start_mcp(self, place: Place) -> None:
        """Start the place's MCP servers there; their tools join its catalog."""
        servers = await start_there(place.link, place.folder, place.options)
        self._show(place, servers)
        for line in failures(servers, place.name):
            self._note(place.name, line)

    def _show(self, place: Place, servers: list[RemoteServer]) -> None:
        """The servers there as their host said them last: the ready ones' tools offered
        (a server gone is no longer), their states in the MCP panel."""
        offer(place.mcp, servers)
        if self.there is not None and (servers or place.name in self.there.servers):
            self.there.show(place.name, [
                ServerThere(place.name, s.name, s.status, s.line, s.describe, s.tools)
                for s in servers
            ])  # fmt: skip

    def _mcp_changed(self, name: str, folder: str, described: list[dict[str, Any]]) -> None:
        """The host there says a server of `folder` changed state (it died, it restarted)."""
        place = self._places.get(name)
        if place is None or place.folder != folder:
            return
        servers = servers_from_json(described)
        shown = {s.name for s in self.there.servers.get(name, [])} if self.there else set()
        wanted = set(place.options.get("mcp_servers") or {}) | shown
        self._show(place, [s for s in servers if s.name in wanted] if wanted else servers)

    def _link_state(self, name: str, state: str) -> None:
        """Said in the status bar; after a reconnect, the servers' states are asked again
        (a change told while the link was down, or a new host that starts them anew)."""
        self._sink(name)(state)
        place = self._places.get(name)
        if state != "connected" or place is None:  # its first connect was before its place
            return
        if place.options.get("mcp_servers") or place.options.get("project_mcp"):
            self._spawn(self._start_mcp(place))

    def set_trusted(self, name: str, trusted: bool) -> None:
        """The person trusted (or restricted) a remote folder: its language servers there
        check its next calls' edits (or no longer do)."""
        place = self._places.get(name)
        if place is not None:
            place.options["diagnostics"] = trusted

    async def _restart(self, name: str, server: str) -> None:
        """The MCP panel's Restart of a server there: started again by its host."""
        place = self._places.get(name)
        if place is None:
            return
        try:
            answer = await place.link.about_folder(
                "mcp/restart", place.folder, options=place.options, name=server
            )
        except LinkError as exc:
            self._note(name, f"Cannot restart MCP server {server} on {name}: {exc}")
            return
        self._mcp_changed(name, place.folder, list(answer.get("servers") or []))

    async def _project_file(
        self, name: str, host: RemoteHost, link: Link, folder: str, options: dict[str, Any]
    ) -> None:
        """The folder's own `.melgui/mcp.json` there: started with the rest when the
        person trusted it as it is, else asked about (its servers wait)."""
        found = await project_file_there(link, folder, lambda line: self._note(name, line))
        if found is None:
            return
        key = project_key(folder_key(target_of(host)))
        sha = str(found["digest"])
        if self.trust.is_trusted_as(key, sha):
            options["project_mcp"] = sha
        elif self.there is not None:
            names = tuple(str(n) for n in found.get("names") or ())
            self.there.wait_for_trust(ProjectFileThere(name, str(found["path"]), key, sha, names))

    async def _trusted(self, file: ProjectFileThere) -> None:
        """The person trusted a folder's own file: remembered here, started there."""
        self.trust.trust_as(file.key, file.digest)
        place = self._places.get(file.where)
        if place is not None:
            place.options["project_mcp"] = file.digest  # its calls' options from now on
            await self._start_mcp(place)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _note(self, name: str, line: str) -> None:
        if self.on_note is not None:
            self.on_note(name, line)

    def _sink(self, name: str) -> Callable[[str], None]:
        def say(state: str) -> None:
            if self.on_state is not None:
                self.on_state(name, state)

        return say

    async def aclose(self) -> None:
        places, self._places = self._places, {}
        for place in places.values():
            await place.link.aclose()


def host_word(task: str, names: list[str]) -> tuple[str | None, str]:
    """A task that begins `@NAME ` (a configured host) runs there: (NAME, the rest)."""
    word, _, rest = task.strip().partition(" ")
    if word.startswith("@") and word[1:] in names and rest.strip():
        return word[1:], rest.strip()
    return None, task
