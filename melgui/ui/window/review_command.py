"""`/review [last N | branch]`: the model reviews the uncommitted changes (or the last N
commits, or a worker's branch) read-only, and its findings are listed by hunk with their
severity in the chat."""

from __future__ import annotations

from typing import Any

from melgui.core.git.runner import GitError
from melgui.desk.prompt.slash_commands import SlashCommand
from melgui.desk.review import Comment, review

_COLOR = {"error": "error", "warning": "warn", "note": "muted"}


def install_review(window: Any) -> None:
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


async def _run(window: Any, target: str) -> None:
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
