"""A desk's MCP servers as a window sees them (core/protocol/tools/mcp/view.py's McpView),
when they run in the window's own process: rows made from its McpManager, and what the
window asks done on it. The melgui host makes the same rows of its own desks' servers
(`rows_of`) and sends them to its views (desk/mcp/hosted.py).

    view = LocalMcp(desk)            # desk.mcp_view
    await view.start()               # desk.start_mcp(): the folder's servers, again
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from melgui.core.protocol.content import FilePart
from melgui.core.protocol.tools.mcp.asks import (
    InputRequest,
    Progress,
    SamplingRequest,
    SamplingTarget,
)
from melgui.core.protocol.tools.mcp.view import (
    ImportDone,
    Listener,
    McpProblem,
    ProgressListener,
    PromptArgument,
    PromptRow,
    ResourceRow,
    ServerLog,
    ServerRow,
    ToolRow,
)
from melgui.tools.mcp.calls import Flight
from melgui.tools.mcp.manager import McpManager

if TYPE_CHECKING:
    from melgui.tools.mcp.server import McpServer


class McpDesk(Protocol):
    """What a desk's servers are seen through (desk.py's Desk)."""

    mcp: McpManager

    @property
    def folder(self) -> str: ...

    async def start_mcp(self) -> None: ...


def row_of(manager: McpManager, server: McpServer) -> ServerRow:
    offered = {
        (origin_server, tool): name
        for name, (origin_server, tool, _notes) in manager.bridge.offered.items()
    }
    disabled = server.config.disabled_tools
    tools = tuple(
        ToolRow(
            tool.name,
            tool.description or "",
            tool.name not in disabled,
            offered.get((server.name, tool.name), ""),
            _annotations(manager, offered.get((server.name, tool.name), "")),
        )
        for tool in sorted(server.tools, key=lambda t: t.name)
    )
    resources = tuple(
        ResourceRow(str(r.uri), r.title or r.name or str(r.uri), r.description or r.mime_type or "")
        for r in sorted(server.resources, key=lambda r: str(r.uri))
    )
    prompts = tuple(
        PromptRow(
            p.name,
            p.description or "",
            p.title or "",
            tuple(PromptArgument(a.name, bool(a.required)) for a in p.arguments or ()),
        )
        for p in sorted(server.prompts, key=lambda p: p.name)
    )
    sign_in = server.sign_in
    return ServerRow(
        server.name,
        server.state.status,
        server.state.line(),
        server.config.describe(),
        tools,
        resources,
        prompts,
        signs_in=sign_in is not None,
        signed_in=sign_in is not None and sign_in.signed_in(),
        log_name=server.log_name,
    )


def _annotations(manager: McpManager, name: str) -> dict[str, bool]:
    return manager.annotations_of(name) if name else {}


def rows_of(manager: McpManager) -> list[ServerRow]:
    return [row_of(manager, server) for server in manager.servers.values()]


def log_of(manager: McpManager, name: str) -> ServerLog:
    server = manager.servers.get(name)
    if server is None:
        raise McpProblem(f"No MCP server named {name!r}.")
    return ServerLog(server.log_name, server.stderr.text(), server.log.text())


async def prompt_of(manager: McpManager, server: str, name: str, arguments: dict[str, str]) -> str:
    """A prompt's text, as the person's next message; McpProblem in words."""
    from melgui.tools.mcp.content import prompt_text
    from melgui.tools.mcp.server import McpUnavailable

    found = manager.servers.get(server)
    if found is None:
        raise McpProblem(f"no MCP server named {server!r}")
    try:
        return prompt_text(await found.get_prompt(name, arguments))
    except McpUnavailable as exc:
        raise McpProblem(str(exc)) from exc


async def resource_of(manager: McpManager, server: str, uri: str) -> FilePart:
    from melgui.tools.mcp.content import resource_part
    from melgui.tools.mcp.server import McpUnavailable

    found = manager.servers.get(server)
    if found is None:
        raise McpProblem(f"no MCP server named {server!r}")
    try:
        return resource_part(server, uri, await found.read_resource(uri))
    except McpUnavailable as exc:
        raise McpProblem(str(exc)) from exc


def import_into_user_file(path: str) -> ImportDone:
    """Add `path`'s servers to the user's mcp.json (secrets to the keyring)."""
    from melgui.tools.mcp.config import ConfigError
    from melgui.tools.mcp.importing import import_servers

    try:
        report = import_servers(Path(path))
    except (ConfigError, OSError) as exc:
        raise McpProblem(str(exc)) from exc
    return ImportDone(tuple(report.added), tuple(report.skipped), tuple(report.to_set))


def import_files(folder: str) -> list[str]:
    """The other apps' MCP files found on this machine (Claude Desktop, VS Code, Cursor)."""
    from melgui.tools.mcp.importing import known_files

    return [str(path) for path in known_files(folder) if path.is_file()]


