"""A small ACP agent for tests and benchmarks: each prompt is a JSON list of steps, and it
does them with the official SDK, asking the client (melgui) for files, terminals and
permissions for real. Run as `python tests/fakes/acp_scripted_agent.py [--auth]`.

With `--script FILE` (JSON: prompt text -> steps), a prompt found there plays its steps,
so a chat shows plain words. With `--record FILE`, initialize's and session/new's
parameters, as they came, are appended to FILE (a JSON line each: method, params).
With `--mcp-http`, it says it can use HTTP MCP servers (else it says it cannot).
`--name NAME` is its agent_info name. With `--resume` it offers session/resume (each
session's id is then s<its process id>, so two processes tell theirs apart).

Steps:
    {"say": "text", "times": 3}          agent_message_chunk, `times` times (with
                                         "every": 10, every 10th chunk ends a paragraph)
    {"think": "text"}                    agent_thought_chunk
    {"burst": [update, ...]}             session/update notifications of these updates
                                         (as the wire has them), in one write
    {"read": "path", "line": 1, "limit": 2}   fs/read_text_file, its text said back
    {"write": "path", "content": "..."}  fs/write_text_file ("wrote" or the error said)
    {"run": ["cmd", "arg"]}              terminal/create, wait_for_exit, output, release
                                         ("cwd": "dir" asks for that working folder)
                                         (a refused create is said as "refused:<data>")
    {"ask": "edit", "title": "..."}      a tool call, request_permission, its outcome said
                                         ("command": "..." puts it in raw_input; "diff":
                                         {"path", "old", "new"} sends a diff as content,
                                         "bare": true leaves it out of the request)
    {"plan": [["step", "pending"]]}      a plan update
    {"mode": "id"}                       current_mode_update
    {"usage": [used, size]}              usage_update (context tokens)
    {"crash": 3, "stderr": "..."}        stderr lines, then exit with that code
    {"garbage": "not json"}              a line on stdout that is no JSON-RPC message
    {"hang": 1}                          never answer (until cancelled)
    {"stall": "text"}                    ignore cancel: start `sleep` in its own process
                                         group, say "child <pid>" and `text` on stderr,
                                         and never answer
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from subprocess import DEVNULL
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    RequestError,
    plan_entry,
    run_agent,
    start_tool_call,
    text_block,
    tool_diff_content,
    update_agent_message,
    update_agent_thought,
    update_plan,
    update_tool_call,
)
from acp.schema import (
    AgentCapabilities,
    AuthMethodAgent,
    AvailableCommand,
    AvailableCommandsUpdate,
    CurrentModeUpdate,
    Implementation,
    InitializeResponse,
    McpCapabilities,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    UsageUpdate,
)

AUTH = "--auth" in sys.argv
RESUME = "--resume" in sys.argv
MCP_HTTP = "--mcp-http" in sys.argv
SCRIPT: dict[str, list[dict[str, Any]]] = {}
if "--script" in sys.argv:
    with open(sys.argv[sys.argv.index("--script") + 1], encoding="utf-8") as _file:
        SCRIPT = json.load(_file)
RECORD = sys.argv[sys.argv.index("--record") + 1] if "--record" in sys.argv else ""
NAME = sys.argv[sys.argv.index("--name") + 1] if "--name" in sys.argv else "scripted"
SESSION = f"s{os.getpid()}" if RESUME else "s1"
MODELS = [("m-small", "Small"), ("m-large", "Large")]


def record(method: str, params: dict[str, Any]) -> None:
    """With --record FILE: one JSON line per request, as the agent read it."""
    if RECORD:
        with open(RECORD, "a", encoding="utf-8") as file:
            file.write(json.dumps({"method": method, "params": params}) + "\n")


def _wire(model: Any) -> Any:
    return (
        None if model is None else model.model_dump(mode="json", by_alias=True, exclude_none=True)
    )


def _model_option(current: str) -> SessionConfigOptionSelect:
    return SessionConfigOptionSelect(
        id="model",
        name="Model",
        category="model",
        current_value=current,
        type="select",
        options=[SessionConfigSelectOption(value=v, name=n) for v, n in MODELS],
    )


OPTIONS = [
    PermissionOption(option_id="yes", name="Yes, once", kind="allow_once"),
    PermissionOption(option_id="always", name="Yes, always", kind="allow_always"),
    PermissionOption(option_id="no", name="No", kind="reject_once"),
    PermissionOption(option_id="never", name="Never", kind="reject_always"),
]


class ScriptedAgent:
    def __init__(self) -> None:
        self.client: Any = None
        self.signed_in = not AUTH
        self.cancelled = asyncio.Event()
        self.calls = 0
        self.later: asyncio.Future[None] | None = None

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        record(
            "initialize",
            {
                "protocolVersion": protocol_version,
                "clientCapabilities": _wire(client_capabilities),
                "clientInfo": _wire(client_info),
            },
        )
        methods = [AuthMethodAgent(id="token", name="Paste a token", description="for tests")]
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=False,
                mcp_capabilities=McpCapabilities(http=MCP_HTTP, sse=False),
                session_capabilities=SessionCapabilities(
                    resume=SessionResumeCapabilities() if RESUME else None
                ),
            ),
            agent_info=Implementation(name=NAME, version="1.0"),
            auth_methods=methods if AUTH else [],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        self.signed_in = method_id == "token"

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        if not self.signed_in:
            raise RequestError.auth_required()
        record("session/new", {"cwd": cwd, "mcpServers": [_wire(s) for s in mcp_servers or []]})
        modes = SessionModeState(
            current_mode_id="ask",
            available_modes=[
                SessionMode(id="ask", name="Ask"),
                SessionMode(id="code", name="Code"),
            ],
        )
        session = NewSessionResponse(
            session_id=SESSION, modes=modes, config_options=[_model_option("m-small")]
        )
        asyncio.get_running_loop().call_later(0.05, self._commands)
        return session

    async def resume_session(
        self, cwd: str, session_id: str, **kwargs: Any
    ) -> ResumeSessionResponse:
        global SESSION
        record("session/resume", {"cwd": cwd, "sessionId": session_id})
        SESSION = session_id
        return ResumeSessionResponse()

    def _commands(self) -> None:
        update = AvailableCommandsUpdate(
            session_update="available_commands_update",
            available_commands=[
                AvailableCommand(name="review", description="Review the changes"),
                AvailableCommand(name="test", description="Run the tests"),
            ],
        )
        self.later = asyncio.ensure_future(self._send(update))

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        await self._send(
            CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode_id)
        )
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        if config_id != "model" or value not in dict(MODELS):
            raise RequestError.invalid_params({"value": value})
        return SetSessionConfigOptionResponse(config_options=[_model_option(str(value))])

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.cancelled.set()

    async def _send(self, update: Any) -> None:
        await self.client.session_update(session_id=SESSION, update=update)

    async def _say(self, text: str) -> None:
        await self._send(update_agent_message(text_block(text)))

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        self.cancelled.clear()
        words = "".join(getattr(b, "text", "") for b in prompt)
        steps = SCRIPT[words] if words in SCRIPT else json.loads(words)
        for step in steps:
            if self.cancelled.is_set():
                return PromptResponse(stop_reason="cancelled")
            await self._step(session_id, step)
        return PromptResponse(stop_reason="cancelled" if self.cancelled.is_set() else "end_turn")

    async def _step(self, sid: str, step: dict[str, Any]) -> None:
        client = self.client
        if "say" in step:
            every = int(step.get("every", 0))
            for n in range(int(step.get("times", 1))):
                end = "\n\n" if every and n % every == every - 1 else ""
                await self._say(step["say"] + end)
        elif "think" in step:
            await self._send(update_agent_thought(text_block(step["think"])))
        elif "read" in step:
            try:
                reply = await client.read_text_file(
                    session_id=sid,
                    path=step["read"],
                    line=step.get("line"),
                    limit=step.get("limit"),
                )
                await self._say(f"read:{reply.content}")
            except RequestError as exc:
                await self._say(f"refused:{json.dumps(exc.data, ensure_ascii=False)}")
        elif "write" in step:
            try:
                await client.write_text_file(
                    session_id=sid, path=step["write"], content=step["content"]
                )
                await self._say("wrote")
            except RequestError as exc:
                await self._say(f"refused:{json.dumps(exc.data, ensure_ascii=False)}")
        elif "run" in step:
            command, *args = step["run"]
            try:
                made = await client.create_terminal(
                    session_id=sid, command=command, args=args, cwd=step.get("cwd")
                )
            except RequestError as exc:
                await self._say(f"refused:{json.dumps(exc.data, ensure_ascii=False)}")
                return
            ended = await client.wait_for_terminal_exit(
                session_id=sid, terminal_id=made.terminal_id
            )
            out = await client.terminal_output(session_id=sid, terminal_id=made.terminal_id)
            await client.release_terminal(session_id=sid, terminal_id=made.terminal_id)
            await self._say(f"\nexit {ended.exit_code}:{out.output}")
        elif "ask" in step:
            self.calls += 1
            call_id = f"t{self.calls}"
            title = step.get("title", "a change")
            raw_input: dict[str, Any] = {"what": title}
            if "command" in step:
                raw_input["command"] = step["command"]
            content = None
            if "diff" in step:
                diff = step["diff"]
                content = [tool_diff_content(diff["path"], diff["new"], diff.get("old"))]
            await self._send(
                start_tool_call(
                    call_id, title, kind=step["ask"], status="pending", raw_input=raw_input,
                    content=content,
                )
            )  # fmt: skip
            reply = await client.request_permission(
                session_id=sid,
                tool_call=update_tool_call(
                    call_id,
                    title=title,
                    kind=step["ask"],
                    raw_input=raw_input,
                    content=None if step.get("bare") else content,
                ),
                options=OPTIONS,
            )
            outcome = reply.outcome
            chosen = getattr(outcome, "option_id", outcome.outcome)
            status = "completed" if chosen in ("yes", "always") else "failed"
            await self._send(update_tool_call(call_id, status=status, content=[]))
            await self._say(f"permission:{chosen}")
        elif "plan" in step:
            await self._send(update_plan([plan_entry(c, status=s) for c, s in step["plan"]]))
        elif "mode" in step:
            await self._send(
                CurrentModeUpdate(
                    session_update="current_mode_update", current_mode_id=step["mode"]
                )
            )
        elif "usage" in step:
            used, size = step["usage"]
            await self._send(UsageUpdate(session_update="usage_update", used=used, size=size))
        elif "crash" in step:
            sys.stderr.write(step.get("stderr", "") + "\n")
            sys.stderr.flush()
            os._exit(int(step["crash"]))
        elif "burst" in step:
            lines = (
                json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params})
                for params in ({"sessionId": sid, "update": u} for u in step["burst"])
            )
            sys.stdout.write("".join(line + "\n" for line in lines))
            sys.stdout.flush()
        elif "garbage" in step:
            sys.stdout.write(step["garbage"] + "\n")
            sys.stdout.flush()
        elif "hang" in step:
            await self.cancelled.wait()
        elif "stall" in step:
            # in the agent's process group
            child = subprocess.Popen(["sleep", "300"], stdin=DEVNULL, stdout=DEVNULL)
            sys.stderr.write(f"child {child.pid}\n{step['stall']}\n")
            sys.stderr.flush()
            await asyncio.Event().wait()  # session/cancel or not


if __name__ == "__main__":
    # session/resume is among the SDK's unstable methods: routed only when asked for
    asyncio.run(run_agent(ScriptedAgent(), use_unstable_protocol=RESUME))  # type: ignore[arg-type]
