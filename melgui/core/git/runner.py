"""The one way melgui starts git: in a thread (`run`) or on the event loop (`run_async`).

Each call says whose repository it runs on. melgui's own shadow repository passes
`hardened=True`; the person's repository is hardened unless its folder is trusted
(`FolderTrust`, looked up for the folder the call runs in). A hardened call first lists
the repository's configuration to override each named driver (see `hardening`). git
runs with signals reset, stdin closed unless given, a timeout, and failures become
GitError with git's own last words, in a sentence a person can act on. A `.gitignore`,
`.gitattributes`, `info/exclude` or `info/attributes` git would block on (a FIFO, a
device), in any folder, trusted or not, is named instead of waited on: the repository's
`info/` files and an untrusted folder's tree before git starts, a trusted folder's tree
once git has run STALL_S seconds (the walk that finds them stats each folder once it is
known, so a trusted folder's every call does not pay for one).
"""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from melgui.core.config.special_files import (
    INFO_RULE_FILES,
    Listing,
    read_rules,
    special,
    special_rule_files,
)
from melgui.core.config.trust import FolderTrust
from melgui.core.git import hardening
from melgui.core.runtime.deadline import within
from melgui.core.runtime.processes import child_preexec, kill_unreaped, spawn

GIT_TIMEOUT_S = 120.0
STALL_S = 2.0  # a trusted folder's git still running after this: is a rules file why?
LIST_TIMEOUT_S = 30.0
NICENESS = "10"
_NOT_FOUND = 127  # nice's status when it cannot run the program


class GitError(Exception):
    """A git command failed, or git could not run; the message is for people."""


@dataclass(frozen=True, slots=True)
class GitResult:
    code: int
    out: bytes
    err: str

    @property
    def text(self) -> str:
        return self.out.decode("utf-8", "surrogateescape")


@dataclass(frozen=True, slots=True)
class Plan:
    """The argv and environment one git call runs with."""

    argv: list[str]
    env: dict[str, str]
    what: str


Stalled = Callable[[], None]  # raises GitError when it finds why git is stuck

_listings: dict[bytes, Listing] = {}  # folders' listings by mtime, shared by every call


def _git_dirs(cwd: str) -> list[str]:
    """The git directory of the repository `cwd` is in, and its common directory (a
    linked worktree's `.git` is a file naming its own directory, whose `commondir` names
    the main one, where `info/` lives)."""
    folder = os.path.abspath(cwd)
    while True:
        dot_git = os.path.join(folder, ".git")
        if os.path.isdir(dot_git):
            return [dot_git]
        if os.path.isfile(dot_git):
            break
        parent = os.path.dirname(folder)
        if parent == folder:
            return []
        folder = parent
    pointer = read_rules(dot_git).text.strip()
    if not pointer.startswith("gitdir:"):
        return []
    git_dir = os.path.normpath(os.path.join(folder, pointer.removeprefix("gitdir:").strip()))
    common = read_rules(os.path.join(git_dir, "commondir")).text.strip()
    return [git_dir, os.path.normpath(os.path.join(git_dir, common))] if common else [git_dir]


def common_git_dir(cwd: str | os.PathLike[str]) -> str | None:
    """The common git directory (where `worktrees/` lives) of the repository `cwd` is in,
    linked worktree or not; None outside one."""
    dirs = _git_dirs(os.fspath(cwd))
    return dirs[-1] if dirs else None


def _special_info_files(cwd: str) -> list[str]:
    return [
        why
        for git_dir in _git_dirs(cwd)
        for name in INFO_RULE_FILES
        if (why := special(os.path.join(git_dir, name))) is not None
    ]


def refuse_special_rules(
    args: Sequence[str], cwd: str | os.PathLike[str], *, walk: bool = True
) -> None:
    """GitError naming an `info/exclude` or `info/attributes` of the repository `cwd` is
    in, or (with `walk`) a `.gitignore`/`.gitattributes` under `cwd`, that git would
    block on (a FIFO, a device, a link to one): git opens them with no timeout of its
    own, trusted folder or not."""
    folder = os.fspath(cwd)
    found = _special_info_files(folder)
    if walk and not found:
        found = [why for _, why in special_rule_files(folder, _listings)]
    if found:
        what = " ".join(["git", *args[:2]])
        raise GitError(f"`{what}` was not run: {found[0]}, and git would wait on it for ever.")


