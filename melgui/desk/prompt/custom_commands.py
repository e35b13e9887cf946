"""Custom slash commands of the prompt box, read from files into the registry
(melgui.core.protocol.views.slash_commands).

A command runs with the text after its name. It returns a prompt to send (custom
commands expand to one) or None when it did its work itself (/clear, /model, …).
Custom commands are Markdown files: `.melgui/commands/<name>.md` in the project and
`commands/<name>.md` in the user's config folder (the project's win on a clash). The
body is the prompt; `$ARGUMENTS` is replaced with what followed the name (when it does
not occur, the arguments are added after a blank line). An optional first line
`description: …` (or a front-matter block holding one) is the summary in the list.
"""

from __future__ import annotations

from pathlib import Path

from melgui.core.config.settings import config_dir
from melgui.core.protocol.views.slash_commands import COMMAND_NAME, SlashCommand, SlashCommands

MAX_COMMAND_BYTES = 64 * 1024


def expand(body: str, arguments: str) -> str:
    if "$ARGUMENTS" in body:
        return body.replace("$ARGUMENTS", arguments)
    return f"{body.rstrip()}\n\n{arguments}" if arguments else body


def read_command_file(path: Path, origin: str) -> SlashCommand | None:
    """A custom command from a Markdown file, or None when it cannot be one."""
    name = path.stem
    if not COMMAND_NAME.match(name):
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
