"""One MCP server as a part of the app: its connection, state, tools, logs and calls.

A runner task owns the connection (the SDK's context managers live in one task): it
starts the transport, initializes, lists tools, reports "ready with N tools", then
waits for stop, or for the process to end on its own ("failed" with its stderr's last
lines). Calls run from any task over the open session, each with the server's timeout
as an idle limit that progress reports start again (calls.py); cancelling one sends
`notifications/cancelled` (the SDK does, for an abandoned request).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pathlib
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, Literal

import httpx2
import mcp_types as types
from mcp.client.session import ClientRequestContext, ClientSession, IncomingMessage
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from melgui.core.protocol.tooling import RUNNING_CALL, ToolOutcome
from melgui.core.runtime.deadline import within
from melgui.tools.mcp.asks.elicitation import InputRequest
from melgui.tools.mcp.asks.input_answers import InputPolicy, answer_input, completed
from melgui.tools.mcp.asks.sampling import SamplingRequest, SamplingTarget, answer_sampling
from melgui.tools.mcp.calls import CallTimeout, Flight, Progress, RunningCall
from melgui.tools.mcp.config import ConfigError, ServerConfig, resolve
from melgui.tools.mcp.content import outcome_of
from melgui.tools.mcp.oauth.sign_in import BrowserSignIn
from melgui.tools.mcp.protocol_log import LineLog, Redactor
from melgui.tools.mcp.stdio import StdioProcess, stdio_server
from melgui.tools.mcp.tap import tapped

Status = Literal[
    "stopped", "starting", "ready", "failed", "restarting", "disabled", "untrusted", "sign-in"
]
START_TIMEOUT = 30.0
STDERR_TAIL = 3
# The environment a server inherits; its `env` is added on top (keys stay out of children).
INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR")
OAUTH_NOTE = (
    "this server refused the Authorization in `headers` and asks for an OAuth sign-in; "
    'remove that header (and any "oauth": false) to sign in'
)
SIGN_IN_NOTE = "asks for a sign-in"


@dataclass(frozen=True)
class ServerState:
    status: Status
    tools: int = 0
    message: str = ""  # one line: why it failed, what it waits for

    def line(self) -> str:
        match self.status:
            case "ready":
                return f"ready, {self.tools} tool{'s' if self.tools != 1 else ''}"
            case "sign-in":
                return f"sign-in needed: {self.message}" if self.message else "sign-in needed"
            case _ if self.message:
                return f"{self.status}: {self.message}"
            case _:
                return self.status


class McpUnavailable(Exception):
    """A prompt or resource could not be had; the message says why in a sentence."""


def _has_authorization(config: ServerConfig) -> bool:
    return any(key.lower() == "authorization" for key in config.headers)


def _one_line(exc: BaseException) -> str:
    """The most telling message of an exception (or exception group)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        return exc.message
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, TimeoutError):
        return "did not answer initialize in time"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


