"""Known ACP agents and their usual commands; telling an agent command from a terminal one.

`open_pane` takes a command: it opens an ACP pane only when the command's program (and
its first arguments) match a known agent, so `opencode` alone is still a terminal.

An agent's name (what rules call it, `acp:<name>`) is a known agent's, or the person's
label (`mybot: python bots/my.py` in settings), else the script or package a runner
starts (`python a.py` is `a`, `npx @x/codex-acp` is `codex-acp`), else the program's.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class AgentCommand:
    """How to start one ACP agent: argv, extra environment, a name for rules and titles."""

    name: str
    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def origin(self) -> str:
        """What policy rules name this agent by: `acp:<name>`."""
        return f"acp:{self.name}"

    def text(self) -> str:
        return shlex.join(self.argv)


KNOWN_AGENTS: tuple[tuple[str, str], ...] = (
    ("gemini", "gemini --experimental-acp"),
    ("opencode", "opencode acp"),
    ("codex", "npx @zed-industries/codex-acp"),
    ("claude", "npx @zed-industries/claude-code-acp"),
    ("goose", "goose acp"),
    ("melgui", "melgui acp"),
)


# Programs that run a script or package named by their first plain argument.
RUNNERS = frozenset({"node", "nodejs", "bun", "bunx", "deno", "npx", "pnpx", "uvx", "tsx"})
RUNNERS |= {"ruby", "perl", "php", "sh", "bash", "java", "dotnet", "ts-node", "pipx"}
SUBCOMMANDS = frozenset({"run", "x", "exec", "dlx", "tool"})  # uv run, pnpm dlx, bun x, …
WITH_VALUE = frozenset({"--from", "--with", "-p", "--package", "--python", "-r", "--require"})
PYTHON = re.compile(r"python(\d+(\.\d+)?)?$|pypy\d*$")
_LABEL = re.compile(r"([A-Za-z0-9][\w.-]*):\s+(\S.*)$")
_HAS_SUBCOMMANDS = frozenset({"uv", "pnpm", "yarn", "bun", "deno", "pipx"})
_SCRIPTS = frozenset({".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".sh", ".jar"})
_PLAIN_NAMES = frozenset({"index", "main", "cli", "__main__", "bin", "dist", "src", "lib"})


def split_label(entry: str) -> tuple[str, str]:
    """`name: command` (an entry of the person's list) as (name, command); no label: ""."""
    found = _LABEL.match(entry.strip())
    return (found.group(1), found.group(2)) if found else ("", entry)


def parse_command(text: str, name: str | None = None) -> AgentCommand:
    """An agent command from what the person typed (`label: command` names it); raises
    ValueError saying why not."""
    label, command = split_label(text)
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:
        raise ValueError(f"cannot read the command {command!r}: {exc}") from None
    if not argv:
        raise ValueError("the agent command is empty")
    return AgentCommand(name or label or agent_name(argv), argv)


def agent_name(argv: tuple[str, ...] | list[str]) -> str:
    """A short name for rules (`acp:<name>`): a known agent's, else what a runner runs
    (script or package), else the program's."""
    for name, usual in KNOWN_AGENTS:
        if _matches(list(argv), shlex.split(usual)):
            return name
    program = os.path.basename(argv[0])
    target = _run_target(program, list(argv[1:]))
    return _clean(target or program)


def _run_target(program: str, rest: list[str]) -> str:
    """The script, module or package an interpreter or runner is given, "" for none."""
    python = PYTHON.match(program) is not None
    if program not in RUNNERS and not python and program not in _HAS_SUBCOMMANDS:
        return ""
    skip = False
    for index, word in enumerate(rest):
        if skip:
            skip = False
        elif python and word == "-m" and index + 1 < len(rest):
            return rest[index + 1]
        elif word in WITH_VALUE:
            skip = True
        elif word.startswith("-") or (word in SUBCOMMANDS and program in _HAS_SUBCOMMANDS):
            continue
        else:
            return _script_name(word)
    return ""


def _script_name(path: str) -> str:
    """`node_modules/opencode-ai/bin/opencode` -> opencode, `@x/codex-acp@1.2` -> codex-acp,
    `agents/dist/index.js` -> agents."""
    if path.startswith("@") and path.count("/") == 1:  # a scoped npm package
        path = path.split("/", 1)[1]
    parts = [p for p in path.split("/") if p not in ("", ".", "..")]
    while len(parts) > 1 and os.path.splitext(parts[-1])[0] in _PLAIN_NAMES:
        parts.pop()
    last = parts[-1] if parts else path
    last = last.split("@")[0] if not last.startswith("@") else last
    stem, extension = os.path.splitext(last)
    return stem if extension in _SCRIPTS else last


def _clean(word: str) -> str:
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in word).strip("-.")
    return name or "agent"


def known_agent(text: str, extra: tuple[str, ...] = ()) -> AgentCommand | None:
    """The agent `text` starts, when it is one of the known commands (or of `extra`,
    the person's own list in settings, whose labels name theirs); None for anything
    else (a terminal command)."""
    try:
        argv = shlex.split(text)
    except ValueError:
        return None
    if not argv:
        return None
    for entry in extra:
        label, usual = split_label(entry)
        with contextlib.suppress(ValueError):
            if _matches(argv, shlex.split(usual)):
                return AgentCommand(label or agent_name(argv), tuple(argv))
    for _name, usual in KNOWN_AGENTS:
        if _matches(argv, shlex.split(usual)):
            return AgentCommand(agent_name(argv), tuple(argv))
    return None


def _matches(argv: list[str], usual: list[str]) -> bool:
    if len(argv) < len(usual) or not usual:
        return False
    if os.path.basename(argv[0]) != os.path.basename(usual[0]):
        return False
    return argv[1 : len(usual)] == usual[1:]
