"""What the host sends of a session, as records a view applies in order: the thread's own
changes (`change`, the thread model's JSON with its own `seq`) and the host's records of
what only the host knows (a prompt taken, a turn's end, the queue run dry, a question
waiting or answered, a compaction waiting for a person, a turn cut by a crash, a new
thread after a restart).

A `message` record carries each message the conversation gains, for the view's mirror of
the conversation (what a pane saves and counts); the entries a view draws are the thread's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from melgui.core.context.preview import CompactionQuestion, question_to_json
from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.loop_events import (
    HistoryBranched,
    LoopEvent,
    MessageAdded,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
)
from melgui.core.protocol.views.agent_commands import AgentCommand
from melgui.core.thread.changes import Change
from melgui.core.thread.codec import change_to_json
from melgui.core.worktrees.model import Worktree
from melgui.host import wire
from melgui.host.changes import Record
from melgui.host.wire import RpcError

# A turn ends with one of these; a session whose last record is none of them after a
# `prompt` record was mid-turn.
TURN_ENDS = ("turn_end",)


def change_record(change: Change) -> Record:
    return {"type": "change", "change": change_to_json(change)}


def record_of(event: LoopEvent) -> Record | None:
    """The host's record of one loop event; None for what the thread's changes say."""
    match event:
        case MessageAdded(message=message):
            return {"type": "message", "message": message.to_json()}
        case TurnFinished(legs=legs, usage=usage):
            return {"type": "turn_end", "outcome": "done", "legs": legs, "usage": usage.to_json()}
        case TurnFailed(message=message):
            return {"type": "turn_end", "outcome": "failed", "message": message}
        case TurnCancelled():
            return {"type": "turn_end", "outcome": "cancelled"}
        case HistoryBranched(messages=messages, reason=reason):
            return {"type": "branched", "reason": reason,
                    "messages": [message.to_json() for message in messages]}  # fmt: skip
        case _:
            return None


def approval_record(call: ToolCall, reason: str, source: str) -> Record:
    return {"type": "approval", "id": call.id, "name": call.name,
            "arguments": call.arguments, "reason": reason, "source": source}  # fmt: skip


def compaction_record(question_id: str, question: CompactionQuestion) -> Record:
    """A compaction waiting for a person (the preview): what the dialog lists."""
    return {"type": "compaction", "id": question_id, "question": question_to_json(question)}


def question_record(request: ApprovalRequest) -> Record:
    """A question waiting: an ACP agent's carries its own answers (`options`, each
    [id, label, kind]) and the change it would make (`preview`, a unified diff)."""
    record = approval_record(request.call, request.judgement.reason, request.source)
    if request.options:
        record["options"] = [[o.option_id, o.label, o.kind] for o in request.options]
    if request.preview:
        record["preview"] = request.preview
    return record


def merge_records(earlier: Record, later: Record) -> Record | None:
    """Consecutive pieces of one streamed entry in one frame become one change, numbered
    as the run: `first` its first thread number, the change's `seq` its last."""
    if earlier.get("type") != "change" or later.get("type") != "change":
        return None
    a, b = earlier["change"], later["change"]
    if a["kind"] != "text_appended" or b["kind"] != "text_appended":
        return None
    if a["index"] != b["index"] or a["reasoning"] != b["reasoning"]:
        return None
    merged = {**b, "text": a["text"] + b["text"]}
    return {"type": "change", "change": merged, "first": earlier.get("first", a["seq"])}


def streamed_text(records: list[Record], *, reasoning: bool = False) -> str:
    """The text the records' changes streamed, in order: a streamed entry's first piece
    (in the entry added) and the pieces appended to it."""
    wanted = "reasoning" if reasoning else "assistant"
    pieces = []
    for record in records:
        change = record["change"] if record.get("type") == "change" else {}
        kind = change.get("kind")
        if kind == "text_appended" and change["reasoning"] == reasoning:
            pieces.append(change["text"])
        elif kind == "entry_added" and change["entry"]["kind"] == wanted:
            pieces.append(change["entry"]["text"])
    return "".join(pieces)


def worktree_to_json(worktree: Worktree) -> dict[str, str]:
    return {"path": str(worktree.path), "branch": worktree.branch, "base": worktree.base,
            "main": str(worktree.main)}  # fmt: skip


def worktree_from_json(data: dict[str, str]) -> Worktree:
    return Worktree(Path(data["path"]), str(data["branch"]), str(data["base"]), Path(data["main"]))


def agent_command(given: Any) -> AgentCommand:
    """An ACP agent as a view sends it: {name, argv, env?} (env kept in memory only)."""
    try:
        argv = tuple(str(word) for word in given["argv"])
        env = {str(k): str(v) for k, v in (given.get("env") or {}).items()}
        name = str(given["name"])
    except (KeyError, TypeError, AttributeError) as exc:
        raise RpcError(wire.INVALID_PARAMS, f"not an agent command: {given!r}") from exc
    if not argv or not name:
        raise RpcError(wire.INVALID_PARAMS, "an agent command needs a name and a program")
    return AgentCommand(name, argv, env)


def worktree_given(given: Any) -> Worktree | None:
    """A worker's own git worktree as a view sends it ({path, branch, base, main})."""
    if given is None:
        return None
    try:
        worktree = worktree_from_json(given)
    except (KeyError, TypeError) as exc:
        raise RpcError(wire.INVALID_PARAMS, f"not a worktree: {given!r}") from exc
    if not worktree.path.is_dir():
        raise RpcError(wire.INVALID_PARAMS, f"the worktree {str(worktree.path)!r} is not there")
    return worktree
