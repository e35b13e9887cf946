"""Slash commands of the prompt box: a registry others add to (the window's built-in
commands, custom commands read by melgui.desk.prompt.custom_commands, an MCP server's
prompts, an ACP agent's commands), and telling a command from a path."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

Handler = Callable[[str], str | None]

COMMAND_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")


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
        if not COMMAND_NAME.match(command.name):
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


def looks_like_command(text: str) -> bool:
    """`/word` (not a path such as /usr/bin/env) on a line of its own or before a space."""
    head = text[1:].split(maxsplit=1)[0] if text[1:].strip() else ""
    return bool(head) and "/" not in head and not text[1:2].isspace()
