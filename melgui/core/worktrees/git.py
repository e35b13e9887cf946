"""How worktree code runs git in a thread: through the app's one runner (`core.git`),
on the person's repository (hardened unless the folder is trusted), niced.

`GIT_OPTIONAL_LOCKS=0` keeps read commands (`status`, `diff`) from refreshing the index,
so reading a folder never writes to its `.git`. git runs at a lower CPU priority
(`nice`): these calls run in threads behind the window (the board's counts, `read_agent`,
closing, recovery), and on a busy machine git's walk of a large tree must not take the
CPU the window needs to draw. The small reads a person waits on when a worker's worktree
is made pass `nice=False`; its checkout (`worktree add`) stays niced: eight at once took
the cores from the window drawing the eight panes.

Whatever adds or removes a worktree holds `admin_lock` (create.py, cleanup.py): `git
worktree add` reads every other worktree's record in `.git/worktrees/`, so two at once on
one repository race (one reads the other's half-written `commondir` and dies: "failed to
read ... commondir"), as an add beside a remove deleting a record does.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from melgui.core.git import GitError, run
from melgui.core.git.runner import common_git_dir

GIT_TIMEOUT_S = 120.0

__all__ = [
    "GitError",
    "admin_lock",
    "head_sha",
    "run_git",
    "run_git_bytes",
    "toplevel",
    "toplevel_and_head",
]


def run_git(
    args: list[str],
    cwd: str | os.PathLike[str],
    *,
    timeout: float = GIT_TIMEOUT_S,
    ok_codes: tuple[int, ...] = (0,),
    stdin: bytes | None = None,
    nice: bool = True,
) -> str:
    """git's stdout (as text, undecodable bytes replaced); GitError when it fails."""
    out = run_git_bytes(args, cwd, timeout=timeout, ok_codes=ok_codes, stdin=stdin, nice=nice)
    return out.decode("utf-8", "replace")


def run_git_bytes(
    args: list[str],
    cwd: str | os.PathLike[str],
    *,
    timeout: float = GIT_TIMEOUT_S,
    ok_codes: tuple[int, ...] = (0,),
    stdin: bytes | None = None,
    nice: bool = True,
) -> bytes:
    done = run(
        args,
        cwd,
        env={"GIT_OPTIONAL_LOCKS": "0"},
        stdin=stdin,
        timeout=timeout,
        ok_codes=ok_codes,
        nice=nice,
    )
    return done.out


def toplevel(folder: str | os.PathLike[str]) -> Path | None:
    """The root of the git work tree holding `folder`, or None when it is not in one."""
    try:
        out = run_git(["rev-parse", "--show-toplevel"], folder, timeout=30)
    except GitError:
        return None
    return Path(out.strip()) if out.strip() else None


def head_sha(folder: str | os.PathLike[str]) -> str | None:
    """The full sha HEAD points at, or None when there is no commit yet."""
    try:
        out = run_git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], folder, timeout=30)
    except GitError:
        return None
    return out.strip() or None


def toplevel_and_head(
    folder: str | os.PathLike[str], *, nice: bool = True
) -> tuple[Path | None, str | None]:
    """`toplevel` and the `head_sha` of it, from one git call: (None, None) outside a
    repository, (top, None) in one with no commit yet."""
    try:
        out = run_git(
            ["rev-parse", "--show-toplevel", "--verify", "--quiet", "HEAD^{commit}"],
            folder, timeout=30, ok_codes=(0, 1), nice=nice,
        )  # fmt: skip
    except GitError:
        return None, None
    lines = out.splitlines()
    top = Path(lines[0]) if lines and lines[0].strip() else None
    head = lines[1].strip() if top is not None and len(lines) > 1 else ""
    return top, head or None


@contextlib.contextmanager
def admin_lock(main: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the repository's worktree records for one add or remove, across threads and
    processes (the window and a host on one machine): an flock on its common git
    directory, which writes nothing there. Each holder opens its own descriptor, so
    threads of one process wait on each other too; the kernel drops it with the process."""
    common = common_git_dir(main) or os.fspath(main)
    fd = os.open(common, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the flock
