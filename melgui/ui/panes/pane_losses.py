"""What closing a pane now would end: a running program, a worker's turn or its
approvals, an ACP agent's turn or its permission requests. Work in a worker's worktree
is not here: `worker_worktrees.closing_losses` reads it by git, in a thread."""

from __future__ import annotations

import contextlib
import os

from melgui.core.protocol.views.losses import Loss, session_losses
from melgui.core.terminal.pty_session import session_members
from melgui.remote.remote_pty import RemotePty
from melgui.ui.panes.acp_pane import AcpPane
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.panes.terminal.pane import TerminalPane


def losses_of(pane: TerminalPane | AgentPane, where: str) -> list[Loss]:
    """`where` names the pane in the question ("pane 2 (worker 2: …)"). A shell at its
    prompt loses nothing."""
    if isinstance(pane, AcpPane):
        return session_losses(pane.acp, where)()  # its loop and busy, as a session's
    if isinstance(pane, AgentPane):
        return session_losses(pane.session, where)()
    pty = pane.pty
    if pty is None or not pane.alive:
        return []
    there = ""
    pid, pids = pty.pid, pty.session_pids()
    if isinstance(pty, RemotePty) and pty.host_pid:  # in the melgui host, on this machine
        there = " in the melgui host"
        pid, pids = pty.host_pid, session_members(pty.host_pid)
    if pane.command is None and not _jobs(pid, pids):
        return []
    what = pane.command or "a program started in the shell"
    return [Loss("process", where, f"{short(what)} is still running{there}")]


def short(text: str, limit: int = 40) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _jobs(shell: int, pids: list[int]) -> list[int]:
    """Processes the shell started as jobs (their own process group, foreground or in the
    background); what its start-up files run stays in the shell's group and is no job."""
    jobs = []
    for pid in pids:
        with contextlib.suppress(OSError):
            if pid != shell and os.getpgid(pid) != shell:
                jobs.append(pid)
    return jobs
