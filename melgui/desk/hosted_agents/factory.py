"""An ACP agent session on a Desk: the desk's folder, its rules (a worker's own
conversation rules, the saved ones shared), its MCP servers, its checkpoint guard and
its command sandbox (for the agent's terminals)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from melgui.core.protocol.tooling import ToolError
from melgui.core.protocol.views.agent_commands import AgentCommand
from melgui.desk.desk import Desk
from melgui.desk.hosted_agents.session import HostedAgentSession
from melgui.desk.hosted_agents.session_book import SessionBook
from melgui.desk.hosted_agents.updates import PlanSink
from melgui.desk.kit import tool_settings
from melgui.tools.commands.sandbox import SandboxSpec, sandbox_status

if TYPE_CHECKING:
    from melgui.desk.hosted_agents.terminals import AgentTerminal


def acp_session(
    desk: Desk,
    command: AgentCommand,
    source: str,
    *,
    plans: PlanSink | None = None,
    on_terminal: Callable[[AgentTerminal], None] | None = None,
    env: Mapping[str, str] | None = None,
    resume: str | None = None,
    book: SessionBook | None = None,
) -> HostedAgentSession:
    """A session of `command` in the desk's project folder, not started yet (`resume`:
    the id of an earlier one to reopen); noted in `book` (melgui's own by default)."""
    from melgui.desk.hosted_agents.host import AcpHost  # the ACP SDK: ~20 MiB, 0.4 s

    checkpoints = desk.settings.checkpoints
    host = AcpHost(
        command,
        desk.folder,
        env=env,
        policy=desk.worker_policy(),
        source=source,
        mcp_servers=[server.config for server in desk.mcp.servers.values()],
        around_write=desk.checkpoint_guard if checkpoints else None,
        plans=plans,
        on_terminal=on_terminal,
        sandbox=lambda: command_sandbox(desk),
    )
    host.gate.hooks = desk.hooks_for(desk.folder)
    return HostedAgentSession(host, resume, book if book is not None else SessionBook())


def command_sandbox(desk: Desk) -> SandboxSpec | None:
    """The sandbox run_command uses on this desk now, None when commands are not
    sandboxed; raises ToolError when the setting is on but bwrap cannot be used."""
    settings = tool_settings(desk.settings)
    if not settings.sandbox_commands:
        return None
    status = sandbox_status()
    if not status.available:
        raise ToolError(f"The sandbox is on but cannot be used: {status.message}.")
    return SandboxSpec((desk.folder,), settings.sandbox_hidden, settings.sandbox_network)
