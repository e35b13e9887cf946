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

from melgui.core.config.project_files import TooManyEntries, walk_files
from melgui.core.protocol.catalog import ToolDef

MAX_FILES = 200  # more than this: no list, no constraint (the model must search)
LISTED_IN_PROMPT = 40
_SKIPPED_DIRS = frozenset(
    {"node_modules", "__pycache__", "venv", "build", "dist", "target", "site-packages"}
)


# A path inside the project: no absolute path, no ".." (every part begins with at most
# one dot, then a character that is not one).
CONFINED_PATH = r"^(\.?[A-Za-z0-9_\-][A-Za-z0-9_.\-]*/)*\.?[A-Za-z0-9_\-][A-Za-z0-9_.\-]*$"
CONFINED: dict[str, Any] = {"type": "string", "pattern": CONFINED_PATH}


def project_files(root: str, limit: int = MAX_FILES, *, truncate: bool = False) -> list[str] | None:
    """Relative paths of the project's files (hidden, .gitignore'd and build folders
    skipped), sorted; None when the folder cannot be read or there are more than `limit`
    (with `truncate`, the first `limit` found instead)."""
    try:
        os.scandir(root).close()
    except OSError:
        return None
    found: list[str] = []
    # Entries looked at: a tree of empty folders ends the walk too.
    walk = walk_files(root, skip_dirs=_SKIPPED_DIRS, max_entries=limit * 20)
    try:
        for path in walk:
            found.append(path)
            if len(found) > limit:
                return sorted(found[:limit]) if truncate else None
    except TooManyEntries:
        return sorted(found[:limit]) if truncate else None
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


def with_known_paths(tool: ToolDef, files: list[str] | None, *, complete: bool = True) -> ToolDef:
    """`tool` whose `path` must name an existing file (read_file, edit_file) or folder
    (list_dir) of `files`, or, when `files` is not `complete` (the project has more), one
    of them or any path inside the project; a path that names a new file (write_file)
    is free but inside the project. An unknown file list leaves the tool unchanged."""
    if files is None or tool.path_argument is None:
        return tool
    if tool.must_exist is None:
        return _with_path(tool, CONFINED)
    allowed = files if tool.must_exist == "file" else folders_of(files)
    if not allowed:
        return tool
    known = {"type": "string", "enum": allowed}
    return _with_path(tool, known if complete else {"anyOf": [known, CONFINED]})


def named_files(text: str, files: list[str]) -> list[str]:
    """The files of `files` that `text` names by their path, longest first (so that
    "docs/faq.md" wins over a "faq.md" it contains)."""
    lowered = text.lower()
    named = [path for path in files if path.lower() in lowered]
    return sorted(named, key=len, reverse=True)[:1] if named else []


def _with_path(tool: ToolDef, schema: dict[str, Any]) -> ToolDef:
    assert tool.path_argument is not None
    properties: dict[str, Any] = dict(tool.parameters.get("properties", {}))
    properties[tool.path_argument] = schema
    return dataclasses.replace(tool, parameters={**tool.parameters, "properties": properties})