class McpServer:
    """Start, call, stop. `on_change` hears every state change, `on_tools` a new tool list."""

    def __init__(
        self,
        config: ServerConfig,
        folder: str,
        *,
        on_change: Callable[[McpServer], None] | None = None,
        on_tools: Callable[[McpServer], None] | None = None,
    ) -> None:
        self.config = config
        self.folder = folder
        self.state = ServerState("disabled" if config.disabled else "stopped")
        self.tools: list[types.Tool] = []
        self.prompts: list[types.Prompt] = []  # listed when the server offers prompts
        self.resources: list[types.Resource] = []  # and resources
        self.redactor = Redactor()
        self.stderr = LineLog(self.redactor)
        self.log = LineLog(self.redactor)
        self.process: StdioProcess | None = None
        self._on_change = on_change
        self._on_tools = on_tools
        self._session: ClientSession | None = None
        self._runner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()
        self._refresh: asyncio.Task[None] | None = None
        self._sign_in_asked = False
        self._legacy_answer = False
        # Whether a browser may open for a sign-in the server asks for (exec: yes unless
        # told not to; the window: when the person pressed Sign in).
        self.interactive_sign_in = False
        self.sign_in: BrowserSignIn | None = None
        # What a headless run answers a server's request for input (asks/input_answers.py),
        # and where it says what it did (exec: stderr).
        self.input_policy = InputPolicy()
        self.say: Callable[[str], None] = lambda text: None
        # Where a request for input goes to be answered by the person (the window's form);
        # None: answered by `elicitation` above.
        self.ask_input: Callable[[InputRequest], None] | None = None
        # A request for a model's answer (sampling): "refuse", or "allow" unasked (exec's
        # --mcp-sampling allow); `ask_sampling` (the window) asks the person instead.
        self.sampling: Literal["refuse", "allow"] = "refuse"
        self.ask_sampling: Callable[[SamplingRequest], None] | None = None
        self.sampling_target: Callable[[], SamplingTarget | None] | None = None
        self.running: list[Flight] = []  # the calls in flight, oldest first
        # Hears each progress report of a call in flight (the window's card shows it).
        self.on_progress: Callable[[Flight], None] | None = None
        self._asking: list[InputRequest] = []
        if config.kind == "http" and config.oauth.enabled and not _has_authorization(config):
            self.sign_in = BrowserSignIn(
                config.name,
                config.url,
                config.oauth,
                interactive=lambda: self.interactive_sign_in,
                on_state=self._signing_in,
                on_note=lambda text: self.stderr.add(f"[melgui] {text}"),
            )

    @property
    def name(self) -> str:
        return self.config.name

    def _set(self, state: ServerState) -> None:
        self.state = state
        if self._on_change is not None:
            self._on_change(self)

    # -- lifecycle -----------------------------------------------------------------------

    async def start(self, *, restarting: bool = False) -> None:
        """Start and wait until ready or failed (never raises for the server's faults)."""
        if self._runner is not None and not self._runner.done():
            return
        if self.config.problem:
            self._set(ServerState("failed", message=self.config.problem))
            return
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()
        self._sign_in_asked = False
        self._legacy_answer = False
        self._set(ServerState("restarting" if restarting else "starting"))
        self._runner = asyncio.ensure_future(self._run())
        waiter = asyncio.ensure_future(self._ready.wait())
        try:
            await asyncio.wait({self._runner, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()

    async def stop(self) -> None:
        runner, self._runner = self._runner, None
        self._stop.set()
        if runner is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await runner
        if self.state.status in ("ready", "starting", "restarting"):
            self._set(ServerState("stopped"))

    async def restart(self) -> None:
        await self.stop()
        await self.start(restarting=True)

    def _environment(self) -> dict[str, str]:
        env = {k: os.environ[k] for k in INHERITED_ENV if k in os.environ}
        resolved = {key: resolve(value) for key, value in self.config.env.items()}
        self.redactor.secrets = Redactor(
            [*resolved.values(), *self._secret_headers().values()]
        ).secrets
        return env | resolved

    def _secret_headers(self) -> dict[str, str]:
        return {key: resolve(value) for key, value in self.config.headers.items()}

    async def _connect(self, stack: AsyncExitStack, *, legacy: bool = False) -> ClientSession:
        config = self.config
        if config.kind == "stdio":
            env = self._environment()
            cwd = config.cwd or self.folder
            if not os.path.isabs(cwd):
                cwd = os.path.join(self.folder, cwd)
            streams = await stack.enter_async_context(
                stdio_server(
                    config.command,
                    list(config.args),
                    env=env,
                    cwd=cwd,
                    on_stderr=self.stderr.add,
                    on_started=self._started,
                )
            )
        else:
            self._environment()
            headers = self._secret_headers()
            auth = None
            if self.sign_in is not None:
                try:
                    oauth = self.config.oauth.resolved(resolve)
                except ValueError as exc:
                    raise ConfigError(str(exc)) from None
                self.redactor.secrets = Redactor([*self.redactor.secrets, *oauth.secrets()]).secrets
                self.sign_in.settings = oauth
                auth = self.sign_in.auth()

            def client_of(
                headers: dict[str, str] | None = None,
                timeout: httpx2.Timeout | None = None,
                auth: httpx2.Auth | None = auth,
            ) -> httpx2.AsyncClient:
                return httpx2.AsyncClient(
                    auth=auth,
                    headers=headers,
                    timeout=timeout or httpx2.Timeout(30.0, read=300.0),
                    event_hooks={"response": [self._saw_response]},
                )

            if legacy:
                streams = await stack.enter_async_context(
                    sse_client(config.url, headers, auth=auth, httpx_client_factory=client_of)
                )
            else:
                client = await stack.enter_async_context(client_of(headers))
                streams = await stack.enter_async_context(
                    streamable_http_client(config.url, http_client=client)
                )
        streams = await stack.enter_async_context(tapped(streams, self.log))
        session = ClientSession(
            *streams,
            message_handler=self._on_message,
            list_roots_callback=self._roots,
            elicitation_callback=self._elicit,
            sampling_callback=self._sample,
            logging_callback=self._on_log,
        )
        return await stack.enter_async_context(session)

    async def _saw_response(self, response: httpx2.Response) -> None:
        # The SDK turns a 401 into a generic error; the status says it wants a sign-in.
        if response.status_code == 401:
            self._sign_in_asked = True
        # An old HTTP+SSE server answers the streamable transport's first POST so.
        first = self.state.status != "ready" and response.request.method == "POST"
        if first and response.status_code in (404, 405):
            self._legacy_answer = True

    def _signing_in(self, text: str) -> None:
        self._set(ServerState("starting", message=text))

    def _start_timeout(self) -> float:
        # A sign-in in the browser is the person's time, not the server's.
        signing = self.sign_in is not None and self.interactive_sign_in
        return START_TIMEOUT + (self.sign_in.timeout if self.sign_in and signing else 0.0)

    def _started(self, process: StdioProcess) -> None:
        self.process = process

    async def _run(self) -> None:
        try:
            try:
                await self._session_over(legacy=self.config.sse)
            except Exception:
                if not self._legacy_answer or self.config.sse:
                    raise
                # An old server: streamable HTTP answered 404/405, as the spec's
                # backwards-compatibility section says to try the HTTP+SSE transport.
                self.stderr.add(
                    "[melgui] streamable HTTP answered 404/405: trying the HTTP+SSE transport"
                )
                self._legacy_answer = False
                await self._session_over(legacy=True)
        except asyncio.CancelledError:
            raise
        except ConfigError as exc:
            self._set(ServerState("failed", message=str(exc)))
        except BaseException as exc:  # the server's fault: shown, never raised
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            if self.sign_in is not None and self.sign_in.needed:
                self._set(ServerState("sign-in", message=SIGN_IN_NOTE))
                return
            if self.sign_in is not None and self.sign_in.failure:
                self._set(ServerState("failed", message=f"sign-in failed: {self.sign_in.failure}"))
                return
            reason = OAUTH_NOTE if self._sign_in_asked and not self.sign_in else _one_line(exc)
            self._fail(await self._exit_reason() or reason)
        finally:
            self._session = None
            self._ready.set()
            if self._refresh is not None:
                self._refresh.cancel()

    async def _session_over(self, *, legacy: bool) -> None:
        """Connect, initialize, list, report ready, and wait for the end."""
        async with AsyncExitStack() as stack:
            session = await self._connect(stack, legacy=legacy)
            await within(session.initialize(), self._start_timeout())
            self.tools = await within(self._list_tools(session), START_TIMEOUT)
            try:
                await within(self._list_offers(session), START_TIMEOUT)
            except (MCPError, TimeoutError) as exc:  # its tools still work
                self.stderr.add(f"[melgui] listing prompts and resources: {_one_line(exc)}")
            self._session = session
            self._set(ServerState("ready", len(self.tools)))
            self._ready.set()
            if self._on_tools is not None:
                self._on_tools(self)
            await self._wait_for_end()

    async def _wait_for_end(self) -> None:
        waits = [asyncio.ensure_future(self._stop.wait())]
        if self.process is not None:
            waits.append(asyncio.ensure_future(self.process.closed.wait()))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()
        if not self._stop.is_set():
            self._session = None
            if self.process is not None:
                with contextlib.suppress(TimeoutError):
                    await within(self.process.process.wait(), 1.0)
            code = self.process.returncode if self.process else None
            self._fail(
                f"the server exited (code {code})" if code is not None else "the server exited"
            )

    async def _exit_reason(self) -> str:
        """ "exited with code N before it was ready" when the process ended, else ""."""
        if self.process is None or self.state.status == "ready":
            return ""
        with contextlib.suppress(TimeoutError):
            await within(asyncio.shield(self.process.process.wait()), 1.0)
        code = self.process.returncode
        return "" if code is None else f"exited with code {code} before it was ready"

    def _stderr_tail(self) -> str:
        lines = [" ".join(line.split()) for line in self.stderr.tail(STDERR_TAIL)]
        return " | ".join(line for line in lines if line)

    @property
    def log_name(self) -> str:
        """What the server's own lines are: a process's stderr, or the log an HTTP server
        sends (its notifications/message lines and melgui's notes)."""
        return "stderr" if self.config.kind == "stdio" else "log"

    def _fail(self, message: str) -> None:
        tail = self._stderr_tail()
        if tail:
            message += f" — {self.log_name}: {tail}"
        self._set(ServerState("failed", message=message))

    async def _list_tools(self, session: ClientSession) -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor: str | None = None
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def _list_offers(self, session: ClientSession) -> None:
        """The prompts and resources a server offers (its capabilities say which)."""
        offers = session.server_capabilities
        self.prompts, self.resources = [], []
        cursor: str | None = None
        while offers is not None and offers.prompts is not None:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            prompts = await session.list_prompts(params=params)
            self.prompts.extend(prompts.prompts)
            if not (cursor := prompts.next_cursor):
                break
        while offers is not None and offers.resources is not None:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            resources = await session.list_resources(params=params)
            self.resources.extend(resources.resources)
            if not (cursor := resources.next_cursor):
                break

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> types.GetPromptResult:
        """prompts/get; raises McpUnavailable (in words) when the server cannot answer."""
        session = self._ready_session()
        try:
            return await within(session.get_prompt(name, arguments), self.config.timeout)
        except MCPError as exc:
            raise McpUnavailable(
                f"the MCP server {self.name!r} refused {name}: {exc.message}"
            ) from exc
        except (TimeoutError, OSError, httpx2.HTTPError) as exc:
            raise McpUnavailable(f"the MCP server {self.name!r}: {_one_line(exc)}") from exc

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        session = self._ready_session()
        try:
            return await within(session.read_resource(uri), self.config.timeout)
        except MCPError as exc:
            raise McpUnavailable(
                f"the MCP server {self.name!r} cannot read {uri}: {exc.message}"
            ) from exc
        except (TimeoutError, OSError, httpx2.HTTPError) as exc:
            raise McpUnavailable(f"the MCP server {self.name!r}: {_one_line(exc)}") from exc

    def _ready_session(self) -> ClientSession:
        if self._session is None or self.state.status != "ready":
            raise McpUnavailable(
                f"the MCP server {self.name!r} is not running ({self.state.line()})"
            )
        return self._session

    # -- what the server sends -----------------------------------------------------------

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            self.stderr.add(f"[melgui] {message}")
        elif isinstance(message, types.ToolListChangedNotification):
            self._refresh = asyncio.ensure_future(self._refresh_tools())
        elif isinstance(
            message, types.PromptListChangedNotification | types.ResourceListChangedNotification
        ):
            self._refresh = asyncio.ensure_future(self._refresh_offers())
        elif isinstance(message, types.ElicitCompleteNotification):
            self.stderr.add(f"[melgui] the server finished {message.params.elicitation_id}")
            completed(self._asking, message.params.elicitation_id)

    async def _refresh_offers(self) -> None:
        session = self._session
        if session is None:
            return
        try:
            await self._list_offers(session)
        except Exception as exc:
            self.stderr.add(f"[melgui] listing prompts and resources failed: {_one_line(exc)}")
            return
        if self._on_tools is not None:
            self._on_tools(self)

    async def _refresh_tools(self) -> None:
        session = self._session
        if session is None:
            return
        try:
            self.tools = await self._list_tools(session)
        except Exception as exc:
            self.stderr.add(f"[melgui] listing tools after a change failed: {_one_line(exc)}")
            return
        self._set(ServerState("ready", len(self.tools)))
        if self._on_tools is not None:
            self._on_tools(self)

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.stderr.add(f"[{params.level}] {params.data}")

    async def _elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        return await answer_input(
            self.name,
            params,
            ask=self.ask_input,
            policy=self.input_policy,
            flight=self.running[-1] if self.running else None,
            asking=self._asking,
            log=self.stderr.add,
            say=self.say,
        )

    async def _sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        """A request for a model's answer: through the current connection, once the person
        approved it (the window) or a flag allowed it (exec); refused otherwise."""
        target = self.sampling_target() if self.sampling_target is not None else None
        flight = self.running[-1] if self.running else None
        return await answer_sampling(
            self.name,
            params,
            target,
            ask=self.ask_sampling,
            allowed=self.sampling == "allow",
            flight=flight,
            log=self.stderr.add,
        )

    async def _roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        uri = pathlib.Path(self.folder).as_uri()
        root = types.Root.model_validate({"uri": uri, "name": os.path.basename(self.folder)})
        return types.ListRootsResult(roots=[root])

    # -- calls ---------------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolOutcome:
        """One tools/call; every failure becomes an error outcome naming the server."""
        session, runner = self._session, self._runner
        if session is None and self.state.status == "ready" and runner is not None:
            # Its process just closed: the state that says why follows within a second.
            with contextlib.suppress(Exception):  # a timeout: the state it has is said
                await within(asyncio.shield(runner), 3.0)
        if session is None or self.state.status != "ready":
            return ToolOutcome.error(
                f"The MCP server {self.name!r} is not running ({self.state.line()})."
            )
        source, call_id, name = RUNNING_CALL.get() or ("", "", tool)
        flight = Flight(RunningCall(source, call_id, name))
        self.running.append(flight)
        try:
            return await self._call(session, tool, arguments, flight)
        finally:
            self.running.remove(flight)
            for request in [r for r in self._asking if r.call is flight.call]:
                request.cancel()  # the call ended (or was stopped): its form goes

    async def _call(
        self, session: ClientSession, tool: str, arguments: dict[str, Any], flight: Flight
    ) -> ToolOutcome:
        async def progressed(progress: float, total: float | None, message: str | None) -> None:
            flight.heard(Progress(progress, total, " ".join((message or "").split())))
            if self.on_progress is not None:
                self.on_progress(flight)

        timeout = self.config.timeout
        try:
            result = await flight.timed(
                session.call_tool(tool, arguments, progress_callback=progressed), idle=timeout
            )
        except CallTimeout as exc:
            if exc.why == "ceiling":
                return ToolOutcome.error(
                    f"The MCP server {self.name!r} did not finish {tool} within "
                    f"{exc.seconds:g} s (the ceiling for a call that reports progress); "
                    "the call was cancelled."
                )
            last = f" (last progress: {flight.progress.line()})" if flight.progress else ""
            return ToolOutcome.error(
                f"The MCP server {self.name!r} did not answer {tool} within "
                f"{timeout:g} s{last}; the call was cancelled."
            )
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED:
                return ToolOutcome.error(self._died(tool))
            return ToolOutcome.error(
                f"The MCP server {self.name!r} answered {tool} with an error: {exc.message}"
            )
        except (OSError, httpx2.HTTPError) as exc:
            return ToolOutcome.error(
                f"The MCP server {self.name!r} could not be reached: {_one_line(exc)}"
            )
        if not isinstance(result, types.CallToolResult):
            return ToolOutcome.error(
                f"The MCP server {self.name!r} asked for input, which melgui does not support yet."
            )
        return outcome_of(result)

    def _died(self, tool: str) -> str:
        tail = self._stderr_tail()
        text = f"The MCP server {self.name!r} closed the connection during {tool}."
        return text + (f" Its {self.log_name} ended with: {tail}" if tail else "")