def is_hardened(cwd: str | os.PathLike[str], hardened: bool | None) -> bool:
    return (not FolderTrust().is_trusted(cwd)) if hardened is None else hardened


def _listing_argv() -> list[str]:
    return [
        "git", "--no-pager", *hardening.config_args(hardening.FIXED),
        "config", "--list", "--includes", "--name-only", "-z",
    ]  # fmt: skip


def _plan(
    args: Sequence[str],
    hardened: bool,
    env: Mapping[str, str] | None,
    listing: bytes | None,
) -> Plan:
    what = " ".join(["git", *args[:2]])
    child = hardening.child_env(hardened=hardened, extra=env)
    if not hardened:
        return Plan(["git", "--no-pager", *args], child, what)
    overrides = hardening.driver_overrides(hardening.list_names(listing or b""))
    argv = [
        "git", "--no-pager",
        *hardening.config_args(hardening.FIXED),
        *hardening.config_args(overrides),
        *hardening.diff_flags(list(args)),
    ]  # fmt: skip
    return Plan(argv, child, what)


def _failure(plan: Plan, cwd: str | os.PathLike[str], code: int, out: bytes, err: bytes) -> str:
    lines = [
        line.strip()
        for line in (err or out).decode("utf-8", "replace").splitlines()
        if line.strip() and not line.startswith("hint:")
    ]
    detail = " ".join(lines[-3:]) if lines else f"exit status {code}"
    return f"`{plan.what}` failed in {cwd}: {detail}"


def _slow(args: Sequence[str], cwd: str | os.PathLike[str], timeout: float) -> GitError:
    what = " ".join(["git", *args[:2]])
    return GitError(f"`{what}` took longer than {timeout:g} s in {cwd} and was stopped.")


def _missing(cwd: str | os.PathLike[str], exc: OSError) -> GitError:
    if not Path(cwd).is_dir():
        return GitError(f"The folder {cwd} does not exist.")
    if isinstance(exc, FileNotFoundError):
        return GitError("git is not installed (no `git` program on PATH).")
    return GitError(f"Cannot run git in {cwd}: {exc.strerror or exc}")


# -- in a thread -------------------------------------------------------------------------


def _run_sync(
    argv: list[str],
    cwd: str | os.PathLike[str],
    env: dict[str, str],
    stdin: bytes | None,
    timeout: float,
    nice: bool,
    stalled: Stalled | None = None,
) -> subprocess.CompletedProcess[bytes]:
    niced = shutil.which("nice") if nice else None
    with subprocess.Popen(
        [niced, "-n", NICENESS, *argv] if niced else argv,
        cwd=cwd,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=child_preexec(),
    ) as process:
        try:
            out, err = _communicate(process, stdin, timeout, stalled)
        except BaseException:
            process.kill()
            process.wait()
            raise
    if niced and process.returncode == _NOT_FOUND and shutil.which("git") is None:
        raise FileNotFoundError("git")
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


def _communicate(
    process: subprocess.Popen[bytes], stdin: bytes | None, timeout: float, stalled: Stalled | None
) -> tuple[bytes, bytes]:
    """The child's output; past STALL_S, `stalled` may raise (the reason git is stuck)."""
    if stalled is not None and timeout > STALL_S:
        try:
            return process.communicate(stdin, STALL_S)
        except subprocess.TimeoutExpired:
            stalled()
            timeout -= STALL_S
    return process.communicate(stdin, timeout)


def _prepare(
    args: Sequence[str],
    cwd: str | os.PathLike[str],
    hardened: bool | None,
    env: Mapping[str, str] | None,
    own_config: bool,
) -> tuple[bool, dict[str, str], Stalled | None]:
    """Whether the call is hardened, its child's environment, and what to check should
    git stall; GitError at once where git would meet a special rules file: the
    repository's `info/` ones always, the tree's `.gitignore`/`.gitattributes` in an
    untrusted folder (a trusted folder's tree is walked only when git stalls, so its
    every call does not pay for a walk). The look-ups only stat (trust.json, rules files
    through a per-folder mtime cache), so the async path runs them in place: awaiting a
    thread for them let a Qt modal dialog's nested loop resume the caller outside
    asyncio's running loop."""
    hard = is_hardened(cwd, hardened)
    stalled = None
    if not own_config:
        refuse_special_rules(args, cwd, walk=hard)
        if not hard:
            stalled = functools.partial(refuse_special_rules, args, cwd)
    return hard, hardening.child_env(hardened=hard, extra=env), stalled


