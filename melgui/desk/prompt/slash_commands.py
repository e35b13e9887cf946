"""Slash commands of the prompt box: a registry others add to, and custom commands.

A command runs with the text after its name. It returns a prompt to send (custom
commands expand to one) or None when it did its work itself (/clear, /model, …).
Custom commands are Markdown files: `.melgui/commands/<name>.md` in the project and
`commands/<name>.md` in the user's config folder (the project's win on a clash). The
body is the prompt; `$ARGUMENTS` is replaced with what followed the name (when it does
not occur, the arguments are added after a blank line). An optional first line
`description: …` (or a front-matter block holding one) is the summary in the list.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from melgui.core.config.settings import config_dir

Handler = Callable[[str], str | None]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
MAX_COMMAND_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str  # without the slash
    summary: str
    run: Handler
    origin: str = "builtin"  # builtin, project, user, or whoever added it (mcp, acp, …)
    usage: str = ""  # e.g. "<model id>"


class SlashCommands:
    """Commands by name; `add` replaces a command of the same name."""

    def __init__(self) -> None:
        self._commands: dict[str, SlashCommand] = {}

    def add(self, command: SlashCommand) -> None:
        if not _NAME.match(command.name):
            raise ValueError(f"not a command name: {command.name!r}")
        self._commands[command.name] = command

    def remove_origin(self, origin: str) -> None:
        for name in [n for n, c in self._commands.items() if c.origin == origin]:
            del self._commands[name]

    def get(self, name: str) -> SlashCommand | None:
        return self._commands.get(name)

    def all(self) -> list[SlashCommand]:
        return sorted(self._commands.values(), key=lambda c: c.name)

    def matching(self, prefix: str) -> list[SlashCommand]:
        """Commands whose name starts with `prefix`, then those that contain it."""
        lowered = prefix.lower()
        first = [c for c in self.all() if c.name.lower().startswith(lowered)]
        rest = [c for c in self.all() if lowered in c.name.lower() and c not in first]
        return first + rest

    def parse(self, text: str) -> tuple[SlashCommand, str] | None:
        """`/name arguments` → (command, arguments); None when it is not a known command."""
        if not text.startswith("/"):
            return None
        head, _, arguments = text[1:].partition(" ")
        name = head.split("\n", 1)[0]
        if "\n" in head:
            arguments = head.split("\n", 1)[1] + (" " + arguments if arguments else "")
        command = self._commands.get(name)
        return (command, arguments.strip()) if command is not None else None

    def help_text(self) -> str:
        lines = ["Commands (type / in the prompt box):"]
        for command in self.all():
            usage = f" {command.usage}" if command.usage else ""
            origin = "" if command.origin == "builtin" else f" [{command.origin}]"
            lines.append(f"/{command.name}{usage} — {command.summary}{origin}")
        return "\n".join(lines)


def expand(body: str, arguments: str) -> str:
    if "$ARGUMENTS" in body:
        return body.replace("$ARGUMENTS", arguments)
    return f"{body.rstrip()}\n\n{arguments}" if arguments else body


def read_command_file(path: Path, origin: str) -> SlashCommand | None:
    """A custom command from a Markdown file, or None when it cannot be one."""
    name = path.stem
    if not _NAME.match(name):
        return None
    try:
        if path.stat().st_size > MAX_COMMAND_BYTES:
            return None
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    summary, body = _split_description(text)
    body = body.strip("\n")
    if not body.strip():
        return None
    summary = summary or _first_line(body)
    return SlashCommand(
        name, summary, lambda arguments: expand(body, arguments), origin, "[arguments]"
    )


def _split_description(text: str) -> tuple[str, str]:
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if end is not None:
            summary = ""
            for line in lines[1:end]:
                key, _, value = line.partition(":")
                if key.strip().lower() == "description":
                    summary = value.strip().strip("\"'")
            return summary, "\n".join(lines[end + 1 :])
    if lines and lines[0].lower().startswith("description:"):
        return lines[0].partition(":")[2].strip(), "\n".join(lines[1:])
    return "", text


def _first_line(body: str) -> str:
    line = next((ln.strip() for ln in body.splitlines() if ln.strip()), "")
    line = line.lstrip("#").strip()
    return line if len(line) <= 70 else line[:69] + "…"


def custom_command_folders(project: str) -> list[tuple[Path, str]]:
    """Where custom commands live, lowest precedence first."""
    return [
        (config_dir() / "commands", "user"),
        (Path(project) / ".melgui" / "commands", "project"),
    ]


def load_custom_commands(registry: SlashCommands, project: str) -> int:
    """(Re)load the user's and the project's commands into `registry`; returns how many.

    A custom command never replaces a built-in one."""
    registry.remove_origin("user")
    registry.remove_origin("project")
    count = 0
    for folder, origin in custom_command_folders(project):
        try:
            files = sorted(folder.glob("*.md"))
        except OSError:
            continue
        for path in files:
            command = read_command_file(path, origin)
            existing = registry.get(command.name) if command else None
            if command is None or (existing is not None and existing.origin == "builtin"):
                continue
            registry.add(command)
            count += 1
    return count


def looks_like_command(text: str) -> bool:
    """`/word` (not a path such as /usr/bin/env) on a line of its own or before a space."""
    head = text[1:].split(maxsplit=1)[0] if text[1:].strip() else ""
    return bool(head) and "/" not in head and not text[1:2].isspace()
