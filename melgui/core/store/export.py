"""Export a conversation as Markdown (to read) or JSON (complete), and import JSON back."""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Sequence
from typing import Any

from melgui.core.protocol import bounded_json
from melgui.core.protocol.call_life import CALL_PHASES
from melgui.core.protocol.content import ImagePart
from melgui.core.protocol.messages import Message
from melgui.core.store.failures import markdown_line, place_notes
from melgui.core.store.records import NoteRecord, PlanRecord, ToolCallRecord
from melgui.core.store.store import Store
from melgui.core.thread.codec import hook_from_json, hook_to_json

FORMAT = "melgui-conversation"
FORMAT_VERSION = 1
MODEL_NOTE = "model"  # a note naming a model a later leg used


class ConversationImportError(ValueError):
    """The file is not a conversation this melgui can import; the message says why."""


# -- JSON ------------------------------------------------------------------------------


def export_json(store: Store, conversation_id: str) -> dict[str, Any]:
    """Everything stored about the conversation, as plain JSON data."""
    summary = store.summary(conversation_id)
    if summary is None:
        raise KeyError(conversation_id)
    messages = []
    for stored in store.messages(conversation_id):
        data = stored.message.to_json()
        data["created_at"] = stored.created_at
        if stored.partial:
            data["partial"] = True
        messages.append(data)
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "id": summary.id,
        "folder": summary.folder,
        "title": summary.title,
        "title_custom": summary.title_custom,
        "created_at": summary.created_at,
        "updated_at": summary.updated_at,
        "model": summary.model,
        "role": summary.role,
        "plan_mode": store.plan_mode(conversation_id),
        "messages": messages,
        "tool_calls": [_record_json(r) for r in store.calls.of(conversation_id)],
        "plans": [
            {
                "title": p.title,
                "markdown": p.markdown,
                "created_at": p.created_at,
                "call_id": p.call_id,
            }
            for p in store.plans(conversation_id)
        ],
        "notes": [
            {"kind": n.kind, "text": n.text, "at": n.at} for n in store.notes(conversation_id)
        ],
        "wire_log": [
            {"leg": w.leg, "direction": w.direction, "text": w.text, "at": w.at}
            for w in store.wire.read(conversation_id)
        ],
    }


def export_json_text(store: Store, conversation_id: str) -> str:
    return json.dumps(export_json(store, conversation_id), ensure_ascii=False, indent=2) + "\n"