def run(
    args: Sequence[str],
    cwd: str | os.PathLike[str],
    *,
    hardened: bool | None = None,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    timeout: float = GIT_TIMEOUT_S,
    check: bool = True,
    ok_codes: Sequence[int] = (0,),
    nice: bool = False,
    own_config: bool = False,
) -> GitResult:
    """Run `git args` in `cwd` and wait; GitError when git cannot run, runs past
    `timeout`, or (with `check`) exits with a code outside `ok_codes`.

    `own_config`: the configuration is melgui's own (the shadow repository, no system or
    global file), so it names no driver and is not listed first.
    """
    hard, child_env, stalled = _prepare(args, cwd, hardened, env, own_config)
    try:
        listing = None
        if hard and not own_config:
            listed = _run_sync(_listing_argv(), cwd, child_env, None, LIST_TIMEOUT_S, nice)
            listing = listed.stdout if listed.returncode == 0 else b""
        plan = _plan(args, hard, env, listing)
        done = _run_sync(plan.argv, cwd, plan.env, stdin, timeout, nice, stalled)
    except subprocess.TimeoutExpired as exc:
        raise _slow(args, cwd, timeout) from exc
    except OSError as exc:
        raise _missing(cwd, exc) from exc
    result = GitResult(done.returncode, done.stdout, done.stderr.decode("utf-8", "replace"))
    if check and done.returncode not in ok_codes:
        raise GitError(_failure(plan, cwd, done.returncode, done.stdout, done.stderr))
    return result


# -- on the event loop -------------------------------------------------------------------


async def _run_async(
    argv: list[str], cwd: str | os.PathLike[str], env: dict[str, str], stdin: bytes | None,
    timeout: float, stalled: Stalled | None = None,
) -> tuple[int, bytes, bytes]:  # fmt: skip
    process = await spawn(
        *argv,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        preexec_fn=child_preexec(),
    )
    talk = asyncio.ensure_future(process.communicate(stdin))
    try:
        if stalled is not None and timeout > STALL_S:
            await asyncio.wait({talk}, timeout=STALL_S)
            if not talk.done():
                stalled()
                timeout -= STALL_S
        out, err = await within(talk, timeout)
    except BaseException:
        talk.cancel()
        if process.returncode is None:
            kill_unreaped(process)  # not process.kill(): its poll may reap behind the watcher
            await process.wait()
        raise
    return (process.returncode if process.returncode is not None else -1), out, err


async def run_async(
    args: Sequence[str],
    cwd: str | os.PathLike[str],
    *,
    hardened: bool | None = None,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    timeout: float = GIT_TIMEOUT_S,
    check: bool = True,
    ok_codes: Sequence[int] = (0,),
    own_config: bool = False,
) -> GitResult:
    """`run`, as an asyncio child (the loop is never blocked)."""
    hard, child_env, stalled = _prepare(args, cwd, hardened, env, own_config)
    try:
        listing = None
        if hard and not own_config:
            code, listing, _ = await _run_async(
                _listing_argv(), cwd, child_env, None, LIST_TIMEOUT_S
            )
            listing = listing if code == 0 else b""
        plan = _plan(args, hard, env, listing)
        code, out, err = await _run_async(plan.argv, cwd, plan.env, stdin, timeout, stalled)
    except TimeoutError as exc:
        raise _slow(args, cwd, timeout) from exc
    except OSError as exc:
        raise _missing(cwd, exc) from exc
    result = GitResult(code, out, err.decode("utf-8", "replace"))
    if check and code not in ok_codes:
        raise GitError(_failure(plan, cwd, code, out, err))
    return result


def git_available() -> bool:
    return shutil.which("git") is not None
