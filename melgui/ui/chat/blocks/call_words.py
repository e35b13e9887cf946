"""A call in the words of its card's one line: an icon for its kind, a verb in the tense
of its phase ("Edit" while it waits, "Edited" once done), what it works on, and for a
change how many lines it adds and removes ("+2 −0")."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from melgui.core.protocol.call_life import CallPhase

# tool → (icon kind, verb before, verb after)
VERBS: dict[str, tuple[str, str, str]] = {
    "edit_file": ("edit", "Edit", "Edited"),
    "write_file": ("write", "Write", "Wrote"),
    "read_file": ("read", "Read", "Read"),
    "run_command": ("run", "Run", "Ran"),
    "grep": ("search", "Search", "Searched"),
    "find_files": ("search", "Find", "Found"),
    "web_search": ("fetch", "Search the web", "Searched the web"),
    "list_dir": ("list", "List", "Listed"),
    "write_plan": ("plan", "Plan", "Planned"),
    "spawn_agent": ("agent", "Start a worker", "Started a worker"),
    "send_agent": ("agent", "Message a worker", "Messaged a worker"),
    "read_agent": ("agent", "Read a worker", "Read a worker"),
    "open_pane": ("run", "Open a pane", "Opened a pane"),
    "send_keys": ("run", "Type in a pane", "Typed in a pane"),
    "read_pane": ("run", "Read a pane", "Read a pane"),
    "list_panes": ("list", "List panes", "Listed panes"),
    "remember": ("other", "Remember", "Remembered"),
    "recall": ("other", "Recall", "Recalled"),
    "create_pdf": ("write", "Make a PDF", "Made a PDF"),
}
CHANGES = ("edit_file", "write_file")


@dataclass(frozen=True, slots=True)
class CallLine:
    kind: str  # a key of look.icons.KIND_ICONS
    verb: str
    target: str  # the call's summary: a path, a command
    added: int | None = None  # lines, for a change
    removed: int | None = None

    @property
    def counts(self) -> str:
        if self.added is None or self.removed is None:
            return ""
        return f"+{self.added} −{self.removed}"


def call_line(
    name: str, arguments: dict[str, Any] | None, summary: str, phase: CallPhase
) -> CallLine:
    done = phase == "ok"
    if name in VERBS:
        kind, before, after = VERBS[name]
        verb = after if done else before
    elif name.startswith("mcp__"):
        kind, verb = "mcp", name.split("__", 2)[-1].replace("_", " ")
    else:
        kind, verb = "other", name
    added, removed = line_counts(name, arguments)
    return CallLine(kind, verb, summary, added, removed)


def line_counts(name: str, arguments: dict[str, Any] | None) -> tuple[int | None, int | None]:
    """Lines an edit or a write adds and removes, from its arguments."""
    if arguments is None or name not in CHANGES:
        return None, None
    if name == "write_file":
        content = arguments.get("content")
        return (len(str(content).splitlines()), 0) if content is not None else (None, None)
    old, new = arguments.get("old_string"), arguments.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str):
        return None, None
    added = removed = 0
    matcher = difflib.SequenceMatcher(a=old.splitlines(), b=new.splitlines(), autojunk=False)
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        if tag != "equal":
            removed += a2 - a1
            added += b2 - b1
    return added, removed


def change_lines(name: str, arguments: dict[str, Any] | None, limit: int) -> list[str]:
    """The change a call makes as diff lines ("+…", "-…", " …"), at most `limit` of them
    (the last one then says how many more there are)."""
    if arguments is None or name not in CHANGES:
        return []
    if name == "write_file":
        lines = ["+" + line for line in str(arguments.get("content", "")).splitlines()]
    else:
        old = str(arguments.get("old_string", "")).splitlines()
        new = str(arguments.get("new_string", "")).splitlines()
        lines = [
            line
            for line in difflib.unified_diff(old, new, n=2, lineterm="")
            if not line.startswith(("---", "+++", "@@"))
        ]
    if len(lines) > limit:
        return [*lines[: limit - 1], f"… {len(lines) - limit + 1} more lines"]
    return lines


def output_lines(content: str, limit: int) -> list[str]:
    """A result's text as shown in its card: without run_command's "exit_code=N" line,
    its last `limit` lines (the end of a command's output says how it went)."""
    first, _, rest = content.partition("\n")
    text = rest if first.startswith("exit_code=") else content
    lines = text.rstrip("\n").splitlines()
    if len(lines) > limit:
        return [f"… {len(lines) - limit + 1} lines before", *lines[-(limit - 1) :]]
    return lines
