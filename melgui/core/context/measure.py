"""What the context meter shows of a session, measured where the session runs: how much of
the model's window the next request takes, the tokens of this turn and of the whole
conversation, what the server reported. A window measures its own sessions with
`measure`; the melgui host measures its sessions the same way and sends the result
(`context/measure`, docs/host-protocol.md), which `measure_from_json` reads back, so the
meter draws one thing from either.

    shown = measure(session)                  # in the process the session runs in
    sent = measure_to_json(shown)             # over the host's wire, and back
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast, get_args

from melgui.core.agent.context import answer_reserve
from melgui.core.agent.session import AgentSession
from melgui.core.context.breakdown import KINDS, Breakdown, Kind, Slice
from melgui.core.protocol.context_window import ContextWindow, ServerKind, WindowSource
from melgui.core.protocol.events import Usage
from melgui.core.protocol.views.compacted import summary_text


@dataclass(frozen=True)
class ContextMeasure:
    used: int  # tokens the next request takes, about
    window: ContextWindow
    calibrated: bool  # the estimate's ratio came from the server's own counts
    turn: Usage  # this turn's tokens, as the server reported them
    total: Usage  # the conversation's
    reported: bool  # the server has reported token usage at all
    warning: str  # the last truncation warning, in words
    has_summary: bool  # the conversation holds a compaction summary (it can be edited)

    @property
    def fraction(self) -> float | None:
        return None if self.window.tokens is None else self.used / self.window.tokens

    @property
    def limit(self) -> float:
        """The fill past which the next answer may not fit (what is kept for it)."""
        tokens = self.window.tokens
        return 1.0 if not tokens else (tokens - answer_reserve(tokens)) / tokens


def measure(session: AgentSession, *, as_sent: bool = False) -> ContextMeasure:
    """`session`'s context now; `as_sent`: as the loop measured it before the leg that just
    went (its count stands, the conversation is not estimated again)."""
    tracker = session.context
    if as_sent:
        used = tracker.tokens(tracker.last_chars)
    else:
        used = session.compactor.fit(session.conversation.messages).estimate
    return ContextMeasure(
        used=used,
        window=tracker.window,
        calibrated=tracker.calibrated,
        turn=tracker.turn_usage,
        total=session.loop.usage,
        reported=tracker.last_prompt_tokens is not None,
        warning=tracker.warning,
        has_summary=summary_text(session.conversation.messages) is not None,
    )


def measure_to_json(shown: ContextMeasure) -> dict[str, Any]:
    window = shown.window
    return {
        "used": shown.used,
        "window": {
            "tokens": window.tokens,
            "source": window.source,
            "detail": window.detail,
            "server": window.server,
        },
        "calibrated": shown.calibrated,
        "turn": shown.turn.model_dump(),
        "total": shown.total.model_dump(),
        "reported": shown.reported,
        "warning": shown.warning,
        "has_summary": shown.has_summary,
    }


def measure_from_json(data: dict[str, Any]) -> ContextMeasure:
    window = data["window"]
    source = window.get("source")
    server = window.get("server") or ""
    tokens = window.get("tokens")
    return ContextMeasure(
        used=int(data["used"]),
        window=ContextWindow(
            int(tokens) if tokens is not None else None,
            cast(WindowSource, source if source in get_args(WindowSource) else "unknown"),
            str(window.get("detail") or ""),
            cast(ServerKind, server if server in get_args(ServerKind) else ""),
        ),
        calibrated=bool(data.get("calibrated")),
        turn=Usage.model_validate(data.get("turn") or {}),
        total=Usage.model_validate(data.get("total") or {}),
        reported=bool(data.get("reported")),
        warning=str(data.get("warning") or ""),
        has_summary=bool(data.get("has_summary")),
    )


def breakdown_to_json(shown: Breakdown) -> dict[str, Any]:
    return {
        "slices": [[s.kind, s.label, s.tokens, s.message, s.call_id] for s in shown.slices],
        "total": shown.total,
        "exact": shown.exact,
        "calibrated": shown.calibrated,
    }


def breakdown_from_json(data: dict[str, Any]) -> Breakdown:
    slices = tuple(
        Slice(cast(Kind, kind), str(label), int(tokens), message, str(call_id or ""))
        for kind, label, tokens, message, call_id in data.get("slices") or ()
        if kind in KINDS
    )
    return Breakdown(slices, int(data.get("total") or 0), bool(data.get("exact")),
                     bool(data.get("calibrated")))  # fmt: skip
