"""Project instruction files: AGENTS.md, CLAUDE.md and .melgui/instructions.md.

Read from the project root on every leg (kept while their size and time stay the same),
so an edit reaches the next leg. They go verbatim into the system message of
OpenAI-compatible and local legs (core.transports.instructions), and as a leading
system message of relay legs (README: "Project instructions").
"""

from __future__ import annotations

import os
from dataclasses import dataclass

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md", os.path.join(".melgui", "instructions.md"))
MAX_FILE_CHARS = 32_000  # a larger file is cut, with a note saying so


@dataclass(frozen=True, slots=True)
class InstructionFile:
    name: str  # relative to the project root, as the chat header shows it
    text: str
    cut: bool = False


_cache: dict[str, tuple[tuple[int, int], InstructionFile]] = {}


def read_instruction_files(root: str) -> list[InstructionFile]:
    """The instruction files present at `root`, in INSTRUCTION_FILES order."""
    found: list[InstructionFile] = []
    for name in INSTRUCTION_FILES:
        path = os.path.join(root, name)
        try:
            stat = os.stat(path)
        except OSError:
            continue
        if not os.path.isfile(path):
            continue
        key = (stat.st_size, stat.st_mtime_ns)
        cached = _cache.get(path)
        if cached is not None and cached[0] == key:
            found.append(cached[1])
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read(MAX_FILE_CHARS + 1)
        except OSError:
            continue
        item = InstructionFile(name, text[:MAX_FILE_CHARS], cut=len(text) > MAX_FILE_CHARS)
        _cache[path] = (key, item)
        if text.strip():
            found.append(item)
    return [item for item in found if item.text.strip()]


def project_instructions_text(root: str) -> str:
    """The files as one block for a system message; "" when there are none."""
    files = read_instruction_files(root) if root else []
    if not files:
        return ""
    parts = ["The project's instruction files follow; follow them."]
    for item in files:
        note = f"\n[{item.name} was cut at {MAX_FILE_CHARS} characters]" if item.cut else ""
        parts.append(f"--- {item.name} ---\n{item.text.rstrip()}{note}")
    return "\n\n".join(parts)


def instruction_file_names(root: str) -> list[str]:
    """What the chat header names as "in force"."""
    return [item.name for item in read_instruction_files(root)] if root else []
