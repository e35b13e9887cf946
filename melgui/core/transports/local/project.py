"""What a small local model is told about the project, and the paths it may name.

A 135M model invents paths ("./project_root"). For such models the system message lists
the project's files, and the `path` of tools that need an existing file is constrained
to them (and list_dir to its folders) by the argument grammar, so a call always
names a real file or folder.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from melgui.core.protocol.catalog import ToolDef

MAX_FILES = 200  # more than this: no list, no constraint (the model must search)
LISTED_IN_PROMPT = 40
_SKIPPED_DIRS = frozenset(
    {"node_modules", "__pycache__", "venv", "build", "dist", "target", "site-packages"}
)


def project_files(root: str, limit: int = MAX_FILES) -> list[str] | None:
    """Relative paths of the project's files (hidden and build folders skipped), sorted;
    None when there are more than `limit` or the folder cannot be read."""
    found: list[str] = []
    pending = [root]
    budget = limit * 20  # entries looked at: a tree of empty folders ends the walk too
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            if folder == root:
                return None
            continue
        budget -= len(entries)
        if budget < 0:
            return None
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in _SKIPPED_DIRS:
                        pending.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    found.append(os.path.relpath(entry.path, root).replace(os.sep, "/"))
            except OSError:
                continue
            if len(found) > limit:
                return None
    return sorted(found)


def files_note(files: list[str]) -> str:
    """The line of the system message that names the project's files."""
    shown = files[:LISTED_IN_PROMPT]
    more = f" and {len(files) - len(shown)} more" if len(files) > len(shown) else ""
    listing = ", ".join(shown) if shown else "(none yet)"
    return f"\n\nFiles in the project folder: {listing}{more}."


def folders_of(files: list[str]) -> list[str]:
    """ "." and every folder that holds one of `files`, sorted."""
    folders = {"."}
    for path in files:
        parts = path.split("/")[:-1]
        folders.update("/".join(parts[: n + 1]) for n in range(len(parts)))
    return sorted(folders)


def with_known_paths(tool: ToolDef, files: list[str] | None) -> ToolDef:
    """`tool` whose `path` must name an existing file (read_file, edit_file) or folder
    (list_dir) of `files`; other tools, and an unknown file list, leave it unchanged."""
    if files is None:
        return tool
    if tool.path_argument is None or tool.must_exist is None:
        return tool
    allowed = files if tool.must_exist == "file" else folders_of(files)
    if not allowed:
        return tool
    properties: dict[str, Any] = dict(tool.parameters.get("properties", {}))
    properties[tool.path_argument] = {"type": "string", "enum": allowed}
    return dataclasses.replace(tool, parameters={**tool.parameters, "properties": properties})
