"""One model of a tool call's life, for the loop's events, the store and the inspector.

    requested ─┬─────────────────────────→ running ─→ ok | error | cancelled
               └→ waiting ─→ approved ───┘
                          └→ denied
    (a call cut by a crash or a kill ends as `interrupted`)

`CallPhase` is where a call is now; the ended phases are exactly the `ResultStatus` a
tool message carries. The store keeps the phase, the inspector and the chat show it with
the words and marks below, and `decision_text` says once how a call was let through.
"""

from __future__ import annotations

from typing import Literal, get_args

from melgui.core.protocol.approval import Approve, Decision, Deny

ResultStatus = Literal["ok", "denied", "error", "cancelled", "interrupted"]
RESULT_STATUSES: tuple[ResultStatus, ...] = get_args(ResultStatus)
CallPhase = Literal[
    "requested", "waiting", "running", "ok", "denied", "error", "cancelled", "interrupted"
]
CALL_PHASES: tuple[CallPhase, ...] = get_args(CallPhase)
OPEN_PHASES: frozenset[CallPhase] = frozenset({"requested", "waiting", "running"})

PHASE_LABEL: dict[CallPhase, str] = {
    "requested": "queued",
    "waiting": "waiting for approval",
    "running": "running",
    "ok": "done",
    "denied": "denied",
    "error": "failed",
    "cancelled": "cancelled",
    "interrupted": "interrupted",
}

PHASE_MARK: dict[CallPhase, str] = {
    "requested": "○",
    "waiting": "◆",
    "running": "◐",
    "ok": "✓",
    "denied": "⊘",
    "error": "✗",
    "cancelled": "■",
    "interrupted": "!",
}

# How a call was let through (or not), as the store keeps it: "" until decided.
DECISION_LABEL: dict[str, str] = {
    "auto": "ran without asking",
    "approved": "approved once",
    "approved:session": "approved for this conversation",
    "approved:project": "approved for this project (saved rule)",
    "approved:saved": "approved everywhere (saved rule)",
    "denied": "denied by you",
}
AUTO_BY = "auto:"  # "auto:<rule>": a rule let the call run without asking


def decision_label(decision: str) -> str:
    """A stored decision in words; "auto:<rule>" names the rule that let the call run."""
    if decision.startswith(AUTO_BY):
        return f"ran without asking: {decision[len(AUTO_BY) :]}"
    return DECISION_LABEL.get(decision, "")


def decision_text(decision: Decision) -> str:
    """ "approved", "approved:session", "approved:project", "approved:saved" or "denied"."""
    if isinstance(decision, Approve):
        return "approved" if decision.remember == "once" else f"approved:{decision.remember}"
    assert isinstance(decision, Deny)
    return "denied"


def is_open(phase: CallPhase) -> bool:
    """The call has not ended (a reopened conversation shows it as interrupted)."""
    return phase in OPEN_PHASES
