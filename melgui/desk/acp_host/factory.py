"""An ACP agent session on a Desk: the desk's folder, its rules (a worker's own
conversation rules, the saved ones shared), its MCP servers and its checkpoint guard."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from melgui.desk.acp_host.agents import AgentCommand
from melgui.desk.acp_host.host import AcpHost
from melgui.desk.acp_host.session import AcpSession
from melgui.desk.acp_host.terminals import AgentTerminal
from melgui.desk.acp_host.updates import PlanSink
from melgui.desk.desk import Desk


def acp_session(
    desk: Desk,
    command: AgentCommand,
    source: str,
    *,
    plans: PlanSink | None = None,
    on_terminal: Callable[[AgentTerminal], None] | None = None,
    env: Mapping[str, str] | None = None,
    resume: str | None = None,
) -> AcpSession:
    """A session of `command` in the desk's project folder, not started yet."""
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
    )
    return AcpSession(host, resume)
