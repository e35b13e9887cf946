"""Compaction: keep a long conversation inside the model's window, losing nothing.

Before a leg that would not fit (the system message, the tools and every message
counted), first the older large tool results are elided (head and tail kept, with a
note that the file can be read again); if that is not enough the model itself
summarises the older part (goal, decisions, files touched, open tasks) in a leg with no
tools through the session's own transport. Leading system messages, the project
instructions (added by the transport on every leg) and the last two user turns with
everything after them stay whole; the pairing of calls and results stays valid. The
caller applies the result with AgentSession's branch, so the originals stay in history.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import replace
from typing import Protocol

from melgui.core.agent.context import ContextTracker, Fit, overflow_warning
from melgui.core.config.project_instructions import project_instructions_text
from melgui.core.protocol.catalog import Role, ToolCatalog
from melgui.core.protocol.context_window import ContextWindow, fix_for
from melgui.core.protocol.events import Done, StreamError, TextDelta, ToolCalls
from melgui.core.protocol.loop_events import ContextNotice, LoopEvent
from melgui.core.protocol.messages import Conversation, Message
from melgui.core.protocol.transport import LegRequest, Transport, WireSink
from melgui.core.protocol.views.compacted import (
    KEPT_HEAD,
    PINNED_HEAD,
    SUMMARY_ACK,
    SUMMARY_HEAD,
    Plan,
    Proposed,
    Review,
    is_summary,
)
from melgui.core.transports.instructions import system_text

ELIDE_OVER = 2000  # characters: tool results longer than this are elided when old
ELIDE_HEAD = 800
ELIDE_TAIL = 400
KEEP_USER_TURNS = 2
RENDER_RESULT = 600  # characters of each tool result the summary request shows
UNKNOWN_BUDGET = 200_000  # characters of history a summary request may carry, window unknown

SUMMARY_PROMPT = (
    "You summarise the earlier part of a conversation between a user and a coding agent "
    "so the agent can continue without it. Write Markdown with exactly these sections:\n"
    "## Goal\n## Decisions\n## Files touched\n## Open tasks\n"
    "Keep names, paths, commands, numbers and error messages exact. Do not invent anything. "
    "Be complete but brief."
)

WindowLookup = Callable[[str], Awaitable[ContextWindow]]
Replace = Callable[[list[Message], str], None]
Emit = Callable[[LoopEvent], None]


class CompactionHost(Protocol):
    """What compaction needs of the loop (AgentLoop has it all)."""

    transport: Transport
    conversation: Conversation
    model: str
    role: Role
    cwd: str
    catalog: ToolCatalog


class CompactionFailed(Exception):
    """The summary request failed; the message is for people."""


def split(messages: Sequence[Message], keep_turns: int = KEEP_USER_TURNS) -> Plan:
    """The older part ends where the last `keep_turns` user requests begin."""
    start = 0
    while start < len(messages) and messages[start].role == "system":
        start += 1
    body = list(messages[start:])
    users = [i for i, m in enumerate(body) if m.role == "user" and not is_summary(m)]
    cut = users[-keep_turns] if len(users) >= keep_turns else (users[0] if users else 0)
    return Plan(list(messages[:start]), body[:cut], body[cut:])


def elide_text(text: str) -> str:
    cut = len(text) - ELIDE_HEAD - ELIDE_TAIL
    note = (
        f"\n[… {cut:,} characters elided at compaction to save context; run the tool again "
        "(e.g. read_file) to see them …]\n"
    )
    return text[:ELIDE_HEAD] + note + text[-ELIDE_TAIL:]


def elide(
    messages: Sequence[Message], keep_from: int | None = None, keep: Collection[int] = ()
) -> tuple[list[Message], int]:
    """Large tool results elided (all, or those before index `keep_from`, except those at
    the indexes `keep`); and how many."""
    out: list[Message] = []
    count = 0
    for index, message in enumerate(messages):
        old = (keep_from is None or index < keep_from) and index not in keep
        if old and message.role == "tool" and len(message.content) > ELIDE_OVER:
            out.append(replace(message, content=elide_text(message.content)))
            count += 1
        else:
            out.append(message)
    return out, count


def elided_at(messages: Sequence[Message], keep: Collection[int] = ()) -> frozenset[int]:
    """The indexes `elide` would elide."""
    return frozenset(
        i
        for i, m in enumerate(messages)
        if i not in keep and m.role == "tool" and len(m.content) > ELIDE_OVER
    )


def render_for_summary(messages: Sequence[Message], budget: int, *, whole: bool = False) -> str:
    """The older part as plain text for the summary request, at most `budget` characters
    (an earlier summary without its pinned facts: melgui writes those again itself);
    `whole`: every result and call as it was (the items a person kept)."""
    lines: list[str] = []
    for message in messages:
        if is_summary(message):
            lines.append(f"[user]\n{message.content.partition(PINNED_HEAD)[0]}")
            continue
        if message.role == "tool":
            text = message.content
            if len(text) > RENDER_RESULT and not whole:
                text = text[: RENDER_RESULT // 2] + " […] " + text[-RENDER_RESULT // 2 :]
            lines.append(f"[tool result {message.tool_call_id} ({message.status})]\n{text}")
            continue
        if message.content:
            lines.append(f"[{message.role}]\n{message.content}")
        for call in message.tool_calls:
            arguments = call.arguments if whole else call.arguments[:400]
            lines.append(f"[tool call {call.id}] {call.name} {arguments}")
    text = "\n\n".join(lines)
    if len(text) <= budget:
        return text
    half = budget // 2
    return text[:half] + "\n\n[… the middle of the older part is left out …]\n\n" + text[-half:]


def last_leg_start(messages: Sequence[Message]) -> int:
    """Index of the last assistant message: its results are the ones the model reads next."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "assistant":
            return index
    return len(messages)


