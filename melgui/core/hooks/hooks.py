"""The hooks of one conversation: run the matching commands at each point and say what
they decided, with a `HookRun` for every run.

    hooks = Hooks(HookFiles(folder, trust), cwd=folder, session_id="…")
    before = await hooks.before_call(call, arguments)   # the loop: a verdict, new input
    after = await hooks.after_call(call, arguments, "ok", text)   # text for the result
    said = await hooks.prompt_submitted("fix the bug")   # blocked? context to add?

The hooks matching one point run together (as Claude Code runs them). Before a call
their verdicts combine as Claude Code's do: deny over ask over allow; rewritten input is
applied in file order. A point with no matching hook starts no process.

A folder on another machine (`there`: melgui/core/hooks/there.py) has its project's
hooks run there, by melgui's host, while the folder is trusted: each point a hook there
matches is sent there as it is reached here (a point none matches costs no round trip),
and their runs join the person's own (melgui's hooks file, run here) in the same
verdicts. Hooks there that gave no answer (the link dropped for good, the host died)
deny the call they were to judge, saying so.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from melgui.core.hooks.answers import Answer, answer_of
from melgui.core.hooks.config import HookCommand, HookFiles
from melgui.core.hooks.names import claude_input, claude_name, matched_names, melgui_input
from melgui.core.hooks.runner import Ran, as_json, hook_env, run_hook
from melgui.core.hooks.there import HooksThere, RanThere
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.judgement import Verdict
from melgui.core.protocol.tooling import AfterCall, BeforeCall, HookEvent, HookRun

_RANK: dict[Verdict, int] = {"allow": 0, "ask": 1, "deny": 2}
# The points whose hooks judge a call: hooks there that did not answer deny it.
_GATES: frozenset[HookEvent] = frozenset({"PreToolUse", "PermissionRequest"})


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
        there: HooksThere | None = None,
    ) -> None:
        """`there`: the folder is on another machine (`cwd` is its path there), whose
        host runs the project's hooks; `files` are then the person's own, run here in
        `files.project` (melgui's stand-in folder for it)."""
        self.files = files
        self.cwd = cwd
        self.session_id = session_id
        self.permission_mode = permission_mode
        self.there = there
        self._env = hook_env(files.project, base_env)
        if there is not None:
            self._env["MELGUI_REMOTE_FOLDER"] = there.where
        self._problems_there: list[str] = []

    def problems(self) -> list[str]:
        return [*self.files.current().problems, *self._problems_there]

    def _there_for(self, event: HookEvent, names: Sequence[str]) -> HooksThere | None:
        """The folder there, when its hooks run now and one may match this point."""
        there = self.there
        if there is None or not there.active() or not there.wanted(event, names):
            return None
        return there

    # -- around a call -------------------------------------------------------------------

    async def before_call(self, call: ToolCall, arguments: dict[str, Any]) -> BeforeCall:
        return await self._decide("PreToolUse", call, arguments)

    async def permission_request(self, call: ToolCall, arguments: dict[str, Any]) -> BeforeCall:
        """The call would ask the person: the PermissionRequest hooks may allow it (with
        new input) or deny it for them; deny over allow."""
        return await self._decide("PermissionRequest", call, arguments)

    def _matching(self, event: HookEvent, names: Sequence[str]) -> list[HookCommand]:
        """The commands for `event` whose matcher accepts a tool of these `names` (none
        configured: none)."""
        config = self.files.current()
        return config.for_event(event, names) if config.commands else []

    async def _decide(
        self, event: HookEvent, call: ToolCall, arguments: dict[str, Any]
    ) -> BeforeCall:
        names = matched_names(call.name)
        hooks, there = self._matching(event, names), self._there_for(event, names)
        if not hooks and there is None:
            return BeforeCall()
        sent = claude_input(call.name, arguments, self.cwd)
        fields = {"tool_name": claude_name(call.name), "tool_input": sent, "tool_use_id": call.id}
        answered = await self._run_all(hooks, event, fields, names, there)
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
        names = matched_names(call.name)
        hooks = self._matching("PostToolUse", names)
        there = self._there_for("PostToolUse", names)
        if not hooks and there is None:
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
        answered = await self._run_all(hooks, "PostToolUse", fields, names, there)
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
        there = self._there_for(event, (subject,))
        if not hooks and there is None:
            return Said()
        answered = await self._run_all(hooks, event, fields, (subject,), there)
        blocking = [a for a, _ in answered if a.verdict == "deny"]
        context = "\n".join(a.context for a, _ in answered if a.context)
        reason = "\n".join(a.reason for a in blocking)
        runs = tuple(run for _, run in answered)
        return Said(bool(blocking), reason, context, runs)

    # -- running -------------------------------------------------------------------------

    async def _run_all(
        self,
        hooks: list[HookCommand],
        event: HookEvent,
        fields: dict[str, Any],
        names: Sequence[str] = (),
        there: HooksThere | None = None,
    ) -> list[tuple[Answer, HookRun]]:
        payload = {
            "session_id": self.session_id,
            "transcript_path": "",
            "cwd": self.cwd,
            "hook_event_name": event,
            "permission_mode": self.permission_mode(),
            **fields,
        }
        data = as_json(payload)
        if there is not None:  # the person's own here and the project's there, together
            here = asyncio.gather(*(self._run_one(h, event, data) for h in hooks))
            mine, theirs = await asyncio.gather(here, there.run(event, names, payload))
            return [*mine, *self._answered_there(event, theirs, there.where)]
        if len(hooks) == 1:
            return [await self._run_one(hooks[0], event, data)]
        return list(await asyncio.gather(*(self._run_one(h, event, data) for h in hooks)))

    def _answered_there(
        self, event: HookEvent, ran: RanThere, where: str
    ) -> list[tuple[Answer, HookRun]]:
        self._problems_there = list(ran.problems)
        if ran.lost:
            return [self._unanswered(event, ran.lost, where)]
        return [self._answered(event, hook, one) for hook, one in ran.runs]

    def _unanswered(self, event: HookEvent, lost: str, where: str) -> tuple[Answer, HookRun]:
        """The project's hooks there gave no answer: a call they judge is denied (it
        does not run unjudged), any other point goes on, and the card says why."""
        if event in _GATES:
            reason = f"{lost}; the call was not run without their answer"
            answer = Answer("deny", reason, problem=lost, effect="denied: " + reason)
        else:
            answer = Answer(problem=lost)
        command = f"the project's {event} hooks"
        return answer, HookRun(event, command, f"on {where}", problem=lost, effect=answer.effect)

    async def _run_one(
        self, hook: HookCommand, event: HookEvent, data: bytes
    ) -> tuple[Answer, HookRun]:
        # A folder there is not here; one here that is gone has them run in the project
        # (no look needed when that is the folder itself).
        cwd = self.files.project
        if self.there is None and (self.cwd == cwd or os.path.isdir(self.cwd)):
            cwd = self.cwd
        return self._answered(event, hook, await run_hook(hook, data, cwd=cwd, env=self._env))

    @staticmethod
    def _answered(event: HookEvent, hook: HookCommand, ran: Ran) -> tuple[Answer, HookRun]:
        answer = answer_of(event, ran)
        run = HookRun(
            event=event,
            command=hook.command,
            origin=hook.origin,
            matcher=hook.matcher,
            duration=ran.duration,
            exit_code=ran.exit_code,
            stdout=ran.stdout,
            stderr=ran.stderr,
            timed_out=ran.timed_out,
            problem=answer.problem,
            effect=answer.effect,
        )
        return answer, run
