"""What a window shows of a folder's MCP servers and what it can ask of them, wherever
they run: in the window's own process (desk/mcp/local.py) or in the melgui host the
window is a view of (ui/mcp/host_servers.py, over the host protocol's `mcp/*` methods). The
window imports these types and nothing that runs a server.

    view: McpView = desk.mcp_view
    unsubscribe = view.subscribe(panel.refresh)     # a state, a tool list, a trust changed
    for row in view.servers(): print(row.name, row.line)
    await view.restart("files")                     # the entry read again from its file
    view.ask_input = form.add                       # a server's questions, a person answers

Rows are plain data, made again at each change; a row's `tools` are the server's own
names, each with the name the model calls it by (`model_name`, "" when not offered).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from melgui.core.protocol.content import FilePart
from melgui.core.protocol.tools.mcp.asks import (
    Field,
    InputRequest,
    Progress,
    RunningCall,
    SamplingRequest,
    SamplingTarget,
)

Listener = Callable[[], None]


class McpProblem(Exception):
    """What could not be had from a server (a prompt, a resource, an import), in words."""


@dataclass(frozen=True)
class ToolRow:
    name: str
    description: str = ""
    enabled: bool = True
    model_name: str = ""  # as the model calls it; "" when it is not offered
    annotations: dict[str, bool] = field(default_factory=dict)


@dataclass(frozen=True)
class ResourceRow:
    uri: str
    title: str = ""  # its title or name, as the panel lists it
    about: str = ""  # its description or MIME type


@dataclass(frozen=True)
class PromptArgument:
    name: str
    required: bool = False


@dataclass(frozen=True)
class PromptRow:
    name: str
    description: str = ""
    title: str = ""
    arguments: tuple[PromptArgument, ...] = ()


@dataclass(frozen=True)
class ServerRow:
    name: str
    status: str  # ready, starting, failed, sign-in, untrusted, disabled, stopped
    line: str  # the state in one line, as the panel says it
    describe: str = ""  # what it runs (command or address)
    tools: tuple[ToolRow, ...] = ()
    resources: tuple[ResourceRow, ...] = ()
    prompts: tuple[PromptRow, ...] = ()
    signs_in: bool = False  # an HTTP server that signs in with OAuth
    signed_in: bool = False
    log_name: str = "stderr"


@dataclass(frozen=True)
class ImportDone:
    """What an import added to the user's mcp.json (importing.ImportReport, as data)."""

    added: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    to_set: tuple[str, ...] = ()


@dataclass(frozen=True)
class ServerLog:
    log_name: str
    stderr: str
    protocol: str


ProgressListener = Callable[[str, str, Progress], None]  # (source, call id, progress)


class McpView(Protocol):
    """A folder's MCP servers as the window sees and drives them."""

    @property
    def folder(self) -> str: ...
    @property
    def untrusted(self) -> str | None: ...  # the project file waiting for trust, as a path
    @property
    def problems(self) -> list[str]: ...  # files that could not be read, one line each
    @property
    def where(self) -> str: ...  # "" in this process; "the melgui host" when they run there

    # The window's answers to a server's requests: a form, a model's answer, progress.
    ask_input: Callable[[InputRequest], None] | None
    ask_sampling: Callable[[SamplingRequest], None] | None
    on_progress: ProgressListener | None
    # The connection a sampling request goes through, when the servers run here (the
    # host answers its own servers' requests through its conversations' connection).
    sampling_target: Callable[[], SamplingTarget | None] | None

    def servers(self) -> list[ServerRow]: ...
    def subscribe(self, listener: Listener) -> Callable[[], None]: ...
    def server_of(self, tool_name: str) -> str | None: ...
    def annotations_of(self, tool_name: str) -> dict[str, bool]: ...
    def progress_of(self, source: str, call_id: str) -> Progress | None: ...
    def import_files(self) -> list[str]: ...
    def set_tool_enabled(self, name: str, tool: str, enabled: bool) -> None: ...

    async def start(self) -> None: ...
    async def restart(self, name: str) -> None: ...
    async def set_enabled(self, name: str, enabled: bool) -> None: ...
    async def sign_in(self, name: str) -> None: ...
    async def sign_out(self, name: str) -> None: ...
    async def trust_project(self) -> None: ...
    async def log(self, name: str) -> ServerLog: ...
    async def get_prompt(self, server: str, name: str, arguments: dict[str, str]) -> str: ...
    async def read_resource(self, server: str, uri: str) -> FilePart: ...
    async def import_from(self, path: str) -> ImportDone: ...


