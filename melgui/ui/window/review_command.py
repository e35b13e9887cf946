"""`/review [last N | branch]`: the model reviews the uncommitted changes (or the last N
commits, or a worker's branch) read-only. A review of the uncommitted changes opens the
project folder's Changes view and puts each finding on its hunk there, with its severity,
from where the findings can go to a new worker as its task; the other targets' findings
are listed by hunk in the chat. `/changes` opens that view without a review."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from PySide6.QtWidgets import QMainWindow

from melgui.core.agent.session import AgentSession
from melgui.core.git.runner import GitError
from melgui.core.protocol.catalog import Role
from melgui.core.worktrees.changes.git import ChangesError
from melgui.core.worktrees.changes.reading import uncommitted_in
from melgui.desk.desk import Desk
from melgui.desk.prompt.slash_commands import SlashCommand
from melgui.desk.review import Comment, review
from melgui.ui.changes.view import ChangesView, open_changes
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.panes.manager import PaneManager
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.theme import Colors

_COLOR = {"error": "error", "warning": "warn", "note": "muted"}
REVIEWER = "review of the uncommitted changes"


class ReviewHost(Protocol):
    """What `/review` uses of the window (MainWindow is one)."""

    @property
    def session(self) -> AgentSession: ...

    @property
    def desk(self) -> Desk: ...

    @property
    def chat(self) -> ChatView: ...

    @property
    def colors(self) -> Colors: ...

    @property
    def tasks(self) -> TaskKeeper: ...

    @property
    def main_window(self) -> QMainWindow: ...

    @property
    def pane_manager(self) -> PaneManager: ...

    def session_factory(
        self, role: Role, model: str | None = None, source: str = "worker"
    ) -> AgentSession: ...


def install_review(window: ReviewHost) -> None:
    def start(arguments: str) -> None:
        window.tasks.spawn(_run(window, arguments.strip()), what="reviewing the changes")

    def show(_arguments: str) -> None:
        window.tasks.spawn(_open(window), what="reading the uncommitted changes")

    commands = window.desk.prompt.commands
    commands.add(
        SlashCommand(
            "review",
            "Review the uncommitted changes, the last N commits or a branch, read-only",
            start,
            usage="[last N|branch]",
        )
    )
    commands.add(
        SlashCommand("changes", "Show the uncommitted changes by file and hunk; review them", show)
    )


async def _open(window: ReviewHost) -> ChangesView | None:
    """The project folder's Changes view, read; None when there is none (said)."""
    try:
        worktree = await uncommitted_in(Path(window.desk.folder))
    except ChangesError as exc:
        window.chat.show_note(f"Cannot show the changes: {exc}")
        return None

    def reviewer() -> AgentSession:  # a read-only worker in the project folder
        return window.session_factory("worker", source=REVIEWER)

    def to_new_worker(task: str) -> None:
        window.pane_manager.spawn_agent(task, None, "tab")

    view = open_changes(window.main_window, worktree, window.colors, reviewer, to_new_worker,
                        in_place=True, read=False)  # fmt: skip
    await view.reload()
    return view


async def _run(window: ReviewHost, target: str) -> None:
    transcript, colors = window.chat.transcript, window.colors
    if not target:
        view = await _open(window)
        if view is None or view.changes is None:
            return
        if not view.changes.files:
            transcript.add_notice("Review: there are no uncommitted changes.", colors.muted)
            return
        comments = await view.run_review(window.session)
        hunks = len({(c.file, c.hunk) for c in comments})
        transcript.add_notice(
            f"Review: {len(comments)} findings on {hunks} hunks of the uncommitted changes, "
            "shown in the Changes view.",
            colors.muted,
        )
        return
    try:
        comments = await review(window.session, window.desk.folder, target)
    except (GitError, ValueError) as exc:
        window.chat.show_note(f"Cannot review: {exc}")
        return
    if not comments:
        transcript.add_notice("Review: no findings on the diff's hunks.", colors.muted)
        return
    transcript.add_notice(f"Review: {len(comments)} findings on the hunks", colors.muted)
    for comment in comments:
        transcript.add_notice(_line(comment), getattr(colors, _COLOR[comment.finding.severity]))


def _line(comment: Comment) -> str:
    finding = comment.finding
    return (
        f"{finding.path} {comment.header} — line {finding.line}: {finding.severity}: {finding.text}"
    )
