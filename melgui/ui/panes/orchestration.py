"""The window's panes behind the pane tools (docs/tools.md): open_pane, spawn_agent,
send_keys, send_agent, read_pane, read_agent, list_panes over a PaneManager
(melgui.tools.panes.Panes; the tools read their inputs).

Every failure is a clear result for the model (unknown pane, wrong kind, a program
that has exited), never an exception out of the handler.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.tooling import ToolError, ToolOutcome
from melgui.core.protocol.tools.panes import Layout
from melgui.core.protocol.views.agent_commands import AgentCommand
from melgui.core.terminal.panes import HERE, exit_label, unknown_pane
from melgui.core.worktrees.git import GitError
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.risk import FileChange, changed_files, describe_changes
from melgui.host.remote_session import RemoteSession
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.panes.manager import PaneError, PaneManager
from melgui.ui.panes.terminal.pane import TerminalPane

SCROLLBACK_LINES = 200
MAX_READ_CHARS = 16000
SETTLE_S = 0.15  # read_pane waits for output to pause this long...
SETTLE_MAX_S = 1.0  # ...but never longer than this
OVERLAP_HEAD = (
    "Overlapping work: these workers changed the same files in their own worktrees; "
    "hunks likely to conflict will stop the merge of the second one. Tell one of them to "
    "leave those lines alone, or let them finish and resolve the conflict once:\n"
)
_WHERE = {"right": "to the right", "down": "below", "tab": "in a new tab"}


class Orchestration:
    """The window's Panes: the seven tools' work, on one manager."""

    def __init__(self, manager: PaneManager) -> None:
        self.manager = manager
        # Where workers' changes meet, in words: one pane's lines, or (None) every pane's.
        self.overlaps: Callable[[int | None], list[str]] = lambda _pane: []

    def refusal(self, tool: str) -> str | None:
        return None

    # -- lookups -----------------------------------------------------------------------

    def _terminal(self, pane_id: int) -> TerminalPane:
        pane = self.manager.pane(pane_id)
        if pane is None:
            raise ToolError(unknown_pane(pane_id, self.manager.registry))
        if not isinstance(pane, TerminalPane):
            raise ToolError(f"Pane {pane_id} is a worker agent: use send_agent / read_agent.")
        return pane

    def _agent(self, pane_id: int) -> AgentPane:
        pane = self.manager.pane(pane_id)
        if pane is None and self.manager.registry.get(pane_id) is not None:
            raise ToolError(
                f"Worker {pane_id} is still starting (its worktree is being made); "
                "try again in a moment."
            )
        if pane is None:
            raise ToolError(unknown_pane(pane_id, self.manager.registry))
        if not isinstance(pane, AgentPane):
            raise ToolError(f"Pane {pane_id} is a terminal: use send_keys / read_pane.")
        return pane

    # -- the tools ---------------------------------------------------------------------

    async def open_pane(self, layout: Layout, command: str | None) -> ToolOutcome:
        host, command = self.manager.host_of(command) if command else (None, command)
        agent = self.manager.agent_for(command) if command else None
        if agent is not None and host is not None:  # `@NAME agent`: its agent runs there
            try:
                info = await self.manager.open_remote_agent(host, agent, layout)
            except PaneError as exc:
                raise ToolError(str(exc)) from exc
            return self._agent_opened(info.id, agent, layout)
        if agent is not None:
            return self._open_agent_pane(agent, layout)
        if host is not None and command is not None:
            command = f"@{host} {command}"  # not an agent: the command as it was given
        try:  # a remote folder's terminals run there, a host view's in the melgui host
            info = await self.manager.start_terminal(command, layout)
        except PaneError as exc:
            raise ToolError(str(exc)) from exc
        pane = self.manager.pane(info.id)
        if isinstance(pane, TerminalPane) and pane.state.name == "failed":
            return ToolOutcome.error(f"Pane {info.id} could not start: {pane.state.detail}")
        what = f"`{command}`" if command else f"the login shell ({info.title})"
        return ToolOutcome(
            f"Opened terminal pane {info.id} {_WHERE[layout]}, running {what}. "
            f"Use send_keys to type into it and read_pane to see its screen."
        )

    def _open_agent_pane(self, agent: AgentCommand, layout: Layout) -> ToolOutcome:
        """A command that starts a known ACP agent opens as an agent pane (settings)."""
        try:
            info = self.manager.open_agent(agent, layout)
        except PaneError as exc:
            raise ToolError(str(exc)) from exc
        return self._agent_opened(info.id, agent, layout)

    def _agent_opened(self, pane_id: int, agent: AgentCommand, layout: Layout) -> ToolOutcome:
        info = self.manager.registry.get(pane_id)
        where = info.where if info is not None else HERE
        there = f" on {where}" if where != HERE else ""
        return ToolOutcome(
            f"Opened ACP agent pane {pane_id}{there} {_WHERE[layout]}, running "
            f"`{agent.text()}`. Use send_agent to give it work and read_agent to see its "
            f"replies (it is an agent pane, not a terminal: send_keys does not apply)."
        )

    async def spawn_agent(self, layout: Layout, task: str, model: str | None) -> ToolOutcome:
        planning, task = plan_word(task)
        try:
            info, prepared = await self.manager.start_worker(task, model, layout)
        except PaneError as exc:
            raise ToolError(str(exc)) from exc
        pane = self.manager.pane(info.id)
        if planning and isinstance(pane, AgentPane) and isinstance(pane.session, AgentSession):
            # before its first leg: the worker's queue runs on the loop's next turn
            pane.session.loop.plan.on = True
        model_name = pane.session.loop.model if isinstance(pane, AgentPane) else model
        text = (
            f"Started worker agent in pane {info.id} {_WHERE[layout]} on model {model_name}, "
            f"working on its task. Use read_agent to see its progress and send_agent to "
            f"message it."
        )
        if planning:
            text += (
                " It is in plan mode: it reads and writes a plan, changing nothing, until "
                "you approve it with send_agent and a text starting `/plan off` (or ask the "
                "person first), or the person approves it in the Plans panel."
            )
        if prepared is not None:
            text += "\n" + prepared.describe()
        there = pane.worktree_there if isinstance(pane, AgentPane) else None
        if there is not None:  # a worker on another machine, in its own worktree there
            text += f"\nOn {there.host}: {there.said}"
        elif isinstance(pane, AgentPane) and pane.note:
            text += "\n" + pane.note
        return ToolOutcome(text)

    async def send_keys(self, pane_id: int, text: str) -> ToolOutcome:
        pane = self._terminal(pane_id)
        if not pane.alive:
            pane.exit_reported = True
            raise ToolError(
                f"Pane {pane_id}'s program has ended ({pane.state.label}); keys not sent. "
                "Open a new pane to run something else."
            )
        # A newline is the Enter key, which a terminal sends as carriage return.
        pane.write(text.replace("\r\n", "\r").replace("\n", "\r").encode("utf-8", "replace"))
        return ToolOutcome(f"Sent {len(text)} characters to pane {pane_id}.")

    async def send_agent(self, pane_id: int, text: str) -> ToolOutcome:
        agent = self._agent(pane_id)
        switched = plan_switch(text)
        if switched is not None:
            session = agent.session
            if not isinstance(session, AgentSession):
                raise ToolError(f"Pane {pane_id} runs another agent: plan mode is melgui's own.")
            on, text = switched
            session.loop.plan.on = on
            if not text:
                word = "on" if on else "off"
                return ToolOutcome(f"Plan mode is {word} for worker {pane_id}.")
        queued = agent.send(text)
        if queued:
            return ToolOutcome(
                f"Queued the message for worker {pane_id}; it is busy and will read it "
                "when its current turn ends."
            )
        return ToolOutcome(f"Sent the message to worker {pane_id}.")

    async def read_pane(self, pane_id: int) -> ToolOutcome:
        pane = self.manager.pane(pane_id)
        if isinstance(pane, AgentPane):
            return await self.read_agent(pane_id)
        terminal = self._terminal(pane_id)
        await _settle(terminal)
        info = self.manager.info(pane_id)
        title = info.title if info is not None else terminal.command or "shell"
        lines = [f"Pane {pane_id} (terminal: {title}) — {terminal.state.label}."]
        if terminal.state.name == "exited":
            lines[0] = (
                f"Pane {pane_id} (terminal: {title}): the program has ended — "
                f"{exit_label(terminal.state.exit_code)}. Its last screen:"
            )
            terminal.exit_reported = True
        elif terminal.state.name == "failed":
            lines[0] = f"Pane {pane_id} (terminal: {title}) failed: {terminal.state.detail}"
        if terminal.emulator.alt_screen:
            lines.append("(a full-screen program is showing; this is its screen)")
        text = terminal.emulator.text(SCROLLBACK_LINES)
        if len(text) > MAX_READ_CHARS:
            text = "…(earlier output cut)\n" + text[-MAX_READ_CHARS:]
        lines.append("```")
        lines.append(text)
        lines.append("```")
        return ToolOutcome("\n".join(lines))

    async def read_agent(self, pane_id: int) -> ToolOutcome:
        pane = self._agent(pane_id)
        info = self.manager.info(pane_id)
        title = info.title if info is not None else "worker"
        lines = [f"Pane {pane_id} ({title}) — {pane.state.label}."]
        queued = pane.session.queued
        if queued:
            lines.append(f"{len(queued)} message(s) queued for it.")
        pending = pane.pending_approvals()
        if pending:
            names = ", ".join(request.call.name for request in pending)
            lines.append(f"Waiting for the person to approve: {names}.")
        if pane.worktree is not None:
            lines.append(await _worktree_changes(pane.worktree, pane.session))
        overlaps = self.overlaps(pane_id)
        if overlaps:
            lines.append(OVERLAP_HEAD + "\n".join(f"- {line}" for line in overlaps))
        reply = pane.latest_reply()
        lines.append("Latest reply:" if reply else "No reply yet.")
        if reply:
            lines.append(reply[-MAX_READ_CHARS:])
        if pane.streaming:
            lines.append("Writing now: " + "".join(pane.streaming)[-2000:])
        return ToolOutcome("\n".join(lines))

    async def list_panes(self) -> ToolOutcome:
        text = self.manager.registry.describe()
        overlaps = self.overlaps(None)
        if overlaps:
            text += "\n\n" + OVERLAP_HEAD + "\n".join(f"- {line}" for line in overlaps)
        hosts = self.manager.remote.describe() if self.manager.remote is not None else ""
        return ToolOutcome("\n\n".join(filter(None, [text, hosts])))


async def _settle(pane: TerminalPane) -> None:
    """Read output until it pauses briefly, so a reply to keys just sent is included."""
    deadline = time.monotonic() + SETTLE_MAX_S
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        if pane.catch_up():
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= SETTLE_S:
            break
        await asyncio.sleep(0.03)
    pane.check_exit()


async def _worktree_changes(worktree: Worktree, session: object) -> str:
    """Which files the worker changed in its worktree since its base (committed or not).
    A worker the melgui host runs: as the host last read it (after its last call or
    turn), with no git run here."""
    where = f"its worktree (branch {worktree.branch}, from {worktree.base[:10]})"
    unlisted = 0  # files the host's reading counts and does not list
    if isinstance(session, RemoteSession):
        touched = session.loop.worktree_files
        if touched is None:
            return f"The melgui host has not read {where} yet."
        changes = [FileChange("M" if t.status == "B" else t.status, t.path)
                   for t in touched.files.values()]  # fmt: skip
        unlisted = touched.more
    else:
        try:
            changes = await asyncio.to_thread(changed_files, worktree)
        except GitError as exc:
            return f"Could not read {where}: {exc}"
    if not changes:
        return f"No files changed yet in {where}."
    return (
        f"Files changed in {where} (A added, M modified, D deleted, ? new untracked): "
        + describe_changes(changes, unlisted=unlisted)
        + "."
    )


def plan_word(task: str) -> tuple[bool, str]:
    """A task that starts `/plan ` is planned first: (True, the task without it)."""
    stripped = task.strip()
    if stripped.startswith("/plan ") and stripped[6:].strip():
        return True, stripped[6:].strip()
    return False, task


def plan_switch(text: str) -> tuple[bool, str] | None:
    """`/plan on …` or `/plan off …` sent to a worker: the mode, and the rest to send."""
    words = text.strip().split(maxsplit=2)
    if len(words) >= 2 and words[0] == "/plan" and words[1] in ("on", "off"):
        rest = words[2] if len(words) == 3 else ""
        if words[1] == "off" and not rest:
            rest = "Your plan is approved. Plan mode is off: carry it out now."
        return words[1] == "on", rest
    return None
