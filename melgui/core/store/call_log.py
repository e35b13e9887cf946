"""CallLog: the history's tool calls. Each call's phase, decision and result, as the
journal records them, and what is asked of all calls together: the commands run, what
ran without asking and by which rule, every decided call for trying rules on."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from contextlib import suppress
from dataclasses import replace

from melgui.core.protocol import bounded_json
from melgui.core.protocol.call_life import AUTO_BY, OPEN_PHASES, CallPhase
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.tooling import HookRun
from melgui.core.store.records import AllowedCall, RecordedCall, ToolCallRecord
from melgui.core.thread.codec import hook_from_json, hook_to_json

_RECORD = (
    "SELECT call_id, name, arguments, state, decision, result_status, result, requested_at,"
    " decided_at, finished_at, duration, hooks, notes FROM tool_calls"
)
_OPEN = ", ".join("?" * len(OPEN_PHASES))


class CallLog:
    """The tool calls of one open history (`store.calls`), on the store's connection."""

    def __init__(self, conn: sqlite3.Connection, clock: Callable[[], float]) -> None:
        self._conn = conn
        self._clock = clock

    def requested(self, cid: str, call: ToolCall) -> None:
        self._conn.execute(
            "INSERT INTO tool_calls (conversation_id, call_id, name, arguments, state,"
            " requested_at) VALUES (?, ?, ?, ?, 'requested', ?)"
            " ON CONFLICT (conversation_id, call_id) DO NOTHING",
            (cid, call.id, call.name, call.arguments, self._clock()),
        )

    def phase(self, cid: str, call_id: str, state: CallPhase) -> None:
        self._conn.execute(
            "UPDATE tool_calls SET state = ? WHERE conversation_id = ? AND call_id = ?",
            (state, cid, call_id),
        )

    def decided(self, cid: str, call_id: str, decision: str) -> None:
        self._conn.execute(
            "UPDATE tool_calls SET decision = ?, decided_at = ? WHERE conversation_id = ?"
            " AND call_id = ?",
            (decision, self._clock(), cid, call_id),
        )

    def ran_with(self, cid: str, call_id: str, arguments: str) -> None:
        """The call ran with `arguments` (JSON), not the model's: a hook changed them."""
        self._conn.execute(
            "UPDATE tool_calls SET ran_arguments = ? WHERE conversation_id = ? AND call_id = ?",
            (arguments, cid, call_id),
        )

    def finished(
        self, cid: str, call_id: str, status: str, result: str, duration: float | None
    ) -> None:
        self._conn.execute(
            "UPDATE tool_calls SET state = ?, result_status = ?, result = ?,"
            " finished_at = ?, duration = ?,"
            " decision = CASE WHEN decision = '' AND ? = 'denied' THEN 'denied' ELSE decision END"
            " WHERE conversation_id = ? AND call_id = ?",
            (status, status, result, self._clock(), duration, status, cid, call_id),
        )

    def steps(
        self, cid: str, call_id: str, hooks: tuple[HookRun, ...], notes: tuple[str, ...]
    ) -> None:
        """The hooks that ran around a call and the lines the steps after it added."""
        self._conn.execute(
            "UPDATE tool_calls SET hooks = ?, notes = ? WHERE conversation_id = ? AND call_id = ?",
            (_hooks_json(hooks), json.dumps(list(notes)), cid, call_id),
        )

    def put(self, cid: str, record: ToolCallRecord) -> None:
        """Write a whole record (import)."""
        self._conn.execute(
            "INSERT OR REPLACE INTO tool_calls (conversation_id, call_id, name, arguments,"
            " state, decision, result_status, result, requested_at, decided_at, finished_at,"
            " duration, hooks, notes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                cid,
                record.call_id,
                record.name,
                record.arguments,
                record.state,
                record.decision,
                record.result_status,
                record.result,
                record.requested_at,
                record.decided_at,
                record.finished_at,
                record.duration,
                _hooks_json(record.hooks),
                json.dumps(list(record.notes)),
            ),
        )

    def of(self, cid: str) -> list[ToolCallRecord]:
        """The calls of conversation `cid`, in the order they were asked for."""
        rows = self._conn.execute(
            f"{_RECORD} WHERE conversation_id = ? ORDER BY requested_at, rowid", (cid,)
        )
        return [_call_record(row) for row in rows]

    def to_reopen(self, cid: str) -> list[ToolCallRecord]:
        """What reopening `cid` needs of its calls before it is shown, in order: the calls
        left open (a process stopped in their middle: the repairs) and those with hook
        runs or notes (their cards show them). Its calls' records (`of`, the inspector's)
        are many more: 4,000 in a 10,000-message conversation, read after."""
        rows = self._conn.execute(
            f"{_RECORD} WHERE conversation_id = ? AND (state IN ({_OPEN})"
            " OR hooks != '[]' OR notes != '[]') ORDER BY requested_at, rowid",
            (cid, *sorted(OPEN_PHASES)),
        )
        return [_call_record(row) for row in rows]

    def recent_commands(self, limit: int = 500) -> list[str]:
        """`command` of past run_command calls in kept conversations, newest first, once each."""
        rows = self._conn.execute(
            "SELECT t.arguments FROM tool_calls t JOIN conversations c"
            " ON c.id = t.conversation_id WHERE t.name = 'run_command'"
            " AND c.deleted_at IS NULL ORDER BY t.requested_at DESC, t.rowid DESC"
        )
        commands: dict[str, None] = {}
        for (arguments,) in rows:
            with suppress(ValueError, TypeError, AttributeError):  # not a JSON object
                command = bounded_json.loads(arguments).get("command")
                if isinstance(command, str) and command.strip():
                    commands.setdefault(command, None)
            if len(commands) >= limit:
                break
        return list(commands)

    def allowed_without_asking(self, limit: int = 200) -> list[AllowedCall]:
        """The log of calls that ran without asking and the rule that allowed each,
        newest first, over kept conversations."""
        rows = self._conn.execute(
            "SELECT t.conversation_id, t.call_id, t.name, t.arguments, t.decision,"
            " t.decided_at FROM tool_calls t JOIN conversations c ON c.id = t.conversation_id"
            " WHERE (t.decision = 'auto' OR t.decision LIKE 'auto:%')"
            " AND c.deleted_at IS NULL ORDER BY t.decided_at DESC, t.rowid DESC LIMIT ?",
            (limit,),
        )
        return [
            AllowedCall(cid, call_id, name, arguments, decision[len(AUTO_BY) :], decided_at)
            for cid, call_id, name, arguments, decision, decided_at in rows
        ]

    def recorded(self, conversations: int | None = None) -> list[RecordedCall]:
        """Every decided call of the last `conversations` kept conversations (by last
        change; None: all), oldest first, for trying rules on the history."""
        limit = -1 if conversations is None else conversations
        rows = self._conn.execute(
            "SELECT t.conversation_id, t.call_id, t.name, t.arguments, t.decision,"
            " t.decided_at, t.ran_arguments FROM tool_calls t JOIN (SELECT id FROM conversations"
            " WHERE deleted_at IS NULL ORDER BY updated_at DESC LIMIT ?) c"
            " ON c.id = t.conversation_id WHERE t.decision != ''"
            " ORDER BY t.requested_at, t.rowid",
            (limit,),
        )
        return [RecordedCall(*row) for row in rows]


def _hooks_json(hooks: tuple[HookRun, ...]) -> str:
    return json.dumps([hook_to_json(run) for run in hooks]) if hooks else "[]"


def _call_record(row: tuple[object, ...]) -> ToolCallRecord:
    record = ToolCallRecord(*row[:-2])  # type: ignore[arg-type]
    hooks, notes = row[-2:]
    if hooks == notes == "[]":
        return record
    with suppress(ValueError, TypeError):  # a damaged cell: the call shows without them
        runs = tuple(hook_from_json(run) for run in json.loads(str(hooks)))
        lines = tuple(str(line) for line in json.loads(str(notes)))
        record = replace(record, hooks=runs, notes=lines)
    return record
