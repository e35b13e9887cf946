"""A thread's entries, changes and snapshots as plain JSON (dicts, lists, strings,
numbers), and back: what an agent host sends to the windows attached to it."""

from __future__ import annotations

import dataclasses
from typing import Any, assert_never, cast

from melgui.core.protocol.approval import AgentOption, Approve, Decision, Deny
from melgui.core.protocol.call_life import CALL_PHASES, RESULT_STATUSES
from melgui.core.protocol.events import ToolCall, Usage
from melgui.core.protocol.judgement import JudgedPart, JudgedRule, Judgement
from melgui.core.protocol.messages import Message
from melgui.core.protocol.tooling import HookRun, ResultPart
from melgui.core.thread.changes import (
    Change,
    EntriesReplaced,
    EntryAdded,
    EntryChanged,
    Snapshot,
    StateChanged,
    TextAppended,
)
from melgui.core.thread.entries import (
    AssistantEntry,
    BranchEntry,
    CallEntry,
    CallResult,
    Entry,
    NoteEntry,
    Origin,
    Pin,
    PlanEntry,
    Question,
    ReasoningEntry,
    ThreadState,
    Timing,
    UserEntry,
)

Json = dict[str, Any]


# -- the parts of a call ---------------------------------------------------------------


def _rule(rule: JudgedRule) -> Json:
    return {"text": rule.text, "scope": rule.scope, "pattern": rule.pattern}


def _rule_from(data: Json) -> JudgedRule:
    return JudgedRule(str(data["text"]), data["scope"], str(data.get("pattern", "")))


def judgement_to_json(judgement: Judgement) -> Json:
    return {
        "verdict": judgement.verdict,
        "source": judgement.source,
        "reason": judgement.reason,
        "command": judgement.command,
        "parts": [
            {
                "text": p.text,
                "start": p.start,
                "end": p.end,
                "verdict": p.verdict,
                "reason": p.reason,
                "rule": _rule(p.rule) if p.rule is not None else None,
            }
            for p in judgement.parts
        ],
        "always": {scope: [_rule(r) for r in rules] for scope, rules in judgement.always.items()},
        "learns": judgement.learns,
        "sandboxed": judgement.sandboxed,
    }


def judgement_from_json(data: Json) -> Judgement:
    parts = tuple(
        JudgedPart(
            str(p["text"]),
            int(p["start"]),
            int(p["end"]),
            p["verdict"],
            str(p["reason"]),
            _rule_from(p["rule"]) if p.get("rule") else None,
        )
        for p in data.get("parts") or ()
    )
    always = {
        scope: tuple(_rule_from(r) for r in rules)
        for scope, rules in (data.get("always") or {}).items()
    }
    return Judgement(
        data["verdict"],
        str(data.get("source", "")),
        str(data.get("reason", "")),
        str(data.get("command", "")),
        parts,
        always,
        bool(data.get("learns", False)),
        bool(data.get("sandboxed", False)),
    )


def decision_to_json(decision: Decision) -> Json:
    match decision:
        case Approve(remember=remember, rule=rule):
            return {"kind": "approve", "remember": remember, "rule": rule}
        case Deny(reason=reason):
            return {"kind": "deny", "reason": reason}
        case _:
            assert_never(decision)


def decision_from_json(data: Json) -> Decision:
    if data.get("kind") == "approve":
        return Approve(data.get("remember", "once"), str(data.get("rule", "")))
    if data.get("kind") == "deny":
        return Deny(str(data.get("reason", "")))
    raise ValueError(f"unknown decision {data.get('kind')!r}")


def _part(part: ResultPart) -> Json:
    return {
        "kind": part.kind,
        "text": part.text,
        "data": part.data,
        "mime_type": part.mime_type,
        "uri": part.uri,
    }


def _part_from(data: Json) -> ResultPart:
    return ResultPart(
        data["kind"],
        str(data.get("text", "")),
        str(data.get("data", "")),
        str(data.get("mime_type", "")),
        str(data.get("uri", "")),
    )


def _usage_from(data: Json | None) -> Usage | None:
    return Usage.model_validate(data) if data is not None else None


# -- entries ---------------------------------------------------------------------------


def entry_to_json(entry: Entry) -> Json:
    match entry:
        case UserEntry(id=id, message=message):
            return {"kind": "user", "id": id, "message": message.to_json()}
        case AssistantEntry(message=message):
            return {
                "kind": entry.kind,
                "id": entry.id,
                "text": entry.text,
                "streaming": entry.streaming,
                "leg": entry.leg,
                "message": _held(message, entry.text),
            }
        case ReasoningEntry():
            return {
                "kind": entry.kind,
                "id": entry.id,
                "text": entry.text,
                "streaming": entry.streaming,
                "leg": entry.leg,
            }
        case CallEntry():
            return _call_to_json(entry)
        case NoteEntry():
            return {
                "kind": "note",
                "id": entry.id,
                "note": entry.note,
                "text": entry.text,
                "level": entry.level,
                "attempt": entry.attempt,
                "delay": entry.delay,
                "status": entry.status,
            }
        case PlanEntry(id=id, title=title, markdown=markdown, call_id=call_id):
            return {
                "kind": "plan",
                "id": id,
                "title": title,
                "markdown": markdown,
                "call_id": call_id,
            }
        case BranchEntry(id=id, reason=reason, note=note, messages=messages, replaced=replaced):
            return {
                "kind": "branch",
                "id": id,
                "reason": reason,
                "note": note,
                "messages": messages,
                "replaced": [message.to_json() for message in replaced],
                "current": [message.to_json() for message in entry.current],
            }
        case _:
            assert_never(entry)


