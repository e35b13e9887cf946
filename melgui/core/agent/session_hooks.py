"""The hooks around a session's turns: SessionStart, UserPromptSubmit, Stop (SubagentStop
for a worker), PreCompact, Notification and SessionEnd (the hooks around each call,
PermissionRequest among them, run in the loop).

- SessionStart runs before the session's first turn ("startup", or "resume" when the
  conversation already has messages); what it prints joins that first message.
- UserPromptSubmit runs before each message is sent: it may block it (the turn does not
  run, and the person is told why) or add context to it.
- Stop runs when a turn ends with an answer: a block sends its reason to the model as
  the next message, at most `MAX_STOP_ROUNDS` times in a row (`stop_hook_active` says
  when the turn goes on because of one). A worker is a subagent: SubagentStop runs instead.
- PreCompact runs before the model summarises older messages.
- Notification runs when a call waits for the person's approval; it never waits itself.
- SessionEnd runs when a session that started closes; it cannot stop that.

Each run that did something, printed something or failed is told as a ContextNotice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace

from melgui.core.agent.loop import AgentLoop, TurnResult
from melgui.core.hooks.hooks import Hooks, Said
from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.loop_events import ContextNotice, LoopEvent, TurnFailed
from melgui.core.protocol.messages import Message

MAX_STOP_ROUNDS = 3

Emit = Callable[[LoopEvent], None]


class SessionHooks:
    def __init__(self, hooks: Hooks, loop: AgentLoop, emit: Emit) -> None:
        self.hooks = hooks
        self.loop = loop
        self._emit = emit
        self._started = False
        self._notifying: set[asyncio.Task[None]] = set()
        hooks.permission_mode = lambda: "plan" if loop.plan.on else "default"

    async def turn(self, message: Message) -> TurnResult:
        """Run `message` as a turn with the hooks around it."""
        context: list[str] = []
        if not self._started:
            self._started = True
            source = "resume" if self.loop.conversation.messages else "startup"
            said = self._told(await self.hooks.session_started(source))
            context += [said.context] if said.context else []
        said = self._told(await self.hooks.prompt_submitted(message.content))
        if said.blocked:
            text = f"A UserPromptSubmit hook blocked this message (not sent): {said.reason}"
            self._emit(TurnFailed(text))
            return TurnResult("failed", text)
        context += [said.context] if said.context else []
        if context:
            message = replace(message, content="\n\n".join([message.content, *context]))
        result = await self.loop.run_turn(message)
        active = False
        for _ in range(MAX_STOP_ROUNDS):
            if result.outcome != "done":
                break
            worker = self.loop.role == "worker"
            said = self._told(await self.hooks.stopping(active=active, worker=worker))
            if not said.blocked:
                break
            active = True
            result = await self.loop.run_turn(Message.user(f"[Stop hook] {said.reason}"))
        return result

    async def before_compacting(self, trigger: str) -> None:
        self._told(await self.hooks.before_compact(trigger))

    def waiting(self, request: ApprovalRequest) -> None:
        """A call waits for the person: the Notification hooks run beside it."""
        text = f"melgui needs your permission to use {request.call.name}"
        task = asyncio.get_running_loop().create_task(self._notify(text))
        self._notifying.add(task)
        task.add_done_callback(self._notifying.discard)

    async def _notify(self, text: str) -> None:
        self._told(await self.hooks.notified(text))

    def _told(self, said: Said) -> Said:
        for run in said.runs:
            if run.failed or run.effect or run.stdout.strip() or run.stderr.strip():
                self._emit(ContextNotice(run.headline(), "warning" if run.failed else "info"))
        return said

    async def ended(self, reason: str = "other") -> None:
        """The session closes: its SessionEnd hooks run, if it ever started."""
        if self._started:
            self._started = False
            self._told(await self.hooks.session_ended(reason))

    def close(self) -> None:
        for task in list(self._notifying):
            task.cancel()
