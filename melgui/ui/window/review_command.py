"""`/review [last N | branch]`: the model reviews the uncommitted changes (or the last N
commits, or a worker's branch) read-only, and its findings are listed by hunk with their
severity in the chat."""

from __future__ import annotations

from collections.abc import Callable

from melgui.core.agent.session import AgentSession
from melgui.core.git.runner import GitError
from melgui.desk.prompt.slash_commands import SlashCommand
from melgui.desk.review import Comment, review
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.runtime.theme import Colors

_COLOR = {"error": "error", "warning": "warn", "note": "muted"}


def review_command(start: Callable[[str], None]) -> SlashCommand:
    """`/review`, for the desk's slash commands; `start(target)` runs `review_into`."""
    return SlashCommand(
        "review",
        "Review the uncommitted changes, the last N commits or a branch, read-only",
        lambda arguments: start(arguments.strip()),
        usage="[last N|branch]",
    )


async def review_into(
    chat: ChatView, colors: Colors, session: AgentSession, folder: str, target: str
) -> None:
    """Review `target` in `folder` with `session`'s model; the findings go into `chat`."""
    transcript = chat.transcript
    try:
        comments = await review(session, folder, target)
    except (GitError, ValueError) as exc:
        chat.show_note(f"Cannot review: {exc}")
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
