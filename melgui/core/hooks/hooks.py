"""The hooks of one conversation: run the matching commands at each point and say what
they decided, with a `HookRun` for every run.

    hooks = Hooks(HookFiles(folder, trust), cwd=folder, session_id="…")
    before = await hooks.before_call(call, arguments)   # the loop: a verdict, new input
    after = await hooks.after_call(call, arguments, "ok", text)   # text for the result
    said = await hooks.prompt_submitted("fix the bug")   # blocked? context to add?

The hooks matching one point run together (as Claude Code runs them). Before a call
their verdicts combine as Claude Code's do: deny over ask over allow; rewritten input is
applied in file order. A point with no matching hook starts no process.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from melgui.core.config.trust import FolderTrust
from melgui.core.hooks.answers import Answer, answer_of
from melgui.core.hooks.config import HookCommand, HookConfig, hook_files, load
from melgui.core.hooks.names import claude_input, claude_name, matched_names, melgui_input
from melgui.core.hooks.runner import hook_env, run_hook
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.judgement import Verdict
from melgui.core.protocol.tooling import AfterCall, BeforeCall, HookEvent, HookRun

_RANK: dict[Verdict, int] = {"allow": 0, "ask": 1, "deny": 2}


class HookFiles:
    """The hook configuration of a project as its files are now: melgui's own, and the
    project's while the folder is trusted. Re-read only when a file or the trust changes;
    the trust is read only when the project has a hooks file at all."""

    def __init__(
        self, project: str, trust: FolderTrust | None = None, *, user_dir: Path | None = None
    ) -> None:
        self.project = project
        self.trust = trust or FolderTrust()
        self._own = hook_files(project, trusted=False, user_dir=user_dir)
        self._theirs = hook_files(project, trusted=True, user_dir=user_dir)[len(self._own) :]
        self._key: tuple[object, ...] | None = None
        self._config = HookConfig()

    def current(self) -> HookConfig:
        own = tuple(_stamp(f) for f in self._own)
        theirs = tuple(_stamp(f) for f in self._theirs)
        trusted = any(theirs) and self.trust.is_trusted(self.project)
        key = (own, theirs, trusted)
        if key != self._key:
            files = self._own + (self._theirs if trusted else [])
            self._config = load(files, project=self.project)
            self._key = key
        return self._config


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


@dataclass(frozen=True, slots=True)
class Said:
    """What the hooks at a point other than a call said: `blocked` with a `reason` (a
    prompt not sent, a stop refused), `context` for the model, and the runs."""

    blocked: bool = False
    reason: str = ""
    context: str = ""
    runs: tuple[HookRun, ...] = ()


class Hooks:
    """Runs one conversation's hooks (the loop's `CallHooks`, and the other points)."""

    def __init__(
        self,
        files: HookFiles,
        *,
        cwd: str,
        session_id: str = "",
        permission_mode: Callable[[], str] = lambda: "default",
        base_env: Mapping[str, str] | None = None,
    ) -> None:
        self.files = files
        self.cwd = cwd
        self.session_id = session_id
        self.permission_mode = permission_mode
        self._env = hook_env(files.project, base_env)

    def problems(self) -> list[str]:
        return list(self.files.current().problems)

    # -- around a call -------------------------------------------------------------------

    async def before_call(self, call: ToolCall, arguments: dict[str, Any]) -> BeforeCall:
        return await self._decide("PreToolUse", call, arguments)

    async def permission_request(self, call: ToolCall, arguments: dict[str, Any]) -> BeforeCall:
        """The call would ask the person: the PermissionRequest hooks may allow it (with
        new input) or deny it for them; deny over allow."""
        return await self._decide("PermissionRequest", call, arguments)

    def _matching(self, event: HookEvent, tool: str) -> list[HookCommand]:
        """The commands for `event` whose matcher accepts `tool` (none configured: none)."""
        config = self.files.current()
        return config.for_event(event, matched_names(tool)) if config.commands else []

    async def _decide(
        self, event: HookEvent, call: ToolCall, arguments: dict[str, Any]
    ) -> BeforeCall:
        hooks = self._matching(event, call.name)
        if not hooks:
            return BeforeCall()
        sent = claude_input(call.name, arguments, self.cwd)
        fields = {"tool_name": claude_name(call.name), "tool_input": sent, "tool_use_id": call.id}
        answered = await self._run_all(hooks, event, fields)
        verdict: Verdict | None = None
        reason = ""
        updated: dict[str, Any] | None = None
        for answer, _ in answered:
            if answer.verdict is not None and (
                verdict is None or _RANK[answer.verdict] > _RANK[verdict]
            ):
                verdict, reason = answer.verdict, answer.reason
            if answer.updated_input is not None:
                updated = {**(updated or {}), **answer.updated_input}
        rewritten = None
        if updated is not None and verdict != "deny":
            rewritten = melgui_input(call.name, updated, sent, arguments, self.cwd)
        return BeforeCall(verdict, reason, rewritten, tuple(run for _, run in answered))

    async def after_call(
        self, call: ToolCall, arguments: dict[str, Any], status: str, content: str
    ) -> AfterCall:
        hooks = self._matching("PostToolUse", call.name)
        if not hooks:
            return AfterCall()
        sent = claude_input(call.name, arguments, self.cwd)
        response: dict[str, Any] = {"content": content, "success": status == "ok"}
        if isinstance(sent.get("file_path"), str):
            response["filePath"] = sent["file_path"]
        fields = {
            "tool_name": claude_name(call.name),
            "tool_input": sent,
            "tool_response": response,
            "tool_use_id": call.id,
        }
        answered = await self._run_all(hooks, "PostToolUse", fields)
        context = "\n".join(a.context for a, _ in answered if a.context)
        labelled = f"[PostToolUse hook]\n{context}" if context else ""
        return AfterCall(labelled, tuple(run for _, run in answered))

    # -- the other points ----------------------------------------------------------------

    async def prompt_submitted(self, prompt: str) -> Said:
        return await self._point("UserPromptSubmit", {"prompt": prompt})

    async def stopping(self, *, active: bool, worker: bool = False) -> Said:
        """A turn is about to end; `active`: it goes on because a Stop hook said so. A
        worker's turn is a subagent's: its SubagentStop hooks run instead."""
        return await self._point("SubagentStop" if worker else "Stop", {"stop_hook_active": active})

    async def session_ended(self, reason: str = "other") -> Said:
        """The session closes ("clear": another conversation replaces it, "other")."""
        return await self._point("SessionEnd", {"reason": reason}, reason)

    async def session_started(self, source: str) -> Said:
        return await self._point("SessionStart", {"source": source}, source)

    async def before_compact(self, trigger: str) -> Said:
        fields = {"trigger": trigger, "custom_instructions": ""}
        return await self._point("PreCompact", fields, trigger)

    async def notified(self, message: str, kind: str = "permission_prompt") -> Said:
        fields = {"message": message, "notification_type": kind}
        return await self._point("Notification", fields, kind)

    async def _point(self, event: HookEvent, fields: dict[str, Any], subject: str = "") -> Said:
        hooks = self.files.current().for_event(event, (subject,))
        if not hooks:
            return Said()
        answered = await self._run_all(hooks, event, fields)
        blocking = [a for a, _ in answered if a.verdict == "deny"]
        context = "\n".join(a.context for a, _ in answered if a.context)
        reason = "\n".join(a.reason for a in blocking)
        runs = tuple(run for _, run in answered)
        return Said(bool(blocking), reason, context, runs)

    # -- running -------------------------------------------------------------------------

    async def _run_all(
        self, hooks: list[HookCommand], event: HookEvent, fields: dict[str, Any]
    ) -> list[tuple[Answer, HookRun]]:
        payload = {
            "session_id": self.session_id,
            "transcript_path": "",
            "cwd": self.cwd,
            "hook_event_name": event,
            "permission_mode": self.permission_mode(),
            **fields,
        }
        data = json.dumps(payload).encode("utf-8")
        if len(hooks) == 1:
            return [await self._run_one(hooks[0], event, data)]
        return list(await asyncio.gather(*(self._run_one(h, event, data) for h in hooks)))

    async def _run_one(
        self, hook: HookCommand, event: HookEvent, data: bytes
    ) -> tuple[Answer, HookRun]:
        started = time.monotonic()
        cwd = self.cwd if os.path.isdir(self.cwd) else self.files.project
        ran = await run_hook(hook, data, cwd=cwd, env=self._env)
        answer = answer_of(event, ran)
        run = HookRun(
            event=event,
            command=hook.command,
            origin=hook.origin,
            matcher=hook.matcher,
            duration=time.monotonic() - started,
            exit_code=ran.exit_code,
            stdout=ran.stdout,
            stderr=ran.stderr,
            timed_out=ran.timed_out,
            problem=answer.problem,
            effect=answer.effect,
        )
        return answer, run
