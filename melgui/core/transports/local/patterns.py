"""Search patterns a small model may write: ones that can find something in the project.

SmolLM2-135M invented grep patterns ("search_for_greeting", "[a-zA-Z0-9_*") and glob
patterns ("python-10.2") that matched nothing, so its answer had nothing to say. As read
paths are held to files that exist, a small model's `grep` pattern is held to the words
of the request that occur in the project's files, and its `find_files` pattern to
`*.<extension>` of the extensions the project has (the one the request names, when it
names one). When nothing qualifies the tool is left as it is.
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Any

from melgui.core.protocol.catalog import ToolDef

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
# Words of a request that are about searching, not what to search for.
REQUEST_WORDS = frozenset(
    [
        "the",
        "and",
        "for",
        "which",
        "what",
        "where",
        "file",
        "files",
        "search",
        "project",
        "word",
        "words",
        "find",
        "mentions",
        "mention",
        "look",
        "tell",
        "show",
        "this",
        "that",
        "them",
        "with",
        "from",
        "into",
    ]
)
# Names people use for a kind of file, and its extensions.
KINDS: dict[str, tuple[str, ...]] = {
    "python": ("py",),
    "yaml": ("yaml", "yml"),
    "markdown": ("md",),
    "javascript": ("js",),
    "typescript": ("ts",),
    "json": ("json",),
    "toml": ("toml",),
    "text": ("txt",),
    "rust": ("rs",),
    "shell": ("sh",),
}
READ_BYTES = 200_000  # of each file, when looking for the request's words
MAX_WORDS = 12


def request_words(text: str) -> list[str]:
    """The words of `text` that could be what is searched for, in order, each once."""
    words = [w for w in WORD.findall(text) if w.lower() not in REQUEST_WORDS]
    return list(dict.fromkeys(words))[:MAX_WORDS]


def words_in_project(words: list[str], root: str, files: list[str]) -> list[str]:
    """Those of `words` that occur (case-insensitively) in one of `files` under `root`."""
    left = {word.lower(): word for word in words}
    found: set[str] = set()
    for path in files:
        if not left:
            break
        try:
            with open(os.path.join(root, path), "rb") as handle:
                text = handle.read(READ_BYTES).decode("utf-8", "replace").lower()
        except OSError:
            continue
        for lowered in [w for w in left if w in text]:
            found.add(left.pop(lowered))
    return [word for word in words if word in found]


def named_extensions(text: str, extensions: list[str]) -> list[str]:
    """The extensions of `extensions` that `text` names, by name or as `.ext`."""
    lowered = text.lower()
    named = {ext for ext in extensions if re.search(rf"(^|[\s.*]){re.escape(ext)}\b", lowered)}
    for kind, kind_extensions in KINDS.items():
        if kind in lowered:
            named.update(ext for ext in kind_extensions if ext in extensions)
    return [ext for ext in extensions if ext in named]


def with_known_patterns(tool: ToolDef, request: str, root: str, files: list[str]) -> ToolDef:
    """`grep` or `find_files` whose `pattern` must be one that can match in the project."""
    if tool.name == "grep":
        choices = words_in_project(request_words(request), root, files)
    elif tool.name == "find_files":
        extensions = sorted({os.path.splitext(p)[1][1:].lower() for p in files} - {""})
        named = named_extensions(request, extensions)
        choices = [f"*.{ext}" for ext in named or extensions]
    else:
        return tool
    properties: dict[str, Any] = dict(tool.parameters.get("properties", {}))
    if not choices or "pattern" not in properties:
        return tool
    properties["pattern"] = {"type": "string", "enum": choices}
    return dataclasses.replace(tool, parameters={**tool.parameters, "properties": properties})