def row_to_json(row: ServerRow) -> dict[str, Any]:
    """A row as the host protocol carries it (`mcp/state`)."""
    return asdict(row)


def row_from_json(data: dict[str, Any]) -> ServerRow:
    return ServerRow(
        str(data["name"]),
        str(data.get("status") or ""),
        str(data.get("line") or ""),
        str(data.get("describe") or ""),
        tuple(
            ToolRow(
                str(t["name"]),
                str(t.get("description") or ""),
                bool(t.get("enabled", True)),
                str(t.get("model_name") or ""),
                {str(k): bool(v) for k, v in (t.get("annotations") or {}).items()},
            )
            for t in data.get("tools") or ()
        ),
        tuple(
            ResourceRow(str(r["uri"]), str(r.get("title") or ""), str(r.get("about") or ""))
            for r in data.get("resources") or ()
        ),
        tuple(
            PromptRow(
                str(p["name"]),
                str(p.get("description") or ""),
                str(p.get("title") or ""),
                tuple(
                    PromptArgument(str(a["name"]), bool(a.get("required")))
                    for a in p.get("arguments") or ()
                ),
            )
            for p in data.get("prompts") or ()
        ),
        bool(data.get("signs_in")),
        bool(data.get("signed_in")),
        str(data.get("log_name") or "stderr"),
    )


def call_to_json(call: RunningCall | None) -> dict[str, str] | None:
    return dataclasses.asdict(call) if call is not None else None


def call_from_json(data: Any) -> RunningCall | None:
    if not isinstance(data, dict):
        return None
    return RunningCall(str(data["source"]), str(data["call_id"]), str(data["tool"]))


def ask_to_json(ask_id: str, request: InputRequest | SamplingRequest) -> dict[str, Any]:
    """A question a server asks, as views are told it (`mcp/state`'s `asks`)."""
    if isinstance(request, SamplingRequest):
        return {
            "id": ask_id, "kind": "sampling", "server": request.server, "model": request.model,
            "messages": request.messages, "max_tokens": request.max_tokens,
            "call": call_to_json(request.call),
        }  # fmt: skip
    return {
        "id": ask_id, "kind": "input", "server": request.server, "message": request.message,
        "fields": [dataclasses.asdict(f) for f in request.fields], "url": request.url,
        "elicitation_id": request.elicitation_id, "completed": request.completed,
        "call": call_to_json(request.call),
    }  # fmt: skip


def ask_from_json(data: dict[str, Any]) -> InputRequest | SamplingRequest:
    """The question as a view holds it: answering it there sends `mcp/answer`."""
    call = call_from_json(data.get("call"))
    if data.get("kind") == "sampling":
        messages = [dict(m) for m in data.get("messages") or ()]
        return SamplingRequest(
            str(data["server"]), str(data["model"]), messages, int(data["max_tokens"]), call
        )
    fields = tuple(
        Field(**{**f, "options": tuple(tuple(o) for o in f.get("options") or ())})
        for f in data.get("fields") or ()
    )
    return InputRequest(
        str(data["server"]), str(data.get("message") or ""), fields, call,
        url=str(data.get("url") or ""), elicitation_id=str(data.get("elicitation_id") or ""),
        completed=bool(data.get("completed")),
    )  # fmt: skip
