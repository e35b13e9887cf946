"""A project's hooks where its files are: a remote folder's run on its machine, through
melgui's host there (`hooks/run`, docs/host-protocol.md), while the loop that reaches
each point runs on the person's machine.

On the host (the folder is on this machine):

    found = await ProjectHooks("/srv/p").run("PreToolUse", ["Bash", "run_command"], payload)
    # {"runs": [{command, origin, matcher, timeout, exit_code, stdout, …}], "problems": […]}

Only the project's files are read there (`.melgui/hooks.json`, `.claude/settings.json`,
`.claude/settings.local.json` in the folder): the view sends a point only while the
person trusts the folder by its URL, and runs the person's own hooks on their machine.
Each matching command runs as a local folder's does (runner.py): in the folder, as that
machine's user, in its own process group, with a minimal environment, killed at its
timeout.

On the view, `HooksThere` is what `Hooks` asks (melgui/remote/remote_hooks.py gives it):
whether the folder's hooks run now (its trust), whether a point has any hook there to
run (the folder's `HooksSummary`, which events and matchers have hooks, kept current by
the host there: a point none matches is not sent), and the runs of one point, or why
none came back (`lost`: the link dropped for good, or the host there died, while they ran).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from melgui.core.hooks.config import HookCommand, HookConfig, HookFiles, matcher_accepts
from melgui.core.hooks.runner import Ran, hook_env, run_hook
from melgui.core.protocol.tooling import HookEvent


@dataclass(frozen=True, slots=True)
class RanThere:
    """What the project's hooks of one point did there; `lost`: why no answer came."""

    runs: list[tuple[HookCommand, Ran]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    lost: str = ""


@dataclass(frozen=True, slots=True)
class HooksSummary:
    """Which hooks a folder there has: each event with a hook and its matcher, as the
    host there read the folder's files (`version` goes up with each change it tells)."""

    version: int
    hooks: tuple[tuple[str, str], ...] = ()
    problems: tuple[str, ...] = ()

    def wants(self, event: HookEvent, names: Iterable[str]) -> bool:
        """A hook there matches this point (the host would run at least one)."""
        return any(e == event and matcher_accepts(m, names) for e, m in self.hooks)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "hooks": [{"event": e, "matcher": m} for e, m in self.hooks],
            "problems": list(self.problems),
        }

    @classmethod
    def of(cls, config: HookConfig, version: int) -> HooksSummary:
        return cls(version, tuple(config.summary()), tuple(config.problems))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HooksSummary:
        hooks = tuple((str(h["event"]), str(h.get("matcher") or "")) for h in data["hooks"])
        return cls(int(data["version"]), hooks, tuple(str(p) for p in data.get("problems", ())))


class HooksThere(Protocol):
    where: str  # the folder there, as the person knows it ("ssh://build/srv/p")

    def active(self) -> bool:
        """The folder's hooks run now (the person trusts it)."""
        ...

    def wanted(self, event: HookEvent, names: Sequence[str]) -> bool:
        """The point may have a hook there to run: false only when the folder's summary,
        as the host there last told it, has none that matches."""
        ...

    async def run(
        self, event: HookEvent, names: Sequence[str], payload: dict[str, Any]
    ) -> RanThere: ...


@runtime_checkable
class GivesHooksThere(Protocol):
    """A ToolRunner whose folder is on another machine, with its own hooks there."""

    def hooks_there(self) -> HooksThere | None: ...


class _Trusted:
    """The host runs a point only when the view sent it: the view decided the trust."""

    def is_trusted(self, folder: str) -> bool:
        return True


class ProjectHooks:
    """The project's hooks of one folder on this machine, read as their files are now."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.files = HookFiles(folder, _Trusted(), own=False)
        self._env = hook_env(folder)

    async def run(
        self, event: HookEvent, names: Iterable[str], payload: dict[str, Any]
    ) -> dict[str, Any]:
        config = self.files.current()
        hooks = config.for_event(event, tuple(names))
        cwd = self._cwd(payload.get("cwd"))
        data = json.dumps(payload).encode("utf-8")
        ran = await asyncio.gather(*(run_hook(h, data, cwd=cwd, env=self._env) for h in hooks))
        runs = [run_to_json(hook, one) for hook, one in zip(hooks, ran, strict=True)]
        return {"runs": runs, "problems": list(config.problems)}

    def _cwd(self, given: object) -> str:
        """The point's folder (a worker's, inside the project), else the project's."""
        if isinstance(given, str) and os.path.isdir(given):
            inside = os.path.realpath(given)
            root = os.path.realpath(self.folder)
            if inside == root or inside.startswith(root.rstrip("/") + "/"):
                return given
        return self.folder


def run_to_json(hook: HookCommand, ran: Ran) -> dict[str, Any]:
    return {
        "event": hook.event,
        "command": hook.command,
        "origin": hook.origin,
        "matcher": hook.matcher,
        "timeout": hook.timeout,
        "exit_code": ran.exit_code,
        "stdout": ran.stdout,
        "stderr": ran.stderr,
        "duration": ran.duration,
        "timed_out": ran.timed_out,
        "problem": ran.problem,
    }


def run_from_json(data: dict[str, Any], where: str) -> tuple[HookCommand, Ran]:
    """A run as the host sent it; its origin says the machine (".claude/settings.json on
    build")."""
    code = data.get("exit_code")
    hook = HookCommand(
        event=data["event"],
        command=str(data.get("command", "")),
        timeout=float(data.get("timeout") or 0.0),
        matcher=str(data.get("matcher", "")),
        origin=f"{data.get('origin', '')} on {where}",
    )
    ran = Ran(
        exit_code=int(code) if isinstance(code, int) else None,
        stdout=str(data.get("stdout", "")),
        stderr=str(data.get("stderr", "")),
        duration=float(data.get("duration") or 0.0),
        timed_out=bool(data.get("timed_out")),
        problem=str(data.get("problem", "")),
    )
    return hook, ran


def ran_there_from_json(answer: dict[str, Any], where: str) -> RanThere:
    runs = [run_from_json(run, where) for run in answer.get("runs") or []]
    problems = [f"{p} (on {where})" for p in answer.get("problems") or []]
    return RanThere(runs, problems)
