"""The MCP servers the melgui host runs for its own conversations (a window's main
conversation and workers, `melgui exec --host`'s), one set per folder, and the `mcp/*`
methods a view shows and drives them with (protocol 14; docs/host-protocol.md, "The
folder's MCP servers"): the rows of McpView, Restart, Enable/Disable, a tool's check box,
Sign in, Trust, the log, a prompt's text, a resource's, an import. A server's request
that needs a person (a form, a model's answer) waits here as a question any view may
answer. HostServer takes the methods into its table; a bad param is a KeyError or
TypeError (the protocol's -32602), a server's refusal an McpProblem (-32603, in words).

    mcp = HostMcp(host.desk_for, server.connections, host.loops_on)  # on_desk: adopt
    handlers = {**mcp.methods(), ...}
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import os
from collections.abc import Awaitable, Callable
from collections.abc import Set as AbstractSet
from typing import Any, Protocol

from melgui.core.config.settings import Settings
from melgui.core.protocol.tools.mcp.asks import InputRequest, SamplingRequest, SamplingTarget
from melgui.core.protocol.tools.mcp.view import ask_to_json, row_to_json
from melgui.desk.connection import LiveConnection
from melgui.desk.mcp.local import (
    McpDesk,
    import_files,
    import_into_user_file,
    log_of,
    prompt_of,
    resource_of,
    rows_of,
)
from melgui.tools.mcp.calls import Flight

TELL_AFTER = 0.05  # seconds: changes of one moment (a start of five servers) said once
ACTIONS = ("start", "restart", "enable", "disable", "sign_in", "sign_out", "trust")


class HostDesk(McpDesk, Protocol):
    """What the host's servers use of a desk (desk.py's Desk)."""

    settings: Settings
    connection: LiveConnection


class Viewer(Protocol):
    """A view connected to the host (server.py's ViewConnection)."""

    def notify(self, method: str, params: dict[str, Any]) -> Any: ...


Method = Callable[[Any, dict[str, Any]], Awaitable[Any]]


class FolderServers:
    """One folder's servers: its first desk's McpManager (the sessions of that desk call
    them), started when the desk is made, and the questions they wait on."""

    def __init__(
        self,
        desk: HostDesk,
        tell: Callable[[FolderServers], None],
        targets: Callable[[str], list[SamplingTarget]] | None = None,
    ) -> None:
        self.desk = desk
        self._targets = targets
        self.folder = desk.folder
        self._tell = tell
        self._ids = itertools.count(1)
        self.asks: dict[str, InputRequest | SamplingRequest] = {}
        self.progress: Callable[[str, str, dict[str, Any]], None] | None = None
        self._telling: asyncio.Handle | None = None
        manager = desk.mcp
        manager.ask_input = self._ask
        manager.ask_sampling = self._ask
        manager.sampling_target = self._sampling_target
        manager.on_progress = self._progressed
        manager.subscribe(lambda _server: self.changed())
        self.starting = asyncio.get_running_loop().create_task(desk.start_mcp())
        self.starting.add_done_callback(lambda _: self.changed())

    def _sampling_target(self) -> SamplingTarget:
        """The folder's main conversation's connection and model (its desk's when none
        runs): a server's request goes where the person's conversation goes."""
        targets = self._targets(self.folder) if self._targets is not None else []
        if targets:
            return targets[0]
        desk = self.desk
        return SamplingTarget(desk.connection.current, desk.settings.model, desk.folder)

    def _ask(self, request: InputRequest | SamplingRequest) -> None:
        ask_id = f"a{next(self._ids)}"
        self.asks[ask_id] = request

        def answered(_done: object) -> None:
            self.asks.pop(ask_id, None)
            self.changed()

        request.answer.add_done_callback(answered)
        self.changed()

    def _progressed(self, flight: Flight) -> None:
        progress = flight.progress
        if self.progress is not None and progress is not None:
            said = {"progress": progress.progress, "total": progress.total,
                    "message": progress.message}  # fmt: skip
            self.progress(flight.call.source, flight.call.call_id, said)

    def changed(self) -> None:
        if self._telling is None:
            self._telling = asyncio.get_running_loop().call_later(TELL_AFTER, self._say)

    def _say(self) -> None:
        self._telling = None
        self._tell(self)

    def state(self) -> dict[str, Any]:
        manager = self.desk.mcp
        return {
            "folder": self.folder,
            "servers": [row_to_json(row) for row in rows_of(manager)],
            "untrusted": str(manager.untrusted) if manager.untrusted is not None else None,
            "problems": list(manager.problems),
            "starting": not self.starting.done(),
            "asks": [ask_to_json(i, r) for i, r in self.asks.items() if r.pending],
            "import_files": import_files(self.folder),  # other apps' files found here
        }

    async def act(self, action: str, name: str) -> None:
        from melgui.tools.mcp.restart import restart_reread

        manager = self.desk.mcp
        if action == "start":
            await self.desk.start_mcp()
            return
        if action == "trust":
            manager.trust_project()
            await manager.start_all()
            return
        if name not in manager.servers:
            raise KeyError(f"no MCP server {name!r} for {self.folder}")
        if action == "restart":
            await restart_reread(manager, name)
        elif action in ("enable", "disable"):
            await manager.set_enabled(name, action == "enable")
        elif action == "sign_in":
            await manager.sign_in(name)
        else:
            await manager.sign_out(name)

    def answer(self, ask_id: str, action: str, content: dict[str, Any]) -> dict[str, Any]:
        request = self.asks.get(ask_id)
        if request is None or not request.pending:
            return {"answered": False}  # another view answered it, or the call ended
        if isinstance(request, SamplingRequest):
            (request.approve if action == "approve" else request.refuse)()
            return {"answered": True}
        if action == "accept":
            problem = request.accept(content)
            return {"answered": not problem, "problem": problem}
        (request.decline if action == "decline" else request.cancel)()
        return {"answered": True}


class HostMcp:
    """`desk_for(folder, settings)`: the desk a view's sessions on `folder` with
    `settings` work on (made when none is); `connections`: the views attached now;
    `targets(folder)`: where its conversations reach their model, the main one first."""

    def __init__(
        self,
        desk_for: Callable[[str, dict[str, Any]], HostDesk],
        connections: AbstractSet[Viewer],
        targets: Callable[[str], list[SamplingTarget]] | None = None,
    ) -> None:
        self.desk_for = desk_for
        self.connections = connections
        self.targets = targets
        self.folders: dict[str, FolderServers] = {}
        self.watching: dict[Viewer, set[str]] = {}

    def adopt(self, desk: HostDesk) -> None:
        """A desk the host made: the first of its folder runs the folder's servers."""
        if desk.folder not in self.folders:
            servers = FolderServers(desk, self._tell, self.targets)
            self.folders[desk.folder] = servers
            servers.progress = lambda *said: self._progress(desk.folder, *said)

    def methods(self) -> dict[str, Method]:
        return {
            "mcp/watch": self._watch,
            "mcp/unwatch": self._unwatch,
            "mcp/act": self._act,
            "mcp/tool": self._tool,
            "mcp/log": self._log,
            "mcp/prompt": self._prompt,
            "mcp/resource": self._resource,
            "mcp/import": self._import,
            "mcp/answer": self._answer,
        }

    def _viewers(self, folder: str) -> list[Viewer]:
        return [c for c in self.connections if folder in self.watching.get(c, ())]

    def watched(self, folder: str) -> bool:
        """A view shows `folder`'s servers (and the questions they ask) now."""
        return bool(self._viewers(folder))

    def _tell(self, servers: FolderServers) -> None:
        state = servers.state()
        for view in self._viewers(servers.folder):
            view.notify("mcp/state", state)

    def _progress(self, folder: str, source: str, call_id: str, said: dict[str, Any]) -> None:
        for view in self._viewers(folder):
            view.notify("mcp/progress", {"folder": folder, "source": source,
                                         "call_id": call_id, **said})  # fmt: skip

    def _servers(self, params: dict[str, Any]) -> FolderServers:
        found = self.folders.get(os.path.realpath(_folder(params)))
        if found is None:
            raise KeyError(f"no MCP servers watched for {params['folder']!r}")
        return found

    async def _watch(self, view: Viewer, params: dict[str, Any]) -> Any:
        """The folder's servers (started here if none of its desks runs them yet, on the
        desk the view's sessions with `settings` will have), and `mcp/state` at each change."""
        folder = os.path.realpath(_folder(params))
        if folder not in self.folders:
            settings = params.get("settings") or {}
            self.adopt(self.desk_for(folder, settings if isinstance(settings, dict) else {}))
        self.watching.setdefault(view, set()).add(folder)
        for gone in [c for c in self.watching if c not in self.connections and c is not view]:
            del self.watching[gone]
        return self.folders[folder].state()

    async def _unwatch(self, view: Viewer, params: dict[str, Any]) -> Any:
        self.watching.get(view, set()).discard(os.path.realpath(_folder(params)))
        return {}

    async def _act(self, view: Viewer, params: dict[str, Any]) -> Any:
        """Start (every server again), trust (the project's file), or restart, enable,
        disable, sign_in, sign_out one (`name`); the state once it is done."""
        servers = self._servers(params)
        action = params["action"]
        if action not in ACTIONS:
            raise KeyError(f"action is one of {', '.join(ACTIONS)}")
        await servers.act(action, str(params.get("name") or ""))
        return servers.state()

    async def _tool(self, view: Viewer, params: dict[str, Any]) -> Any:
        servers = self._servers(params)
        name, tool = str(params["name"]), str(params["tool"])
        if name not in servers.desk.mcp.servers:
            raise KeyError(f"no MCP server {name!r}")
        servers.desk.mcp.set_tool_enabled(name, tool, bool(params["enabled"]))
        return servers.state()

    async def _log(self, view: Viewer, params: dict[str, Any]) -> Any:
        servers = self._servers(params)
        return dataclasses.asdict(log_of(servers.desk.mcp, str(params["name"])))

    async def _prompt(self, view: Viewer, params: dict[str, Any]) -> Any:
        servers = self._servers(params)
        arguments = {str(k): str(v) for k, v in (params.get("arguments") or {}).items()}
        server, name = str(params["server"]), str(params["name"])
        return {"text": await prompt_of(servers.desk.mcp, server, name, arguments)}

    async def _resource(self, view: Viewer, params: dict[str, Any]) -> Any:
        servers = self._servers(params)
        part = await resource_of(servers.desk.mcp, str(params["server"]), str(params["uri"]))
        return {"part": dataclasses.asdict(part)}

    async def _import(self, view: Viewer, params: dict[str, Any]) -> Any:
        """Add a file's servers to the user's mcp.json here; the folder's servers start
        again with them."""
        servers = self._servers(params)
        done = import_into_user_file(str(params["path"]))
        if done.added:
            await servers.act("start", "")
        return dataclasses.asdict(done)

    async def _answer(self, view: Viewer, params: dict[str, Any]) -> Any:
        """A person's answer to a server's question (the first view's wins)."""
        servers = self._servers(params)
        content = params.get("content") or {}
        if not isinstance(content, dict):
            raise TypeError("content must be an object")
        return servers.answer(str(params["id"]), str(params["action"]), content)

    async def aclose(self) -> None:
        for servers in self.folders.values():
            servers.starting.cancel()
            await asyncio.gather(servers.starting, return_exceptions=True)


def _folder(params: dict[str, Any]) -> str:
    folder = params["folder"]
    if not isinstance(folder, str) or not os.path.isdir(folder):
        raise KeyError(f"{folder!r} is not a folder")
    return folder