def _held(message: Message | None, text: str) -> Json | None:
    """A message an entry holds, without the text the entry has already (sent once)."""
    if message is None:
        return None
    data = message.to_json()
    if message.content == text and not message.parts:
        data.pop("content", None)
        data["same_text"] = True
    return data


def _held_from(data: Json | None, text: str) -> Message | None:
    if data is None:
        return None
    if data.get("same_text"):
        data = {**{k: v for k, v in data.items() if k != "same_text"}, "content": text}
    return Message.from_json(data)


def _call_to_json(entry: CallEntry) -> Json:
    question = entry.question
    result = entry.result
    return {
        "kind": "call",
        "id": entry.id,
        "call": {"id": entry.call.id, "name": entry.call.name, "arguments": entry.call.arguments},
        "phase": entry.phase,
        "arguments": entry.arguments,
        "problem": entry.problem,
        "judgement": judgement_to_json(entry.judgement) if entry.judgement else None,
        "question": None
        if question is None
        else {
            "options": [
                {"option_id": o.option_id, "label": o.label, "kind": o.kind}
                for o in question.options
            ],
            "draft": question.draft,
            "preview": question.preview,
        },
        "decision": entry.decision,
        "checkpoint": entry.checkpoint,
        "result": None
        if result is None
        else {
            "status": result.status,
            "content": result.content,
            "parts": [_part(p) for p in result.parts],
        },
        "timing": {"ran": entry.timing.ran, "waited": entry.timing.waited},
        "origin": {
            "kind": entry.origin.kind,
            "name": entry.origin.name,
            "source": entry.origin.source,
        },
        "leg": entry.leg,
        "hooks": [hook_to_json(run) for run in entry.hooks],
        "notes": list(entry.notes),
        "reply": _held(entry.reply, result.content if result is not None else ""),
        "ran_with": entry.ran_with,
    }


def _call_from_json(data: Json) -> CallEntry:
    raw = data["call"]
    phase = data["phase"]
    if phase not in CALL_PHASES:
        raise ValueError(f"call has unknown phase {phase!r}")
    question = data.get("question")
    result = data.get("result")
    if result is not None and result["status"] not in RESULT_STATUSES:
        raise ValueError(f"call has unknown result status {result['status']!r}")
    origin = data.get("origin") or {}
    timing = data.get("timing") or {}
    return CallEntry(
        id=str(data["id"]),
        call=ToolCall(str(raw["id"]), str(raw["name"]), str(raw["arguments"])),
        phase=phase,
        arguments=data.get("arguments"),
        problem=str(data.get("problem", "")),
        judgement=judgement_from_json(data["judgement"]) if data.get("judgement") else None,
        question=None
        if question is None
        else Question(
            tuple(
                AgentOption(str(o["option_id"]), str(o["label"]), str(o["kind"]))
                for o in question.get("options") or ()
            ),
            str(question.get("draft", "")),
            str(question.get("preview", "")),
        ),
        decision=str(data.get("decision", "")),
        checkpoint=data.get("checkpoint"),
        result=None
        if result is None
        else CallResult(
            result["status"],
            str(result["content"]),
            tuple(_part_from(p) for p in result.get("parts") or ()),
        ),
        timing=Timing(float(timing.get("ran", 0.0)), float(timing.get("waited", 0.0))),
        origin=Origin(
            origin.get("kind", "main"),
            str(origin.get("name", "")),
            str(origin.get("source", "main")),
        ),
        leg=int(data.get("leg", 0)),
        hooks=tuple(hook_from_json(run) for run in data.get("hooks") or ()),
        notes=tuple(str(line) for line in data.get("notes") or ()),
        reply=_held_from(data.get("reply"), str(result["content"]) if result is not None else ""),
        ran_with=data.get("ran_with"),
    )


def hook_to_json(run: HookRun) -> Json:
    return dataclasses.asdict(run)


def hook_from_json(data: Json) -> HookRun:
    """A hook run from its JSON; fields this version does not know are left out."""
    known = {f.name for f in dataclasses.fields(HookRun)}
    return HookRun(**{key: value for key, value in data.items() if key in known})


