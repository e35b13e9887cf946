"""The steps of landing one worker's branch, each on git through the review code's runner
(`changes.git`, on the event loop): its loose edits committed, the branch rebased on what
the person's branch holds now, the project's test command run on the result.

A rebase that stops on conflicts is aborted at once, leaving the worktree as it was: the
queue then merges the branch as the Changes view does (`merge.merge_branch`), which
leaves the conflict in the main folder for the person, as a merge always has.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from pathlib import Path

from melgui.core.worktrees.changes.git import ChangesError, dirty_paths, git, last_words
from melgui.core.worktrees.merge import commit_worktree
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.setup_command import SetupResult, run_setup

OUTPUT_TAIL = 12_000  # characters of test output sent back to a worker


async def commit_loose_edits(worktree: Worktree) -> int:
    """Commit the worker's uncommitted edits (a merge takes only commits); how many files."""
    loose = await dirty_paths(worktree.path)
    if loose:
        names = sorted(loose)
        listed = ", ".join(names[:8]) + (" …" if len(names) > 8 else "")
        await commit_worktree(worktree, f"The worker's uncommitted edits to {listed}")
    return len(loose)


async def person_head(main: Path) -> str:
    """The commit the main folder's current branch (or detached HEAD) is at."""
    result = await git(main, "rev-parse", "--verify", "HEAD^{commit}", read_only=True)
    return result.text.strip()


@dataclass(frozen=True, slots=True)
class Rebased:
    worktree: Worktree  # with `base` moved to what it was rebased on
    moved: bool  # False: it already stood on that commit
    conflicts: bool  # the rebase stopped on conflicts and was aborted


async def rebase_on(worktree: Worktree, onto: str) -> Rebased:
    """Rebase the worker's branch on `onto` in its worktree (which must be clean)."""
    base = await git(worktree.path, "merge-base", "HEAD", onto, read_only=True, check=False)
    if base.code == 0 and base.text.strip() == onto:
        return Rebased(replace(worktree, base=onto), False, False)
    result = await git(worktree.path, "rebase", "-q", "--no-autostash", onto, check=False)
    if result.code == 0:
        return Rebased(replace(worktree, base=onto), True, False)
    stopped = await git(
        worktree.path, "rev-parse", "-q", "--verify", "REBASE_HEAD", read_only=True, check=False
    )
    if stopped.code == 0 or "CONFLICT" in result.text + result.err:
        await git(worktree.path, "rebase", "--abort", check=False)
        return Rebased(worktree, False, True)
    if "Please tell me who you are" in result.err:
        raise ChangesError(
            "Not rebased: git does not know who you are. Set user.name and user.email with "
            "git config --global."
        )
    raise ChangesError(
        f"Not rebased: git refused to rebase {worktree.branch}: {last_words(result)}"
    )


async def run_tests(command: str, folder: Path, main: Path, timeout: float) -> SetupResult:
    """The project's test command in `folder`, as the setup command runs (its own process
    group, a command's environment, not at all in a folder the person has not trusted)."""
    return await asyncio.to_thread(run_setup, command, folder, main, timeout=timeout)


def failed_tests_task(branch: str, into: str, onto: str, result: SetupResult) -> str:
    """The new task a worker gets when its branch fails the tests in the queue."""
    if result.timed_out:
        how = "did not finish before the test timeout"
    else:
        how = f"failed (exit status {result.exit_code})"
    output = result.output.rstrip()
    if len(output) > OUTPUT_TAIL:
        output = "…(earlier output cut)\n" + output[-OUTPUT_TAIL:]
    return (
        f"The merge queue rebased your branch {branch} on {into} ({onto[:10]}) and ran the "
        f"project's test command `{result.command}` on it. It {how}; nothing was merged. "
        "Make the tests pass, commit, and finish your turn: the queue takes your branch "
        f"again then.\n\nIts output:\n```\n{output or '(no output)'}\n```"
    )
