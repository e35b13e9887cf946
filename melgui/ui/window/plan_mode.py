"""Plan mode in the window: the toolbar's Plan button and `/plan` turn it on or off for
the shown conversation (each conversation keeps its own, on its loop); the Plans panel's
Approve and start turns it off and sends the plan as the next message, its Revise sends
the person's comment back with the mode still on, to whichever conversation wrote the
plan: the main one or a worker's (as the orchestrator's `send_agent "/plan off"` does)."""

from __future__ import annotations

from collections.abc import Callable

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.views.plan_prompts import approved_prompt, revise_prompt
from melgui.core.protocol.views.slash_commands import SlashCommand
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.panes.manager import PaneManager
from melgui.ui.runtime.sessions import MainSession
from melgui.ui.runtime.theme import Colors
from melgui.ui.window.side.plans_panel import PlansPanel
from melgui.ui.window.toolbar import ProjectToolbar

ON_NOTE = (
    "Plan mode on: the agent reads and writes a plan (Plans panel); nothing is changed "
    "until you approve it."
)
OFF_NOTE = "Plan mode off: the agent may change files and run commands again."


class PlanModeControl:
    """Plan mode for the conversation shown (`follow`): `toolbar` shows it, `panel`'s
    Approve and Revise answer it (or the worker pane among `panes` that wrote the plan),
    `show_plans` brings the Plans panel forward."""

    def __init__(
        self,
        toolbar: ProjectToolbar,
        panel: PlansPanel,
        panes: PaneManager,
        colors: Colors,
        show_plans: Callable[[], None],
    ) -> None:
        self.toolbar = toolbar
        self.panes = panes
        self.colors = colors
        self._show_plans = show_plans
        self.session: MainSession | None = None
        self.chat: ChatView | None = None
        self._unfollow: Callable[[], None] = lambda: None
        toolbar.planToggled.connect(self.set_on)
        panel.approved.connect(self.approve)
        panel.revised.connect(self.revise)

    def command(self) -> SlashCommand:
        """`/plan`, for the desk's slash commands."""
        return SlashCommand(
            "plan",
            "Plan mode: read and plan only until a plan is approved (on, off, or a task)",
            self._command,
            usage="[on|off|task]",
        )

    def follow(self, session: MainSession, chat: ChatView) -> None:
        """The conversation shown now (each keeps its own mode, on its loop): the toolbar
        shows its mode, however it changes (a reopened conversation's comes back with it)."""
        self.session, self.chat = session, chat
        self._unfollow()
        self._unfollow = session.loop.plan.subscribe(self.toolbar.set_plan)
        self.toolbar.set_plan(session.loop.plan.on)

    def set_colors(self, colors: Colors) -> None:
        self.colors = colors

    def set_on(self, on: bool) -> None:
        if self.session is None or self.chat is None:
            return
        plan = self.session.loop.plan
        if plan.on == on:
            return
        plan.on = on  # the toolbar follows
        note = ON_NOTE if on else OFF_NOTE
        self.chat.transcript.add_notice(note, self.colors.muted)
        if on:
            self._show_plans()

    def approve(self, source: str, title: str, markdown: str) -> None:
        if self.session is not None and source == self.session.source:
            self.set_on(False)
            if self.chat is not None:
                self.chat.submit(approved_prompt(title, markdown))
            return
        worker = self._worker(source)
        if worker is not None:
            pane, session = worker
            session.loop.plan.on = False
            pane.send(approved_prompt(title, markdown))
            self._said(f"You approved {source}'s plan “{title}”: it carries it out now.")

    def revise(self, source: str, title: str, comment: str) -> None:
        if self.session is not None and source == self.session.source:
            self.set_on(True)
            if self.chat is not None:
                self.chat.submit(revise_prompt(title, comment))
            return
        worker = self._worker(source)
        if worker is not None:
            pane, session = worker
            session.loop.plan.on = True
            pane.send(revise_prompt(title, comment))
            self._said(f"You sent {source}'s plan “{title}” back to revise.")

    def _worker(self, source: str) -> tuple[AgentPane, AgentSession] | None:
        """The open worker pane named `source` and its session, or None (said)."""
        for _info, pane in self.panes.panes():
            if not isinstance(pane, AgentPane):
                continue
            session = pane.session
            if isinstance(session, AgentSession) and session.source == source:
                return pane, session
        self._said(f"{source} is no longer open: its plan cannot be answered.")
        return None

    def _said(self, text: str) -> None:
        if self.chat is not None:
            self.chat.transcript.add_notice(text, self.colors.muted)

    def _command(self, arguments: str) -> str | None:
        word = arguments.strip()
        if word.lower() in ("", "on", "off"):
            plan_on = self.session is not None and self.session.loop.plan.on
            self.set_on(word.lower() == "on" or (not word and not plan_on))
            return None
        self.set_on(True)
        return word  # the task, sent in plan mode
