"""ACP agent panes in the main window: the factory on the window's desk, and
"New agent pane…" (the known agents, the person's own from settings, or any command)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QInputDialog

from melgui.desk.acp_host.agents import KNOWN_AGENTS, AgentCommand, known_agent, parse_command
from melgui.desk.acp_host.factory import acp_session
from melgui.desk.acp_host.session import AcpSession
from melgui.ui.panes.manager import PaneManager


def install_acp(window: Any, manager: PaneManager) -> None:
    """Let `manager` open ACP agent panes on `window.desk` (its rules, MCP servers,
    checkpoints; plans to the window's plans panel)."""

    def make(command: AgentCommand, title: str) -> AcpSession:
        return acp_session(window.desk, command, title, plans=window.plans_panel.sink)

    def agent_for(command: str) -> AgentCommand | None:
        settings = window.desk.settings
        if not settings.open_pane_acp:
            return None
        return known_agent(command, tuple(settings.acp_agents))

    manager.acp_factory = make
    manager.agent_for = agent_for


def agent_choices(own: list[str]) -> list[str]:
    """What "New agent pane…" offers: the known agents' usual commands, then the person's."""
    known = [usual for _name, usual in KNOWN_AGENTS]
    return [*known, *(c for c in own if c not in known)]


def open_agent(window: Any, text: str) -> None:
    try:
        info = window.pane_manager.open_agent(parse_command(text), "tab")
    except Exception as exc:  # a command that cannot be read, no factory: say so, go on
        window.status.showMessage(f"Cannot open the agent: {exc}", 15000)
        return
    window.pane_manager.area.focus_pane(info.id)


def ask_agent(window: Any) -> QInputDialog:
    """Pick a known agent or type any command that speaks ACP on stdio."""
    dialog = QInputDialog(window)
    dialog.setObjectName("agentDialog")
    dialog.setWindowTitle("New agent pane")
    dialog.setLabelText("ACP agent to start in the project folder (pick one or type a command):")
    dialog.setComboBoxEditable(True)
    dialog.setComboBoxItems(agent_choices(list(window.desk.settings.acp_agents)))
    dialog.textValueSelected.connect(
        lambda text: open_agent(window, text) if text.strip() else None
    )
    dialog.open()
    return dialog
