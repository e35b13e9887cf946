"""`/review [last N | branch]`: the model reviews the uncommitted changes (or the last N
commits, or a worker's branch) read-only. A review of the uncommitted changes opens the
project folder's Changes view and puts each finding on its hunk there, with its severity,
from where the findings can go to a new worker as its task; the other targets' findings
are listed by hunk in the chat. `/changes` opens that view without a review. A main
conversation in the melgui host reviews there: its turn runs in the host, read-only.
A remote folder's git and review prompt are read on its machine, by its host there
(`there_of`), whether the main conversation's loop runs here or there."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QWidget

from melgui.core.agent.session import AgentSession
from melgui.core.git.runner import GitError
from melgui.core.protocol.tooling import RestoresThere
from melgui.core.protocol.views.review_findings import Comment
from melgui.core.protocol.views.slash_commands import SlashCommand
from melgui.core.worktrees.changes.git import ChangesError
from melgui.core.worktrees.changes.reading import uncommitted_in
from melgui.desk.review import Reviewer, review, review_diff
from melgui.host.remote_session import RemoteSession
from melgui.remote.link_client import LinkClient
from melgui.ui.changes.there import (
    AsksThere,
    diff_there,
    review_instructions_there,
    uncommitted_there,
)
from melgui.ui.changes.view import ChangesView, open_changes
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.checkpoints.hosted import HostedCheckpoints
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.sessions import MainSession
from melgui.ui.runtime.theme import Colors

_COLOR = {"error": "error", "warning": "warn", "note": "muted"}
REVIEWER = "review of the uncommitted changes"


class Reviews:
    """`/review` and `/changes` for the conversation shown (`follow`), in `folder()`:
    `reviewer()` makes the read-only worker that reviews in the Changes view,
    `to_new_worker(task)` gives its findings to a new worker pane."""

    def __init__(
        self,
        tasks: TaskKeeper,
        colors: Colors,
        *,
        folder: Callable[[], str],
        reviewer: Callable[[], AgentSession],
        to_new_worker: Callable[[str], object],
        parent: QWidget,
    ) -> None:
        self.tasks = tasks
        self.colors = colors
        self._folder = folder
        self._reviewer = reviewer
        self._to_new_worker = to_new_worker
        self.parent_widget = parent
        self.session: MainSession | None = None
        self.chat: ChatView | None = None

    def follow(self, session: MainSession, chat: ChatView) -> None:
        self.session, self.chat = session, chat

    def set_colors(self, colors: Colors) -> None:
        self.colors = colors

    def commands(self) -> list[SlashCommand]:
        """`/review` and `/changes`, for the desk's slash commands."""
        return [
            SlashCommand(
                "review",
                "Review the uncommitted changes, the last N commits or a branch, read-only",
                lambda arguments: self.start(arguments.strip()),
                usage="[last N|branch]",
            ),
            SlashCommand(
                "changes", "Show the uncommitted changes by file and hunk; review them", self.show
            ),
        ]

    def start(self, target: str) -> None:
        """Review `target`; the findings go to the chat shown when it started."""
        if self.session is None or self.chat is None:
            return
        work = self._run(self.session, self.chat, target)
        self.tasks.spawn(work, what="reviewing the changes")

    def show(self, _arguments: str = "") -> None:
        if self.chat is not None:
            self.tasks.spawn(self.open(self.chat), what="reading the uncommitted changes")

    async def open(self, chat: ChatView) -> ChangesView | None:
        """The project folder's Changes view, read; None when there is none (said). A
        remote folder's changes are read there, by its host."""
        there = there_of(self.session)
        try:
            if there is not None:
                worktree = (await uncommitted_there(there)).worktree
            else:
                worktree = await uncommitted_in(Path(self._folder()))
        except ChangesError as exc:
            chat.show_note(f"Cannot show the changes: {exc}")
            return None
        view = open_changes(self.parent_widget, worktree, self.colors, self._reviewer,
                            self._to_new_worker, in_place=True, read=False)  # fmt: skip
        if there is not None:
            view.reader = lambda: uncommitted_there(there)
            view.instructions = lambda: review_instructions_there(there)
        await view.reload()
        return view

    async def _run(self, session: MainSession, chat: ChatView, target: str) -> None:
        colors = self.colors
        if not target:
            view = await self.open(chat)
            if view is None or view.changes is None:
                return
            if not view.changes.files:
                chat.transcript.add_notice(
                    "Review: there are no uncommitted changes.", colors.muted
                )
                return
            comments = await view.run_review(session)
            hunks = len({(c.file, c.hunk) for c in comments})
            chat.transcript.add_notice(
                f"Review: {len(comments)} findings on {hunks} hunks of the uncommitted changes, "
                "shown in the Changes view.",
                colors.muted,
            )
            return
        await review_into(chat, colors, session, self._folder(), target, there_of(session))


def there_of(session: MainSession | None) -> AsksThere | None:
    """The host on the machine a remote folder is on, which reads its git and files: its
    tools' there (the loop here), or the main conversation's session there (`loop_there`:
    a session of melgui's host over the folder's link). None: the folder is here (this
    machine's melgui host reads the same folder the window does)."""
    if isinstance(session, RemoteSession):
        return HostedCheckpoints(session) if isinstance(session.client, LinkClient) else None
    tools = session.loop.tools if isinstance(session, AgentSession) else None
    return tools if isinstance(tools, RestoresThere) else None


async def review_into(
    chat: ChatView,
    colors: Colors,
    session: Reviewer,
    folder: str,
    target: str,
    there: AsksThere | None = None,
) -> None:
    """Review `target` in `folder` with `session`'s model; the findings go into `chat`.
    `there`: a remote folder's host, which reads the diff and the review prompt there."""
    transcript = chat.transcript
    try:
        if there is None:
            comments = await review(session, folder, target)
        else:
            diff = await diff_there(there, target)
            instructions = await review_instructions_there(there) if diff.strip() else ""
            comments = await review_diff(session, folder, diff, target, instructions)
    except (GitError, ChangesError, ValueError) as exc:
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