def entry_from_json(data: Json) -> Entry:
    """Inverse of entry_to_json; raises ValueError (or KeyError) on a malformed entry."""
    kind = data.get("kind")
    entry_id = str(data.get("id", ""))
    if kind == "user":
        return UserEntry(entry_id, Message.from_json(data["message"]))
    if kind in ("assistant", "reasoning"):
        text, streaming, leg = (
            str(data["text"]),
            bool(data.get("streaming")),
            int(data.get("leg", 0)),
        )
        if kind == "reasoning":
            return ReasoningEntry(entry_id, text, streaming, leg)
        return AssistantEntry(entry_id, text, streaming, leg, _held_from(data.get("message"), text))
    if kind == "call":
        return _call_from_json(data)
    if kind == "note":
        status = data.get("status")
        return NoteEntry(
            entry_id,
            data["note"],
            str(data["text"]),
            data.get("level", "info"),
            int(data.get("attempt", 0)),
            float(data.get("delay", 0.0)),
            int(status) if status is not None else None,
        )
    if kind == "plan":
        return PlanEntry(
            entry_id, str(data["title"]), str(data["markdown"]), str(data.get("call_id", ""))
        )
    if kind == "branch":
        return BranchEntry(
            entry_id,
            str(data["reason"]),
            str(data.get("note", "")),
            int(data.get("messages", 0)),
            tuple(Message.from_json(m) for m in data.get("replaced", ())),
            tuple(Message.from_json(m) for m in data.get("current", ())),
        )
    raise ValueError(f"unknown entry kind {kind!r}")


# -- the thread's state, changes, snapshots --------------------------------------------


def state_to_json(state: ThreadState) -> Json:
    return {
        "status": state.status,
        "outcome": state.outcome,
        "turns": state.turns,
        "leg": state.leg,
        "attempt": state.attempt,
        "legs": state.legs,
        "usage": state.usage.to_json(),
        "last_usage": state.last_usage.to_json() if state.last_usage is not None else None,
        "pins": [{"text": pin.text, "by": pin.by} for pin in state.pins],
    }


def state_from_json(data: Json) -> ThreadState:
    return ThreadState(
        data.get("status", "idle"),
        data.get("outcome", ""),
        int(data.get("turns", 0)),
        int(data.get("leg", 0)),
        int(data.get("attempt", 1)),
        int(data.get("legs", 0)),
        _usage_from(data.get("usage")) or Usage(),
        _usage_from(data.get("last_usage")),
        tuple(_pin_from(pin) for pin in data.get("pins") or ()),
    )


def _pin_from(data: Json) -> Pin:
    by = data.get("by", "person")
    if by not in ("person", "model"):
        raise ValueError(f"pin has unknown author {by!r}")
    return Pin(str(data["text"]), by)


def change_to_json(change: Change) -> Json:
    match change:
        case (
            EntryAdded(seq=seq, index=index, entry=entry)
            | EntryChanged(seq=seq, index=index, entry=entry)
        ):
            return {"kind": change.kind, "seq": seq, "index": index, "entry": entry_to_json(entry)}
        case TextAppended(seq=seq, index=index, text=text, reasoning=reasoning):
            return {
                "kind": change.kind,
                "seq": seq,
                "index": index,
                "text": text,
                "reasoning": reasoning,
            }
        case EntriesReplaced(seq=seq, entries=entries, reason=reason):
            return {
                "kind": change.kind,
                "seq": seq,
                "entries": [entry_to_json(e) for e in entries],
                "reason": reason,
            }
        case StateChanged(seq=seq, state=state):
            return {"kind": change.kind, "seq": seq, "state": state_to_json(state)}
        case _:
            assert_never(change)


def change_from_json(data: Json) -> Change:
    """Inverse of change_to_json; raises ValueError (or KeyError) on a malformed change."""
    kind, seq = data.get("kind"), int(data["seq"])
    if kind == "entry_added":
        return EntryAdded(seq, int(data["index"]), entry_from_json(data["entry"]))
    if kind == "entry_changed":
        return EntryChanged(seq, int(data["index"]), entry_from_json(data["entry"]))
    if kind == "text_appended":
        return TextAppended(
            seq, int(data["index"]), str(data["text"]), bool(data.get("reasoning", False))
        )
    if kind == "entries_replaced":
        entries = tuple(entry_from_json(e) for e in cast(list[Json], data["entries"]))
        return EntriesReplaced(seq, entries, str(data.get("reason", "")))
    if kind == "state_changed":
        return StateChanged(seq, state_from_json(data["state"]))
    raise ValueError(f"unknown change kind {kind!r}")


def snapshot_to_json(snapshot: Snapshot) -> Json:
    return {
        "thread_id": snapshot.thread_id,
        "seq": snapshot.seq,
        "entries": [entry_to_json(e) for e in snapshot.entries],
        "state": state_to_json(snapshot.state),
    }


def snapshot_from_json(data: Json) -> Snapshot:
    return Snapshot(
        str(data["thread_id"]),
        int(data["seq"]),
        tuple(entry_from_json(e) for e in data["entries"]),
        state_from_json(data["state"]),
    )