def import_json(
    store: Store, data: str | bytes | dict[str, Any], *, folder: str | None = None
) -> str:
    """Store a conversation exported by `export_json`; returns its id (a new one on clash).

    Raises ConversationImportError with a one-line reason for anything unusable.
    """
    try:
        doc = json.loads(data) if isinstance(data, str | bytes) else data
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConversationImportError(f"not JSON: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ConversationImportError("not a melgui conversation export")
    if not isinstance(doc.get("version"), int) or doc["version"] > FORMAT_VERSION:
        raise ConversationImportError(
            f"export version {doc.get('version')!r} is newer than this melgui reads"
        )
    try:
        return _import(store, doc, folder)
    except (KeyError, TypeError, ValueError) as exc:
        raise ConversationImportError(f"malformed export: {type(exc).__name__}: {exc}") from exc


def _import(store: Store, doc: dict[str, Any], folder: str | None) -> str:
    cid = str(doc.get("id") or "")
    if not cid or store.exists(cid):
        cid = uuid.uuid4().hex
    messages = [(Message.from_json(m), bool(m.get("partial"))) for m in doc["messages"]]
    records = [_record_from_json(r) for r in doc.get("tool_calls", [])]
    with store.transaction():
        store.create_conversation(
            folder if folder is not None else str(doc["folder"]),
            title=str(doc.get("title", "")),
            model=str(doc.get("model", "")),
            role=str(doc.get("role", "")),
            conversation_id=cid,
            created_at=float(doc["created_at"]),
        )
        for seq, (message, partial) in enumerate(messages):
            store.put_message(cid, seq, message, partial=partial)
        for record in records:
            store.calls.put(cid, record)
        if doc.get("plan_mode"):
            store.set_plan_mode(cid, True)
        for plan in doc.get("plans", []):
            store.add_plan(
                cid,
                str(plan["title"]),
                str(plan["markdown"]),
                call_id=plan.get("call_id"),
                created_at=float(plan["created_at"]),
            )
        for note in doc.get("notes", []):
            store.add_note(cid, str(note["kind"]), str(note["text"]), at=float(note["at"]))
        store.wire.add_rows(
            cid,
            [
                (int(w["leg"]), str(w["direction"]), str(w["text"]), float(w["at"]))
                for w in doc.get("wire_log", [])
            ],
        )
        store.restore_metadata(
            cid,
            title=str(doc.get("title", "")),
            title_custom=bool(doc.get("title_custom", False)),
            updated_at=float(doc["updated_at"]),
            message_times=[float(m.get("created_at", doc["created_at"])) for m in doc["messages"]],
        )
    return cid


def _record_json(record: ToolCallRecord) -> dict[str, Any]:
    return {
        "call_id": record.call_id,
        "name": record.name,
        "arguments": record.arguments,
        "state": record.state,
        "decision": record.decision,
        "result_status": record.result_status,
        "result": record.result,
        "requested_at": record.requested_at,
        "decided_at": record.decided_at,
        "finished_at": record.finished_at,
        "duration": record.duration,
        "hooks": [hook_to_json(run) for run in record.hooks],
        "notes": list(record.notes),
    }


# Exports written before call phases were one vocabulary.
_LEGACY_STATES: dict[str, str | None] = {"awaiting_approval": "waiting", "done": None}


def _record_from_json(data: dict[str, Any]) -> ToolCallRecord:
    state = _LEGACY_STATES.get(data["state"], data["state"])
    if state is None:  # an older export's "done": the result status is the phase
        state = data.get("result_status") or "interrupted"
    if state not in CALL_PHASES:
        raise ValueError(f"unknown tool call state {data['state']!r}")
    return ToolCallRecord(
        call_id=str(data["call_id"]),
        name=str(data["name"]),
        arguments=str(data["arguments"]),
        state=state,
        decision=str(data.get("decision", "")),
        result_status=data.get("result_status"),
        result=data.get("result"),
        requested_at=float(data.get("requested_at", 0.0)),
        decided_at=data.get("decided_at"),
        finished_at=data.get("finished_at"),
        duration=data.get("duration"),
        hooks=tuple(hook_from_json(run) for run in data.get("hooks") or ()),
        notes=tuple(str(line) for line in data.get("notes") or ()),
    )


# -- Markdown --------------------------------------------------------------------------


def models_used(first: str, notes: Sequence[NoteRecord]) -> list[str]:
    """Every model the conversation was answered by, in the order first used: the one
    it was started with, then each "model" note (written when a leg used another)."""
    named = [first, *(note.text for note in notes if note.kind == MODEL_NOTE)]
    return list(dict.fromkeys(name for name in named if name))


def export_markdown(store: Store, conversation_id: str) -> str:
    """A readable document: messages in order, each tool call folded with its result."""
    summary = store.summary(conversation_id)
    if summary is None:
        raise KeyError(conversation_id)
    records = {r.call_id: r for r in store.calls.of(conversation_id)}
    plans_by_call: dict[str, list[PlanRecord]] = {}
    loose_plans: list[PlanRecord] = []
    for plan in store.plans(conversation_id):
        if plan.call_id:
            plans_by_call.setdefault(plan.call_id, []).append(plan)
        else:
            loose_plans.append(plan)
    stored = store.messages(conversation_id)
    results = {s.message.tool_call_id: s.message for s in stored if s.message.role == "tool"}
    out = [f"# {summary.title or 'Untitled conversation'}", ""]
    out.append(f"- Folder: `{summary.folder}`")
    out.append(f"- Started: {_when(summary.created_at)} · Last change: {_when(summary.updated_at)}")
    models = models_used(summary.model, store.notes(conversation_id))
    if models or summary.role:
        label = "Models" if len(models) > 1 else "Model"
        out.append(f"- {label}: {', '.join(models) or '?'} · Role: {summary.role or '?'}")
    out.append("")
    answered: set[str] = set()
    failures = place_notes(stored, store.notes(conversation_id))
    for index, item in enumerate([*stored, None]):
        while failures and failures[0][0] <= index:
            out += [markdown_line(failures.pop(0)[1]), ""]
        if item is None:
            break
        message = item.message
        if message.role == "tool":
            if message.tool_call_id not in answered:  # a result without its call
                out += _details(f"Result for {message.tool_call_id}", _fenced(message.content))
            continue
        if message.role == "system":
            out += _details("System prompt", _fenced(message.content))
            continue
        heading = "User" if message.role == "user" else "Assistant"
        out += [f"## {heading}", ""]
        if message.reasoning:
            out += _details("Thinking", _fenced(message.reasoning))
        if message.content:
            out += [message.content.rstrip(), ""]
        out += _parts(message)
        if item.partial:
            out += ["*(cut off: the app stopped while this answer was being written)*", ""]
        for call in message.tool_calls:
            answered.add(call.id)
            record = records.get(call.id)
            result = results.get(call.id)
            out += _call_details(call.name, call.arguments, record, result)
            for plan in plans_by_call.get(call.id, []):
                out += _plan(plan)
    for plan in loose_plans:
        out += _plan(plan)
    notes = store.notes(conversation_id)
    if notes:
        out += ["## Notes", ""]
        out += [f"- {_when(n.at)} — {n.kind}: {n.text}" for n in notes]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _call_details(
    name: str, arguments: str, record: ToolCallRecord | None, result: Message | None
) -> list[str]:
    status = (result.status if result else None) or (record.result_status if record else None)
    summary = f"Tool call: {name} — {status or 'no result'}"
    if record is not None and record.duration is not None:
        summary += f" ({record.duration:.2f} s)"
    if record is not None and record.decision:
        summary += f" · {record.decision}"
    body = ["**Arguments**", "", *_fenced(_pretty(arguments), "json")]
    text = result.content if result else (record.result if record else None)
    if text is not None:
        body += ["**Result**", "", *_fenced(text)]
    return _details(summary, body)


def _parts(message: Message) -> list[str]:
    """Attachments: images inline (data URLs), files and folders folded."""
    out: list[str] = []
    for part in message.parts:
        if isinstance(part, ImagePart):
            out += [f"![{part.name or 'image'}]({part.data_url()})", ""]
        else:
            note = f" ({part.note})" if part.note else ""
            out += _details(f"Attached {part.kind}: {part.path}{note}", _fenced(part.text))
    return out


def _details(summary: str, body: list[str]) -> list[str]:
    return ["<details>", f"<summary>{_html_escape(summary)}</summary>", "", *body, "</details>", ""]


def _plan(plan: PlanRecord) -> list[str]:
    return [f"### Plan: {plan.title}", "", plan.markdown.rstrip(), ""]


def _fenced(text: str, language: str = "text") -> list[str]:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{language}", text.rstrip("\n"), fence, ""]


def _pretty(arguments: str) -> str:
    try:
        return json.dumps(bounded_json.loads(arguments), ensure_ascii=False, indent=2)
    except ValueError:
        return arguments


def _html_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at))
