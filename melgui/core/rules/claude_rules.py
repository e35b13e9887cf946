"""Claude Code permission rules a project carries, read as melgui rules to import.

`.claude/settings.json` and `.claude/settings.local.json` hold `permissions.allow` and
`permissions.deny` lists such as `Bash(npm run test:*)`, `Bash(git status)`, `Edit`,
`WebFetch(domain:example.com)` and `mcp__github__create_issue`. Each becomes a melgui
rule line, or is skipped with the reason (read-only tools already run without asking;
path and domain scoped rules have no melgui form). `Bash(x)` and `Bash(x:*)` both become
the command rule `x`, which also covers longer commands starting with `x`; the editor
shows the rules before anything is imported.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from melgui.core.rules.rule_scopes import Rule

FILES = (".claude/settings.json", ".claude/settings.local.json")
_TOOLS = {"Edit": "edit_file", "MultiEdit": "edit_file", "Write": "write_file"}
_TOOLS |= {"WebSearch": "web_search", "WebFetch": "web_search"}
_READ_ONLY = frozenset({"Read", "Grep", "Glob", "LS", "NotebookRead", "TodoWrite"})


@dataclass(frozen=True, slots=True)
class Imported:
    source: str  # "<file>: <the Claude Code rule>"
    rule: Rule | None
    skipped: str = ""  # why it has no melgui rule


def claude_rules(project: str | Path) -> list[Imported]:
    """Every permission rule of the project's Claude Code settings, converted."""
    found: list[Imported] = []
    for name in FILES:
        path = Path(project) / name
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            found.append(Imported(name, None, f"cannot read it: {exc}"))
            continue
        permissions = data.get("permissions") if isinstance(data, dict) else None
        if not isinstance(permissions, dict):
            continue
        for effect in ("allow", "deny"):
            entries = permissions.get(effect)
            for entry in entries if isinstance(entries, list) else []:
                if isinstance(entry, str):
                    found.append(convert(effect, entry, f"{name}: {entry}"))
    return found


def convert(effect: str, entry: str, source: str) -> Imported:
    tool, _, inner = entry.partition("(")
    inner = inner[:-1] if inner.endswith(")") else inner
    tool = tool.strip()
    line: str | None = None
    if tool == "Bash":
        pattern = inner.strip()
        for tail in (":*", " *", "*"):
            if pattern.endswith(tail):
                pattern = pattern[: -len(tail)].rstrip()
                break
        if not pattern:
            if effect == "deny":
                return Imported(source, None, "a deny of every command: use the tool setting")
            return Imported(source, None, "allows every command: use the tool setting")
        line = f"{effect} run_command: {pattern}"
    elif tool.startswith("mcp__"):
        server, _, name = tool[len("mcp__") :].partition("__")
        line = f"{effect} mcp:{server}/{name or '*'}"
    elif tool in _READ_ONLY:
        return Imported(source, None, "read-only: melgui runs it without asking already")
    elif tool in _TOOLS:
        if inner and effect == "allow":
            return Imported(source, None, f"scoped to {inner!r}: melgui has no such rule")
        line = f"{effect} {_TOOLS[tool]}"
    if line is None:
        return Imported(source, None, f"melgui has no tool like {tool!r}")
    try:
        return Imported(source, Rule.parse(line, "project"))
    except ValueError as exc:
        return Imported(source, None, str(exc))