def summary_message(
    summary: str, kept: Sequence[Message] = (), pins: Sequence[str] = ()
) -> Message:
    """The message that stands for the older part: the model's summary, then what melgui
    keeps word for word (the items kept at this compaction, the pinned facts)."""
    text = SUMMARY_HEAD + summary.strip()
    if kept:
        text += KEPT_HEAD + render_for_summary(kept, sys.maxsize, whole=True)
    if pins:
        text += PINNED_HEAD + "\n".join(f"- {pin}" for pin in pins)
    return Message.user(text)


class Compactor:
    """Checks before each leg and compacts when needed; `compact(forced=True)` on demand."""

    def __init__(
        self,
        host: CompactionHost,
        tracker: ContextTracker,
        *,
        lookup: WindowLookup | None,
        replace: Replace,
        emit: Emit,
        wire: WireSink | None = None,
    ) -> None:
        self.host = host
        self.tracker = tracker
        self.lookup = lookup
        self._replace = replace
        self._emit = emit
        self._wire = wire
        self._warned_window: ContextWindow | None = None
        self._overflowing: ContextWindow | None = None
        # Awaited with "manual" or "auto" before the model summarises (the PreCompact hooks).
        self.before_compacting: Callable[[str], Awaitable[None]] | None = None
        # The facts every summary carries word for word (the conversation's pins).
        self.pinned: Callable[[], Sequence[str]] = tuple
        # Asked before anything is cut: a person's review (the window's preview).
        self.review: Review | None = None
        # The requests there were when a person said no to an automatic compaction: not
        # asked again before every leg of that turn, only once they send another.
        self._declined_at: int | None = None

    def system(self) -> str:
        """The system text the transport adds to each leg (estimated, not sent, here)."""
        messages = self.host.conversation.messages
        if messages and messages[0].role == "system":
            return ""
        if self.host.transport.name == "relay":
            return project_instructions_text(self.host.cwd)
        return system_text(self.host.role, self.host.cwd)

    def chars(self, messages: Sequence[Message]) -> int:
        tools = self.host.catalog.for_role(self.host.role)
        return self.tracker.chars(messages, tools, self.system())

    def fit(self, messages: Sequence[Message]) -> Fit:
        return self.tracker.fit_chars(self.chars(messages))

    async def refresh_window(self) -> None:
        if self.lookup is not None:
            self.tracker.window = await self.lookup(self.host.model)

    async def before_leg(self) -> None:
        """Make the next leg fit the window, compacting when it would not."""
        await self.refresh_window()
        chars = self.chars(self.host.conversation.messages)
        fit = self.tracker.fit_chars(chars)
        if not fit.fits:
            self._warn_small_default(fit)
            await self.compact(forced=False)
            chars = self.chars(self.host.conversation.messages)
            fit = self.tracker.fit_chars(chars)
            if not fit.fits and self._overflowing != self.tracker.window:
                self._overflowing = self.tracker.window  # said once, not before every leg
                warning = overflow_warning(fit.estimate, self.tracker.window)
                self._emit(ContextNotice(warning, "warning"))
        if fit.fits:
            self._overflowing = None
        self.tracker.sending(chars)

    def _warn_small_default(self, fit: Fit) -> None:
        window = self.tracker.window
        if window.source != "guess" or window.server != "ollama" or window == self._warned_window:
            return
        self._warned_window = window
        self._emit(
            ContextNotice(
                f"Ollama runs this model with a window of {window.tokens:,} tokens "
                f"({window.detail}); the conversation needs about {fit.estimate:,}, so melgui "
                f"compacts it. {fix_for('ollama')}",
                "warning",
            )
        )

    async def compact(self, *, forced: bool) -> bool:
        """Elide, then summarise, until the next leg fits (or, forced, summarise anyway).

        Returns whether the conversation changed. The summary request may fail: then
        the elided history is kept (if that changed anything) and a warning says why.
        """
        messages = list(self.host.conversation.messages)
        plan = split(messages)
        before = self.fit(messages).estimate
        keep: frozenset[int] = frozenset()
        old, elided = elide(plan.old)
        candidate = [*plan.prefix, *old, *plan.tail]
        summarise = bool(plan.old) and (forced or not self.fit(candidate).fits)
        pins = tuple(self.pinned())
        if self.review is not None and (summarise or elided):
            requests = sum(m.role == "user" for m in messages)
            if not forced and self._declined_at == requests:
                return False
            proposed = Proposed(
                plan, "manual" if forced else "auto", summarise, elided_at(plan.old),
                pins, self.tracker.chars_per_token, before,
            )  # fmt: skip
            answer = await self.review(proposed)
            if answer is None:
                self._declined_at = None if forced else requests
                self._emit(ContextNotice("Not compacted: the conversation is unchanged."))
                return False
            keep = answer
            old, elided = elide(plan.old, keep=keep)
            candidate = [*plan.prefix, *old, *plan.tail]
            summarise = bool(plan.old) and (forced or not self.fit(candidate).fits)
        summarized = 0
        if summarise:
            if self.before_compacting is not None:
                await self.before_compacting("manual" if forced else "auto")
            cut = [m for i, m in enumerate(old) if i not in keep]
            notice = f"Compacting: the model summarises {len(cut)} older messages…"
            self._emit(ContextNotice(notice))
            try:
                summary = await self.summarize(cut)
            except CompactionFailed as exc:
                self._emit(ContextNotice(f"Compaction could not summarise: {exc}", "warning"))
            else:
                kept = [plan.old[i] for i in sorted(keep)]
                candidate = [
                    *plan.prefix,
                    summary_message(summary, kept, pins),
                    Message.assistant(SUMMARY_ACK),
                    *plan.tail,
                ]
                summarized = len(cut)
        tail_elided = 0
        if not self.fit(candidate).fits:
            start = len(candidate) - len(plan.tail)
            kept_whole = {len(plan.prefix) + i for i in keep} if not summarized else set()
            last = start + last_leg_start(plan.tail)
            candidate, tail_elided = elide(candidate, keep_from=last, keep=kept_whole)
        if candidate == messages:
            if forced:
                self._emit(ContextNotice("Nothing to compact: the last two requests stay whole."))
            return False
        after = self.fit(candidate).estimate
        self._replace(candidate, self._note(summarized, elided + tail_elided, before, after))
        return True

    def _note(self, summarized: int, elided: int, before: int, after: int) -> str:
        parts = []
        if summarized:
            parts.append(f"{summarized} older messages summarised")
        if elided:
            parts.append(f"{elided} large tool results elided (head and tail kept)")
        window = self.tracker.window
        return (
            f"Compacted: {', '.join(parts)}; about {before:,} → {after:,} tokens of a "
            f"{window.label} window. The instructions and the last two requests are kept "
            "whole; the originals stay in history."
        )

    def summary_budget(self) -> int:
        """Characters of history one summary request may carry."""
        window = self.tracker.window.tokens
        if window is None:
            return UNKNOWN_BUDGET
        room = window - min(2048, window // 4) - len(SUMMARY_PROMPT)
        return max(2000, int(room * self.tracker.chars_per_token * 0.8))

    async def summarize(self, old: Sequence[Message]) -> str:
        host = self.host
        text = render_for_summary(old, self.summary_budget())
        request = LegRequest(
            model=host.model,
            messages=[
                {"role": "system", "content": SUMMARY_PROMPT},
                {"role": "user", "content": f"{text}\n\nWrite the summary now."},
            ],
            tools=(),
            tool_role=host.role,
            cwd=host.cwd,
            tool_choice="none",
        )
        parts: list[str] = []
        stream = host.transport.stream(request, self._wire)
        try:
            async for event in stream:
                match event:
                    case TextDelta(text=piece):
                        parts.append(piece)
                    case StreamError(message=message):
                        raise CompactionFailed(message)
                    case Done() | ToolCalls():
                        break
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
        summary = "".join(parts).strip()
        if not summary:
            raise CompactionFailed("the model answered the summary request with no text")
        return summary
