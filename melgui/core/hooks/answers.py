"""What a hook's exit code and stdout mean, event by event, as Claude Code documents them.

- Exit 0: success. stdout may be JSON: `decision` ("block", or the older "approve"),
  `reason`, `continue`/`stopReason`, and `hookSpecificOutput` with `permissionDecision`
  (allow, deny, ask), `permissionDecisionReason`, `updatedInput` (PreToolUse),
  `decision` {`behavior` allow or deny, `message`, `updatedInput`} (PermissionRequest)
  or `additionalContext` (PostToolUse, UserPromptSubmit, SessionStart). Plain stdout is
  context for UserPromptSubmit and SessionStart, and only shown elsewhere.
- Exit 2: a blocking error; stderr is the reason (the call is denied, the prompt
  blocked, the stop refused, or after a call its text goes to the model; at SessionEnd
  it is only shown).
- Any other exit code, a timeout, or a hook that cannot start: a non-blocking failure,
  shown on the card; the loop goes on as if the hook had said nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from melgui.core.hooks.runner import Ran
from melgui.core.protocol.judgement import Verdict
from melgui.core.protocol.tooling import HookEvent

BLOCKING = 2
_VERDICTS: dict[str, Verdict] = {"allow": "allow", "deny": "deny", "ask": "ask"}


@dataclass(frozen=True, slots=True)
class Answer:
    """One hook's answer: a verdict (deny/ask/allow for a call, deny to block a prompt or
    a stop), its reason, rewritten input, context for the model, and what it did in words."""

    verdict: Verdict | None = None
    reason: str = ""
    updated_input: dict[str, Any] | None = None
    context: str = ""
    problem: str = ""
    effect: str = ""


NOTHING = Answer()  # what a hook said that changes nothing (frozen: one will do)


def answer_of(event: HookEvent, ran: Ran) -> Answer:
    if ran.problem:
        return Answer(problem=ran.problem)
    if ran.exit_code == BLOCKING:
        reason = ran.stderr.strip() or "blocked by a hook (exit code 2, no message)"
        if event == "PostToolUse":
            return Answer(context=reason, effect="told the model: " + _short(reason))
        if event in ("PreToolUse", "PermissionRequest", "UserPromptSubmit", "Stop", "SubagentStop"):
            return Answer("deny", reason, effect=_blocked(event, reason))
        return Answer(effect="exit code 2: " + _short(reason))
    if ran.exit_code != 0:
        detail = _short(ran.stderr.strip()) or "no message"
        return Answer(problem=f"exit code {ran.exit_code}: {detail}")
    reply = _json(ran.stdout)
    if reply is None:
        if event in ("UserPromptSubmit", "SessionStart") and ran.stdout.strip():
            context = ran.stdout.strip()
            return Answer(context=context, effect="added context: " + _short(context))
        return NOTHING
    return _reply(event, reply)


def _reply(event: HookEvent, reply: dict[str, Any]) -> Answer:
    specific = reply.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    context = _string(specific.get("additionalContext"))
    reason = _string(reply.get("reason"))
    if reply.get("continue") is False:
        why = _string(reply.get("stopReason")) or reason or "the hook asked to stop"
        return Answer("deny", why, effect=_blocked(event, why))
    if event == "PreToolUse":
        return _before_call(reply, specific, reason)
    if event == "PermissionRequest":
        return _permission(specific)
    decision = reply.get("decision")
    if decision == "block" and event in ("UserPromptSubmit", "Stop", "SubagentStop"):
        why = reason or "blocked by a hook"
        return Answer("deny", why, context=context, effect=_blocked(event, why))
    if decision == "block" and event == "PostToolUse":
        told = "\n".join(t for t in (reason, context) if t)
        return Answer(context=told, effect="told the model: " + _short(told))
    if context:
        return Answer(context=context, effect="added context: " + _short(context))
    return NOTHING


def _before_call(reply: dict[str, Any], specific: dict[str, Any], reason: str) -> Answer:
    decision = specific.get("permissionDecision")
    why = _string(specific.get("permissionDecisionReason")) or reason
    if decision is None:  # the older top-level form
        decision = {"approve": "allow", "block": "deny"}.get(str(reply.get("decision")))
    updated = specific.get("updatedInput")
    updated = updated if isinstance(updated, dict) else None
    effects = []
    verdict = _VERDICTS.get(decision) if isinstance(decision, str) else None
    if verdict is not None:
        effects.append({"allow": "allowed", "deny": "denied", "ask": "asked"}[verdict])
        if why:
            effects[-1] += ": " + _short(why)
    if updated is not None:
        effects.append("rewrote the input")
    if verdict == "deny" and not why:
        why = "denied by a hook"
    return Answer(verdict, why, updated, effect="; ".join(effects))


def _permission(specific: dict[str, Any]) -> Answer:
    """A PermissionRequest hook's `decision`: allow (maybe with new input) or deny with a
    message, for the person; anything else leaves the question to them."""
    decision = specific.get("decision")
    decision = decision if isinstance(decision, dict) else {}
    behavior = decision.get("behavior")
    if behavior == "deny":
        why = _string(decision.get("message")) or "denied by a PermissionRequest hook"
        return Answer("deny", why, effect="denied: " + _short(why))
    if behavior != "allow":
        return NOTHING
    updated = decision.get("updatedInput")
    updated = updated if isinstance(updated, dict) else None
    effect = "allowed" + ("; rewrote the input" if updated is not None else "")
    return Answer("allow", "", updated, effect=effect)


def _blocked(event: HookEvent, reason: str) -> str:
    what = {
        "PreToolUse": "denied",
        "PermissionRequest": "denied",
        "UserPromptSubmit": "blocked the prompt",
        "Stop": "went on",
        "SubagentStop": "went on",
    }
    return f"{what.get(event, 'blocked')}: {_short(reason)}"


def _json(text: str) -> dict[str, Any] | None:
    text = text.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _string(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _short(text: str, limit: int = 120) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
