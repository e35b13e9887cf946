"""Review and merge run git as an asyncio child through the app's one runner
(`core.git`: the person's repository, hardened unless the folder is trusted, a minimal
environment), with errors turned into plain words.

Reads pass `GIT_OPTIONAL_LOCKS=0`, so looking at a worktree never rewrites its index.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from melgui.core.git import GitError, GitResult, run_async

GIT_TIMEOUT = 300.0  # seconds; a merge of a huge tree is slow, never endless

__all__ = ["ChangesError", "GitResult", "dirty_paths", "git", "last_words"]


class ChangesError(GitError):
    """A review or merge step could not be done; the message says why in plain words."""


async def git(
    folder: Path,
    *args: str,
    stdin: bytes | None = None,
    check: bool = True,
    read_only: bool = False,
    ok_codes: Sequence[int] = (0,),
) -> GitResult:
    """Run `git args` in `folder`.

    ChangesError when git is missing, the folder is gone, or (with `check`) git exits
    with a code outside `ok_codes`; the message ends with git's own last words.
    """
    extra = {"GIT_OPTIONAL_LOCKS": "0"} if read_only else None
    if not folder.is_dir():
        raise ChangesError(f"The folder {folder} does not exist any more.")
    try:
        result = await run_async(
            ["-c", "core.quotePath=false", *args],
            folder,
            env=extra,
            stdin=stdin,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except GitError as exc:
        raise ChangesError(str(exc)) from exc
    if check and result.code not in ok_codes:
        raise ChangesError(f"git {args[0]} failed in {folder}: {last_words(result)}")
    return result


def last_words(result: GitResult) -> str:
    """git's explanation: the last meaningful lines of stderr (or stdout)."""
    lines = [line.strip() for line in (result.err or result.text).splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("hint:")]
    if not lines:
        return f"exit code {result.code}"
    return " ".join(lines[-3:])


async def dirty_paths(folder: Path) -> dict[str, str]:
    """Every path with uncommitted changes in `folder` (staged, unstaged or untracked):
    path -> the two-letter status of `git status --porcelain`. Renames give both paths."""
    result = await git(
        folder, "status", "--porcelain=v1", "-z", "--untracked-files=all", read_only=True
    )
    found: dict[str, str] = {}
    fields = result.text.split("\0")
    index = 0
    while index < len(fields):
        entry = fields[index]
        index += 1
        if len(entry) < 4:
            continue
        status, path = entry[:2], entry[3:]
        found[path] = status
        if "R" in status or "C" in status:
            if index < len(fields) and fields[index]:
                found[fields[index]] = status
            index += 1
    return found
