"""Rewind to a user message: put back the files the agent's calls changed from that message
on, and, if the person chooses, go on with the conversation from before it.

    plan = await plan_rewind(desk.checkpoints, session.conversation.messages, index, cid)
    plan.restore.conflicts          # files changed since by someone else: choose per file
    await rewind(desk.checkpoints, session, plan, choices, continue_from_there=True)

Continuing branches the conversation (the discarded messages stay in history) and starts
the next user message with a plain note of what was rewound, so the model knows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.calls import shorten
from melgui.core.protocol.messages import Message
from melgui.core.store.checkpoints.checkpointer import Checkpointer
from melgui.core.store.checkpoints.log import CheckpointRecord
from melgui.core.store.checkpoints.restore import Choice, RestorePlan


@dataclass(frozen=True)
class RewindPlan:
    index: int  # the user message rewound to
    text: str
    records: tuple[CheckpointRecord, ...]
    restore: RestorePlan


def calls_from(messages: Sequence[Message], index: int) -> list[str]:
    """The ids of the calls made from message `index` on."""
    return [call.id for m in messages[index:] if m.role == "assistant" for call in m.tool_calls]


def call_records(
    checkpoints: Checkpointer, call_ids: Sequence[str], conversation_id: str | None = None
) -> list[CheckpointRecord]:
    """The checkpoints of these calls (of this stored conversation when its id is known)."""
    wanted = set(call_ids)
    if conversation_id is not None:
        stored = checkpoints.log.for_conversation(conversation_id)
        found = [r for r in stored if r.call_id in wanted]
    else:
        found = checkpoints.for_calls(list(wanted))
    calls = [r for r in found if r.after is not None and not r.is_restore]
    return with_their_restores(checkpoints, calls)


def with_their_restores(
    checkpoints: Checkpointer, records: list[CheckpointRecord]
) -> list[CheckpointRecord]:
    """`records` and the restores (undo, redo, …) made of them since, in order: what the
    app itself did to those files is not someone else's edit."""
    if not records:
        return []
    ids = {r.id for r in records}
    result = list(records)
    for record in checkpoints.log.for_folder(checkpoints.folder, since=min(ids)):
        if record.is_restore and record.after is not None and ids & set(record.restores):
            ids.add(record.id)
            result.append(record)
    return sorted(result, key=lambda r: r.id)


async def plan_rewind(
    checkpoints: Checkpointer,
    messages: Sequence[Message],
    index: int,
    conversation_id: str | None = None,
) -> RewindPlan:
    if not 0 <= index < len(messages) or messages[index].role != "user":
        raise ValueError(f"message {index} is not a user message")
    records = call_records(checkpoints, calls_from(messages, index), conversation_id)
    plan = await checkpoints.plan([r.id for r in records])
    return RewindPlan(index, messages[index].content, tuple(records), plan)


def rewind_note(plan: RewindPlan, restored: CheckpointRecord | None) -> str:
    return rewound_note(plan.text, sorted({c.path for c in restored.files}) if restored else [])


def rewound_note(text: str, files: list[str]) -> str:
    """What the model is told of a rewind to before message `text` that put `files` back."""
    listed = ", ".join(files[:10]) + (f" and {len(files) - 10} more" if len(files) > 10 else "")
    what = (
        f"restored {len(files)} file(s) to how they were then: {listed}"
        if files
        else ("no files needed restoring")
    )
    return (
        f"[melgui] The person rewound this conversation to before their message "
        f"“{shorten(text, 60)}”; your replies and tool calls after it were discarded, "
        f"and melgui {what}."
    )


async def rewind(
    checkpoints: Checkpointer,
    session: AgentSession,
    plan: RewindPlan,
    choices: Mapping[str, Choice] | None = None,
    *,
    continue_from_there: bool,
) -> CheckpointRecord | None:
    """Restore the files; when `continue_from_there`, branch the conversation to before
    the message (raises RuntimeError while a turn runs, before touching any file)."""
    if continue_from_there and session.busy:
        raise RuntimeError("cannot rewind the conversation while a turn runs")
    restored = None
    if plan.records:
        restored = await checkpoints.restore([r.id for r in plan.records], choices)
    if continue_from_there:
        note = rewind_note(plan, restored)
        session.branch(session.conversation.messages[: plan.index], "rewind", note)
        session.preface(note)
    return restored