class LocalMcp:
    """The desk's servers, in this process."""

    def __init__(self, desk: McpDesk) -> None:
        self.desk = desk
        self.on_progress: ProgressListener | None = None
        desk.mcp.on_progress = self._progressed

    # The window's form and question: the servers ask them straight (none set: exec's
    # ways, an answer by policy or a refusal).
    @property
    def ask_input(self) -> Callable[[InputRequest], None] | None:
        return self.manager.ask_input

    @ask_input.setter
    def ask_input(self, ask: Callable[[InputRequest], None] | None) -> None:
        self.manager.ask_input = ask

    @property
    def sampling_target(self) -> Callable[[], SamplingTarget | None] | None:
        return self.manager.sampling_target

    @sampling_target.setter
    def sampling_target(self, target: Callable[[], SamplingTarget | None] | None) -> None:
        self.manager.sampling_target = target

    @property
    def ask_sampling(self) -> Callable[[SamplingRequest], None] | None:
        return self.manager.ask_sampling

    @ask_sampling.setter
    def ask_sampling(self, ask: Callable[[SamplingRequest], None] | None) -> None:
        self.manager.ask_sampling = ask

    @property
    def manager(self) -> McpManager:
        return self.desk.mcp

    @property
    def folder(self) -> str:
        return self.manager.folder

    @property
    def untrusted(self) -> str | None:
        return str(self.manager.untrusted) if self.manager.untrusted is not None else None

    @property
    def problems(self) -> list[str]:
        return self.manager.problems

    @property
    def where(self) -> str:
        return ""

    def _progressed(self, flight: Flight) -> None:
        if self.on_progress is not None and flight.progress is not None:
            self.on_progress(flight.call.source, flight.call.call_id, flight.progress)

    def servers(self) -> list[ServerRow]:
        return rows_of(self.manager)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        return self.manager.subscribe(lambda _server: listener())

    def server_of(self, tool_name: str) -> str | None:
        return self.manager.server_of(tool_name)

    def annotations_of(self, tool_name: str) -> dict[str, bool]:
        return self.manager.annotations_of(tool_name)

    def progress_of(self, source: str, call_id: str) -> Progress | None:
        flight = self.manager.flight_of(source, call_id)
        return flight.progress if flight is not None else None

    def import_files(self) -> list[str]:
        return import_files(self.folder)

    async def start(self) -> None:
        await self.desk.start_mcp()

    async def restart(self, name: str) -> None:
        from melgui.tools.mcp.restart import restart_reread

        await restart_reread(self.manager, name)

    async def set_enabled(self, name: str, enabled: bool) -> None:
        await self.manager.set_enabled(name, enabled)

    def set_tool_enabled(self, name: str, tool: str, enabled: bool) -> None:
        self.manager.set_tool_enabled(name, tool, enabled)

    async def sign_in(self, name: str) -> None:
        await self.manager.sign_in(name)

    async def sign_out(self, name: str) -> None:
        await self.manager.sign_out(name)

    async def trust_project(self) -> None:
        self.manager.trust_project()
        await self.manager.start_all()

    async def log(self, name: str) -> ServerLog:
        return log_of(self.manager, name)

    async def get_prompt(self, server: str, name: str, arguments: dict[str, str]) -> str:
        return await prompt_of(self.manager, server, name, arguments)

    async def read_resource(self, server: str, uri: str) -> FilePart:
        return await resource_of(self.manager, server, uri)

    async def import_from(self, path: str) -> ImportDone:
        return import_into_user_file(path)
