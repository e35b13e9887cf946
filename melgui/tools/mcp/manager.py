"""Every MCP server of one desk: loaded from the configuration, started together, stopped
together, each one's tools bridged into the desk's catalog and registry.

    manager = McpManager(folder, desk.catalog, desk.tools)
    manager.load(extra=Path("servers.json"))      # user file, trusted project file, extra
    await manager.start_all()
    ...
    await manager.aclose()

A server that fails leaves the others and the app working; its state says why. Toggles
the person makes (disable a server, disable one tool) are kept in `mcp-state.json`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from melgui.core.config.settings import config_dir
from melgui.core.config.trust import FolderTrust
from melgui.core.protocol.catalog import ToolCatalog
from melgui.core.protocol.tooling import ToolOutcome, ToolRegistry
from melgui.tools.mcp.asks.elicitation import InputRequest
from melgui.tools.mcp.asks.input_answers import InputPolicy
from melgui.tools.mcp.asks.sampling import SamplingRequest, SamplingTarget
from melgui.tools.mcp.bridge import Bridge
from melgui.tools.mcp.calls import Flight
from melgui.tools.mcp.config import ConfigError, ServerConfig, load_file, project_path, user_path
from melgui.tools.mcp.trust import TrustStore

if TYPE_CHECKING:  # the server module brings the MCP SDK (1 s, 40 MB): when one is configured
    from melgui.tools.mcp.server import McpServer

STATE_FILE = "mcp-state.json"
Listener = Callable[["McpServer"], None]


class McpManager:
    def __init__(
        self,
        folder: str,
        catalog: ToolCatalog,
        registry: ToolRegistry,
        *,
        trust: TrustStore | None = None,
        folder_trust: FolderTrust | None = None,
        state_path: Path | None = None,
    ) -> None:
        self.folder = folder
        self.bridge = Bridge(catalog, registry, self._call)
        self.trust = trust or TrustStore()
        self.folder_trust = folder_trust or FolderTrust()
        self.state_path = state_path or config_dir() / STATE_FILE
        self.servers: dict[str, McpServer] = {}
        self.problems: list[str] = []  # files that could not be read, in one line each
        self.untrusted: Path | None = None  # the project file waiting for trust
        self.added: list[ServerConfig] = []  # servers given on the command line (--mcp-url)
        # Whether a server that asks for a sign-in may open the browser by itself (exec);
        # the window leaves this off and signs in when the person asks (sign_in).
        self.sign_in_allowed = False
        self.input_policy = InputPolicy()  # see McpServer
        self.say: Callable[[str], None] = lambda text: None  # exec: a line on stderr
        self.ask_input: Callable[[InputRequest], None] | None = None  # the window's form
        self.on_progress: Callable[[Flight], None] | None = None  # the window's cards
        self.sampling: Literal["refuse", "allow"] = "refuse"  # see McpServer
        self.ask_sampling: Callable[[SamplingRequest], None] | None = None
        self.sampling_target: Callable[[], SamplingTarget | None] | None = None
        self._listeners: list[Listener] = []

    # -- configuration -------------------------------------------------------------------

    def load(self, *, extra: Path | None = None, user: bool = True, project: bool = True) -> None:
        """Read the configuration (stops nothing: call before start_all or after aclose)."""
        configs: dict[str, ServerConfig] = {}
        self.problems.clear()
        self.untrusted = None
        sources: list[tuple[Path, Any]] = []
        if user:
            sources.append((user_path(), "user"))
        if project:
            sources.append((project_path(self.folder), "project"))
        if extra is not None:
            sources.append((extra, "file"))
        for path, scope in sources:
            try:
                found = load_file(path, scope)
            except ConfigError as exc:
                self.problems.append(str(exc))
                continue
            if found and scope == "project" and not self._project_trusted(path):
                self.untrusted = path
            for config in found:
                configs[config.name] = config  # later files win: project over user
        for config in self.added:
            configs[config.name] = config
        toggles = self._toggles()
        self.servers = {}
        if not configs:
            return
        from melgui.tools.mcp.server import McpServer, ServerState

        for name in sorted(configs):
            config = self._apply_toggles(configs[name], toggles.get(name, {}))
            self.servers[name] = McpServer(
                config, self.folder, on_change=self._changed, on_tools=self._tools_changed
            )
            self.servers[name].interactive_sign_in = self.sign_in_allowed
            self.servers[name].input_policy = self.input_policy
            self.servers[name].say = lambda text: self.say(text)  # read when said
            self.servers[name].ask_input = self.ask_input
            self.servers[name].on_progress = self._progressed  # read when heard
            self.servers[name].sampling = self.sampling
            self.servers[name].ask_sampling = self.ask_sampling
            self.servers[name].sampling_target = self._sampling_target  # read when asked
            if config.scope == "project" and self.untrusted is not None:
                server = self.servers[name]
                why = (
                    "trust this project's .melgui/mcp.json to start it"
                    if self.folder_trust.is_trusted(self.folder)
                    else "this folder is restricted: trust the folder to start it"
                )
                server.state = ServerState("untrusted", message=why)

    def _progressed(self, flight: Flight) -> None:
        if self.on_progress is not None:
            self.on_progress(flight)

    def _sampling_target(self) -> SamplingTarget | None:
        return self.sampling_target() if self.sampling_target is not None else None

    def _project_trusted(self, path: Path) -> bool:
        """A project file's servers start only in a trusted folder, and only as the file
        was when the person trusted it (a change after a pull asks again)."""
        return self.folder_trust.is_trusted(self.folder) and self.trust.is_trusted(path)

    def trust_project(self) -> None:
        """Trust the project file as it is now, and its folder (its servers start on the
        next start_all)."""
        if self.untrusted is not None:
            if not self.folder_trust.is_trusted(self.folder):
                self.folder_trust.trust(self.folder)
            self.trust.trust(self.untrusted)
            self.untrusted = None
            from melgui.tools.mcp.server import ServerState

            for server in self.servers.values():
                if server.state.status == "untrusted":
                    server.state = ServerState("stopped")
                    self._changed(server)

    # -- lifecycle -----------------------------------------------------------------------

    def startable(self) -> list[McpServer]:
        wanted = ("stopped", "failed", "sign-in")
        return [s for s in self.servers.values() if s.state.status in wanted]

    async def start_all(self) -> None:
        """Start every enabled, trusted server at once; returns when each is ready or failed."""
        await asyncio.gather(*(server.start() for server in self.startable()))

    async def restart(self, name: str) -> None:
        server = self.servers[name]
        if server.state.status in ("untrusted", "disabled"):
            return
        self.bridge.withdraw(name)
        await server.restart()

    async def sign_in(self, name: str) -> None:
        """Start (again) with a browser sign-in allowed; the server's state says how it went."""
        server = self.servers[name]
        if server.sign_in is None or server.state.status in ("untrusted", "disabled"):
            return
        server.interactive_sign_in = True
        self.bridge.withdraw(name)
        await server.restart()

    async def sign_out(self, name: str) -> None:
        """Forget the server's tokens and registration, and stop it until a new sign-in."""
        server = self.servers[name]
        if server.sign_in is None:
            return
        server.sign_in.sign_out()
        from melgui.tools.mcp.server import ServerState

        self.bridge.withdraw(name)
        await server.stop()
        server._set(ServerState("sign-in", message="signed out"))

    async def set_enabled(self, name: str, enabled: bool) -> None:
        from melgui.tools.mcp.server import ServerState

        server = self.servers[name]
        self._save_toggle(name, disabled=not enabled)
        server.config = dataclasses.replace(server.config, disabled=not enabled)
        if enabled:
            if server.state.status == "disabled":
                server.state = ServerState("stopped")
            await server.start()
        else:
            self.bridge.withdraw(name)
            await server.stop()
            server._set(ServerState("disabled"))

    def set_tool_enabled(self, name: str, tool: str, enabled: bool) -> None:
        server = self.servers[name]
        disabled = set(server.config.disabled_tools)
        (disabled.discard if enabled else disabled.add)(tool)
        server.config = dataclasses.replace(server.config, disabled_tools=frozenset(disabled))
        self._save_toggle(name, disabled_tools=sorted(disabled))
        if server.state.status == "ready":
            self._tools_changed(server)

    async def aclose(self) -> None:
        """Stop every server (and its process group)."""
        await asyncio.gather(*(server.stop() for server in self.servers.values()))
        for name in self.servers:
            self.bridge.withdraw(name)

    # -- listening -----------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _changed(self, server: McpServer) -> None:
        if server.state.status != "ready":
            why = f"The MCP server {server.name!r} is not running ({server.state.line()})."
            self.bridge.withdraw(server.name, why)
        for listener in list(self._listeners):
            listener(server)

    def _tools_changed(self, server: McpServer) -> None:
        config = server.config
        self.bridge.offer(
            server.name,
            server.tools,
            roles=config.roles,
            trusted=config.trusted,
            disabled=config.disabled_tools,
        )
        for listener in list(self._listeners):
            listener(server)

    async def _call(self, name: str, tool: str, arguments: dict[str, Any]) -> ToolOutcome:
        server = self.servers.get(name)
        if server is None:
            return ToolOutcome.error(f"No MCP server named {name!r}.")
        return await server.call(tool, arguments)

    def server_of(self, tool_name: str) -> str | None:
        """The server behind a model-facing tool name (for --json and the inspector)."""
        offered = self.bridge.offered.get(tool_name)
        return offered[0] if offered else None

    def flight_of(self, source: str, call_id: str) -> Flight | None:
        """The call in flight that a conversation's call is, when it runs on a server now."""
        for server in self.servers.values():
            for flight in server.running:
                if (flight.call.source, flight.call.call_id) == (source, call_id):
                    return flight
        return None

    def annotations_of(self, tool_name: str) -> dict[str, bool]:
        offered = self.bridge.offered.get(tool_name)
        return dict(offered[2]) if offered else {}

    # -- toggles -------------------------------------------------------------------------

    def _toggles(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _apply_toggles(self, config: ServerConfig, toggle: dict[str, Any]) -> ServerConfig:
        changes: dict[str, Any] = {}
        if "disabled" in toggle:
            changes["disabled"] = bool(toggle["disabled"])
        if isinstance(toggle.get("disabled_tools"), list):
            changes["disabled_tools"] = config.disabled_tools | frozenset(toggle["disabled_tools"])
        return dataclasses.replace(config, **changes) if changes else config

    def _save_toggle(self, name: str, **values: Any) -> None:
        data = self._toggles()
        data.setdefault(name, {}).update(values)
        self.state_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.state_path)
