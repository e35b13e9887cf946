"""`/review [last N | branch]`: the model reviews the uncommitted changes (or the last N
commits, or a worker's branch) read-only, and its findings are listed by hunk with their
severity in the chat."""

from __future__ import annotations

from typing import Protocol

from melgui.core.agent.session import AgentSession
from melgui.core.git.runner import GitError
from melgui.desk.desk import Desk
from melgui.desk.prompt.slash_commands import SlashCommand
from melgui.desk.review import Comment, review
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.theme import Colors

_COLOR = {"error": "error", "warning": "warn", "note": "muted"}


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


def install_review(window: ReviewHost) -> None:
    def start(arguments: str) -> None:
        window.tasks.spawn(_run(window, arguments.strip()), what="reviewing the changes")

    window.desk.prompt.commands.add(
        SlashCommand(
            "review",
            "Review the uncommitted changes, the last N commits or a branch, read-only",
            start,
            usage="[last N|branch]",
        )
    )


async def _run(window: ReviewHost, target: str) -> None:
    transcript, colors = window.chat.transcript, window.colors
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
