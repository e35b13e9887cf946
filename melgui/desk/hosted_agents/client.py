"""The ACP Client side melgui offers an agent: updates, permissions, files, terminals.

The SDK routes the agent's requests here by method; each is answered by the part of the
host that owns it. Requests for another session than the host's are refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from acp import RequestError
from acp.schema import (
    CreateTerminalResponse,
    EnvVariable,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from melgui.desk.hosted_agents.files import AgentFiles
from melgui.desk.hosted_agents.permissions import PermissionGate
from melgui.desk.hosted_agents.terminals import AgentTerminals


class HostClient:
    """What an ACP agent may ask of melgui."""

    def __init__(
        self,
        on_update: Callable[[str, Any], None],
        gate: PermissionGate,
        files: AgentFiles,
        terminals: AgentTerminals,
    ) -> None:
        self.on_update = on_update
        self.gate = gate
        self.files = files
        self.terminals = terminals

    def on_connect(self, conn: Any) -> None:
        return None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.on_update(session_id, update)

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        return await self.gate.decide(tool_call, options)

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        return ReadTextFileResponse(content=await self.files.aread(path, line, limit))

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        await self.files.write(path, content)
        return WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        terminal = await self.terminals.open(command, args, env, cwd, output_byte_limit)
        return CreateTerminalResponse(terminal_id=terminal.id)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        terminal = self.terminals.get(terminal_id)
        return TerminalOutputResponse(
            output=terminal.text(), truncated=terminal.truncated, exit_status=terminal.exit_status()
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        terminal = self.terminals.get(terminal_id)
        await terminal.exited.wait()
        status = terminal.exit_status()
        assert status is not None
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> KillTerminalResponse:
        self.terminals.get(terminal_id).kill()
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse:
        await self.terminals.release(terminal_id)
        return ReleaseTerminalResponse()

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("elicitation/create")

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        return None

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None
