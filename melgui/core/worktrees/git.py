"""The one way melgui runs git for worktrees: signals reset, no prompts, no optional locks.

`GIT_OPTIONAL_LOCKS=0` keeps read commands (`status`, `diff`) from refreshing the index,
so reading a folder never writes to its `.git`. git runs at a lower CPU priority
(`nice`): these calls run in threads behind the window (the board's counts, `read_agent`,
closing, recovery), and on a busy machine git's walk of a large tree must not take the
CPU the window needs to draw. Failures become GitError with git's own last words, in a
sentence a person can act on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from melgui.core.processes import child_preexec

GIT_TIMEOUT_S = 120.0
NICENESS = "10"
_NOT_FOUND = 127  # nice's status when it cannot run the program


class GitError(Exception):
    """A git command failed; the message is for people."""


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment every worktree, review and merge git call runs in: the person's
    own configuration, none of a surrounding hook's GIT_DIR and friends, no prompt, pager
    or editor, and git's messages in English (they are parsed)."""
    env = dict(os.environ)
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX"):
        env.pop(name, None)
    env.update(
        {
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_PAGER": "cat",
            "PAGER": "cat",
            "GIT_EDITOR": "true",  # a merge never stops to ask for its message
            "GIT_MERGE_AUTOEDIT": "no",
            "LC_ALL": "C",
            "LANGUAGE": "C",
        }
    )
    if extra:
        env.update(extra)
    return env


def run_git(
    args: list[str],
    cwd: str | os.PathLike[str],
    *,
    timeout: float = GIT_TIMEOUT_S,
    ok_codes: tuple[int, ...] = (0,),
    stdin: bytes | None = None,
) -> str:
    """git's stdout (as text, undecodable bytes replaced); GitError when it fails."""
    return run_git_bytes(args, cwd, timeout=timeout, ok_codes=ok_codes, stdin=stdin).decode(
        "utf-8", "replace"
    )


def run_git_bytes(
    args: list[str],
    cwd: str | os.PathLike[str],
    *,
    timeout: float = GIT_TIMEOUT_S,
    ok_codes: tuple[int, ...] = (0,),
    stdin: bytes | None = None,
) -> bytes:
    what = " ".join(["git", *args[:2]])
    nice = shutil.which("nice")
    try:
        done = subprocess.run(
            [nice, "-n", NICENESS, "git", *args] if nice else ["git", *args],
            cwd=cwd,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            env=git_env({"GIT_OPTIONAL_LOCKS": "0"}),
            timeout=timeout,
            preexec_fn=child_preexec(),
        )
    except FileNotFoundError as exc:
        if not Path(cwd).is_dir():
            raise GitError(f"The folder {cwd} does not exist.") from exc
        raise GitError("git is not installed (no `git` program on PATH).") from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(
            f"`{what}` took longer than {timeout:g} s in {cwd} and was stopped."
        ) from exc
    except OSError as exc:
        raise GitError(f"Cannot run `{what}` in {cwd}: {exc.strerror or exc}") from exc
    if nice and done.returncode == _NOT_FOUND and shutil.which("git") is None:
        raise GitError("git is not installed (no `git` program on PATH).")
    if done.returncode not in ok_codes:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = said[-1] if said else f"exit status {done.returncode}"
        raise GitError(f"`{what}` failed in {cwd}: {detail}")
    return done.stdout


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
