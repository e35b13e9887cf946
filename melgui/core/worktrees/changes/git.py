"""Review and merge run git as an asyncio child in the worktrees' one environment
(`git.git_env`: the person's own configuration, no prompt, pager or editor), with signals
reset and errors turned into plain words.

Reads pass `GIT_OPTIONAL_LOCKS=0`, so looking at a worktree never rewrites its index.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from melgui.core.processes import child_preexec
from melgui.core.worktrees.git import git_env

GIT_TIMEOUT = 300.0  # seconds; a merge of a huge tree is slow, never endless


class ChangesError(Exception):
    """A review or merge step could not be done; the message says why in plain words."""


@dataclass(frozen=True, slots=True)
class GitResult:
    code: int
    out: bytes
    err: str

    @property
    def text(self) -> str:
        return self.out.decode("utf-8", "surrogateescape")


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
    argv = ["git", "-c", "core.quotePath=false", *args]
    if not folder.is_dir():
        raise ChangesError(f"The folder {folder} does not exist any more.")
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=folder,
            env=git_env(extra),
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            preexec_fn=child_preexec(),
        )
    except FileNotFoundError as exc:
        raise ChangesError("Reviewing a worker's changes needs git, which is missing.") from exc
    try:
        out, err = await asyncio.wait_for(process.communicate(stdin), GIT_TIMEOUT)
    except BaseException:
        if process.returncode is None:
            process.kill()
            await process.wait()
        raise
    code = process.returncode if process.returncode is not None else -1
    result = GitResult(code, out, err.decode("utf-8", "replace"))
    if check and code not in ok_codes:
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
