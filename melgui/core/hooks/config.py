"""Which hooks run where: Claude Code's `hooks` block, read from melgui's and the project's files.

The format is Claude Code's, so an existing `.claude/settings.json` works unchanged:

    {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "./check.sh", "timeout": 30}]}]}}

Files, in the order their hooks run:
- melgui's own: `hooks.json` in melgui's config folder (the same block);
- the project's: `.melgui/hooks.json`, `.claude/settings.json`, `.claude/settings.local.json`,
  read only when the folder is trusted (a project's hooks are code the folder supplies).

A matcher is Claude Code's: empty, missing or `*` matches everything; names joined by
`|` (`Edit|Write`) match exactly; anything else is a regular expression searched in the
name. For tool events the name is matched in Claude Code's spelling (`Bash`) and in
melgui's (`run_command`). A file that cannot be read is a problem in words, never a crash.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, get_args

from melgui.core.config.settings import config_dir
from melgui.core.config.trust import FolderTrust
from melgui.core.protocol.tooling import HookEvent

EVENTS: tuple[HookEvent, ...] = get_args(HookEvent)
USER_FILE = "hooks.json"
PROJECT_FILES = (".melgui/hooks.json", ".claude/settings.json", ".claude/settings.local.json")
DEFAULT_TIMEOUT = 60.0  # seconds, Claude Code's default for a command hook
_PLAIN = re.compile(r"^[A-Za-z0-9_|-]+$")


@dataclass(frozen=True, slots=True)
class HookCommand:
    event: HookEvent
    command: str
    timeout: float
    matcher: str
    origin: str  # the file, as the person knows it

    def matches(self, names: Iterable[str]) -> bool:
        return matcher_accepts(self.matcher, names)


def matcher_accepts(matcher: str, names: Iterable[str]) -> bool:
    if matcher in ("", "*"):
        return True
    candidates = [n for n in names if n]
    if _PLAIN.match(matcher):
        wanted = set(matcher.split("|"))
        return any(n in wanted for n in candidates)
    try:
        pattern = re.compile(matcher)
    except re.error:
        return False
    return any(pattern.search(n) for n in candidates)


@dataclass
class HookConfig:
    """Every hook command by event, in file order, and what could not be read."""

    commands: list[HookCommand] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    _found: dict[tuple[str, tuple[str, ...]], list[HookCommand]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def for_event(self, event: HookEvent, names: Iterable[str] = ()) -> list[HookCommand]:
        key = (event, tuple(names))
        if key not in self._found:
            found = [c for c in self.commands if c.event == event and c.matches(key[1])]
            unique: dict[str, HookCommand] = {}  # Claude Code runs an identical command once
            for command in found:
                unique.setdefault(command.command, command)
            self._found[key] = list(unique.values())
        return self._found[key]

    def __bool__(self) -> bool:
        return bool(self.commands)

    def summary(self) -> list[tuple[HookEvent, str]]:
        """Which events have hooks, and for which matchers (each pair once, in file
        order): enough to know whether a point has a hook to run."""
        return list(dict.fromkeys((c.event, c.matcher) for c in self.commands))


def hook_files(project: str | Path, *, trusted: bool, user_dir: Path | None = None) -> list[Path]:
    """The files whose hooks apply to `project`: melgui's own, then the project's when the
    folder is trusted."""
    files = [(user_dir or config_dir()) / USER_FILE]
    if trusted:
        files += [Path(project) / name for name in PROJECT_FILES]
    return files


def load(
    files: Iterable[Path], *, project: str | Path = "", home: Path | None = None
) -> HookConfig:
    config = HookConfig()
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        except OSError as exc:
            config.problems.append(f"{path}: cannot read it ({exc.strerror or exc})")
            continue
        origin = _shown(path, Path(project) if project else None, home or Path.home())
        try:
            data = json.loads(text)
        except ValueError as exc:
            config.problems.append(f"{origin}: not valid JSON ({exc})")
            continue
        read_block(data, origin, config)
    return config


def read_block(data: Any, origin: str, config: HookConfig) -> None:
    """Add the hooks of one settings file's `hooks` block to `config`."""
    block = data.get("hooks") if isinstance(data, dict) else None
    if block is None:
        return
    if not isinstance(block, dict):
        config.problems.append(f"{origin}: `hooks` is not an object")
        return
    for event, groups in block.items():
        if event not in EVENTS:
            continue  # events melgui has no point for (PostToolUseFailure, …)
        if not isinstance(groups, list):
            config.problems.append(f"{origin}: hooks.{event} is not a list")
            continue
        for group in groups:
            _read_group(event, group, origin, config)


