"""Plan mode in the window: the toolbar's Plan button and `/plan` turn it on or off for
the shown conversation (each conversation keeps its own, on its loop); the Plans panel's
Approve and start turns it off and sends the plan as the next message, its Revise sends
the person's comment back with the mode still on."""

from __future__ import annotations

from collections.abc import Callable

from melgui.core.agent.plan_mode import approved_prompt, revise_prompt
from melgui.core.agent.session import AgentSession
from melgui.desk.prompt.slash_commands import SlashCommand
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.runtime.theme import Colors
from melgui.ui.window.plans_panel import PlansPanel
from melgui.ui.window.toolbar import ProjectToolbar

ON_NOTE = (
    "Plan mode on: the agent reads and writes a plan (Plans panel); nothing is changed "
    "until you approve it."
)
OFF_NOTE = "Plan mode off: the agent may change files and run commands again."


class PlanModeControl:
    """Plan mode for the conversation shown (`follow`): `toolbar` shows it, `panel`'s
    Approve and Revise answer it, `show_plans` brings the Plans panel forward."""

    def __init__(
        self,
        toolbar: ProjectToolbar,
        panel: PlansPanel,
        colors: Colors,
        show_plans: Callable[[], None],
    ) -> None:
        self.toolbar = toolbar
        self.colors = colors
        self._show_plans = show_plans
        self.session: AgentSession | None = None
        self.chat: ChatView | None = None
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

    def follow(self, session: AgentSession, chat: ChatView) -> None:
        """The conversation shown now (each keeps its own mode, on its loop)."""
        self.session, self.chat = session, chat
        self.toolbar.set_plan(session.loop.plan.on)

    def set_colors(self, colors: Colors) -> None:
        self.colors = colors

    def set_on(self, on: bool) -> None:
        if self.session is None or self.chat is None:
            return
        plan = self.session.loop.plan
        if plan.on == on:
            return
        plan.on = on
        self.toolbar.set_plan(on)
        note = ON_NOTE if on else OFF_NOTE
        self.chat.transcript.add_notice(note, self.colors.muted)
        if on:
            self._show_plans()

    def approve(self, title: str, markdown: str) -> None:
        self.set_on(False)
        if self.chat is not None:
            self.chat.submit(approved_prompt(title, markdown))

    def revise(self, title: str, comment: str) -> None:
        self.set_on(True)
        if self.chat is not None:
            self.chat.submit(revise_prompt(title, comment))

    def _command(self, arguments: str) -> str | None:
        word = arguments.strip()
        if word.lower() in ("", "on", "off"):
            plan_on = self.session is not None and self.session.loop.plan.on
            self.set_on(word.lower() == "on" or (not word and not plan_on))
            return None
        self.set_on(True)
        return word  # the task, sent in plan mode
