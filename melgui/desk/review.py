"""Review of a diff: what to review (the uncommitted changes, the last N commits, a
branch), the prompt that asks for it, and the model's findings placed on the hunks.

The prompt is melgui's, or the project's own in `.melgui/review.md` (the diff follows it),
read where the folder is: here (`instructions_in`), or by the caller from the machine a
remote folder is on (`instructions`: the file's text there, "" when it has none).
The model answers one finding a line, `path:line: severity: text` with severity error,
warning or note; each finding lands on the hunk of that file whose new lines hold its
line (else the file's nearest hunk). A review runs read-only: the caller runs it in plan
mode, where only the tools that change nothing are offered.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from melgui.core.agent.plan_mode import PlanMode
from melgui.core.git import runner
from melgui.core.protocol.content import Part
from melgui.core.protocol.messages import Conversation
from melgui.core.protocol.views.review_findings import CUSTOM_PROMPT, Comment, Finding
from melgui.core.thread.chat_session import Observer
from melgui.core.worktrees.changes.diff import FileChange, Hunk, parse_diff

MAX_DIFF_CHARS = 200_000
PROMPT = """Review the change below as a careful senior engineer: bugs, unsafe or wrong
behaviour, missing error handling, tests that cannot fail, unclear names. Read files
with your tools when the diff alone does not tell. Change nothing.

Answer with one finding per line, exactly like:
path/to/file.py:42: error: what is wrong and how to fix it
(severity: error, warning or note; the line is the new file's line). After the findings
you may add a short summary."""
_FINDING = re.compile(r"^\s*[-*]?\s*`?([^\s:`][^:`]*?)`?:(\d+)`?:\s*(error|warning|note):\s*(.+)$")


class PlanLoop(Protocol):
    @property
    def plan(self) -> PlanMode: ...


class Reviewer(Protocol):
    """What a review uses of a session: melgui's own AgentSession, or a RemoteSession
    (the review's turn runs in the melgui host, read-only there too)."""

    @property
    def loop(self) -> PlanLoop: ...

    @property
    def conversation(self) -> Conversation: ...

    def submit(self, text: str, parts: tuple[Part, ...] = ()) -> None: ...

    def subscribe(self, observer: Observer) -> Callable[[], None]: ...

    async def wait_idle(self) -> None: ...

    async def aclose(self) -> None: ...


def target_args(target: str) -> list[str]:
    """`git diff` arguments for a target: "" (the uncommitted changes), "last N" (the
    last N commits), or a branch name (what it adds beside the current branch)."""
    words = target.split()
    if not words:
        return ["diff", "HEAD"]
    if words[0] == "last":
        count = int(words[1]) if len(words) > 1 and words[1].isdigit() else 1
        return ["diff", f"HEAD~{count}", "HEAD"]
    return ["diff", f"HEAD...{words[0]}"]


async def diff_of(folder: str, target: str = "") -> str:
    result = await runner.run_async(target_args(target), folder)
    return result.out.decode("utf-8", "replace")


def instructions_in(folder: str) -> str:
    """The project's own review prompt in `folder` on this machine ("" when none)."""
    try:
        return (Path(folder) / CUSTOM_PROMPT).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def review_prompt(instructions: str, diff: str, target: str = "") -> str:
    """The review's prompt: the project's `instructions` (melgui's when empty), then the
    diff."""
    instructions = instructions.strip() or PROMPT
    what = target or "the uncommitted changes"
    shown = diff if len(diff) <= MAX_DIFF_CHARS else diff[:MAX_DIFF_CHARS] + "\n[… cut]"
    return f"{instructions}\n\nThe change ({what}):\n\n```diff\n{shown}\n```"


def findings_of(answer: str) -> list[Finding]:
    found: list[Finding] = []
    for line in answer.splitlines():
        match = _FINDING.match(line)
        if match:
            path, number, severity, text = match.groups()
            found.append(Finding(path.strip(), int(number), severity, text.strip()))  # type: ignore[arg-type]
    return found


def on_hunks(findings: Sequence[Finding], changes: Sequence[FileChange]) -> list[Comment]:
    """Each finding on its hunk; a finding on a file the diff does not hold is left out."""
    comments: list[Comment] = []
    for finding in findings:
        index = next((i for i, c in enumerate(changes) if finding.path in c.paths), None)
        if index is None or not changes[index].hunks:
            continue
        hunks = changes[index].hunks
        chosen = min(range(len(hunks)), key=lambda i: _distance(hunks[i], finding.line))
        comments.append(Comment(finding, index, chosen, hunks[chosen].header))
    return comments


def comments_for(answer: str, diff: str) -> list[Comment]:
    return on_hunks(findings_of(answer), parse_diff(diff))


def _distance(hunk: Hunk, line: int) -> int:
    first, last = hunk.new_start, hunk.new_start + max(hunk.new_count, 1) - 1
    if first <= line <= last:
        return 0
    return first - line if line < first else line - last


async def review(
    session: Reviewer, folder: str, target: str = "", instructions: str | None = None
) -> list[Comment]:
    """Ask `session`'s model to review `target`'s diff, read-only (plan mode for the
    turn), and place its findings on the hunks. [] when there is nothing to review.
    `instructions`: the project's review prompt as read where the folder is (None: read
    from `folder` here)."""
    return await review_diff(session, folder, await diff_of(folder, target), target, instructions)


async def review_diff(
    session: Reviewer, folder: str, diff: str, target: str = "", instructions: str | None = None
) -> list[Comment]:
    """`review` of a diff already read (the Changes view's, a worker's)."""
    if not diff.strip():
        return []
    if instructions is None:
        instructions = instructions_in(folder)
    plan = session.loop.plan
    was = plan.on
    plan.on = True
    try:
        session.submit(review_prompt(instructions, diff, target))
        await session.wait_idle()
    finally:
        plan.on = was
    answers = [m for m in session.conversation.messages if m.role == "assistant" and m.content]
    return comments_for(answers[-1].content if answers else "", diff)