def _read_group(event: HookEvent, group: Any, origin: str, config: HookConfig) -> None:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        config.problems.append(f"{origin}: an entry of hooks.{event} has no `hooks` list")
        return
    matcher = group.get("matcher") or ""
    if not isinstance(matcher, str):
        config.problems.append(f"{origin}: a matcher of hooks.{event} is not a string")
        return
    if not _PLAIN.match(matcher) and matcher not in ("", "*"):
        try:
            re.compile(matcher)
        except re.error as exc:
            config.problems.append(f"{origin}: matcher {matcher!r} is not a pattern ({exc})")
            return
    for hook in group["hooks"]:
        if not isinstance(hook, dict) or hook.get("type", "command") != "command":
            kind = hook.get("type") if isinstance(hook, dict) else type(hook).__name__
            config.problems.append(f"{origin}: a {kind} hook of {event} is not run (only command)")
            continue
        command = hook.get("command")
        if not isinstance(command, str) or not command.strip():
            config.problems.append(f"{origin}: a hook of {event} has no command")
            continue
        timeout = hook.get("timeout", DEFAULT_TIMEOUT)
        if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
            timeout = DEFAULT_TIMEOUT
        config.commands.append(HookCommand(event, command, float(timeout), matcher, origin))


def _shown(path: Path, project: Path | None, home: Path) -> str:
    if project is not None and path.is_relative_to(project):
        return str(path.relative_to(project))
    if path.is_relative_to(home):
        return "~/" + str(path.relative_to(home))
    return str(path)


class Trusts(Protocol):
    def is_trusted(self, folder: str) -> bool: ...


class HookFiles:
    """The hook configuration of a project as its files are now: melgui's own, and the
    project's while the folder is trusted. Re-read only when a file or the trust changes;
    the trust is read only when the project has a hooks file at all.

    `project_files=False`: melgui's own only (a remote folder's run there: hooks/there.py);
    `own=False`: the project's only (melgui's host there, running them)."""

    def __init__(
        self,
        project: str,
        trust: Trusts | None = None,
        *,
        user_dir: Path | None = None,
        own: bool = True,
        project_files: bool = True,
    ) -> None:
        self.project = project
        self.trust: Trusts = trust or FolderTrust()
        mine = hook_files(project, trusted=False, user_dir=user_dir)
        every = hook_files(project, trusted=True, user_dir=user_dir)
        self._own = [str(f) for f in mine] if own else []
        self._theirs = [str(f) for f in every[len(mine) :]] if project_files else []
        self._key: tuple[Stamps, Stamps, bool] | None = None
        self._config = HookConfig()

    def current(self) -> HookConfig:
        before = self._key
        own = _stamps(self._own, before[0] if before else ())
        theirs = _stamps(self._theirs, before[1] if before else ())
        trusted = any(theirs) and self.trust.is_trusted(self.project)
        key = (own, theirs, trusted)
        if key != self._key:
            files = self._own + (self._theirs if trusted else [])
            self._config = load(map(Path, files), project=self.project)
            self._key = key
        return self._config


Stamp = tuple[int, int, int, int]
Stamps = tuple[Stamp | None, ...]


def _stamps(paths: list[str], before: Stamps) -> Stamps:
    """Each file's stamp: its inode and change time too, so a file put back with its old
    mtime and size (`cp -p`, a restored backup) is read again. A file missing at the last
    look is asked after with `access` first: a project without hooks files (most) then
    costs no failing `stat`, each three times dearer (an exception to raise and catch)."""
    stamps: list[Stamp | None] = []
    for at, path in enumerate(paths):
        if at < len(before) and before[at] is None and not os.access(path, os.F_OK):
            stamps.append(None)
            continue
        try:
            info = os.stat(path)
        except OSError:
            stamps.append(None)
            continue
        stamps.append((info.st_mtime_ns, info.st_size, info.st_ino, info.st_ctime_ns))
    return tuple(stamps)
