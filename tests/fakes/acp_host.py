"""Helpers for tests of melgui's ACP client: the `melgui acp` agent command against a
scripted server, and a collector of the LoopEvents a host emits.

    host = AcpHost(melgui_agent(server), str(folder), policy=RulePolicy(), ask=asked.append)

and which of the scripted agents run where (`agents_in`), to tell whose child each is.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from melgui.core.protocol.loop_events import LoopEvent
from melgui.core.protocol.views.agent_commands import AgentCommand
from tests.fakes.scripted_server import ScriptedOpenAI

ROOT = Path(__file__).resolve().parents[2]
SCRIPTED_AGENT = Path(__file__).with_name("acp_scripted_agent.py")


def melgui_agent(server: ScriptedOpenAI, name: str = "melgui") -> AgentCommand:
    """`python -m melgui acp` on the scripted server (no history, no MCP)."""
    argv = (sys.executable, "-m", "melgui", "acp", "--transport", "openai")
    argv += ("--url", server.base_url, "--model", "m1", "--no-history", "--no-mcp")
    return AgentCommand(name, argv, {"OPENAI_API_KEY": "k-1", "PYTHONPATH": str(ROOT)})


def scripted_agent(*args: str, name: str = "scripted") -> AgentCommand:
    """tests/fakes/acp_scripted_agent.py: does what each prompt's JSON says (or, with
    `--script FILE`, what that file lists for the prompt's words)."""
    return AgentCommand(name, (sys.executable, str(SCRIPTED_AGENT), *args))


def agents_in(folder: Path) -> dict[int, int]:
    """Each scripted agent (`scripted_agent`) running in `folder`: its pid, and its
    parent's."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            if str(SCRIPTED_AGENT).encode() not in (entry / "cmdline").read_bytes():
                continue
            if Path(os.readlink(entry / "cwd")) != folder.resolve():
                continue
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if stat[0] != "Z":
            found[int(entry.name)] = int(stat[1])
    return found


class Events:
    """Every LoopEvent, in order."""

    def __init__(self) -> None:
        self.seen: list[LoopEvent] = []

    def __call__(self, event: LoopEvent) -> None:
        self.seen.append(event)

    def kinds(self) -> list[str]:
        return [e.kind for e in self.seen]

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.seen if e.kind == kind]

    def text(self) -> str:
        return "".join(e.text for e in self.of("assistant_text"))
