"""A thread's changes as ACP `session/update` payloads (pure: no connection here).

A requested call becomes a `tool_call` (pending, with its kind, title, location and, for
writes and edits, the diff it would make); it goes `in_progress` when it runs and
`completed` or `failed` with its result when it is answered, every call exactly once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp import (
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ContentToolCallContent,
    FileEditToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    ToolKind,
    UserMessageChunk,
)

from melgui.core.protocol.calls import summarize
from melgui.core.protocol.catalog import ToolCatalog, ToolDef
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.tooling import ToolError
from melgui.core.thread.changes import Change, EntryAdded, EntryChanged, TextAppended
from melgui.core.thread.entries import (
    AssistantEntry,
    CallEntry,
    Entry,
    NoteEntry,
    UserEntry,
)
from melgui.tools.files.file_changes import PlannedChange, plan_edit, plan_write
from melgui.tools.settings import ToolSettings
from melgui.tools.workspace import Workspace

Update = AgentMessageChunk | AgentThoughtChunk | ToolCallStart | ToolCallProgress
ToolContent = ContentToolCallContent | FileEditToolCallContent

MAX_RESULT_CHARS = 20_000  # a tool result shown in the client's card; the model gets it all


def tool_kind(tool: ToolDef | None) -> ToolKind:
    """The ACP kind from what the definition says about the tool."""
    if tool is None:
        return "other"
    if tool.diff_preview:
        return "edit"
    properties = tool.parameters.get("properties", {})
    if tool.read_only:
        return "read" if tool.path_argument else "search"
    if "command" in properties:
        return "execute"
    return "other"


def merge_text(first: Any, second: Any) -> AgentMessageChunk | None:
    """Two consecutive agent text chunks as one; None for anything else."""
    if not (isinstance(first, AgentMessageChunk) and isinstance(second, AgentMessageChunk)):
        return None
    a, b = first.content, second.content
    if not (isinstance(a, TextContentBlock) and isinstance(b, TextContentBlock)):
        return None
    return update_agent_message_text(a.text + b.text)


class UpdateMapper:
    """Turns one thread's changes into updates; keeps the diffs shown at request."""

    def __init__(self, catalog: ToolCatalog, workspace: Workspace) -> None:
        self.catalog = catalog
        self.workspace = workspace
        self._diffs: dict[str, FileEditToolCallContent] = {}
        self._started_calls: dict[str, ToolCallStart] = {}
        self._running: set[str] = set()  # calls told in_progress
        self._ended: set[str] = set()  # calls told completed or failed

    def updates(self, change: Change) -> list[Update]:
        """The updates for one change of the thread."""
        match change:
            case EntryAdded(entry=AssistantEntry(text=text)):
                return [update_agent_message_text(text)] if text else []
            case TextAppended(text=text, reasoning=False):
                return [update_agent_message_text(text)] if text else []
            case EntryAdded(entry=CallEntry(call=call)):
                return [self._started(call)]
            case EntryChanged(entry=CallEntry() as entry):
                return self._call_changed(entry)
            case EntryAdded(entry=NoteEntry(note="retry") as note):
                text = f"Retrying in {note.delay:.0f}s after: {note.text} (try {note.attempt})\n"
                return [update_agent_thought_text(text)]
            case _:
                return []

    def _call_changed(self, entry: CallEntry) -> list[Update]:
        call_id = entry.call_id
        if entry.result is not None:
            if call_id in self._ended:
                return []
            self._ended.add(call_id)
            self._started_calls.pop(call_id, None)
            return [self._finished(entry.call, entry.result.status, entry.result.content)]
        if entry.phase == "running" and call_id not in self._running:
            self._running.add(call_id)
            return [update_tool_call(call_id, status="in_progress")]
        return []

    def subject(self, call: ToolCall) -> ToolCallUpdate:
        """The call a permission request is about, as its `tool_call` showed it."""
        shown = self._started_calls.get(call.id)
        if shown is None:
            return ToolCallUpdate(tool_call_id=call.id, title=call.name, status="pending")
        return ToolCallUpdate(
            tool_call_id=call.id,
            title=shown.title,
            kind=shown.kind,
            status="pending",
            content=shown.content,
            locations=shown.locations,
            raw_input=shown.raw_input,
        )

    def replay(self, entries: Sequence[Entry]) -> list[Update | UserMessageChunk]:
        """A stored conversation as the updates that would have shown it."""
        updates: list[Update | UserMessageChunk] = []
        for entry in entries:
            match entry:
                case UserEntry(message=message) if message.content:
                    updates.append(update_user_message_text(message.content))
                case AssistantEntry(text=text) if text:
                    updates.append(update_agent_message_text(text))
                case CallEntry(call=call, result=result):
                    updates.append(self._started(call, preview=False))
                    if result is not None:
                        updates.append(self._finished(call, result.status, result.content))
                case _:
                    pass
        return updates

    def _started(self, call: ToolCall, preview: bool = True) -> ToolCallStart:
        tool = self.catalog.get(call.name)
        arguments = call.parsed
        summary = summarize(call.name, arguments, tool=tool)
        content: list[ToolContent] = []
        diff = self._diff(tool, arguments) if preview else None
        if diff is not None:
            self._diffs[call.id] = diff
            content.append(diff)
        started = start_tool_call(
            call.id,
            f"{call.name}: {summary}" if summary else call.name,
            kind=tool_kind(tool),
            status="pending",
            content=content or None,
            locations=self._locations(tool, arguments),
            raw_input=arguments if arguments is not None else call.arguments,
        )
        self._started_calls[call.id] = started
        return started

    def _finished(self, call: ToolCall, status: str, content: str) -> ToolCallProgress:
        shown = content
        if len(shown) > MAX_RESULT_CHARS:
            shown = shown[:MAX_RESULT_CHARS] + f"\n… ({len(content):,} characters in all)"
        blocks: list[ToolContent] = []
        diff = self._diffs.pop(call.id, None)
        if diff is not None and status == "ok":
            blocks.append(diff)
        blocks.append(tool_content(text_block(shown)))
        return update_tool_call(
            call.id,
            status="completed" if status == "ok" else "failed",
            content=blocks,
            raw_output={"status": status, "content": shown},
        )

    def _locations(
        self, tool: ToolDef | None, arguments: dict[str, Any] | None
    ) -> list[ToolCallLocation] | None:
        if tool is None or tool.path_argument is None or arguments is None:
            return None
        raw = arguments.get(tool.path_argument)
        if not isinstance(raw, str) or not raw:
            return None
        return [ToolCallLocation(path=str(self.workspace.root / raw))]

    def _diff(
        self, tool: ToolDef | None, arguments: dict[str, Any] | None
    ) -> FileEditToolCallContent | None:
        """What a write or edit would change, read now (before it can run); None when the
        call would be refused (its result will say why) or shows nothing."""
        if tool is None or not tool.diff_preview or arguments is None:
            return None
        change = _planned(self.workspace, arguments)
        if change is None or change.unshowable is not None:
            return None
        return tool_diff_content(str(change.path), change.after, change.before)


def _planned(workspace: Workspace, arguments: dict[str, Any]) -> PlannedChange | None:
    path = arguments.get("path")
    limit = ToolSettings().edit_max_bytes
    try:
        if not isinstance(path, str):
            return None
        if isinstance(arguments.get("content"), str):
            return plan_write(workspace, path, arguments["content"], limit)
        old, new = arguments.get("old_string"), arguments.get("new_string")
        if isinstance(old, str) and isinstance(new, str):
            replace_all = arguments.get("replace_all") is True
            return plan_edit(workspace, path, old, new, replace_all, limit)
    except (ToolError, OSError):
        return None
    return None
