"""`session/update` onto melgui's own loop events, so the same chat, tool cards, inspector
and plans panel show a third-party agent.

The translator keeps a Conversation of what the agent said and did (the chat reloads
from it), and holds every tool call open until its update says it ended; calls still
open when the turn ends get a result then, so each call has exactly one.

A turn's text and reasoning together are kept up to MAX_TURN_TEXT characters, as an HTTP
leg's are: past it a note says melgui stopped showing more, and the rest is dropped, so
an agent that streams without end cannot grow melgui's memory. The turn goes on.
"""

from __future__ import annotations

import difflib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.loop_events import (
    AssistantReasoning,
    AssistantText,
    LoopEvent,
    MessageAdded,
    ToolCallFinished,
    ToolCallRequested,
    ToolCallStarted,
)
from melgui.core.protocol.messages import Conversation, Message, ResultStatus
from melgui.core.protocol.tooling import ResultPart
from melgui.core.protocol.views.agent_state import AgentState
from melgui.core.protocol.views.relayed_copies import plan_markdown as entries_markdown

PlanSink = Callable[[str, str], None]
Emit = Callable[[LoopEvent], None]
MAX_TURN_TEXT = 16 * 1024 * 1024  # characters of a turn's text and reasoning together


@dataclass
class OpenCall:
    call: ToolCall
    diff: str = ""  # the change its content showed, for the approval
    started: float = field(default_factory=time.monotonic)
    running: bool = False
    text: str = ""
    parts: tuple[ResultPart, ...] = ()


def block_text(block: Any) -> str:
    """A content block as text for the chat (non-text blocks named in brackets)."""
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(block.text)
    if kind == "resource_link":
        return f"[{block.name}]({block.uri})"
    if kind == "resource":
        return str(getattr(block.resource, "text", "") or f"[{block.resource.uri}]")
    return f"[{kind or 'content'}]"


def plan_markdown(entries: list[Any]) -> str:
    return entries_markdown([(e.content, e.status) for e in entries])


