"""ACP agent panes: the factory that lets a PaneManager host them on a desk, "New agent
pane…" (the known agents, the person's own from settings, or any command), and "Reopen
agent session…" (the sessions melgui noted in this project, of agents that can load or
resume them)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from PySide6.QtWidgets import QInputDialog, QMainWindow, QStatusBar

from melgui.core.protocol.views.agent_commands import (
    KNOWN_AGENTS,
    AgentCommand,
    known_agent,
    parse_command,
)
from melgui.desk.desk import Desk
from melgui.desk.hosted_agents.factory import acp_session
from melgui.desk.hosted_agents.session import HostedAgentSession
from melgui.desk.hosted_agents.session_book import SessionBook, SessionEntry
from melgui.ui.panes.manager import PaneManager


class AgentPaneHost(Protocol):
    """What the agent-pane commands use of the window (MainWindow is one)."""

    pane_manager: PaneManager

    @property
    def desk(self) -> Desk: ...

    @property
    def status(self) -> QStatusBar: ...

    @property
    def main_window(self) -> QMainWindow: ...


def host_acp_agents(manager: PaneManager, desk: Desk, plans: Callable[[str, str], None]) -> None:
    """Let `manager` open ACP agent panes on `desk` (its rules, MCP servers, checkpoints;
    plans to `plans`, the window's plans panel)."""

    def make(command: AgentCommand, title: str, resume: str | None) -> HostedAgentSession:
        return acp_session(desk, command, title, plans=plans, resume=resume)

    def agent_for(command: str) -> AgentCommand | None:
        settings = desk.settings
        if not settings.open_pane_acp:
            return None
        return known_agent(command, tuple(settings.acp_agents))

    manager.acp_factory = make
    manager.prompt_for = desk.prompt_for
    manager.agent_for = agent_for


def agent_choices(own: list[str]) -> list[str]:
    """What "New agent pane…" offers: the known agents' usual commands, then the person's."""
    known = [usual for _name, usual in KNOWN_AGENTS]
    return [*known, *(c for c in own if c not in known)]


def open_agent(window: AgentPaneHost, text: str) -> asyncio.Task[None] | None:
    """Open the agent `text` names; `@NAME command` runs it on configured host NAME (the
    link opens first: returns the task that opens it)."""
    manager = window.pane_manager
    host, text = manager.host_of(text)
    if host is not None:
        return asyncio.ensure_future(_open_there(window, host, text))
    try:
        info = manager.open_agent(parse_command(text), "tab")
    except Exception as exc:  # a command that cannot be read, no factory: say so, go on
        window.status.showMessage(f"Cannot open the agent: {exc}", 15000)
        return None
    manager.area.focus_pane(info.id)
    return None


async def _open_there(window: AgentPaneHost, host: str, text: str) -> None:
    window.status.showMessage(f"Starting the agent on {host}…", 15000)
    try:
        info = await window.pane_manager.open_remote_agent(host, parse_command(text), "tab")
    except Exception as exc:  # a host not reached, a command that cannot be read: say so
        window.status.showMessage(f"Cannot open the agent on {host}: {exc}", 15000)
        return
    window.status.clearMessage()
    window.pane_manager.area.focus_pane(info.id)


def ask_agent(window: AgentPaneHost) -> QInputDialog:
    """Pick a known agent or type any command that speaks ACP on stdio."""
    dialog = QInputDialog(window.main_window)
    dialog.setObjectName("agentDialog")
    dialog.setWindowTitle("New agent pane")
    label = "ACP agent to start in the project folder (pick one or type a command):"
    names = window.pane_manager.remote.names() if window.pane_manager.remote else []
    if names:
        label += f"\n`@NAME command` starts it on a host ({', '.join(names)})."
    dialog.setLabelText(label)
    dialog.setComboBoxEditable(True)
    dialog.setComboBoxItems(agent_choices(list(window.desk.settings.acp_agents)))
    dialog.textValueSelected.connect(
        lambda text: open_agent(window, text) if text.strip() else None
    )
    dialog.open()
    return dialog


def reopen_session(window: AgentPaneHost, entry: SessionEntry) -> None:
    """A pane on the agent `entry` names, reopening its session (history replayed when
    the agent loads it)."""
    try:
        command = parse_command(entry.command, entry.agent)
        info = window.pane_manager.open_agent(command, "tab", resume=entry.session_id)
    except Exception as exc:  # a command that cannot be read, no factory: say so, go on
        window.status.showMessage(f"Cannot reopen the session: {exc}", 15000)
        return
    window.pane_manager.area.focus_pane(info.id)


def ask_earlier_session(
    window: AgentPaneHost, book: SessionBook | None = None
) -> QInputDialog | None:
    """Pick one of this project's earlier agent sessions, the latest first."""
    entries = (book or SessionBook()).for_folder(window.desk.folder)
    if not entries:
        window.status.showMessage("No earlier agent sessions in this project.", 8000)
        return None
    labels = [entry.label() for entry in entries]
    dialog = QInputDialog(window.main_window)
    dialog.setObjectName("agentSessionDialog")
    dialog.setWindowTitle("Reopen agent session")
    dialog.setLabelText("An earlier session of an ACP agent in this project:")
    dialog.setComboBoxItems(labels)
    dialog.textValueSelected.connect(
        lambda text: reopen_session(window, entries[labels.index(text)]) if text in labels else None
    )
    dialog.open()
    return dialog
