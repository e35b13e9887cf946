"""Known ACP agents and their usual commands; telling an agent command from a terminal one.

`open_pane` takes a command: it opens an ACP pane only when the command's program (and
its first arguments) match a known agent, so `opencode` alone is still a terminal.
"""

from __future__ import annotations

import os
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


def parse_command(text: str, name: str | None = None) -> AgentCommand:
    """An agent command from what the person typed; raises ValueError saying why not."""
    try:
        argv = tuple(shlex.split(text))
    except ValueError as exc:
        raise ValueError(f"cannot read the command {text!r}: {exc}") from None
    if not argv:
        raise ValueError("the agent command is empty")
    return AgentCommand(name or agent_name(argv), argv)


def agent_name(argv: tuple[str, ...] | list[str]) -> str:
    """A short name for rules (`acp:<name>`): a known agent's, else the program's."""
    for name, usual in KNOWN_AGENTS:
        if _matches(list(argv), shlex.split(usual)):
            return name
    words = [w for w in argv if not w.startswith("-")]
    program = words[-1] if words and os.path.basename(words[0]) == "npx" else argv[0]
    base = os.path.basename(program).split("@")[-1] or "agent"
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in base)


def known_agent(text: str, extra: tuple[str, ...] = ()) -> AgentCommand | None:
    """The agent `text` starts, when it is one of the known commands (or of `extra`,
    the person's own list in settings); None for anything else (a terminal command)."""
    try:
        argv = shlex.split(text)
    except ValueError:
        return None
    if not argv:
        return None
    for usual in (*(usual for _name, usual in KNOWN_AGENTS), *extra):
        if _matches(argv, shlex.split(usual)):
            return AgentCommand(agent_name(argv), tuple(argv))
    return None


def _matches(argv: list[str], usual: list[str]) -> bool:
    if len(argv) < len(usual) or not usual:
        return False
    if os.path.basename(argv[0]) != os.path.basename(usual[0]):
        return False
    return argv[1 : len(usual)] == usual[1:]
