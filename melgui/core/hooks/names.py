"""Claude Code's tool names and argument names, to melgui's and back.

A hook written for Claude Code matches `Bash` and reads `tool_input.command`, matches
`Edit` and reads `tool_input.file_path` (absolute, as Claude Code gives it) and
`old_string`. melgui's tools are `run_command`, `edit_file` with `path`, … This module
maps a call's name and arguments into the hook's spelling, and a hook's `updatedInput`
back into melgui's. An MCP tool (`mcp__server__tool`) and any tool without a Claude Code
counterpart keep their name and arguments.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

# melgui's tool -> Claude Code's name and the argument renames (melgui's -> Claude's).
_TOOLS: dict[str, tuple[str, dict[str, str]]] = {
    "run_command": ("Bash", {}),
    "read_file": ("Read", {"path": "file_path"}),
    "write_file": ("Write", {"path": "file_path"}),
    "edit_file": ("Edit", {"path": "file_path"}),
    "grep": ("Grep", {}),
    "find_files": ("Glob", {}),
    "web_search": ("WebSearch", {}),
}
# Names a matcher may use for a melgui tool besides the main one.
_ALSO: dict[str, tuple[str, ...]] = {"edit_file": ("MultiEdit",)}
_PATHS = frozenset({"file_path"})


def claude_name(tool: str) -> str:
    """The name Claude Code gives melgui's `tool` (itself when it has none)."""
    return _TOOLS[tool][0] if tool in _TOOLS else tool


def matched_names(tool: str) -> tuple[str, ...]:
    """Every name a tool matcher may use for `tool`: Claude Code's, its aliases, melgui's."""
    return (claude_name(tool), *_ALSO.get(tool, ()), tool)


def claude_input(tool: str, arguments: Mapping[str, Any], cwd: str) -> dict[str, Any]:
    """`arguments` in Claude Code's names; file paths absolute under `cwd`."""
    renames = _TOOLS[tool][1] if tool in _TOOLS else {}
    shaped: dict[str, Any] = {}
    for name, value in arguments.items():
        key = renames.get(name, name)
        if key in _PATHS and isinstance(value, str):
            value = os.path.normpath(os.path.join(cwd, value))
        shaped[key] = value
    return shaped


def melgui_input(
    tool: str,
    updated: Mapping[str, Any],
    sent: Mapping[str, Any],
    original: Mapping[str, Any],
    cwd: str,
) -> dict[str, Any]:
    """A hook's `updatedInput` (Claude Code's names) as melgui's arguments.

    Keys the hook left out keep their values (`sent` is what it was given), a path it did
    not change stays as the model wrote it, a changed path inside `cwd` becomes relative.
    """
    renames = _TOOLS[tool][1] if tool in _TOOLS else {}
    back = {claude: ours for ours, claude in renames.items()}
    merged = {**sent, **updated}
    result: dict[str, Any] = {}
    for key, value in merged.items():
        name = back.get(key, key)
        if key in _PATHS and isinstance(value, str):
            if value == sent.get(key) and name in original:
                value = original[name]
            else:
                value = _within(value, cwd)
        result[name] = value
    return result


def _within(path: str, cwd: str) -> str:
    if not os.path.isabs(path):
        return path
    relative = os.path.relpath(path, cwd)
    return path if relative.startswith("..") else relative