class UpdateTranslator:
    """One agent session's updates, turned into LoopEvents through `emit`."""

    def __init__(
        self, conversation: Conversation, emit: Emit, state: AgentState, plans: PlanSink | None
    ) -> None:
        self.conversation = conversation
        self.emit = emit
        self.state = state
        self.plans = plans
        self.calls: dict[str, OpenCall] = {}
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._user: list[str] = []
        self._said = 0  # characters of text and reasoning kept this turn
        self._over = False  # the turn passed MAX_TURN_TEXT

    # -- the updates ---------------------------------------------------------------------

    def update(self, update: Any) -> None:
        kind = update.session_update
        if kind != "user_message_chunk":
            self._flush_user()
        if kind == "agent_message_chunk":
            text = block_text(update.content)
            if self._room(len(text)):
                self._text.append(text)
                self.emit(AssistantText(text))
        elif kind == "agent_thought_chunk":
            text = block_text(update.content)
            if self._room(len(text)):
                self._reasoning.append(text)
                self.emit(AssistantReasoning(text))
        elif kind == "user_message_chunk":  # a loaded session's history, replayed
            self.flush_text()
            self._user.append(block_text(update.content))
        elif kind in ("tool_call", "tool_call_update"):
            self._tool(update)
        elif kind == "plan":
            if self.plans is not None:
                self.plans(f"{self.state.name}: plan", plan_markdown(update.entries))
            self.state.set_plan([(e.content, e.status) for e in update.entries])
        elif kind == "available_commands_update":
            self.state.set_commands([(c.name, c.description) for c in update.available_commands])
        elif kind == "current_mode_update":
            self.state.set_mode(update.current_mode_id)
        elif kind == "config_option_update":
            self.state.set_config(update.config_options)
        elif kind == "usage_update":
            self.state.set_usage(update.used, update.size)
        elif kind == "session_info_update":
            title = getattr(update, "title", None)
            if isinstance(title, str) and title:
                self.state.set_title(title)

    def _room(self, size: int) -> bool:
        """Whether `size` more characters fit in the turn; the first time not, a note."""
        if self._said + size <= MAX_TURN_TEXT:
            self._said += size
            return True
        if not self._over:
            self._over = True
            note = (
                f"\n\n[melgui stopped showing this agent's text: the turn passed "
                f"{MAX_TURN_TEXT:,} characters]\n"
            )
            self._text.append(note)
            self.emit(AssistantText(note))
        return False

    def user_sent(self, text: str) -> None:
        message = Message.user(text)
        self.conversation.append(message)
        self.emit(MessageAdded(message))

    def _flush_user(self) -> None:
        if self._user:
            self.user_sent("".join(self._user))
            self._user.clear()

    def flush_text(self, calls: tuple[ToolCall, ...] = ()) -> None:
        """What the agent wrote since the last message becomes one assistant message."""
        if not (self._text or self._reasoning or calls):
            return
        message = Message.assistant("".join(self._text), calls, "".join(self._reasoning))
        self._text.clear()
        self._reasoning.clear()
        self.conversation.append(message)
        self.emit(MessageAdded(message))
        for call in calls:
            self.emit(ToolCallRequested(call))

    # -- tool calls ----------------------------------------------------------------------

    def _tool(self, update: Any) -> None:
        open_call = self.calls.get(update.tool_call_id)
        if open_call is None:
            arguments = {"title": update.title or update.kind or "tool call"}
            if isinstance(update.raw_input, dict):
                arguments["input"] = update.raw_input
            call = ToolCall(update.tool_call_id, update.kind or "other", json.dumps(arguments))
            open_call = OpenCall(call)
            self.calls[call.id] = open_call
            self.flush_text((call,))
        if update.content:
            open_call.text, open_call.parts = _content(update.content)
            open_call.diff = content_diff(update.content) or open_call.diff
        if isinstance(update.raw_output, dict | str) and not open_call.text:
            raw = update.raw_output
            open_call.text = raw if isinstance(raw, str) else json.dumps(raw, indent=1)
        status = update.status
        if status == "in_progress" and not open_call.running:
            open_call.running = True
            self.emit(ToolCallStarted(open_call.call))
        elif status in ("completed", "failed"):
            self._finish(open_call, "ok" if status == "completed" else "error")

    def _finish(self, open_call: OpenCall, status: ResultStatus) -> None:
        self.calls.pop(open_call.call.id, None)
        duration = time.monotonic() - open_call.started
        text = open_call.text or ("done" if status == "ok" else status)
        event = ToolCallFinished(open_call.call, status, text, duration, open_call.parts)
        self.emit(event)
        result = Message.tool_result(open_call.call.id, text, status)
        self.conversation.append(result)
        self.emit(MessageAdded(result))

    def diff_of(self, call_id: str) -> str:
        """The diff an open call's updates carried ("" when none)."""
        open_call = self.calls.get(call_id)
        return open_call.diff if open_call is not None else ""

    def end_turn(self, cancelled: bool) -> None:
        """The turn ended: the text becomes a message, open calls get their one result."""
        self.flush_text()
        self._said, self._over = 0, False
        for open_call in list(self.calls.values()):
            self._finish(open_call, "cancelled" if cancelled else "interrupted")


def unified_diff(item: Any) -> str:
    """An ACP diff content item (path, old_text, new_text) as a unified diff."""
    return "".join(
        difflib.unified_diff(
            (item.old_text or "").splitlines(keepends=True),
            item.new_text.splitlines(keepends=True),
            fromfile=item.path,
            tofile=item.path,
        )
    )


def content_diff(items: list[Any] | None) -> str:
    """The diffs among a tool call's content, one after another ("" for none)."""
    return "".join(unified_diff(item) for item in items or [] if item.type == "diff")


def _content(items: list[Any]) -> tuple[str, tuple[ResultPart, ...]]:
    texts: list[str] = []
    parts: list[ResultPart] = []
    for item in items:
        if item.type == "diff":
            diff = unified_diff(item)
            texts.append(diff or f"{item.path}: unchanged")
            parts.append(ResultPart("text", text=diff))
        elif item.type == "terminal":
            texts.append(f"[terminal {item.terminal_id}]")
        else:
            texts.append(block_text(item.content))
    return "\n".join(texts), tuple(parts)
