"""The melgui host's MCP servers of a folder as a window sees them (McpView), over the
host protocol's `mcp/*` methods: the rows the host sends (`mcp/state`, at each change),
what the window asks done on them, and the servers' questions the host holds, answered
from the window's form and bar (desk/mcp/hosted.py is the other end).

    view = HostMcpView(client, folder=lambda: "/p", settings=lambda: {...})
    await view.start()                          # mcp/watch: the servers and their state
    client.on_notification = view.heard         # (the window's host view chains it)
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
from collections.abc import Callable
from typing import Any

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
    ServerLog,
    ServerRow,
    ask_from_json,
    row_from_json,
)
from melgui.host.client import HostClient, HostGone
from melgui.host.wire import RpcError

log = logging.getLogger(__name__)
WHERE = "the melgui host"
KEPT_PROGRESS = 200  # the calls whose last report is kept for the inspector


class HostMcpView:
    def __init__(
        self,
        client: HostClient,
        *,
        folder: Callable[[], str],
        settings: Callable[[], dict[str, str]],
    ) -> None:
        self.client = client
        self._folder = folder
        self._settings = settings
        self.watched = ""  # the folder the host tells this view of (its real path)
        self._asked = ""  # that folder as the window named it
        self.rows: list[ServerRow] = []
        self._untrusted: str | None = None
        self._problems: list[str] = []
        self._import_files: list[str] = []
        self.starting = False
        self.ask_input: Callable[[InputRequest], None] | None = None
        self.ask_sampling: Callable[[SamplingRequest], None] | None = None
        self.on_progress: ProgressListener | None = None
        self.sampling_target: Callable[[], SamplingTarget | None] | None = None  # the host's
        self.asks: dict[str, InputRequest | SamplingRequest] = {}  # by the host's id
        self._progress: dict[tuple[str, str], Progress] = {}
        self._listeners: list[Listener] = []
        self._sending: set[asyncio.Task[Any]] = set()

    # -- what the window reads -----------------------------------------------------------

    @property
    def folder(self) -> str:
        return self._asked or self._folder()

    @property
    def untrusted(self) -> str | None:
        return self._untrusted

    @property
    def problems(self) -> list[str]:
        return self._problems

    @property
    def where(self) -> str:
        return WHERE

    def servers(self) -> list[ServerRow]:
        return list(self.rows)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _offered(self, tool_name: str) -> tuple[str, dict[str, bool]] | None:
        for row in self.rows:
            for tool in row.tools:
                if tool.model_name == tool_name:
                    return row.name, tool.annotations
        return None

    def server_of(self, tool_name: str) -> str | None:
        offered = self._offered(tool_name)
        return offered[0] if offered else None

    def annotations_of(self, tool_name: str) -> dict[str, bool]:
        offered = self._offered(tool_name)
        return dict(offered[1]) if offered else {}

    def progress_of(self, source: str, call_id: str) -> Progress | None:
        return self._progress.get((source, call_id))

    def import_files(self) -> list[str]:
        return list(self._import_files)  # found by the host, which imports them

    # -- what the host says --------------------------------------------------------------

    def heard(self, method: str, params: dict[str, Any]) -> bool:
        """A notification from the host; True when it was this view's."""
        if not method.startswith("mcp/") or params.get("folder") != self.watched:
            return False
        if method == "mcp/state":
            self._take(params)
        elif method == "mcp/progress":
            self._heard_progress(params)
        return True

    def _take(self, state: dict[str, Any]) -> None:
        self.rows = [row_from_json(row) for row in state.get("servers") or ()]
        self._untrusted = state.get("untrusted")
        self._problems = [str(p) for p in state.get("problems") or ()]
        self._import_files = [str(f) for f in state.get("import_files") or ()]
        self.starting = bool(state.get("starting"))
        self._take_asks(state.get("asks") or [])
        for listener in list(self._listeners):
            listener()

    def _take_asks(self, asks: list[dict[str, Any]]) -> None:
        """New questions go to the window; one gone from the host (answered in another
        view, or its call ended) goes from the window too."""
        listed = {str(a["id"]): a for a in asks}
        for ask_id in [i for i in self.asks if i not in listed]:
            request = self.asks.pop(ask_id)
            if request.pending:
                request.answer.cancel()  # not an answer: nothing is sent for it
        for ask_id, data in listed.items():
            if ask_id in self.asks:
                continue
            request = self.asks[ask_id] = ask_from_json(data)
            request.answer.add_done_callback(functools.partial(self._answered, ask_id))
            if isinstance(request, SamplingRequest):
                if self.ask_sampling is not None:
                    self.ask_sampling(request)
            elif self.ask_input is not None:
                self.ask_input(request)

    def _answered(self, ask_id: str, done: asyncio.Future[Any]) -> None:
        if done.cancelled():
            return
        answer = done.result()
        if isinstance(answer, bool):
            params: dict[str, Any] = {"action": "approve" if answer else "refuse"}
        else:
            action, content = answer
            params = {"action": action, "content": content or {}}
        self._send("mcp/answer", id=ask_id, **params)

    def _heard_progress(self, params: dict[str, Any]) -> None:
        total = params.get("total")
        progress = Progress(
            float(params["progress"]),
            float(total) if total is not None else None,
            str(params.get("message") or ""),
        )
        key = (str(params["source"]), str(params["call_id"]))
        self._progress.pop(key, None)
        self._progress[key] = progress
        while len(self._progress) > KEPT_PROGRESS:
            del self._progress[next(iter(self._progress))]
        if self.on_progress is not None:
            self.on_progress(key[0], key[1], progress)

    # -- what the window asks ------------------------------------------------------------

    async def _call(self, method: str, **params: Any) -> Any:
        try:
            return await self.client.call(method, folder=self.watched, **params)
        except (RpcError, HostGone, OSError) as exc:
            raise McpProblem(str(exc)) from exc

    def _send(self, method: str, **params: Any) -> None:
        """A request whose answer the window does not wait for (a check box, an answer)."""

        async def send() -> None:
            try:
                state = await self._call(method, **params)
            except McpProblem as exc:
                log.warning("%s: %s", method, exc)
                return
            if isinstance(state, dict) and "servers" in state:
                self._take(state)

        task = asyncio.get_running_loop().create_task(send())
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def start(self) -> None:
        """Watch the window's folder (a new one after a change of project) and start its
        servers again in the host."""
        folder = self._folder()
        if self.watched and self._asked == folder:
            await self._act("start")
            return
        if self.watched:
            with contextlib.suppress(RpcError, HostGone, OSError):
                await self.client.call("mcp/unwatch", folder=self.watched)
        # The host names it by its real path (this machine's host: the same), in the
        # answer and in what it says right after, which may be read before the answer.
        self._asked, self.watched = folder, os.path.realpath(folder)
        try:
            state = await self.client.call("mcp/watch", folder=folder, settings=self._settings())
        except (RpcError, HostGone, OSError) as exc:
            self._problems = [f"The melgui host's MCP servers cannot be shown: {exc}"]
            for listener in list(self._listeners):
                listener()
            return
        self.watched = str(state.get("folder") or folder)
        self._take(state)

    async def _act(self, action: str, name: str = "") -> None:
        try:
            self._take(await self._call("mcp/act", action=action, name=name))
        except McpProblem as exc:
            log.warning("mcp/act %s %s: %s", action, name, exc)

    async def restart(self, name: str) -> None:
        await self._act("restart", name)

    async def set_enabled(self, name: str, enabled: bool) -> None:
        await self._act("enable" if enabled else "disable", name)

    def set_tool_enabled(self, name: str, tool: str, enabled: bool) -> None:
        self._send("mcp/tool", name=name, tool=tool, enabled=enabled)

    async def sign_in(self, name: str) -> None:
        await self._act("sign_in", name)

    async def sign_out(self, name: str) -> None:
        await self._act("sign_out", name)

    async def trust_project(self) -> None:
        await self._act("trust")

    async def log(self, name: str) -> ServerLog:
        found = await self._call("mcp/log", name=name)
        return ServerLog(str(found["log_name"]), str(found["stderr"]), str(found["protocol"]))

    async def get_prompt(self, server: str, name: str, arguments: dict[str, str]) -> str:
        found = await self._call("mcp/prompt", server=server, name=name, arguments=arguments)
        return str(found["text"])

    async def read_resource(self, server: str, uri: str) -> FilePart:
        found = (await self._call("mcp/resource", server=server, uri=uri))["part"]
        return FilePart(str(found["path"]), str(found["text"]), str(found.get("note") or ""))

    async def import_from(self, path: str) -> ImportDone:
        done = await self._call("mcp/import", path=path)
        return ImportDone(tuple(done["added"]), tuple(done["skipped"]), tuple(done["to_set"]))

    def took_over(self, client: HostClient) -> None:
        """A new host took over from one that ended: its servers, watched again."""
        self.client, self.watched, self._asked = client, "", ""
        for request in self.asks.values():
            if request.pending:
                request.answer.cancel()
        self.asks.clear()
