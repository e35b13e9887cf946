"""The ACP client side for tests: spawns `python -m melgui acp …` and drives it over stdio
with the official SDK, recording every update and answering permissions as told.

    async with AcpAgentProcess(["--transport", "openai", "--url", url]) as agent:
        session = await agent.connection.new_session(cwd=str(folder))
        agent.client.choose("allow_once")
        reply = await agent.connection.prompt(session_id=..., prompt=[text_block("hi")])
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from acp import PROTOCOL_VERSION, connect_to_agent
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

ROOT = Path(__file__).resolve().parents[2]


class RecordingClient:
    """Records updates and permission requests; answers with the chosen option kind
    (or leaves the request open when told to wait, until `release()` or cancel)."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.permissions: list[tuple[ToolCallUpdate, list[PermissionOption]]] = []
        self.answer: str | None = "allow_once"
        self.asked = asyncio.Event()
        self._held: list[asyncio.Future[RequestPermissionResponse]] = []
        self.on_update: Callable[[Any], None] | None = None

    def choose(self, kind: str | None) -> None:
        """Answer later requests with the option of this kind; None: hold them open."""
        self.answer = kind

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:  # fmt: skip
        self.permissions.append((tool_call, options))
        self.asked.set()
        if self.answer is None:
            held = asyncio.get_running_loop().create_future()
            self._held.append(held)
            return await held
        chosen = next(o for o in options if o.kind == self.answer)
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen.option_id)
        )

    def cancel_held(self) -> None:
        """What a client does on session/cancel: answer open requests `cancelled`."""
        for held in self._held:
            if not held.done():
                held.set_result(
                    RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
                )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        if self.on_update is not None:
            self.on_update(update)

    def kinds(self) -> list[str]:
        return [u.session_update for u in self.updates]

    def text(self) -> str:
        return "".join(
            u.content.text for u in self.updates if u.session_update == "agent_message_chunk"
        )

    def tool_updates(self, call_id: str) -> list[Any]:
        return [
            u for u in self.updates
            if u.session_update in ("tool_call", "tool_call_update") and u.tool_call_id == call_id
        ]  # fmt: skip

    def on_connect(self, conn: Any) -> None:
        return None


class AcpAgentProcess:
    """`melgui acp` as a child process, connected; closing ends it (killed if it hangs)."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.args = args
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
        self.client = RecordingClient()
        self.process: asyncio.subprocess.Process
        self.connection: ClientSideConnection

    async def __aenter__(self) -> Self:
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "melgui", "acp", *self.args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self.env,
        )  # fmt: skip
        assert self.process.stdin is not None and self.process.stdout is not None
        self.connection = connect_to_agent(self.client, self.process.stdin, self.process.stdout)
        return self

    async def initialize(self) -> Any:
        return await self.connection.initialize(
            protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities()
        )

    async def stderr(self) -> str:
        assert self.process.stderr is not None
        return (await self.process.stderr.read()).decode(errors="replace")

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.connection.close()
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 15)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
