"""Plan mode in the window: the toolbar's Plan button and `/plan` turn it on or off for
the shown conversation (each conversation keeps its own, on its loop); the Plans panel's
Approve and start turns it off and sends the plan as the next message, its Revise sends
the person's comment back with the mode still on, to whichever conversation wrote the
plan: the main one or a worker's (as the orchestrator's `send_agent "/plan off"` does)."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QDockWidget

from melgui.core.agent.plan_mode import approved_prompt, revise_prompt
from melgui.core.agent.session import AgentSession
from melgui.desk.desk import Desk
from melgui.desk.prompt.slash_commands import SlashCommand
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.panes.manager import PaneManager
from melgui.ui.runtime.theme import Colors
from melgui.ui.window.plans_panel import PlansPanel
from melgui.ui.window.toolbar import ProjectToolbar

ON_NOTE = (
    "Plan mode on: the agent reads and writes a plan (Plans panel); nothing is changed "
    "until you approve it."
)
OFF_NOTE = "Plan mode off: the agent may change files and run commands again."


class PlanHost(Protocol):
    """What plan mode uses of the window (MainWindow is one)."""

    sessionChanged: SignalInstance

    @property
    def session(self) -> AgentSession: ...

    @property
    def desk(self) -> Desk: ...

    @property
    def chat(self) -> ChatView: ...

    @property
    def colors(self) -> Colors: ...

    @property
    def toolbar(self) -> ProjectToolbar: ...

    @property
    def plans_panel(self) -> PlansPanel: ...

    @property
    def plans_dock(self) -> QDockWidget: ...

    @property
    def pane_manager(self) -> PaneManager: ...


class PlanModeControl:
    def __init__(self, window: PlanHost) -> None:
        self.window = window
        toolbar, panel = window.toolbar, window.plans_panel
        toolbar.planToggled.connect(self.set_on)
        panel.approved.connect(self.approve)
        panel.revised.connect(self.revise)
        window.sessionChanged.connect(self._follow)
        self._unfollow = window.session.loop.plan.subscribe(window.toolbar.set_plan)
        window.desk.prompt.commands.add(
            SlashCommand(
                "plan",
                "Plan mode: read and plan only until a plan is approved (on, off, or a task)",
                self._command,
                usage="[on|off|task]",
            )
        )

    @property
    def session(self) -> AgentSession:
        return self.window.session

    def set_on(self, on: bool) -> None:
        plan = self.session.loop.plan
        if plan.on == on:
            return
        plan.on = on  # the toolbar follows
        note = ON_NOTE if on else OFF_NOTE
        self.window.chat.transcript.add_notice(note, self.window.colors.muted)
        if on:
            self.window.plans_dock.show()

    def approve(self, source: str, title: str, markdown: str) -> None:
        if source == self.session.source:
            self.set_on(False)
            self.window.chat.submit(approved_prompt(title, markdown))
            return
        worker = self._worker(source)
        if worker is not None:
            pane, session = worker
            session.loop.plan.on = False
            pane.send(approved_prompt(title, markdown))
            self._said(f"You approved {source}'s plan “{title}”: it carries it out now.")

    def revise(self, source: str, title: str, comment: str) -> None:
        if source == self.session.source:
            self.set_on(True)
            self.window.chat.submit(revise_prompt(title, comment))
            return
        worker = self._worker(source)
        if worker is not None:
            pane, session = worker
            session.loop.plan.on = True
            pane.send(revise_prompt(title, comment))
            self._said(f"You sent {source}'s plan “{title}” back to revise.")

    def _worker(self, source: str) -> tuple[AgentPane, AgentSession] | None:
        """The open worker pane named `source` and its session, or None (said)."""
        for _info, pane in self.window.pane_manager.panes():
            if not isinstance(pane, AgentPane):
                continue
            session = pane.session
            if isinstance(session, AgentSession) and session.source == source:
                return pane, session
        self._said(f"{source} is no longer open: its plan cannot be answered.")
        return None

    def _said(self, text: str) -> None:
        self.window.chat.transcript.add_notice(text, self.window.colors.muted)

    def _command(self, arguments: str) -> str | None:
        word = arguments.strip()
        if word.lower() in ("", "on", "off"):
            self.set_on(word.lower() == "on" or (not word and not self.session.loop.plan.on))
            return None
        self.set_on(True)
        return word  # the task, sent in plan mode

    def _follow(self, session: AgentSession) -> None:
        """The toolbar shows the shown conversation's mode, however it changes (a
        reopened conversation's comes back with it)."""
        self._unfollow()
        self._unfollow = session.loop.plan.subscribe(self.window.toolbar.set_plan)
        self.window.toolbar.set_plan(session.loop.plan.on)


def install_plan_mode(window: PlanHost) -> PlanModeControl:
    return PlanModeControl(window)
